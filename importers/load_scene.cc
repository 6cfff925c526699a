#include "importers/load_scene.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "importers/bvh_reader.h"

namespace rigel {

std::string LowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::vector<std::string> ReadableExtensions() { return {".bvh"}; }

Scene LoadScene(const std::string& path) {
  const std::string ext = LowerExtension(path);
  if (ext == ".bvh") return ReadBvh(path);
  throw ImportError(fmt::format("{}: unsupported format '{}' (expected {})", path, ext,
                                fmt::join(ReadableExtensions(), ", ")));
}

}  // namespace rigel
