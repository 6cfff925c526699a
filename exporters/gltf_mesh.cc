// The glTF writer's meshes (exporters/gltf_internal.h): geometry, skin and morph targets.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "exporters/gltf_internal.h"

namespace rigel::gltf_internal {

namespace {

constexpr int kUnsignedShort = 5123;
constexpr int kUnsignedInt = 5125;
constexpr int kArrayBuffer = 34962;
constexpr int kElementArrayBuffer = 34963;

// Adds one morph-target attribute: `deltas` of the `vertices` listed (of `count`), turned by
// `linear` and scaled by `scale`, as an accessor: dense when that is smaller, else sparse (a
// target that moves no vertex lists vertex 0 with a zero offset: Assimp 5.2 reads no accessor
// without data). POSITION needs `bounds`.
int AddTargetAttribute(std::span<const Eigen::Vector3d> deltas,
                       std::span<const std::uint32_t> vertices, std::size_t count,
                       const Eigen::Matrix3d& linear, double scale, bool bounds,
                       BufferBuilder& buffer, nlohmann::json& gltf) {
  static constexpr std::uint32_t kFirst = 0;
  static const Eigen::Vector3d kZero = Eigen::Vector3d::Zero();
  if (vertices.empty()) {
    vertices = std::span<const std::uint32_t>(&kFirst, 1);
    deltas = std::span<const Eigen::Vector3d>(&kZero, 1);
  }
  std::vector<float> values;
  values.reserve(deltas.size() * 3);
  std::vector<float> lo(3, vertices.size() < count ? 0.0f : INFINITY);
  std::vector<float> hi(3, vertices.size() < count ? 0.0f : -INFINITY);
  for (const Eigen::Vector3d& d : deltas) {
    const Eigen::Vector3d q = linear * d * scale;
    for (int a = 0; a < 3; ++a) {
      values.push_back(static_cast<float>(q[a]));
      lo[a] = std::min(lo[a], values.back());
      hi[a] = std::max(hi[a], values.back());
    }
  }
  if (vertices.size() * 16 >= count * 12) {  // dense is smaller
    std::vector<float> dense(count * 3, 0.0f);
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      for (int a = 0; a < 3; ++a) dense[vertices[i] * 3 + a] = values[i * 3 + a];
    }
    const int index = buffer.Add(dense, "VEC3", 3, bounds, gltf);
    gltf["bufferViews"].back()["target"] = kArrayBuffer;
    return index;
  }
  const int indices = buffer.AddRaw(vertices.data(), vertices.size() * 4, kUnsignedInt, "SCALAR",
                                    vertices.size(), 0, gltf);
  const int data = buffer.Add(values, "VEC3", 3, false, gltf);
  // The two accessors only laid out the views: the sparse accessor points at the views.
  nlohmann::json accessor = {
      {"componentType", kFloat},
      {"count", count},
      {"type", "VEC3"},
      {"sparse",
       {{"count", vertices.size()},
        {"indices",
         {{"bufferView", gltf["accessors"][indices]["bufferView"]},
          {"componentType", kUnsignedInt}}},
        {"values", {{"bufferView", gltf["accessors"][data]["bufferView"]}}}}}};
  gltf["accessors"].erase(gltf["accessors"].end() - 2, gltf["accessors"].end());
  if (bounds) {
    accessor["min"] = lo;
    accessor["max"] = hi;
  }
  gltf["accessors"].push_back(accessor);
  return static_cast<int>(gltf["accessors"].size()) - 1;
}

// The morph targets of `mesh` on `primitive` and `gltf_mesh` (weights at rest, target names in
// extras.targetNames as Blender and three.js read them). NORMAL offsets are written for every
// target when the mesh has normals and some target has normal offsets.
void AddMorphTargets(const Mesh& mesh, const Eigen::Matrix3d& linear, double scale,
                     BufferBuilder& buffer, nlohmann::json& gltf, nlohmann::json& primitive,
                     nlohmann::json& gltf_mesh) {
  if (mesh.morph_targets.empty()) return;
  const std::size_t n = mesh.positions.size();
  const bool normals = !mesh.normals.empty() &&
                       std::any_of(mesh.morph_targets.begin(), mesh.morph_targets.end(),
                                   [](const MorphTarget& t) { return !t.normal_deltas.empty(); });
  std::vector<double> weights;
  std::vector<std::string> names;
  for (const MorphTarget& t : mesh.morph_targets) {
    nlohmann::json target;
    target["POSITION"] =
        AddTargetAttribute(t.position_deltas, t.vertices, n, linear, scale, true, buffer, gltf);
    if (normals) {
      const bool given = !t.normal_deltas.empty();
      target["NORMAL"] = AddTargetAttribute(
          given ? std::span<const Eigen::Vector3d>(t.normal_deltas)
                : std::span<const Eigen::Vector3d>(),
          given ? std::span<const std::uint32_t>(t.vertices) : std::span<const std::uint32_t>(), n,
          linear, 1.0, false, buffer, gltf);
    }
    primitive["targets"].push_back(target);
    weights.push_back(t.default_weight);
    names.push_back(t.name);
  }
  gltf_mesh["weights"] = weights;
  gltf_mesh["extras"] = {{"targetNames", names}};
}

// POSITION, NORMAL and TEXCOORD_0 of the mesh, turned into to_space (positions scaled).
nlohmann::json AddVertexAttributes(const Mesh& mesh, double scale,
                                   const Eigen::Isometry3d& to_space, BufferBuilder& buffer,
                                   nlohmann::json& gltf) {
  const std::size_t n = mesh.positions.size();
  std::vector<float> positions, normals, uvs;
  positions.reserve(n * 3);
  for (const Eigen::Vector3d& p : mesh.positions) {
    const Eigen::Vector3d q = to_space * p;
    for (int a = 0; a < 3; ++a) positions.push_back(static_cast<float>(q[a] * scale));
  }
  nlohmann::json attributes;
  attributes["POSITION"] = buffer.Add(positions, "VEC3", 3, true, gltf);
  gltf["bufferViews"].back()["target"] = kArrayBuffer;
  if (!mesh.normals.empty()) {
    for (const Eigen::Vector3d& v : mesh.normals) {
      Eigen::Vector3f f = (to_space.linear() * v).cast<float>();
      f.normalize();
      for (int a = 0; a < 3; ++a) normals.push_back(f[a]);
    }
    attributes["NORMAL"] = buffer.Add(normals, "VEC3", 3, false, gltf);
    gltf["bufferViews"].back()["target"] = kArrayBuffer;
  }
  if (!mesh.uvs.empty()) {
    for (const Eigen::Vector2d& uv : mesh.uvs) {  // glTF's v runs down the image
      uvs.push_back(static_cast<float>(uv.x()));
      uvs.push_back(static_cast<float>(1.0 - uv.y()));
    }
    attributes["TEXCOORD_0"] = buffer.Add(uvs, "VEC2", 2, false, gltf);
    gltf["bufferViews"].back()["target"] = kArrayBuffer;
  }
  return attributes;
}

// JOINTS_n and WEIGHTS_n: one set of four influences, two when a vertex uses more than four.
void AddSkinAttributes(const Mesh& mesh, BufferBuilder& buffer, nlohmann::json& gltf,
                       nlohmann::json& attributes) {
  const std::size_t n = mesh.positions.size();
  int used = 1;
  for (const auto& w : mesh.vertex_weights) {
    for (int k = Mesh::kMaxInfluences - 1; k >= used; --k) {
      if (w[k] > 0) used = k + 1;
    }
  }
  const int sets = used > 4 ? 2 : 1;
  std::vector<std::uint16_t> joints(n * 4 * sets, 0);
  std::vector<float> weights(n * 4 * sets, 0.0f);
  for (std::size_t v = 0; v < n; ++v) {
    // Float weights summing to 1: normalised, then the largest absorbs the rounding.
    float total = 0;
    for (int k = 0; k < Mesh::kMaxInfluences; ++k) total += mesh.vertex_weights[v][k];
    float* w = &weights[v * 4 * sets];
    std::uint16_t* j = &joints[v * 4 * sets];
    int largest = 0;
    float sum = 0;
    for (int k = 0; k < 4 * sets; ++k) {
      w[k] = total > 0 ? mesh.vertex_weights[v][k] / total : (k == 0 ? 1.0f : 0.0f);
      if (w[k] > 0) j[k] = mesh.vertex_joints[v][k];
      if (w[k] > w[largest]) largest = k;
      sum += w[k];
    }
    w[largest] += 1.0f - sum;
  }
  for (int set = 0; set < sets; ++set) {
    std::vector<std::uint16_t> set_joints(n * 4);
    std::vector<float> set_weights(n * 4);
    for (std::size_t v = 0; v < n; ++v) {
      for (int k = 0; k < 4; ++k) {
        set_joints[v * 4 + k] = joints[v * 4 * sets + set * 4 + k];
        set_weights[v * 4 + k] = weights[v * 4 * sets + set * 4 + k];
      }
    }
    attributes[fmt::format("JOINTS_{}", set)] = buffer.AddRaw(
        set_joints.data(), set_joints.size() * 2, kUnsignedShort, "VEC4", n, kArrayBuffer, gltf);
    attributes[fmt::format("WEIGHTS_{}", set)] = buffer.Add(set_weights, "VEC4", 4, false, gltf);
    gltf["bufferViews"].back()["target"] = kArrayBuffer;
  }
}

// The skin (inverse bind matrices in to_space, scaled); returns its index.
std::size_t AddSkin(const Mesh& mesh, double scale, const Eigen::Isometry3d& to_space,
                    BufferBuilder& buffer, nlohmann::json& gltf) {
  std::vector<float> ibm;
  ibm.reserve(mesh.bind_world.size() * 16);
  for (const Eigen::Isometry3d& bind : mesh.bind_world) {
    Eigen::Isometry3d b = to_space * bind;
    b.translation() *= scale;
    const Eigen::Matrix4d m = b.inverse().matrix();
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) ibm.push_back(static_cast<float>(m(r, c)));
    }
  }
  gltf["skins"].push_back({{"name", mesh.name + "_skin"},
                           {"joints", mesh.skin_joints},
                           {"inverseBindMatrices", buffer.Add(ibm, "MAT4", 16, false, gltf)}});
  return gltf["skins"].size() - 1;
}

}  // namespace

