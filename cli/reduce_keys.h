// --reduce-keys on convert, bake and retarget: the options, the key reduction they ask the writers
// for (core/curves/key_reduction.h), and the report of what it kept.
#ifndef RIGEL_CLI_REDUCE_KEYS_H_
#define RIGEL_CLI_REDUCE_KEYS_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/curves/key_reduction.h"
#include "core/scene.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"

namespace rigel::cli {

// The options as parsed: lengths in millimetres.
struct ReduceArgs {
  bool enabled = false;
  double error_mm = 0.1;
  double vertex_mm = 20.0;
};

// Registers --reduce-keys, --reduce-error MM and --reduce-vertex MM on `sub`.
void AddReduceOptions(CLI::App* sub, ReduceArgs* args);

// The reduction asked for clips whose unit is `metres_per_unit` metres; nullopt without
// --reduce-keys.
std::optional<KeyReductionOptions> ReductionOf(const ReduceArgs& args, double metres_per_unit);

// SaveScene, with the reduction `args` asks (the scene's unit, or its estimate): returns each
// clip's keys (empty without --reduce-keys or for BVH).
std::vector<ClipKeys> SaveSceneReduced(const Scene& scene, const std::string& path,
                                       const ReduceArgs& args);

// The report of one written take: keys before (dense) and after, the largest error the keys allow
// by forward kinematics (mm), and, when measured, the largest error of the file read back (mm).
nlohmann::json KeysJson(const ClipKeys& keys, const ReduceArgs& args,
                        std::optional<double> read_back_m = std::nullopt);

// The largest world-space error (metres) of take `take` of `path` read back (LoadScene with
// `options`, lengths as written) against `clip` of `input`, by forward kinematics on every frame:
// every joint of the input that the file has by name, its virtual vertices (`vertex_m` metres
// away, from the change of its world rotation relative to frame 0), and the end sites (written as
// "<joint>_end"). Throws when the file does not read back with that take.
double ReadBackError(const Scene& input, const Clip& clip, const std::string& path,
                     LoadOptions options, std::size_t take, double vertex_m);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_REDUCE_KEYS_H_
