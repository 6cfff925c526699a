// The Assimp front's blend shapes (importers/assimp_converter.h): each mesh's morph targets as
// offsets from the mesh, and their animated weights sampled on every frame of each clip.
//
// Assimp 5.2 gives a morph target as a whole mesh (aiAnimMesh: positions and normals with the
// target applied at weight 1), and its animation as aiMeshMorphAnim channels named after the node
// that holds the meshes (glTF: the node's name; FBX: "<model>*<geometry index>"), whose keys list
// (target index, weight) pairs: glTF keys every target at every key, FBX only the targets keyed
// at that time (DeformPercent / 100).
#include <assimp/anim.h>
#include <assimp/mesh.h>
#include <assimp/scene.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "importers/assimp_converter.h"
#include "importers/utf8.h"
#include "io/file_format.h"

namespace rigel::assimp_internal {

void Converter::ConvertMorphTargets(const aiMesh& ai, const Eigen::Affine3d& place, Mesh* mesh) {
  const Eigen::Matrix3d normal_matrix = place.linear().inverse().transpose();
  const bool fbx = LowerExtension(path_) == ".fbx";
  for (unsigned t = 0; t < ai.mNumAnimMeshes; ++t) {
    const aiAnimMesh* anim = ai.mAnimMeshes[t];
    MorphTarget target;
    target.name = anim != nullptr ? anim->mName.C_Str() : "";
    if (target.name.empty() || !IsValidUtf8(target.name)) target.name = fmt::format("target{}", t);
    // glTF: mesh.weights (Assimp's default 0). FBX: Assimp sets 1 for every target with a single
    // shape whatever its DeformPercent, so the weight at rest is not known: 0 (FBX's default).
    if (anim != nullptr && !fbx && std::isfinite(anim->mWeight)) {
      target.default_weight = anim->mWeight;
    }
    const bool usable =
        anim != nullptr && anim->mVertices != nullptr && anim->mNumVertices == ai.mNumVertices;
    const bool normals = usable && anim->mNormals != nullptr && ai.mNormals != nullptr;
    for (unsigned v = 0; usable && v < ai.mNumVertices; ++v) {
      const aiVector3D d = anim->mVertices[v] - ai.mVertices[v];
      const aiVector3D dn = normals ? anim->mNormals[v] - ai.mNormals[v] : aiVector3D();
      if (d.x == 0 && d.y == 0 && d.z == 0 && dn.x == 0 && dn.y == 0 && dn.z == 0) continue;
      target.vertices.push_back(v);
      target.position_deltas.push_back(place.linear() * Eigen::Vector3d(d.x, d.y, d.z));
      if (normals)
        target.normal_deltas.push_back(normal_matrix * Eigen::Vector3d(dn.x, dn.y, dn.z));
    }
    mesh->morph_targets.push_back(std::move(target));
  }
  if (!fbx) return;
  // FBX in-between shapes: Assimp gives each shape of a BlendShapeChannel as a target of the
  // channel's name, in-betweens first, while its weight tracks index channels. rigel keeps the
  // channel's full shape (its last) applied linearly, and says what it leaves out.
  std::vector<MorphTarget>& targets = mesh->morph_targets;
  std::size_t inbetweens = 0;
  std::string first;
  for (std::size_t t = 0; t + 1 < targets.size();) {
    if (targets[t].name != targets[t + 1].name) {
      ++t;
      continue;
    }
    if (first.empty()) first = targets[t].name;
    targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(t));
    ++inbetweens;
  }
  if (inbetweens > 0) {
    warnings_.push_back(fmt::format(
        "{}: mesh '{}': {} in-between shape(s) not carried (first on '{}'): each blend shape "
        "keeps its full shape, applied linearly",
        path_, mesh->name, inbetweens, first));
  }
}

int Converter::MorphChannelNode(const aiMeshMorphAnim& channel) const {
  // Node names need not be unique (a glTF mesh node may share its name with a bone): the node of
  // that name that holds meshes with morph targets, else none.
  std::string name = channel.mName.C_Str();
  auto find = [this](std::string_view wanted) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].helper || nodes_[i].ai->mName.C_Str() != wanted) continue;
      const aiNode& ai = *nodes_[i].ai;
      for (unsigned m = 0; m < ai.mNumMeshes; ++m) {
        if (ai.mMeshes[m] < scene_.mNumMeshes && scene_.mMeshes[ai.mMeshes[m]]->mNumAnimMeshes > 0)
          return static_cast<int>(i);
      }
    }
    return -1;
  };
  int node = find(name);
  const std::size_t star = name.rfind('*');
  if (node < 0 && star != std::string::npos) node = find(std::string_view(name).substr(0, star));
  return node;
}