int AddMesh(const Mesh& mesh, double scale, const Eigen::Matrix3d& rotation, BufferBuilder& buffer,
            nlohmann::json& gltf, std::vector<int>* scene_nodes,
            std::vector<std::string>* materials) {
  // Where the geometry is expressed: world at bind (skinned, static: turned into glTF's frame),
  // or the attach joint's space at bind (attached: the node follows the joint).
  Eigen::Isometry3d to_space = Eigen::Isometry3d::Identity();
  to_space.linear() = rotation;
  if (!mesh.skinned() && mesh.attach_joint >= 0) to_space = mesh.attach_bind.inverse();
  nlohmann::json attributes = AddVertexAttributes(mesh, scale, to_space, buffer, gltf);
  nlohmann::json node = {{"name", mesh.name}};
  if (mesh.skinned()) {
    AddSkinAttributes(mesh, buffer, gltf, attributes);
    node["skin"] = AddSkin(mesh, scale, to_space, buffer, gltf);
  }
  nlohmann::json primitive = {{"attributes", attributes}, {"mode", 4}};
  if (!mesh.triangles.empty()) {
    primitive["indices"] =
        buffer.AddRaw(mesh.triangles.data(), mesh.triangles.size() * 4, kUnsignedInt, "SCALAR",
                      mesh.triangles.size(), kElementArrayBuffer, gltf);
  }
  if (!mesh.material.empty()) {
    auto it = std::find(materials->begin(), materials->end(), mesh.material);
    if (it == materials->end()) {
      materials->push_back(mesh.material);
      it = materials->end() - 1;
    }
    primitive["material"] = it - materials->begin();
  }
  nlohmann::json gltf_mesh = {{"name", mesh.name}};
  AddMorphTargets(mesh, to_space.linear(), scale, buffer, gltf, primitive, gltf_mesh);
  gltf_mesh["primitives"] = nlohmann::json::array({primitive});
  gltf["meshes"].push_back(gltf_mesh);
  node["mesh"] = gltf["meshes"].size() - 1;
  const int index = static_cast<int>(gltf["nodes"].size());
  gltf["nodes"].push_back(node);
  if (!mesh.skinned() && mesh.attach_joint >= 0) {
    gltf["nodes"][mesh.attach_joint]["children"].push_back(index);
  } else {
    scene_nodes->push_back(index);
  }
  return index;
}

}  // namespace rigel::gltf_internal
