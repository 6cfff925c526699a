#include "core/mesh.h"

#include <cmath>
#include <sstream>

namespace rigel {

namespace {

bool Finite(const Eigen::Isometry3d& t) { return t.matrix().allFinite(); }

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
  return "";
}

void DeformMesh(const Mesh& mesh, std::span<const Eigen::Isometry3d> world,
                std::vector<Eigen::Vector3d>* positions) {
  const std::size_t n = mesh.positions.size();
  positions->resize(n);
  if (mesh.skinned()) {
    std::vector<Eigen::Isometry3d> skin(mesh.skin_joints.size());
    for (std::size_t i = 0; i < skin.size(); ++i) {
      skin[i] = world[mesh.skin_joints[i]] * mesh.bind_world[i].inverse();
    }
    for (std::size_t v = 0; v < n; ++v) {
      Eigen::Vector3d p = Eigen::Vector3d::Zero();
      double total = 0;
      for (int k = 0; k < Mesh::kMaxInfluences; ++k) {
        const double w = mesh.vertex_weights[v][k];
        if (w == 0) continue;
        p += w * (skin[mesh.vertex_joints[v][k]] * mesh.positions[v]);
        total += w;
      }
      (*positions)[v] = total > 0 ? Eigen::Vector3d(p / total) : mesh.positions[v];
    }
    return;
  }
  if (mesh.attach_joint < 0) {
    *positions = mesh.positions;
    return;
  }
  const Eigen::Isometry3d motion = world[mesh.attach_joint] * mesh.attach_bind.inverse();
  for (std::size_t v = 0; v < n; ++v) (*positions)[v] = motion * mesh.positions[v];
}

void ScaleMesh(Mesh& mesh, double factor) {
  for (Eigen::Vector3d& p : mesh.positions) p *= factor;
  for (Eigen::Isometry3d& b : mesh.bind_world) b.translation() *= factor;
  mesh.attach_bind.translation() *= factor;
}

}  // namespace rigel
