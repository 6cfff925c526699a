// LoadScene: the one entry point for reading an animation file, dispatching on its extension
// through the formats table (io/file_format.h).
#ifndef RIGEL_IMPORTERS_LOAD_SCENE_H_
#define RIGEL_IMPORTERS_LOAD_SCENE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scene.h"
#include "importers/bvh_reader.h"
#include "importers/import_error.h"
#include "importers/scene_facts.h"
#include "io/file_format.h"  // ReadableExtensions, FileFormats: which format reads what

namespace rigel {

// Length unit of the scene an importer returns.
enum class LengthUnit {
  kFile,        // lengths as the file stores them (default)
  kMetre,       // converted to metres (needs a file that states its unit)
  kCentimetre,  // converted to centimetres
};

// Parses "file", "m", "cm" (case-sensitive). nullopt for anything else.
std::optional<LengthUnit> ParseLengthUnit(std::string_view text);

// How to read a file. Defaults are right for the CLI and for batch work.
struct LoadOptions {
  // Unit of the returned lengths. Converting a file that does not state its unit (BVH) is an
  // ImportError.
  LengthUnit unit = LengthUnit::kFile;
  // BVH only: how position channels are read (--bvh-translation) and the file's unit (--unit-in;
  // 0 = estimated from the figure's height, with a warning).
  BvhReadOptions bvh;
  // The scene's up and forward axes, given by the user (--up, --forward): they override what the
  // file states and what the body suggests (importers/scene_facts.h).
  AxesOverride axes;
  // Read Assimp formats (FBX, glTF, DAE, ...) in a child process (see LoadSceneIsolated). Turn off
  // only for benchmarks and debugging: Debian's Assimp aborts on corrupt files.
  bool isolate = true;
  // Address-space budget of the child process, in MiB, on top of what the caller already maps.
  std::size_t memory_limit_mib = 4096;
  // Wall-clock limit of the child process, in seconds.
  double time_limit_seconds = 300.0;
};

// Reads `path` with the importer its extension selects (case-insensitive): BVH natively, the
// others through Assimp (isolated unless options.isolate is false), then resolves the scene's
// axes (ResolveSceneFacts: stated, given, or inferred from the body, with warnings). Throws
// ImportError, whose message names the file.
Scene LoadScene(const std::string& path);
Scene LoadScene(const std::string& path, const LoadOptions& options);

// Converts `scene` (whose file_unit_metres is set by the importer) to `unit`. Throws ImportError
// naming scene.source when the file's unit is unknown and a conversion was asked for.
void ConvertSceneUnit(Scene& scene, LengthUnit unit);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_LOAD_SCENE_H_
