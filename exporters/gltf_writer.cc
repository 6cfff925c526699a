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
#include "exporters/gltf_internal.h"

namespace rigel {

namespace {

using gltf_internal::AddMesh;
using gltf_internal::BufferBuilder;

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

// Joints whose glTF scale must compensate their parent's (kCompensate under a scaled parent).
std::vector<bool> CompensatingJoints(const Skeleton& skeleton) {
  std::vector<bool> out(skeleton.num_joints(), false);
  if (!skeleton.has_scale()) return out;
  std::vector<bool> scaled(skeleton.num_joints(), false);  // the world linear part may hold scale
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const int p = skeleton.parent(j);
    const bool compensate = skeleton.scale_inheritance(j) == ScaleInheritance::kCompensate;
    out[j] = p >= 0 && compensate && scaled[p];
    scaled[j] = skeleton.has_scale(j) || (p >= 0 && !compensate && scaled[p]);
  }
  return out;
}

// The parent's world scale in its own rotation frame, K = W_p^T L_p, on one frame (FK done).
Eigen::Matrix3d ParentScale(const Skeleton& skeleton, int joint,
                            std::span<const Eigen::Isometry3d> world,
                            std::span<const Eigen::Matrix3d> linear) {
  const int p = skeleton.parent(joint);
  return world[p].linear().transpose() * linear[p];
}

// The uniform factor glTF divides a compensating joint's scale by: K's when uniform, else the
// cube root of its determinant (the mean scale).
double CompensationFactor(const Eigen::Matrix3d& k) {
  const double det = k.determinant();
  return det > 0 ? std::cbrt(det) : 1.0;
}

bool IsUniform(const Eigen::Matrix3d& k) {
  return k.isApprox(CompensationFactor(k) * Eigen::Matrix3d::Identity(), 1e-9);
}

}  // namespace

namespace {

// Per joint: compensating (CompensatingJoints) under a parent whose scale is not uniform on some
// frame of `clips`.
std::vector<bool> UncompensatedMask(const Skeleton& skeleton, std::span<const Clip> clips) {
  const std::vector<bool> compensating = CompensatingJoints(skeleton);
  const int n = skeleton.num_joints();
  std::vector<bool> seen(n, false);
  if (std::ranges::find(compensating, true) == compensating.end()) return seen;
  std::vector<Eigen::Isometry3d> world(n);
  std::vector<Eigen::Matrix3d> linear(n);
  for (const Clip& clip : clips) {
    for (int f = 0; f < clip.num_frames(); ++f) {
      ForwardKinematicsScaled(skeleton, clip.frame(f), world, linear);
      for (int j = 0; j < n; ++j) {
        if (compensating[j] && !seen[j] && !IsUniform(ParentScale(skeleton, j, world, linear))) {
          seen[j] = true;
        }
      }
    }
  }
  return seen;
}

}  // namespace

std::vector<std::string> UncompensatedJoints(const Skeleton& skeleton,
                                             std::span<const Clip> clips) {
  std::vector<std::string> names;
  const std::vector<bool> seen = UncompensatedMask(skeleton, clips);
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (seen[j]) names.push_back(skeleton.name(j));
  }
  return names;
}