std::vector<int> Converter::MorphAnimatedNodes() const {
  std::vector<int> nodes;
  for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
    const aiAnimation& anim = *scene_.mAnimations[a];
    for (unsigned c = 0; c < anim.mNumMorphMeshChannels; ++c) {
      const int node = MorphChannelNode(*anim.mMorphMeshChannels[c]);
      if (node < 0 || anim.mMorphMeshChannels[c]->mNumKeys == 0) continue;
      const aiNode& ai = *nodes_[node].ai;
      bool shapes = false;
      for (unsigned m = 0; m < ai.mNumMeshes; ++m) {
        shapes = shapes || (ai.mMeshes[m] < scene_.mNumMeshes &&
                            scene_.mMeshes[ai.mMeshes[m]]->mNumAnimMeshes);
      }
      if (shapes && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
        nodes.push_back(node);
      }
    }
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

namespace {

// One weight column's keys: time (ticks) -> weight.
using WeightKeys = std::map<double, double>;

// The value of `keys` at `time`: linear between keys, the end keys' values beyond them.
double SampleKeys(const WeightKeys& keys, double time) {
  auto next = keys.lower_bound(time);
  if (next == keys.end()) return std::prev(next)->second;
  if (next == keys.begin() || next->first == time) return next->second;
  const auto previous = std::prev(next);
  const double u = (time - previous->first) / (next->first - previous->first);
  return previous->second + (next->second - previous->second) * u;
}

}  // namespace

void Converter::SampleWeights(const std::vector<Sampled>& sampled, Scene& out) {
  const std::vector<WeightChannel> channels = MorphWeightChannels(out.meshes);
  if (channels.empty()) return;
  // First weight column of each carried mesh.
  std::vector<int> first_column(out.meshes.size(), 0);
  for (std::size_t m = 1; m < out.meshes.size(); ++m) {
    first_column[m] =
        first_column[m - 1] + static_cast<int>(out.meshes[m - 1].morph_targets.size());
  }
  std::vector<double> defaults;
  for (const Mesh& mesh : out.meshes) {
    for (const MorphTarget& t : mesh.morph_targets) defaults.push_back(t.default_weight);
  }
  std::vector<std::string> unmatched;
  bool any_keys = false;
  for (std::size_t k = 0; k < sampled.size(); ++k) {
    const Sampled& s = sampled[k];
    Clip& clip = out.clips[k];
    std::vector<WeightKeys> keys(channels.size());
    const aiAnimation* anim = s.anim >= 0 ? scene_.mAnimations[s.anim] : nullptr;
    for (unsigned c = 0; anim != nullptr && c < anim->mNumMorphMeshChannels; ++c) {
      const aiMeshMorphAnim& channel = *anim->mMorphMeshChannels[c];
      const int node = MorphChannelNode(channel);
      std::vector<int> meshes;  // carried meshes of that node
      for (unsigned m = 0; node >= 0 && m < nodes_[node].ai->mNumMeshes; ++m) {
        const unsigned ai = nodes_[node].ai->mMeshes[m];
        if (ai < mesh_index_.size() && mesh_index_[ai] >= 0) meshes.push_back(mesh_index_[ai]);
      }
      if (meshes.empty()) {
        unmatched.push_back(channel.mName.C_Str());
        continue;
      }
      for (unsigned i = 0; i < channel.mNumKeys; ++i) {
        const aiMeshMorphKey& key = channel.mKeys[i];
        for (unsigned v = 0; v < key.mNumValuesAndWeights; ++v) {
          if (!std::isfinite(key.mWeights[v]) || !std::isfinite(key.mTime)) {
            Fail(fmt::format("weight track '{}' has a non-finite key", channel.mName.C_Str()));
          }
          for (const int m : meshes) {
            if (key.mValues[v] >= out.meshes[m].morph_targets.size()) continue;
            keys[first_column[m] + key.mValues[v]][key.mTime] = key.mWeights[v];
            any_keys = true;
          }
        }
      }
    }
    clip.SetWeightChannels(channels, defaults);
    for (std::size_t w = 0; w < channels.size(); ++w) {
      if (keys[w].empty()) continue;
      for (int f = 0; f < clip.num_frames(); ++f) {
        clip.weights(f)[w] = SampleKeys(keys[w], f * s.ticks_per_frame);
      }
    }
  }
  if (!unmatched.empty()) {
    warnings_.push_back(fmt::format(
        "{}: {} weight track(s) drive no mesh with blend shapes and are not carried (first: '{}')",
        path_, unmatched.size(), unmatched.front()));
  }
  if (!any_keys && LowerExtension(path_) == ".fbx") {
    warnings_.push_back(fmt::format(
        "{}: {} blend shape(s) are not animated; Assimp does not give their FBX DeformPercent, "
        "so they are read at weight 0",
        path_, channels.size()));
  }
}

}  // namespace rigel::assimp_internal
