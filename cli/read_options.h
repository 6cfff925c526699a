// The options every command that reads animation files shares: how BVH position channels are read
// (--bvh-translation), the unit of a BVH file (--unit-in) and the axes of any input (--up,
// --forward: they override what the file states and what the body suggests).
#ifndef RIGEL_CLI_READ_OPTIONS_H_
#define RIGEL_CLI_READ_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "importers/load_scene.h"

namespace rigel::cli {

// Values of the shared reading options, as parsed.
struct ReadArgs {
  std::string bvh_translation = "auto";
  std::string unit_in;  // empty: estimated from the figure
  std::string up;       // empty: stated by the file or inferred from the body
  std::string forward;  // empty: stated by the file or inferred from the body
};

// CLI11 validator for a signed axis ("y", "+Z", "-x").
inline CLI::Validator SignedAxisValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return ParseSignedAxis(text) ? "" : "expected an axis: x, y, z, +x, -y, ...";
      },
      "AXIS");
}

// Registers --bvh-translation and --unit-in on `sub`, storing into `args` (which must outlive
// the parse).
inline void AddReadOptions(CLI::App* sub, ReadArgs* args) {
  sub->add_option("--bvh-translation", args->bvh_translation,
                  "BVH position channels: auto (decided per joint from the data), add (deltas "
                  "added to the OFFSET) or replace (absolute, replacing the OFFSET)")
      ->check(CLI::IsMember({"auto", "add", "replace"}));
  sub->add_option("--unit-in", args->unit_in,
                  "Length unit of BVH inputs: m, dm, cm, mm, in, or the length of one unit as a "
                  "factor in metres (0.0254, 1e-3) or with a unit (2.54cm) (default: estimated "
                  "from the body, with a warning)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            std::string error;
            return ParseBvhUnit(text, &error) ? std::string() : error;
          },
          "UNIT"));
  sub->add_option("--up", args->up,
                  "Up axis of the inputs' data (x, y, z, -y, ...), overriding what the file "
                  "states (FBX GlobalSettings) or the body suggests (BVH)")
      ->check(SignedAxisValidator());
  sub->add_option("--forward", args->forward,
                  "Axis the inputs' figure faces (x, y, z, -y, ...), overriding the file or the "
                  "body")
      ->check(SignedAxisValidator());
}

// `base` with the BVH reading options of `args` filled in.
inline LoadOptions ApplyReadArgs(const ReadArgs& args, LoadOptions base = {}) {
  base.bvh.translation = ParseBvhTranslation(args.bvh_translation).value_or(BvhTranslation::kAuto);
  base.bvh.unit_metres = args.unit_in.empty() ? 0.0 : ParseBvhUnit(args.unit_in).value_or(0.0);
  if (!args.up.empty()) base.axes.up = ParseSignedAxis(args.up);
  if (!args.forward.empty()) base.axes.forward = ParseSignedAxis(args.forward);
  return base;
}

}  // namespace rigel::cli

#endif  // RIGEL_CLI_READ_OPTIONS_H_
