#include "core/mesh.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>

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
  std::size_t fans = 0;
  for (const std::uint32_t k : mesh.polygon_triangles) fans += k;
  if (!mesh.polygon_triangles.empty() &&
      (fans != mesh.triangles.size() / 3 ||
       std::find(mesh.polygon_triangles.begin(), mesh.polygon_triangles.end(), 0u) !=
           mesh.polygon_triangles.end())) {
    out << "its " << mesh.polygon_triangles.size() << " polygons make " << fans
        << " triangles, not its " << mesh.triangles.size() / 3 << " (or one makes none)";
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

std::size_t CountPolygons(std::span<const Mesh> meshes) {
  std::size_t count = 0;
  for (const Mesh& mesh : meshes) {
    for (const std::uint32_t k : mesh.polygon_triangles) count += k > 1 ? 1 : 0;
  }
  return count;
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

namespace {

// Appends the bytes of `value` to `key`.
template <typename T>
void AppendBytes(std::string* key, const T& value) {
  key->append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

std::vector<std::uint32_t> VertexClasses(const Mesh& mesh, bool normals_and_uvs,
                                         std::vector<std::uint32_t>* first) {
  const std::size_t count = mesh.positions.size();
  std::vector<std::uint32_t>& kept = *first;
  kept.clear();
  std::vector<std::uint32_t> kept_of(count);  // the class of each vertex
  // An index out of range is CheckMesh's to report: such a mesh's vertices are each their own.
  bool valid = std::all_of(mesh.triangles.begin(), mesh.triangles.end(),
                           [count](std::uint32_t index) { return index < count; });
  for (const MorphTarget& target : mesh.morph_targets) {
    valid = valid && target.position_deltas.size() == target.vertices.size() &&
            std::all_of(target.vertices.begin(), target.vertices.end(),
                        [count](std::uint32_t v) { return v < count; });
  }
  if (!valid) {
    for (std::size_t v = 0; v < count; ++v) {
      kept.push_back(static_cast<std::uint32_t>(v));
      kept_of[v] = static_cast<std::uint32_t>(v);
    }
    return kept_of;
  }
  const bool normals = normals_and_uvs && mesh.normals.size() == count;
  const bool uvs = normals_and_uvs && mesh.uvs.size() == count;
  const bool skin = mesh.vertex_joints.size() == count && mesh.vertex_weights.size() == count;
  // Each morph target's entry of each vertex (-1: the vertex does not move in it).
  std::vector<std::vector<int>> entry(mesh.morph_targets.size());
  for (std::size_t t = 0; t < mesh.morph_targets.size(); ++t) {
    const MorphTarget& target = mesh.morph_targets[t];
    entry[t].assign(count, -1);
    for (std::size_t k = 0; k < target.vertices.size(); ++k) {
      entry[t][target.vertices[k]] = static_cast<int>(k);
    }
  }
  // A vertex's offsets in target t, zero where it does not move.
  const auto offsets = [&](std::size_t t, std::size_t v) {
    const MorphTarget& target = mesh.morph_targets[t];
    const int k = entry[t][v];
    const Eigen::Vector3d zero = Eigen::Vector3d::Zero();
    const Eigen::Vector3d& position = k < 0 ? zero : target.position_deltas[k];
    const Eigen::Vector3d& normal = k < 0 || target.normal_deltas.size() != target.vertices.size()
                                        ? zero
                                        : target.normal_deltas[k];
    return std::make_pair(position, normal);
  };
  const auto same_offsets = [&](std::size_t a, std::size_t b) {
    for (std::size_t t = 0; t < entry.size(); ++t) {
      const auto [pa, na] = offsets(t, a);
      const auto [pb, nb] = offsets(t, b);
      if (std::memcmp(pa.data(), pb.data(), sizeof(double) * 3) != 0 ||
          std::memcmp(na.data(), nb.data(), sizeof(double) * 3) != 0) {
        return false;
      }
    }
    return true;
  };
  // The bytes of a vertex's own attributes, and the vertices kept so far by those bytes.
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_key;
  std::string key;
  for (std::size_t v = 0; v < count; ++v) {
    key.clear();
    AppendBytes(&key, mesh.positions[v]);
    if (normals) AppendBytes(&key, mesh.normals[v]);
    if (uvs) AppendBytes(&key, mesh.uvs[v]);
    if (skin) {
      AppendBytes(&key, mesh.vertex_joints[v]);
      AppendBytes(&key, mesh.vertex_weights[v]);
    }
    std::vector<std::uint32_t>& same = by_key[key];
    std::uint32_t to = static_cast<std::uint32_t>(kept.size());
    for (const std::uint32_t k : same) {
      if (same_offsets(kept[k], v)) {
        to = k;
        break;
      }
    }
    if (to == kept.size()) {
      same.push_back(to);
      kept.push_back(static_cast<std::uint32_t>(v));
    }
    kept_of[v] = to;
  }
  return kept_of;
}

std::size_t WeldVertices(Mesh& mesh) {
  const std::size_t count = mesh.positions.size();
  std::vector<std::uint32_t> kept;
  const std::vector<std::uint32_t> kept_of = VertexClasses(mesh, true, &kept);
  const bool normals = mesh.normals.size() == count, uvs = mesh.uvs.size() == count;
  const bool skin = mesh.vertex_joints.size() == count && mesh.vertex_weights.size() == count;
  const std::size_t merged = count - kept.size();
  if (merged == 0) return 0;
  const auto keep = [&kept](auto& values) {
    if (values.empty()) return;
    std::remove_reference_t<decltype(values)> out;
    out.reserve(kept.size());
    for (const std::uint32_t v : kept) out.push_back(values[v]);
    values = std::move(out);
  };
  keep(mesh.positions);
  if (normals) keep(mesh.normals);
  if (uvs) keep(mesh.uvs);
  if (skin) {
    keep(mesh.vertex_joints);
    keep(mesh.vertex_weights);
  }
  for (std::uint32_t& index : mesh.triangles) index = kept_of[index];
  // A target keeps the entries of kept vertices (a merged one's offsets are its kept twin's).
  for (std::size_t t = 0; t < mesh.morph_targets.size(); ++t) {
    MorphTarget& target = mesh.morph_targets[t];
    const bool with_normals = target.normal_deltas.size() == target.vertices.size();
    MorphTarget out;
    out.name = std::move(target.name);
    out.default_weight = target.default_weight;
    for (std::size_t k = 0; k < target.vertices.size(); ++k) {
      const std::uint32_t v = target.vertices[k];
      if (kept[kept_of[v]] != v) continue;
      out.vertices.push_back(kept_of[v]);
      out.position_deltas.push_back(target.position_deltas[k]);
      if (with_normals) out.normal_deltas.push_back(target.normal_deltas[k]);
    }
    target = std::move(out);
  }
  return merged;
}

}  // namespace rigel
