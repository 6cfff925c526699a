// The Assimp front's meshes (importers/assimp_converter.h): every mesh of the file as a
// core/mesh.h Mesh, in world space at its bind pose: skinned to the skeleton (aiBone weights and
// offset matrices), attached rigidly to the joint its node hangs from, or static.
#include <assimp/material.h>
#include <assimp/mesh.h>
#include <assimp/scene.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "importers/assimp_converter.h"
#include "importers/utf8.h"

namespace rigel::assimp_internal {

namespace {

Eigen::Isometry3d Rigid(const Eigen::Affine3d& t) {
  bool nonuniform = false;
  const Frame f = ToFrame(t, &nonuniform);
  Eigen::Isometry3d out = Eigen::Isometry3d::Identity();
  out.linear() = f.rotation;
  out.translation() = f.origin;
  return out;
}

std::string MaterialName(const aiScene& scene, unsigned index) {
  if (index >= scene.mNumMaterials || scene.mMaterials[index] == nullptr) return "";
  aiString name;
  if (scene.mMaterials[index]->Get(AI_MATKEY_NAME, name) != AI_SUCCESS) return "";
  return IsValidUtf8(name.C_Str()) ? std::string(name.C_Str()) : std::string();
}

// The mesh's vertices placed in world space, its normals, first UV set and triangles (polygons as
// fans, recorded in polygon_triangles: a glTF output says it triangulates them); counts the point
// and line primitives dropped.
void ConvertGeometry(const aiMesh& ai, const Eigen::Affine3d& place, Mesh& mesh,
                     std::size_t& dropped_faces) {
  const Eigen::Matrix3d normal_matrix = place.linear().inverse().transpose();
  mesh.positions.reserve(ai.mNumVertices);
  for (unsigned v = 0; v < ai.mNumVertices; ++v) {
    const aiVector3D& p = ai.mVertices[v];
    mesh.positions.push_back(place * Eigen::Vector3d(p.x, p.y, p.z));
  }
  if (ai.mNormals != nullptr) {
    for (unsigned v = 0; v < ai.mNumVertices; ++v) {
      const aiVector3D& p = ai.mNormals[v];
      Eigen::Vector3d normal = normal_matrix * Eigen::Vector3d(p.x, p.y, p.z);
      const double length = normal.norm();
      mesh.normals.push_back(length > 0 && std::isfinite(length) ? Eigen::Vector3d(normal / length)
                                                                 : Eigen::Vector3d::UnitY());
    }
  }
  if (ai.mTextureCoords[0] != nullptr) {
    for (unsigned v = 0; v < ai.mNumVertices; ++v) {
      mesh.uvs.emplace_back(ai.mTextureCoords[0][v].x, ai.mTextureCoords[0][v].y);
    }
  }
  for (unsigned f = 0; f < ai.mNumFaces; ++f) {
    const aiFace& face = ai.mFaces[f];
    if (face.mNumIndices < 3) {
      ++dropped_faces;
      continue;
    }
    for (unsigned k = 1; k + 1 < face.mNumIndices; ++k) {  // a fan: exact for convex polygons
      mesh.triangles.insert(mesh.triangles.end(),
                            {face.mIndices[0], face.mIndices[k], face.mIndices[k + 1]});
    }
    mesh.polygon_triangles.push_back(face.mNumIndices - 2);
  }
  // Triangles only: nothing to record.
  if (std::all_of(mesh.polygon_triangles.begin(), mesh.polygon_triangles.end(),
                  [](std::uint32_t k) { return k == 1; })) {
    mesh.polygon_triangles.clear();
  }
}

// Each vertex's influences (weight, skin slot) down to the four largest, renormalised; counts the
// vertices cut and the largest share of a vertex's weight dropped.
void KeepLargestInfluences(unsigned num_vertices,
                           std::vector<std::vector<std::pair<float, int>>>& influences, Mesh& mesh,
                           std::size_t& cut_vertices, float& worst_cut) {
  mesh.vertex_joints.assign(num_vertices, {});
  mesh.vertex_weights.assign(num_vertices, {});
  for (unsigned v = 0; v < num_vertices; ++v) {
    auto& list = influences[v];
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    float total = 0, kept = 0;
    for (std::size_t k = 0; k < list.size(); ++k) {
      total += list[k].first;
      if (k < Mesh::kMaxInfluences) kept += list[k].first;
    }
    if (list.size() > Mesh::kMaxInfluences) {
      ++cut_vertices;
      worst_cut = std::max(worst_cut, (total - kept) / total);
    }
    for (std::size_t k = 0; k < list.size() && k < Mesh::kMaxInfluences; ++k) {
      mesh.vertex_joints[v][k] = static_cast<std::uint16_t>(list[k].second);
      mesh.vertex_weights[v][k] = list[k].first / kept;
    }
    if (list.empty()) {  // an unweighted vertex follows the first skin joint, at bind
      mesh.vertex_weights[v][0] = 1.0f;
    }
  }
}

}  // namespace

void Converter::ConvertMeshes(Scene& out) {
  const int n = static_cast<int>(nodes_.size());
  const std::vector<Eigen::Affine3d> global = StaticGlobals(false);
  std::vector<int> mesh_node(scene_.mNumMeshes, -1);
  for (int i = 0; i < n; ++i) {
    for (unsigned m = 0; m < nodes_[i].ai->mNumMeshes; ++m) {
      const unsigned mesh = nodes_[i].ai->mMeshes[m];
      if (mesh < scene_.mNumMeshes && mesh_node[mesh] < 0) mesh_node[mesh] = i;
    }
  }
  mesh_index_.assign(scene_.mNumMeshes, -1);
  std::size_t cut_vertices = 0, dropped_faces = 0, unplaced = 0;
  float worst_cut = 0;
  for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
    const aiMesh& ai = *scene_.mMeshes[m];
    if (IsGeneratedSkeletonMesh(ai)) continue;
    if (mesh_node[m] < 0) {  // in no node: nowhere to place it
      ++unplaced;
      continue;
    }
    const int node = mesh_node[m];
    Mesh mesh;
    mesh.name = ai.mName.C_Str();
    if (!IsValidUtf8(mesh.name)) mesh.name.clear();
    if (mesh.name.empty()) mesh.name = nodes_[node].name;
    if (!IsValidUtf8(mesh.name)) mesh.name = fmt::format("mesh{}", m);
    mesh.material = MaterialName(scene_, ai.mMaterialIndex);
    const Eigen::Affine3d& place = global[node];
    ConvertGeometry(ai, place, mesh, dropped_faces);
    // Skin: every bone that is a joint; up to four influences per vertex, the largest.
    std::vector<std::vector<std::pair<float, int>>> influences;
    for (unsigned b = 0; b < ai.mNumBones; ++b) {
      const aiBone& bone = *ai.mBones[b];
      const auto it = index_by_name_.find(bone.mName.C_Str());
      const int joint = it == index_by_name_.end() ? -1 : frame_index_[it->second];
      if (joint < 0) {
        warnings_.push_back(
            fmt::format("{}: mesh '{}': bone '{}' is not a joint; its weights are "
                        "dropped",
                        path_, mesh.name, bone.mName.C_Str()));
        continue;
      }
      if (influences.empty()) influences.resize(ai.mNumVertices);
      const int slot = static_cast<int>(mesh.skin_joints.size());
      mesh.skin_joints.push_back(joint);
      mesh.bind_world.push_back(Rigid(place * ToEigen(bone.mOffsetMatrix).inverse()));
      for (unsigned w = 0; w < bone.mNumWeights; ++w) {
        const aiVertexWeight& vw = bone.mWeights[w];
        if (vw.mVertexId < ai.mNumVertices && vw.mWeight > 0 && std::isfinite(vw.mWeight)) {
          influences[vw.mVertexId].push_back({vw.mWeight, slot});
        }
      }
    }
    if (mesh.skinned()) {
      KeepLargestInfluences(ai.mNumVertices, influences, mesh, cut_vertices, worst_cut);
    } else {
      int joint_node = frame_index_[node] >= 0 ? node : joint_parent_[node];
      while (joint_node >= 0 && frame_index_[joint_node] < 0)
        joint_node = joint_parent_[joint_node];
      if (joint_node >= 0) {
        mesh.attach_joint = frame_index_[joint_node];
        mesh.attach_bind = Rigid(global[joint_node]);
      }
    }
    ConvertMorphTargets(ai, place, &mesh);
    // Assimp gives every polygon corner of an FBX mesh its own vertex: the file's own vertices
    // back (split only where a normal, UV, weight or morph offset differs).
    WeldVertices(mesh);
    mesh_index_[m] = static_cast<int>(out.meshes.size());
    out.meshes.push_back(std::move(mesh));
  }
  if (cut_vertices > 0) {
    warnings_.push_back(fmt::format(
        "{}: {} skinned vertices have more than {} joint influences: the {} largest are kept and "
        "renormalised (at most {:.3g} of a vertex's weight dropped)",
        path_, cut_vertices, Mesh::kMaxInfluences, Mesh::kMaxInfluences, worst_cut));
  }
  if (dropped_faces > 0) {
    warnings_.push_back(fmt::format(
        "{}: {} point and line primitives are not carried (triangles only)", path_, dropped_faces));
  }
  if (unplaced > 0) {
    warnings_.push_back(
        fmt::format("{}: {} meshes are in no node and are not carried", path_, unplaced));
  }
}

}  // namespace rigel::assimp_internal
