#include "io/file_format.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace rigel {

// The rows' entry points: readers in importers/load_scene.cc, writers in exporters/save_scene.cc.
Scene ReadBvhFormat(const std::string& path, const LoadOptions& options);
Scene ReadAssimpFormat(const std::string& path, const LoadOptions& options);
void WriteBvhFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options);
void WriteGlbFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options);
void WriteGltfFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                     const SaveOptions& options);
void WriteFbxFormat(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
                    const SaveOptions& options);

const std::vector<FileFormat>& FileFormats() {
  // clang-format off
  // One row a format. Columns: name, label, extensions, several takes, meshes, skins, blend
  // shapes, polygons, scale, sparse keys, reader, writer.
  static const std::vector<FileFormat> kFormats{
      {"bvh",  "BVH",      {".bvh"},  false, false, false, false, false, false, false, ReadBvhFormat,    WriteBvhFormat},
      {"glb",  "glTF",     {".glb"},  true,  true,  true,  true,  false, true,  true,  ReadAssimpFormat, WriteGlbFormat},
      {"gltf", "glTF",     {".gltf"}, true,  true,  true,  true,  false, true,  true,  ReadAssimpFormat, WriteGltfFormat},
      {"fbx",  "FBX",      {".fbx"},  true,  true,  true,  true,  true,  true,  true,  ReadAssimpFormat, WriteFbxFormat},
      {"dae",  "Collada",  {".dae"},  true,  true,  true,  false, true,  true,  false, ReadAssimpFormat, nullptr},
  };
  // clang-format on
  return kFormats;
}

std::string LowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

const FileFormat* FormatOfPath(const std::string& path) {
  const std::string ext = LowerExtension(path);
  for (const FileFormat& format : FileFormats()) {
    for (std::string_view e : format.extensions) {
      if (e == ext) return &format;
    }
  }
  return nullptr;
}

const FileFormat* FormatNamed(std::string_view name) {
  for (const FileFormat& format : FileFormats()) {
    if (format.name == name) return &format;
  }
  return nullptr;
}

bool OneTakePerFile(const std::string& path) {
  const FileFormat* format = FormatOfPath(path);
  return format != nullptr && !format->several_takes;
}

namespace {

std::vector<std::string> Extensions(bool writable) {
  std::vector<std::string> out;
  for (const FileFormat& format : FileFormats()) {
    if (writable ? format.write == nullptr : format.read == nullptr) continue;
    for (std::string_view e : format.extensions) out.emplace_back(e);
  }
  return out;
}

}  // namespace

std::vector<std::string> ReadableExtensions() { return Extensions(false); }

std::vector<std::string> WritableExtensions() { return Extensions(true); }

std::vector<std::string> WritableFormatNames() {
  std::vector<std::string> out;
  for (const FileFormat& format : FileFormats()) {
    if (format.write != nullptr) out.emplace_back(format.name);
  }
  return out;
}

}  // namespace rigel
