#include "importers/assimp_reader.h"

#include <assimp/config.h>
#include <assimp/scene.h>
#include <fmt/format.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <string_view>

#include "importers/assimp_converter.h"
#include "io/file_format.h"

namespace rigel {

namespace assimp_internal {

void Converter::Fail(const std::string& what) const {
  throw ImportError(fmt::format("{}: {}", path_, what));
}

Scene Converter::Run() {
  Flatten();
  ResolveHelpers();
  CollectAnimated();
  SelectJoints();
  ComputeRest();
  Scene out;
  out.source = path_;
  out.file_unit_metres = FileUnit();
  PrepareRest();
  // One pass over every clip's frames: rotations (Euler) and translation offsets of every joint,
  // then the skeleton (which joints get position channels depends on them), then the clips.
  std::vector<Sampled> sampled;
  if (scene_.mNumAnimations == 0) {
    out.warnings.push_back(path_ + ": no animation; the clip is the one pose stored in the file");
    sampled.push_back(SampleAnimation(-1, ""));
  }
  for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
    const aiAnimation* anim = scene_.mAnimations[a];
    std::string name = anim->mName.C_Str();
    if (name.empty()) name = fmt::format("clip{}", a);
    sampled.push_back(SampleAnimation(static_cast<int>(a), name));
  }
  for (const Sampled& s : sampled) MarkAnimatedTranslations(s);
  BuildSkeleton(out);
  for (const Sampled& s : sampled) out.clips.push_back(ToClip(s, *out.skeleton));
  ConvertMeshes(out);
  if (nonuniform_scale_) {
    warnings_.push_back(fmt::format(
        "{}: non-uniform or negative scale on '{}' (and maybe others) cannot be represented "
        "by rotation and translation channels; motion is approximated",
        path_, nonuniform_name_));
  }
  out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
  return out;
}

double Converter::FileUnit() const {
  const std::string ext = LowerExtension(path_);
  if (ext == ".gltf" || ext == ".glb" || ext == ".dae") return 1.0;
  if (ext == ".fbx" && scene_.mMetaData) {
    for (unsigned i = 0; i < scene_.mMetaData->mNumProperties; ++i) {
      if (std::string_view(scene_.mMetaData->mKeys[i].C_Str()) != "UnitScaleFactor") continue;
      const aiMetadataEntry& e = scene_.mMetaData->mValues[i];
      double v = 0;
      if (e.mType == AI_DOUBLE) v = *static_cast<const double*>(e.mData);
      if (e.mType == AI_FLOAT) v = *static_cast<const float*>(e.mData);
      if (std::isfinite(v) && v > 0) return v / 100.0;
    }
    return 0.01;  // FBX default: centimetres
  }
  return 0.0;
}

}  // namespace assimp_internal

std::vector<std::string> AssimpExtensions() { return {".fbx", ".glb", ".gltf", ".dae"}; }

Scene ReadWithAssimp(const std::string& path) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_ALL_GEOMETRY_LAYERS, false);
  // Textures are never used: not reading them saves time and memory on character files.
  // Materials are read for their names, which meshes carry through.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_TEXTURES, false);
  const aiScene* scene = nullptr;
  try {
    scene = importer.ReadFile(path, 0);
  } catch (const std::exception& e) {
    throw ImportError(fmt::format("{}: Assimp failed: {}", path, e.what()));
  }
  if (!scene) {
    std::string why = importer.GetErrorString();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw ImportError(
        fmt::format("{}: cannot read ({})", path, why.empty() ? "unknown Assimp error" : why));
  }
  return ConvertAssimpScene(*scene, path);
}

Scene ConvertAssimpScene(const aiScene& scene, const std::string& path) {
  return assimp_internal::Converter(scene, path).Run();
}

}  // namespace rigel