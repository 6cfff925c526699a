// The options every command that reads animation files shares: how BVH position channels are read
// (--bvh-translation) and the unit of a BVH file (--unit-in).
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
};

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
                  "from the figure's height, with a warning)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            std::string error;
            return ParseBvhUnit(text, &error) ? std::string() : error;
          },
          "UNIT"));
}

// `base` with the BVH reading options of `args` filled in.
inline LoadOptions ApplyReadArgs(const ReadArgs& args, LoadOptions base = {}) {
  base.bvh.translation = ParseBvhTranslation(args.bvh_translation).value_or(BvhTranslation::kAuto);
  base.bvh.unit_metres = args.unit_in.empty() ? 0.0 : ParseBvhUnit(args.unit_in).value_or(0.0);
  return base;
}

}  // namespace rigel::cli

#endif  // RIGEL_CLI_READ_OPTIONS_H_
