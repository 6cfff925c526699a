#include "core/mesh.h"

#include <cmath>
#include <sstream>

namespace rigel {

namespace {

bool Finite(const Eigen::Isometry3d& t) { return t.matrix().allFinite(); }

// CheckMesh's part for the blend shapes: "" or "mesh 'Face': morph target 'Smile': ...".
std::string CheckMorphTargets(const Mesh& mesh) {
  const std::size_t n = mesh.positions.size();
  for (const MorphTarget& target : mesh.morph_targets) {
    std::ostringstream out;
    out << "mesh '" << mesh.name << "': morph target '" << target.name << "': ";
    const std::size_t count = target.vertices.size();
    if (target.position_deltas.size() != count ||
        (!target.normal_deltas.empty() && target.normal_deltas.size() != count)) {
      out << target.position_deltas.size() << " position and " << target.normal_deltas.size()
          << " normal offsets for " << count << " vertices";
      return out.str();
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (target.vertices[i] >= n || (i > 0 && target.vertices[i] <= target.vertices[i - 1])) {
        out << "vertex " << target.vertices[i] << " (entry " << i
            << ") is out of order or not below " << n;
        return out.str();
      }
      if (!target.position_deltas[i].allFinite() ||
          (!target.normal_deltas.empty() && !target.normal_deltas[i].allFinite())) {
        out << "the offset of vertex " << target.vertices[i] << " is not finite";
        return out.str();
      }
    }
    if (!std::isfinite(target.default_weight)) return out.str() + "default weight is not finite";
  }
  return "";
}

}  // namespace

std::string CheckMesh(const Skeleton& skeleton, const Mesh& mesh) {
  std::ostringstream out;
  out << "mesh '" << mesh.name << "': ";
  const std::size_t n = mesh.positions.size();
  if (mesh.triangles.size() % 3 != 0) {
    out << mesh.triangles.size() << " triangle indices, not a multiple of 3";
    return out.str();
  }
  for (std::size_t i = 0; i < mesh.triangles.size(); ++i) {
    if (mesh.triangles[i] >= n) {
      out << "triangle " << i / 3 << " refers to vertex " << mesh.triangles[i] << " of " << n;
      return out.str();
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (!mesh.positions[v].allFinite()) {
      out << "vertex " << v << " is not finite";
      return out.str();
    }
  }
  if (!mesh.normals.empty() && mesh.normals.size() != n) {
    out << mesh.normals.size() << " normals for " << n << " vertices";
    return out.str();
  }
  for (const Eigen::Vector3d& normal : mesh.normals) {
    if (!normal.allFinite()) return out.str() + "a normal is not finite";
  }
  if (!mesh.uvs.empty() && mesh.uvs.size() != n) {
    out << mesh.uvs.size() << " texture coordinates for " << n << " vertices";
    return out.str();
  }
  for (const Eigen::Vector2d& uv : mesh.uvs) {
    if (!uv.allFinite()) return out.str() + "a texture coordinate is not finite";
  }
  if (mesh.skinned()) {
    if (mesh.bind_world.size() != mesh.skin_joints.size()) {
      out << mesh.bind_world.size() << " bind transforms for " << mesh.skin_joints.size()
          << " skin joints";
      return out.str();
    }
    for (std::size_t i = 0; i < mesh.skin_joints.size(); ++i) {
      if (mesh.skin_joints[i] < 0 || mesh.skin_joints[i] >= skeleton.num_joints()) {
        out << "skin joint " << mesh.skin_joints[i] << " is not a joint of the skeleton";
        return out.str();
      }
      if (!Finite(mesh.bind_world[i])) return out.str() + "a bind transform is not finite";
    }
    if (mesh.vertex_joints.size() != n || mesh.vertex_weights.size() != n) {
      out << "skin weights for " << mesh.vertex_weights.size() << " of " << n << " vertices";
      return out.str();
    }
    for (std::size_t v = 0; v < n; ++v) {
      for (int k = 0; k < Mesh::kMaxInfluences; ++k) {
        if (mesh.vertex_joints[v][k] >= mesh.skin_joints.size() ||
            !std::isfinite(mesh.vertex_weights[v][k]) || mesh.vertex_weights[v][k] < 0) {
          out << "vertex " << v << " has an invalid skin influence";
          return out.str();
        }
      }
    }
  } else if (mesh.attach_joint >= skeleton.num_joints() || mesh.attach_joint < -1 ||
             !Finite(mesh.attach_bind)) {
    out << "attach joint " << mesh.attach_joint << " is not a joint of the skeleton";
    return out.str();
  }
  return CheckMorphTargets(mesh);
}

int CountMorphTargets(std::span<const Mesh> meshes) {
  int count = 0;
  for (const Mesh& mesh : meshes) count += static_cast<int>(mesh.morph_targets.size());
  return count;
}

std::vector<WeightChannel> MorphWeightChannels(std::span<const Mesh> meshes) {
  std::vector<WeightChannel> channels;
  for (const Mesh& mesh : meshes) {
    for (const MorphTarget& target : mesh.morph_targets)
      channels.push_back({mesh.name, target.name});
  }
  return channels;
}

void DeformMesh(const Mesh& mesh, std::span<const Eigen::Isometry3d> world,
                std::vector<Eigen::Vector3d>* positions, std::span<const double> weights,
                std::span<const Eigen::Matrix3d> linear) {
  auto scaled = [&](int joint) {
    Eigen::Affine3d a(world[joint].matrix());
    if (!linear.empty()) a.linear() = linear[joint];
    return a;
  };
  const std::size_t n = mesh.positions.size();
  std::vector<Eigen::Vector3d> morphed;
  const std::vector<Eigen::Vector3d>* base = &mesh.positions;
  if (!mesh.morph_targets.empty()) {
    morphed = mesh.positions;
    for (std::size_t t = 0; t < mesh.morph_targets.size(); ++t) {
      const MorphTarget& target = mesh.morph_targets[t];
      const double w = t < weights.size() ? weights[t] : target.default_weight;
      if (w == 0) continue;
      for (std::size_t i = 0; i < target.vertices.size(); ++i) {
        morphed[target.vertices[i]] += w * target.position_deltas[i];
      }
    }
    base = &morphed;
  }
  const std::vector<Eigen::Vector3d>& bind = *base;
  positions->resize(n);
  if (mesh.skinned()) {
    std::vector<Eigen::Affine3d> skin(mesh.skin_joints.size());
    for (std::size_t i = 0; i < skin.size(); ++i) {
      skin[i] = linear.empty()
                    ? Eigen::Affine3d(
                          (world[mesh.skin_joints[i]] * mesh.bind_world[i].inverse()).matrix())
                    : scaled(mesh.skin_joints[i]) * mesh.bind_world[i].inverse();
    }
    for (std::size_t v = 0; v < n; ++v) {
      Eigen::Vector3d p = Eigen::Vector3d::Zero();
      double total = 0;
      for (int k = 0; k < Mesh::kMaxInfluences; ++k) {
        const double w = mesh.vertex_weights[v][k];
        if (w == 0) continue;
        p += w * (skin[mesh.vertex_joints[v][k]] * bind[v]);
        total += w;
      }
      (*positions)[v] = total > 0 ? Eigen::Vector3d(p / total) : bind[v];
    }
    return;
  }
  if (mesh.attach_joint < 0) {
    *positions = bind;
    return;
  }
  if (!linear.empty()) {
    const Eigen::Affine3d motion = scaled(mesh.attach_joint) * mesh.attach_bind.inverse();
    for (std::size_t v = 0; v < n; ++v) (*positions)[v] = motion * bind[v];
    return;
  }
  const Eigen::Isometry3d motion = world[mesh.attach_joint] * mesh.attach_bind.inverse();
  for (std::size_t v = 0; v < n; ++v) (*positions)[v] = motion * bind[v];
}

void ScaleMesh(Mesh& mesh, double factor) {
  for (Eigen::Vector3d& p : mesh.positions) p *= factor;
  for (Eigen::Isometry3d& b : mesh.bind_world) b.translation() *= factor;
  mesh.attach_bind.translation() *= factor;
  for (MorphTarget& target : mesh.morph_targets) {
    for (Eigen::Vector3d& d : target.position_deltas) d *= factor;
  }
}

}  // namespace rigel
