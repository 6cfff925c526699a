// --format choices and --help texts built from the formats table (io/file_format.h), so that a new
// row shows in every command that writes files.
#ifndef RIGEL_CLI_FORMAT_HELP_H_
#define RIGEL_CLI_FORMAT_HELP_H_

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <string_view>
#include <vector>

#include "io/file_format.h"

namespace rigel::cli {

// ".bvh, .glb, .gltf, .fbx": the extensions rigel writes (or reads), for help texts.
inline std::string ExtensionsHelp(bool writable) {
  return fmt::format("{}", fmt::join(writable ? WritableExtensions() : ReadableExtensions(), ", "));
}

// The --take help's tail: "BVH outputs get a file per take, STEM.<take>.bvh, glTF and FBX outputs
// hold every take", from the writers' rows.
inline std::string TakesPerFileHelp(std::string_view stem) {
  std::vector<std::string> split, whole;
  for (const FileFormat& format : FileFormats()) {
    if (format.write == nullptr) continue;
    std::vector<std::string>& list = format.several_takes ? whole : split;
    const std::string label(format.label);
    if (list.empty() || list.back() != label) list.push_back(label);
  }
  std::string text;
  for (const FileFormat& format : FileFormats()) {
    if (format.write == nullptr || format.several_takes) continue;
    text += fmt::format("{} outputs get a file per take, {}.<take>{}, ", format.label, stem,
                        format.extensions.front());
  }
  return text + fmt::format("{} outputs hold every take", fmt::join(whole, " and "));
}

}  // namespace rigel::cli

#endif  // RIGEL_CLI_FORMAT_HELP_H_