namespace {

// The skeleton's nodes: one per joint (index j), then the End Sites as leaf nodes.
void AddSkeletonNodes(const Skeleton& skeleton, const GltfOptions& options, double scale,
                      nlohmann::json& gltf) {
  const int n = skeleton.num_joints();
  std::unordered_set<std::string> names(skeleton.names().begin(), skeleton.names().end());
  auto vec3 = [&](const Eigen::Vector3d& v) {
    return std::vector<double>{v.x() * scale, v.y() * scale, v.z() * scale};
  };
  const Eigen::Quaterniond turn(options.rotation);
  const bool turned = !options.rotation.isIdentity();
  for (int j = 0; j < n; ++j) {
    const bool root = turned && skeleton.parent(j) == Skeleton::kNoParent;
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
  for (std::size_t e = 0; e < skeleton.end_sites().size(); ++e) {
    const EndSite& site = skeleton.end_sites()[e];
    const std::string base = site.name.empty() ? skeleton.name(site.parent) + "_end" : site.name;
    std::string end_name = base;
    for (int k = 1; names.count(end_name); ++k) end_name = fmt::format("{}.{}", base, k);
    names.insert(end_name);
    const int index = static_cast<int>(gltf["nodes"].size());
    gltf["nodes"].push_back({{"name", end_name}, {"translation", vec3(site.offset)}});
    gltf["nodes"][site.parent]["children"].push_back(index);
  }
}

// The skin over every node (joints and End Sites) with its inverse bind matrices; returns the
// skeleton's roots.
std::vector<int> AddSkin(const Skeleton& skeleton, const GltfOptions& options, double scale,
                         BufferBuilder& buffer, nlohmann::json& gltf) {
  const int n = skeleton.num_joints();
  const Pose rest(skeleton);
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
  return roots;
}

// The meshes, their materials and the scene (the skeleton's roots and the meshes' root nodes);
// returns each mesh's node.
std::vector<int> AddMeshesAndScene(const Skeleton& skeleton, const GltfOptions& options,
                                   double scale, const std::string& name,
                                   const std::vector<int>& roots, BufferBuilder& buffer,
                                   nlohmann::json& gltf) {
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
  return mesh_nodes;
}

// Which channels each joint's animation has, the same for every clip.
struct JointChannels {
  std::vector<bool> has_translation;
  std::vector<bool> compensating;  // scale written over the parent's (CompensatingJoints)
  bool any_compensating = false;
  std::vector<bool> has_scale;
};

JointChannels ChannelsOf(const Skeleton& skeleton, std::span<const Clip> clips) {
  const int n = skeleton.num_joints();
  JointChannels c;
  c.has_translation.assign(n, false);
  for (int j = 0; j < n; ++j) {
    for (int axis = 0; axis < 3; ++axis) {
      if (skeleton.translation_channel(j, axis) >= 0) c.has_translation[j] = true;
    }
  }
  // Joints under a non-uniform parent scale are written inheriting it (UncompensatedJoints).
  c.compensating = CompensatingJoints(skeleton);
  const std::vector<bool> uncompensated = UncompensatedMask(skeleton, clips);
  for (int j = 0; j < n; ++j) c.compensating[j] = c.compensating[j] && !uncompensated[j];
  c.any_compensating = std::ranges::find(c.compensating, true) != c.compensating.end();
  c.has_scale.assign(n, false);
  for (int j = 0; j < n; ++j) c.has_scale[j] = skeleton.has_scale(j) || c.compensating[j];
  return c;
}

// The time accessors of one clip: every frame (dense clips and weights), or one per distinct key
// list, each added to the buffer when first asked for.
class TimeInputs {
 public:
  TimeInputs(const Clip& clip, BufferBuilder& buffer, nlohmann::json& gltf)
      : times_(clip.num_frames()), buffer_(buffer), gltf_(gltf) {
    for (int f = 0; f < clip.num_frames(); ++f) {
      times_[f] = static_cast<float>(f * clip.frame_time());
    }
  }
  // The accessor of the frames `keys` (null: every frame).
  int Of(const std::vector<int>* keys) {
    if (keys == nullptr) {
      if (dense_input_ < 0) dense_input_ = buffer_.Add(times_, "SCALAR", 1, true, gltf_);
      return dense_input_;
    }
    const auto it = inputs_.find(*keys);
    if (it != inputs_.end()) return it->second;
    std::vector<float> key_times;
    for (const int f : *keys) key_times.push_back(times_[f]);
    const int index = buffer_.Add(key_times, "SCALAR", 1, true, gltf_);
    inputs_.emplace(*keys, index);
    return index;
  }

 private:
  std::vector<float> times_;
  BufferBuilder& buffer_;
  nlohmann::json& gltf_;
  int dense_input_ = -1;
  std::map<std::vector<int>, int> inputs_;
};

// The blend-shape weights of `clip` (core/clip.h: column w is the w-th target of `meshes`) as one
// LINEAR "weights" channel per mesh with targets, on the mesh's node (`mesh_nodes`): on every
// frame, or, with `keys` holding weight keys (ReduceWeightKeys), on the frames any target of the
// mesh keeps (glTF gives a mesh's targets one sampler; more keys than a column needs do not move
// it off its bound).
void AddWeightChannels(const Clip& clip, std::span<const Mesh> meshes,
                       const std::vector<int>& mesh_nodes, const ClipKeys* keys, TimeInputs& inputs,
                       BufferBuilder& buffer, nlohmann::json& gltf, nlohmann::json& anim) {
  if (clip.num_weights() == 0) return;
  const bool keyed =
      keys != nullptr && static_cast<int>(keys->weights.size()) == clip.num_weights();
  int column = 0;
  for (std::size_t m = 0; m < meshes.size(); ++m) {
    const int targets = static_cast<int>(meshes[m].morph_targets.size());
    if (targets == 0) continue;
    std::vector<int> frames;
    if (keyed) {
      for (int t = 0; t < targets; ++t) {
        const std::vector<int>& k = keys->weights[column + t];
        frames.insert(frames.end(), k.begin(), k.end());
      }
      frames.push_back(clip.num_frames() - 1);  // the take's end (a reader's duration)
      std::sort(frames.begin(), frames.end());
      frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
    } else {
      for (int f = 0; f < clip.num_frames(); ++f) frames.push_back(f);
    }
    std::vector<float> values;
    values.reserve(frames.size() * targets);
    for (const int f : frames) {
      const std::span<const double> row = clip.weights(f);
      for (int t = 0; t < targets; ++t) values.push_back(static_cast<float>(row[column + t]));
    }
    column += targets;
    const int output = buffer.Add(values, "SCALAR", 1, false, gltf);
    anim["samplers"].push_back({{"input", inputs.Of(keyed ? &frames : nullptr)},
                                {"output", output},
                                {"interpolation", "LINEAR"}});
    anim["channels"].push_back({{"sampler", anim["samplers"].size() - 1},
                                {"target", {{"node", mesh_nodes[m]}, {"path", "weights"}}}});
  }
}

// Per compensating joint, per frame of `clip`: the factor its scale is divided by.
std::vector<std::vector<double>> CompensationOf(const Skeleton& skeleton, const Clip& clip,
                                                const JointChannels& channels) {
  const int n = skeleton.num_joints();
  std::vector<std::vector<double>> compensation(n);
  if (channels.any_compensating) {
    std::vector<Eigen::Isometry3d> world(n);
    std::vector<Eigen::Matrix3d> linear(n);
    for (int f = 0; f < clip.num_frames(); ++f) {
      ForwardKinematicsScaled(skeleton, clip.frame(f), world, linear);
      for (int j = 0; j < n; ++j) {
        if (channels.compensating[j]) {
          compensation[j].push_back(CompensationFactor(ParentScale(skeleton, j, world, linear)));
        }
      }
    }
  }
  return compensation;
}

// One joint's dense tracks over a clip: rotations (continuous quaternions), translations in
// metres, and scales.
struct JointTracks {
  std::vector<float> rotations;
  std::vector<float> translations;
  // Joints with scale channels: 1 + value per axis (T * R * S), over the compensated parent
  // scale.
  std::vector<float> scales;
};

JointTracks SampleJoint(const Skeleton& skeleton, const Clip& clip, int j,
                        const GltfOptions& options, double scale, const JointChannels& channels,
                        const std::vector<std::vector<double>>& compensation) {
  const int frames = clip.num_frames();
  const bool turned = !options.rotation.isIdentity();
  JointTracks t;
  t.rotations.reserve(static_cast<std::size_t>(frames) * 4);
  Eigen::Quaterniond previous = Eigen::Quaterniond::Identity();
  for (int f = 0; f < frames; ++f) {
    Eigen::Isometry3d local = LocalTransform(skeleton, j, clip.frame(f));
    if (turned && skeleton.parent(j) == Skeleton::kNoParent) local.prerotate(options.rotation);
    Eigen::Quaterniond q(local.linear());
    q.normalize();
    if (f > 0 && q.dot(previous) < 0) q.coeffs() = -q.coeffs();
    previous = q;
    for (const double v : {q.x(), q.y(), q.z(), q.w()})
      t.rotations.push_back(static_cast<float>(v));
    if (channels.has_translation[j]) {
      for (int a = 0; a < 3; ++a) {
        t.translations.push_back(static_cast<float>(local.translation()[a] * scale));
      }
    }
    if (channels.has_scale[j]) {
      const Eigen::Vector3d s = LocalScale(skeleton, j, clip.frame(f)) /
                                (channels.compensating[j] ? compensation[j][f] : 1.0);
      for (int a = 0; a < 3; ++a) t.scales.push_back(static_cast<float>(s[a]));
    }
  }
  return t;
}

// One LINEAR sampler of `output` on `input` and its channel driving `path` of node `node`.
void AddChannel(int input, int output, int node, const char* path, nlohmann::json& anim) {
  anim["samplers"].push_back({{"input", input}, {"output", output}, {"interpolation", "LINEAR"}});
  anim["channels"].push_back(
      {{"sampler", anim["samplers"].size() - 1}, {"target", {{"node", node}, {"path", path}}}});
}

// The animation of clip `ci`: every joint's rotation, translation and scale channels (keyed on
// the reduced key lists when options.keys has them), and the blend-shape weights.
nlohmann::json AnimationOf(const Skeleton& skeleton, const Clip& clip, std::size_t ci,
                           const GltfOptions& options, double scale, const std::string& name,
                           const JointChannels& channels, const std::vector<int>& mesh_nodes,
                           BufferBuilder& buffer, nlohmann::json& gltf) {
  const int n = skeleton.num_joints();
  const int frames = clip.num_frames();
  TimeInputs inputs(clip, buffer, gltf);
  std::vector<std::vector<int>> rotation_keys, translation_keys;
  std::vector<char> added;
  if (!options.keys.empty()) {
    if (static_cast<int>(options.keys[ci].joints.size()) != n) {
      throw ExportError(name + ": the key set does not match the skeleton");
    }
    SampledKeyLists(options.keys[ci], frames, channels.has_translation, rotation_keys,
                    translation_keys, added);
  }
  if (options.keys.empty()) inputs.Of(nullptr);
  nlohmann::json anim = {{"name", clip.name().empty() ? fmt::format("clip{}", ci) : clip.name()},
                         {"samplers", nlohmann::json::array()},
                         {"channels", nlohmann::json::array()}};
  // Joints compensating their parent's scale get it divided out (UncompensatedJoints).
  const std::vector<std::vector<double>> compensation = CompensationOf(skeleton, clip, channels);
  for (int j = 0; j < n; ++j) {
    JointTracks t = SampleJoint(skeleton, clip, j, options, scale, channels, compensation);
    const std::vector<int>* rkeys = rotation_keys.empty() ? nullptr : &rotation_keys[j];
    if (rkeys) t.rotations = KeyedValues(t.rotations, 4, *rkeys, true, added[j]);
    const int rotation_output = buffer.Add(t.rotations, "VEC4", 4, false, gltf);
    AddChannel(inputs.Of(rkeys), rotation_output, j, "rotation", anim);
    if (channels.has_translation[j]) {
      const std::vector<int>* tkeys = translation_keys.empty() ? nullptr : &translation_keys[j];
      if (tkeys) t.translations = KeyedValues(t.translations, 3, *tkeys, false, added[n + j]);
      const int translation_output = buffer.Add(t.translations, "VEC3", 3, false, gltf);
      AddChannel(inputs.Of(tkeys), translation_output, j, "translation", anim);
    }
    if (channels.has_scale[j]) {
      // Scale channels are keyed on every frame (key reduction covers rotation and translation).
      const int scale_output = buffer.Add(t.scales, "VEC3", 3, false, gltf);
      AddChannel(inputs.Of(nullptr), scale_output, j, "scale", anim);
    }
  }
  AddWeightChannels(clip, options.meshes, mesh_nodes,
                    options.keys.empty() ? nullptr : &options.keys[ci], inputs, buffer, gltf, anim);
  return anim;
}

// The document with its buffer: glTF (JSON, the buffer as a data URI) or glb.
std::string Container(nlohmann::json& gltf, BufferBuilder& buffer, bool binary,
                      const std::string& name) {
  std::string& bin = buffer.data();
  while (bin.size() % 4) bin.push_back('\0');
  nlohmann::json buf = {{"byteLength", bin.size()}};
  if (!binary) {
    buf["uri"] = "data:application/octet-stream;base64," + Base64(bin);
  }
  // An explicit array: `= {buf}` is an initializer list that clang resolves to an object.
  gltf["buffers"] = nlohmann::json::array({buf});
  std::string json = gltf.dump(binary ? -1 : 1);
  if (!binary) return json + "\n";
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

}  // namespace

std::string FormatGltf(const Skeleton& skeleton, std::span<const Clip> clips,
                       const GltfOptions& options, const std::string& name) {
  CheckClipsForExport(skeleton, clips, name, options.meshes);
  const double scale = options.metres_per_unit > 0 ? options.metres_per_unit : 1.0;
  nlohmann::json gltf;
  gltf["asset"] = {{"version", "2.0"}, {"generator", "rigel"}};
  gltf["nodes"] = nlohmann::json::array();
  gltf["bufferViews"] = nlohmann::json::array();
  gltf["accessors"] = nlohmann::json::array();
  BufferBuilder buffer;
  AddSkeletonNodes(skeleton, options, scale, gltf);
  const std::vector<int> roots = AddSkin(skeleton, options, scale, buffer, gltf);
  const std::vector<int> mesh_nodes =
      AddMeshesAndScene(skeleton, options, scale, name, roots, buffer, gltf);

  gltf["animations"] = nlohmann::json::array();
  const JointChannels channels = ChannelsOf(skeleton, clips);
  if (!options.keys.empty() && options.keys.size() != clips.size()) {
    throw ExportError(
        fmt::format("{}: {} key sets for {} clips", name, options.keys.size(), clips.size()));
  }
  for (std::size_t ci = 0; ci < clips.size(); ++ci) {
    gltf["animations"].push_back(AnimationOf(skeleton, clips[ci], ci, options, scale, name,
                                             channels, mesh_nodes, buffer, gltf));
  }
  return Container(gltf, buffer, options.binary, name);
}

void WriteGltf(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
               const GltfOptions& options) {
  WriteFileAtomically(path, FormatGltf(skeleton, clips, options, path));
}

}  // namespace rigel
