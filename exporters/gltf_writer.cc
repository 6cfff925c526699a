#include "exporters/gltf_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "core/channel.h"
#include "core/curves/key_reduction.h"
#include "core/pose.h"
#include "exporters/export_check.h"

namespace rigel {

namespace {

constexpr int kFloat = 5126;

std::string Base64(const std::string& bytes) {
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += kTable[(n >> 6) & 63];
    out += kTable[n & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) {
      n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    }
    out += kTable[(n >> 18) & 63];
    out += kTable[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kTable[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Accumulates the binary buffer, its views and accessors.
class BufferBuilder {
 public:
  // Adds `values` (float32) as one view + accessor of `type` ("SCALAR", "VEC3", ...); returns the
  // accessor index. min/max are written when `bounds` is set.
  int Add(const std::vector<float>& values, const char* type, int components, bool bounds,
          nlohmann::json& gltf) {
    while (data_.size() % 4) data_.push_back('\0');
    const std::size_t offset = data_.size();
    data_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    nlohmann::json view = {
        {"buffer", 0}, {"byteOffset", offset}, {"byteLength", values.size() * sizeof(float)}};
    gltf["bufferViews"].push_back(view);
    nlohmann::json accessor = {{"bufferView", gltf["bufferViews"].size() - 1},
                               {"componentType", kFloat},
                               {"count", values.size() / components},
                               {"type", type}};
    if (bounds) {
      std::vector<float> lo(components, INFINITY), hi(components, -INFINITY);
      for (std::size_t i = 0; i < values.size(); ++i) {
        lo[i % components] = std::min(lo[i % components], values[i]);
        hi[i % components] = std::max(hi[i % components], values[i]);
      }
      accessor["min"] = lo;
      accessor["max"] = hi;
    }
    gltf["accessors"].push_back(accessor);
    return static_cast<int>(gltf["accessors"].size()) - 1;
  }
  // Adds raw little-endian `bytes` (count elements of `type` with `component_type`) as one view
  // (with `target`: 34962 vertex attributes, 34963 indices; 0 none) and one accessor.
  int AddRaw(const void* bytes, std::size_t size, int component_type, const char* type,
             std::size_t count, int target, nlohmann::json& gltf) {
    while (data_.size() % 4) data_.push_back('\0');
    const std::size_t offset = data_.size();
    data_.append(static_cast<const char*>(bytes), size);
    nlohmann::json view = {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", size}};
    if (target != 0) view["target"] = target;
    gltf["bufferViews"].push_back(view);
    gltf["accessors"].push_back({{"bufferView", gltf["bufferViews"].size() - 1},
                                 {"componentType", component_type},
                                 {"count", count},
                                 {"type", type}});
    return static_cast<int>(gltf["accessors"].size()) - 1;
  }
  std::string& data() { return data_; }

 private:
  std::string data_;
};

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

// Adds `mesh` (core/mesh.h) to `gltf`: its node (a root, or a child of its attach joint's node),
// its primitive and, when skinned, its own skin. `scale`: metres per unit.
int AddMesh(const Mesh& mesh, double scale, const Eigen::Matrix3d& rotation, BufferBuilder& buffer,
            nlohmann::json& gltf, std::vector<int>* scene_nodes,
            std::vector<std::string>* materials) {
  // Where the geometry is expressed: world at bind (skinned, static: turned into glTF's frame),
  // or the attach joint's space at bind (attached: the node follows the joint).
  Eigen::Isometry3d to_space = Eigen::Isometry3d::Identity();
  to_space.linear() = rotation;
  if (!mesh.skinned() && mesh.attach_joint >= 0) to_space = mesh.attach_bind.inverse();
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
  nlohmann::json node = {{"name", mesh.name}};
  if (mesh.skinned()) {
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
    node["skin"] = gltf["skins"].size() - 1;
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

// The blend-shape weights of `clip` (core/clip.h: column w is the w-th target of `meshes`) as one
// LINEAR "weights" channel per mesh with targets, on the mesh's node (`mesh_nodes`).
void AddWeightChannels(const Clip& clip, std::span<const Mesh> meshes,
                       const std::vector<int>& mesh_nodes, int input, BufferBuilder& buffer,
                       nlohmann::json& gltf, nlohmann::json& anim) {
  if (clip.num_weights() == 0) return;
  int column = 0;
  for (std::size_t m = 0; m < meshes.size(); ++m) {
    const int targets = static_cast<int>(meshes[m].morph_targets.size());
    if (targets == 0) continue;
    std::vector<float> values;
    values.reserve(static_cast<std::size_t>(clip.num_frames()) * targets);
    for (int f = 0; f < clip.num_frames(); ++f) {
      const std::span<const double> row = clip.weights(f);
      for (int t = 0; t < targets; ++t) values.push_back(static_cast<float>(row[column + t]));
    }
    column += targets;
    const int output = buffer.Add(values, "SCALAR", 1, false, gltf);
    anim["samplers"].push_back({{"input", input}, {"output", output}, {"interpolation", "LINEAR"}});
    anim["channels"].push_back({{"sampler", anim["samplers"].size() - 1},
                                {"target", {{"node", mesh_nodes[m]}, {"path", "weights"}}}});
  }
}

// The key lists a reduced clip's samplers are written with (`keys`: core/curves/key_reduction.h;
// a joint without such channels holds one key). glTF states no frame rate or duration, and readers
// that take them from the keys (Assimp's importer in rigel) need two keys one frame apart
// somewhere and a key on the last frame: when no list has them, frames 1 and the last are added
// to a rotation list that holds one value (keyed again with that value: the curve does not
// change), else frame 1 to the root's translation or rotation list (its value interpolated
// between its neighbours, so the curve is the same one). added[j] (rotation) and added[n + j]
// (translation) mark the lists changed: kHeld, kInterpolated.
constexpr char kHeld = 1, kInterpolated = 2;

void SampledKeyLists(const ClipKeys& keys, int frames, const std::vector<bool>& has_translation,
                     std::vector<std::vector<int>>& rotation,
                     std::vector<std::vector<int>>& translation, std::vector<char>& added) {
  const int n = static_cast<int>(keys.joints.size());
  rotation.assign(n, {});
  translation.assign(n, {});
  added.assign(2 * n, 0);
  bool adjacent = frames < 2, last = frames < 2;
  auto has_adjacent = [](const std::vector<int>& k) {
    for (std::size_t i = 1; i < k.size(); ++i) {
      if (k[i] == k[i - 1] + 1) return true;
    }
    return false;
  };
  for (int j = 0; j < n; ++j) {
    rotation[j] = keys.joints[j].rotation.empty() ? std::vector<int>{0} : keys.joints[j].rotation;
    translation[j] =
        keys.joints[j].translation.empty() ? std::vector<int>{0} : keys.joints[j].translation;
    adjacent = adjacent || has_adjacent(rotation[j]) ||
               (has_translation[j] && has_adjacent(translation[j]));
    last = last || rotation[j].back() == frames - 1 ||
           (has_translation[j] && translation[j].back() == frames - 1);
  }
  if (adjacent && last) return;
  for (int j = 0; j < n; ++j) {
    std::vector<int>& k = rotation[j];
    if (k.size() != 1) continue;
    if (!adjacent) k.push_back(1);
    if (!last && k.back() != frames - 1) k.push_back(frames - 1);
    added[j] = kHeld;
    return;
  }
  // Every rotation list moves, so every one ends on the last frame: only frame 1 is missing.
  const bool moves = has_translation[0] && translation[0].size() > 1;
  std::vector<int>& k = moves ? translation[0] : rotation[0];
  k.insert(k.begin() + 1, 1);
  added[moves ? n : 0] = kInterpolated;
}

// The values of a dense track (`components` floats per frame) at `keys`; `added` as
// SampledKeyLists marked the list: kHeld, every key takes frame 0's value; kInterpolated, the key
// at frame 1 takes the value between its neighbours (slerp for quaternions).
std::vector<float> KeyedValues(const std::vector<float>& dense, int components,
                               const std::vector<int>& keys, bool quaternion, char added) {
  std::vector<float> out;
  out.reserve(keys.size() * components);
  auto at = [&](int f) {
    Eigen::VectorXd v(components);
    for (int c = 0; c < components; ++c) v[c] = dense[static_cast<std::size_t>(f) * components + c];
    return v;
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Eigen::VectorXd v = at(added == kHeld ? keys[0] : keys[i]);
    if (added == kInterpolated && i == 1) {
      const int a = keys[0], b = keys[2];
      const double s = static_cast<double>(keys[1] - a) / (b - a);
      if (quaternion) {
        const Eigen::VectorXd qa = at(a), qb = at(b);
        const Eigen::Quaterniond q = Eigen::Quaterniond(qa[3], qa[0], qa[1], qa[2])
                                         .slerp(s, Eigen::Quaterniond(qb[3], qb[0], qb[1], qb[2]));
        v << q.x(), q.y(), q.z(), q.w();
      } else {
        v = (1 - s) * at(a) + s * at(b);
      }
    }
    for (int c = 0; c < components; ++c) out.push_back(static_cast<float>(v[c]));
  }
  return out;
}

}  // namespace

std::string FormatGltf(const Skeleton& skeleton, std::span<const Clip> clips,
                       const GltfOptions& options, const std::string& name) {
  CheckClipsForExport(skeleton, clips, name, options.meshes);
  const double scale = options.metres_per_unit > 0 ? options.metres_per_unit : 1.0;
  const int n = skeleton.num_joints();
  nlohmann::json gltf;
  gltf["asset"] = {{"version", "2.0"}, {"generator", "rigel"}};
  gltf["nodes"] = nlohmann::json::array();
  gltf["bufferViews"] = nlohmann::json::array();
  gltf["accessors"] = nlohmann::json::array();
  BufferBuilder buffer;

  std::unordered_set<std::string> names(skeleton.names().begin(), skeleton.names().end());
  auto vec3 = [&](const Eigen::Vector3d& v) {
    return std::vector<double>{v.x() * scale, v.y() * scale, v.z() * scale};
  };
  const Eigen::Quaterniond turn(options.rotation);
  const bool turned = !options.rotation.isIdentity();
  auto is_root = [&skeleton](int j) { return skeleton.parent(j) == Skeleton::kNoParent; };
  for (int j = 0; j < n; ++j) {
    const bool root = turned && is_root(j);
    const Eigen::Quaterniond q =
        root ? turn * skeleton.rest_orientation(j) : skeleton.rest_orientation(j);
    const Eigen::Vector3d t =
        root ? options.rotation * skeleton.rest_translation(j) : skeleton.rest_translation(j);
    nlohmann::json node = {{"name", skeleton.name(j)},
                           {"translation", vec3(t)},
                           {"rotation", {q.x(), q.y(), q.z(), q.w()}}};
    std::vector<int> children(skeleton.children(j).begin(), skeleton.children(j).end());
    if (!children.empty()) node["children"] = children;
    gltf["nodes"].push_back(node);
  }
  // End sites: leaf nodes (joints of the skin, so Blender gives the last bones their length).
  const Pose rest(skeleton);
  for (std::size_t e = 0; e < skeleton.end_sites().size(); ++e) {
    const EndSite& site = skeleton.end_sites()[e];
    std::string end_name = skeleton.name(site.parent) + "_end";
    for (int k = 1; names.count(end_name); ++k) {
      end_name = fmt::format("{}_end.{}", skeleton.name(site.parent), k);
    }
    names.insert(end_name);
    const int index = static_cast<int>(gltf["nodes"].size());
    gltf["nodes"].push_back({{"name", end_name}, {"translation", vec3(site.offset)}});
    gltf["nodes"][site.parent]["children"].push_back(index);
  }
  const int num_nodes = static_cast<int>(gltf["nodes"].size());
  // Inverse bind matrices: the rest pose (all channels zero), in metres, column-major.
  std::vector<float> ibm;
  ibm.reserve(static_cast<std::size_t>(num_nodes) * 16);
  auto push_inverse = [&](Eigen::Affine3d world) {
    world = Eigen::Affine3d(Eigen::Affine3d(options.rotation) * world);
    world.translation() *= scale;
    const Eigen::Matrix4d m = world.inverse(Eigen::Isometry).matrix();
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) ibm.push_back(static_cast<float>(m(r, c)));
    }
  };
  for (int j = 0; j < n; ++j) push_inverse(Eigen::Affine3d(rest.world[j].matrix()));
  for (const EndSite& site : skeleton.end_sites()) {
    Eigen::Affine3d w(rest.world[site.parent].matrix());
    w.translation() = rest.world[site.parent] * site.offset;
    push_inverse(w);
  }
  std::vector<int> skin_joints(num_nodes);
  for (int i = 0; i < num_nodes; ++i) skin_joints[i] = i;
  std::vector<int> roots;
  for (int j = 0; j < n; ++j) {
    if (skeleton.parent(j) == Skeleton::kNoParent) roots.push_back(j);
  }
  gltf["skins"] = {{{"name", "rigel_skeleton"},
                    {"joints", skin_joints},
                    {"skeleton", roots.front()},
                    {"inverseBindMatrices", buffer.Add(ibm, "MAT4", 16, false, gltf)}}};
  std::vector<int> scene_nodes = roots;
  std::vector<std::string> materials;
  std::vector<int> mesh_nodes;
  if (!options.meshes.empty()) gltf["meshes"] = nlohmann::json::array();
  for (const Mesh& mesh : options.meshes) {
    if (std::string fault = CheckMesh(skeleton, mesh); !fault.empty()) {
      throw ExportError(name + ": " + fault);
    }
    mesh_nodes.push_back(
        AddMesh(mesh, scale, options.rotation, buffer, gltf, &scene_nodes, &materials));
  }
  if (!materials.empty()) {
    gltf["materials"] = nlohmann::json::array();
    for (const std::string& m : materials) gltf["materials"].push_back({{"name", m}});
  }
  gltf["scenes"] = {{{"name", "Scene"}, {"nodes", scene_nodes}}};
  gltf["scene"] = 0;

  gltf["animations"] = nlohmann::json::array();
  std::vector<bool> has_translation(n, false);
  for (int j = 0; j < n; ++j) {
    for (int axis = 0; axis < 3; ++axis) {
      if (skeleton.translation_channel(j, axis) >= 0) has_translation[j] = true;
    }
  }
  if (!options.keys.empty() && options.keys.size() != clips.size()) {
    throw ExportError(
        fmt::format("{}: {} key sets for {} clips", name, options.keys.size(), clips.size()));
  }
  for (std::size_t ci = 0; ci < clips.size(); ++ci) {
    const Clip& clip = clips[ci];
    const int frames = clip.num_frames();
    std::vector<float> times(frames);
    for (int f = 0; f < frames; ++f) times[f] = static_cast<float>(f * clip.frame_time());
    std::vector<std::vector<int>> rotation_keys, translation_keys;
    std::vector<char> added;
    if (!options.keys.empty()) {
      if (static_cast<int>(options.keys[ci].joints.size()) != n) {
        throw ExportError(name + ": the key set does not match the skeleton");
      }
      SampledKeyLists(options.keys[ci], frames, has_translation, rotation_keys, translation_keys,
                      added);
    }
    // Time accessors: every frame (dense clips and weights), or one per distinct key list.
    int dense_input = -1;
    std::map<std::vector<int>, int> inputs;
    auto input_of = [&](const std::vector<int>* keys) {
      if (keys == nullptr) {
        if (dense_input < 0) dense_input = buffer.Add(times, "SCALAR", 1, true, gltf);
        return dense_input;
      }
      const auto it = inputs.find(*keys);
      if (it != inputs.end()) return it->second;
      std::vector<float> key_times;
      for (const int f : *keys) key_times.push_back(times[f]);
      const int index = buffer.Add(key_times, "SCALAR", 1, true, gltf);
      inputs.emplace(*keys, index);
      return index;
    };
    if (options.keys.empty()) input_of(nullptr);
    nlohmann::json anim = {{"name", clip.name().empty() ? fmt::format("clip{}", ci) : clip.name()},
                           {"samplers", nlohmann::json::array()},
                           {"channels", nlohmann::json::array()}};
    for (int j = 0; j < n; ++j) {
      std::vector<float> rotations;
      std::vector<float> translations;
      std::vector<float> scales;  // joints with scale channels: 1 + value per axis (T * R * S)
      rotations.reserve(static_cast<std::size_t>(frames) * 4);
      Eigen::Quaterniond previous = Eigen::Quaterniond::Identity();
      for (int f = 0; f < frames; ++f) {
        Eigen::Isometry3d local = LocalTransform(skeleton, j, clip.frame(f));
        if (turned && is_root(j)) local.prerotate(options.rotation);
        Eigen::Quaterniond q(local.linear());
        q.normalize();
        if (f > 0 && q.dot(previous) < 0) q.coeffs() = -q.coeffs();
        previous = q;
        for (const double v : {q.x(), q.y(), q.z(), q.w()})
          rotations.push_back(static_cast<float>(v));
        if (has_translation[j]) {
          for (int a = 0; a < 3; ++a) {
            translations.push_back(static_cast<float>(local.translation()[a] * scale));
          }
        }
        if (skeleton.has_scale(j)) {
          const Eigen::Vector3d s = LocalScale(skeleton, j, clip.frame(f));
          for (int a = 0; a < 3; ++a) scales.push_back(static_cast<float>(s[a]));
        }
      }
      const std::vector<int>* rkeys = rotation_keys.empty() ? nullptr : &rotation_keys[j];
      if (rkeys) rotations = KeyedValues(rotations, 4, *rkeys, true, added[j]);
      const int rotation_output = buffer.Add(rotations, "VEC4", 4, false, gltf);
      anim["samplers"].push_back(
          {{"input", input_of(rkeys)}, {"output", rotation_output}, {"interpolation", "LINEAR"}});
      anim["channels"].push_back({{"sampler", anim["samplers"].size() - 1},
                                  {"target", {{"node", j}, {"path", "rotation"}}}});
      if (has_translation[j]) {
        const std::vector<int>* tkeys = translation_keys.empty() ? nullptr : &translation_keys[j];
        if (tkeys) translations = KeyedValues(translations, 3, *tkeys, false, added[n + j]);
        const int translation_output = buffer.Add(translations, "VEC3", 3, false, gltf);
        anim["samplers"].push_back({{"input", input_of(tkeys)},
                                    {"output", translation_output},
                                    {"interpolation", "LINEAR"}});
        anim["channels"].push_back({{"sampler", anim["samplers"].size() - 1},
                                    {"target", {{"node", j}, {"path", "translation"}}}});
      }
      if (skeleton.has_scale(j)) {
        // Scale channels are keyed on every frame (key reduction covers rotation and translation).
        const int scale_output = buffer.Add(scales, "VEC3", 3, false, gltf);
        anim["samplers"].push_back(
            {{"input", input_of(nullptr)}, {"output", scale_output}, {"interpolation", "LINEAR"}});
        anim["channels"].push_back({{"sampler", anim["samplers"].size() - 1},
                                    {"target", {{"node", j}, {"path", "scale"}}}});
      }
    }
    const int input = clip.num_weights() > 0 ? input_of(nullptr) : -1;
    AddWeightChannels(clip, options.meshes, mesh_nodes, input, buffer, gltf, anim);
    gltf["animations"].push_back(anim);
  }
  std::string& bin = buffer.data();
  while (bin.size() % 4) bin.push_back('\0');
  nlohmann::json buf = {{"byteLength", bin.size()}};
  if (!options.binary) {
    buf["uri"] = "data:application/octet-stream;base64," + Base64(bin);
  }
  // An explicit array: `= {buf}` is an initializer list that clang resolves to an object.
  gltf["buffers"] = nlohmann::json::array({buf});
  std::string json = gltf.dump(options.binary ? -1 : 1);
  if (!options.binary) return json + "\n";
  while (json.size() % 4) json.push_back(' ');
  std::string out;
  auto u32 = [&out](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  const std::size_t total = 12 + 8 + json.size() + 8 + bin.size();
  if (total > 0xFFFFFFFFu) throw ExportError(name + ": glb larger than 4 GiB");
  out.reserve(total);
  u32(0x46546C67);  // "glTF"
  u32(2);
  u32(static_cast<std::uint32_t>(total));
  u32(static_cast<std::uint32_t>(json.size()));
  u32(0x4E4F534A);  // "JSON"
  out += json;
  u32(static_cast<std::uint32_t>(bin.size()));
  u32(0x004E4942);  // "BIN\0"
  out += bin;
  return out;
}

void WriteGltf(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const GltfOptions& options) {
  WriteFileAtomically(path, FormatGltf(skeleton, clips, options, path));
}

}  // namespace rigel
