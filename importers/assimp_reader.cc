#include "importers/assimp_reader.h"

#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/scene.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/euler.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"
#include "importers/load_scene.h"
#include "importers/utf8.h"
#include "io/file_format.h"

namespace rigel {

namespace {

constexpr std::string_view kHelperTag = "_$AssimpFbx$_";
constexpr int kMaxFrames = 1'000'000;
constexpr double kMaxClipValues = 2e8;

Eigen::Affine3d ToEigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d e;
  e << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3,
      m.d4;
  return Eigen::Affine3d(e);
}

// A rigid frame: the rotation and origin of a (possibly scaled) transform.
struct Frame {
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
};

// Removes scale from `t`. Sets *nonuniform when the axes' scales differ by more than 1e-4.
Frame ToFrame(const Eigen::Affine3d& t, bool* nonuniform) {
  Frame f;
  f.origin = t.translation();
  Eigen::Matrix3d m = t.linear();
  Eigen::Vector3d norms(m.col(0).norm(), m.col(1).norm(), m.col(2).norm());
  if (norms.minCoeff() <= 0.0 || !std::isfinite(norms.maxCoeff())) {
    *nonuniform = true;
    return f;
  }
  const bool uniform = norms.maxCoeff() - norms.minCoeff() <= 1e-4 * norms.maxCoeff();
  if (!uniform) *nonuniform = true;
  for (int i = 0; i < 3; ++i) m.col(i) /= norms[i];
  // A uniform negative scale (3ds Max "Nub" bones: -1 -1 -1) is a rotation times -s: positions
  // below stay exact because local translations are taken from world positions.
  if (m.determinant() < 0)
    m = uniform ? Eigen::Matrix3d(-m) : Eigen::Matrix3d(m * Eigen::Vector3d(1, 1, -1).asDiagonal());
  f.rotation = Eigen::Quaterniond(m).normalized().toRotationMatrix();
  return f;
}

struct Node {
  const aiNode* ai = nullptr;
  int parent = -1;
  std::string name;
  bool helper = false;
  std::string helper_kind;   // "PreRotation", "Translation", ... for helpers
  int owner = -1;            // helpers above a node: that node's index
  std::vector<int> helpers;  // real nodes: their helper chain above them
  Eigen::Affine3d static_local = Eigen::Affine3d::Identity();
};

std::string Ext(const std::string& path) { return LowerExtension(path); }

// One key list of a channel with a cursor: `next` is the first key with a time > the last sampled
// time. Frames are sampled in increasing time, so the cursor only moves forward (no searches).
template <typename Key>
struct KeyTrack {
  const Key* keys = nullptr;
  unsigned count = 0;
  unsigned next = 0;

  void Reset(const Key* k, unsigned n) {
    keys = k;
    count = n;
    next = 0;
  }
  // Moves to time `t`; returns false when there are no keys. Sets *at to the key within `snap`
  // ticks of `t` (frames that fall on a key take it exactly: a clip keyed on every frame at a rate
  // that is not a whole number, BVH's "Frame Time: .0083333", then survives being resampled at
  // the snapped rate), else *at = -1 and *lo, *hi, *a to the keys around `t` and the blend.
  bool Seek(double t, double snap, int* at, int* lo, int* hi, double* a) {
    if (count == 0) return false;
    while (next < count && keys[next].mTime <= t) ++next;
    const int i = static_cast<int>(next);
    *at = -1;
    if (i > 0 && std::abs(keys[i - 1].mTime - t) <= snap) {
      *at = i - 1;
    } else if (i < static_cast<int>(count) && std::abs(keys[i].mTime - t) <= snap) {
      *at = i;
    } else if (i == 0) {
      *at = 0;
    } else if (i >= static_cast<int>(count)) {
      *at = static_cast<int>(count) - 1;
    } else {
      *lo = i - 1;
      *hi = i;
      const double t0 = keys[i - 1].mTime, t1 = keys[i].mTime;
      *a = t1 > t0 ? (t - t0) / (t1 - t0) : 0.0;
    }
    return true;
  }
};

template <typename Key>
bool AllKeysEqual(const Key* keys, unsigned count) {
  for (unsigned k = 1; k < count; ++k) {
    if (!(keys[k].mValue == keys[0].mValue)) return false;
  }
  return count > 0;
}

Eigen::Vector3d ToVector(const aiVector3D& v) { return Eigen::Vector3d(v.x, v.y, v.z); }

Eigen::Vector3d SampleVector(KeyTrack<aiVectorKey>& track, double t, double snap,
                             const Eigen::Vector3d& fallback) {
  int at, lo = 0, hi = 0;
  double a = 0;
  if (!track.Seek(t, snap, &at, &lo, &hi, &a)) return fallback;
  if (at >= 0) return ToVector(track.keys[at].mValue);
  return (1.0 - a) * ToVector(track.keys[lo].mValue) + a * ToVector(track.keys[hi].mValue);
}

// q / |q|. Keys are float quaternions, 1e-7 off unit length: one Newton step for 1/sqrt(|q|^2)
// leaves 1e-14, without the square root and divisions (which dominated sampling).
Eigen::Quaterniond Normalized(const Eigen::Quaterniond& q) {
  const double n = q.squaredNorm();
  if (std::abs(n - 1.0) > 1e-6) return q.normalized();
  const double f = 1.5 - 0.5 * n;
  return Eigen::Quaterniond(q.w() * f, q.x() * f, q.y() * f, q.z() * f);
}

Eigen::Quaterniond SampleRotation(KeyTrack<aiQuatKey>& track, double t, double snap,
                                  const Eigen::Quaterniond& fallback) {
  int at, lo = 0, hi = 0;
  double a = 0;
  if (!track.Seek(t, snap, &at, &lo, &hi, &a)) return fallback;
  auto q = [&](int k) {
    const aiQuaternion& v = track.keys[k].mValue;
    return Normalized(Eigen::Quaterniond(v.w, v.x, v.y, v.z));
  };
  if (at >= 0) return q(at);
  return Normalized(q(lo).slerp(a, q(hi)));
}

// atan2 to within a couple of ulp, about twice as fast as libm's (it dominated the import): Cephes'
// atan (range reduction to |t| <= 0.66, rational approximation of degree 4/5), plus quadrants.
double FastAtan2(double y, double x) {
  const double ax = std::abs(x), ay = std::abs(y);
  if (!(ax > 0) || !std::isfinite(ax) || !std::isfinite(ay)) return std::atan2(y, x);
  double t = ay / ax;
  double base = 0, more = 0;
  if (t > 2.41421356237309504880) {  // tan(3 pi / 8)
    base = kPi / 2;
    more = 6.123233995736765886130e-17;
    t = -1.0 / t;
  } else if (t > 0.66) {
    base = kPi / 4;
    more = 0.5 * 6.123233995736765886130e-17;
    t = (t - 1.0) / (t + 1.0);
  }
  const double z = t * t;
  const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z -
                     7.500855792314704667340e1) *
                        z -
                    1.228866684490136173410e2) *
                       z -
                   6.485021904942025371773e1;
  const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z +
                     4.328810604912902668951e2) *
                        z +
                    4.853903996359136964868e2) *
                       z +
                   1.945506571482613964425e2;
  double a = base + (t * (z * p / q) + t + more);
  if (x < 0) a = kPi - a;
  return std::signbit(y) ? -a : a;
}

// `angle` shifted by whole turns to lie within pi of `reference`: WrapNear without a branch or a
// libm call (round to nearest by the 1.5 * 2^52 trick, exact for |turns| < 2^51).
double WrapNearFast(double angle, double reference) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
  const double turns = ((reference - angle) * (1.0 / (2 * kPi)) + kRound) - kRound;
  return angle + turns * (2 * kPi);
}

// MatrixToEulerNear(r, EulerOrder::kZYX, previous) with fewer transcendental calls (the middle
// angle's cosine is the hypotenuse already computed) and no data-dependent branches; defers to
// the library near gimbal lock.
Eigen::Vector3d EulerZyxNear(const Eigen::Quaterniond& q, const Eigen::Vector3d& previous) {
  // The five entries of R(q) needed. R = Rz(z) Ry(y) Rx(x): R(2,0) = -sin y,
  // R(1,0) / R(0,0) = tan z, R(2,1) / R(2,2) = tan x.
  const double qw = q.w(), qx = q.x(), qy = q.y(), qz = q.z();
  const double r00 = 1 - 2 * (qy * qy + qz * qz), r10 = 2 * (qx * qy + qw * qz),
               r20 = 2 * (qx * qz - qw * qy), r21 = 2 * (qy * qz + qw * qx),
               r22 = 1 - 2 * (qx * qx + qy * qy);
  const double sin_y = std::clamp(-r20, -1.0, 1.0);
  const double cos_y = std::sqrt(r22 * r22 + r21 * r21);
  if (cos_y < 1e-6) {
    return MatrixToEulerNear(q.normalized().toRotationMatrix(), EulerOrder::kZYX, previous);
  }
  const double x = FastAtan2(r21, r22), y = FastAtan2(sin_y, cos_y), z = FastAtan2(r10, r00);
  // The two decompositions (x, y, z) and (x + pi, pi - y, z + pi), each moved by whole turns
  // towards the previous frame; the nearer one wins.
  const double x1 = WrapNearFast(x, previous.x()), y1 = WrapNearFast(y, previous.y()),
               z1 = WrapNearFast(z, previous.z());
  const double x2 = WrapNearFast(x + kPi, previous.x()), y2 = WrapNearFast(kPi - y, previous.y()),
               z2 = WrapNearFast(z + kPi, previous.z());
  auto sq = [](double v) { return v * v; };
  const double d1 = sq(x1 - previous.x()) + sq(y1 - previous.y()) + sq(z1 - previous.z());
  const double d2 = sq(x2 - previous.x()) + sq(y2 - previous.y()) + sq(z2 - previous.z());
  const bool second = d2 < d1;
  return Eigen::Vector3d(second ? x2 : x1, second ? y2 : y1, second ? z2 : z1);
}

// The uniform scale s > 0 when `m` = s * (rotation) to within `tolerance` (relative), else 0.
double SimilarityScale(const Eigen::Matrix3d& m, double tolerance) {
  const Eigen::Matrix3d g = m.transpose() * m;
  const double s2 = g.trace() / 3.0;
  if (!(s2 > 0) || !std::isfinite(s2) || m.determinant() <= 0) return 0.0;
  if ((g - s2 * Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > tolerance * s2) return 0.0;
  return std::sqrt(s2);
}

// std::round without the libm call, for |x| < 2^51 (else x itself; whole already).
double RoundFast(double x) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
  return std::abs(x) < 2251799813685248.0 ? (x + kRound) - kRound : x;
}

// Snaps `x` to the nearest whole number when within 0.1%.
double SnapRate(double x) {
  const double r = std::round(x);
  return (r > 0 && std::abs(x - r) <= 1e-3 * x) ? r : x;
}

class Converter {
 public:
  Converter(const aiScene& scene, const std::string& path) : scene_(scene), path_(path) {}

  Scene Run() {
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
    if (nonuniform_scale_) {
      warnings_.push_back(fmt::format(
          "{}: non-uniform or negative scale on '{}' (and maybe others) cannot be represented "
          "by rotation and translation channels; motion is approximated",
          path_, nonuniform_name_));
    }
    out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw ImportError(fmt::format("{}: {}", path_, what));
  }

  void Flatten() {
    if (!scene_.mRootNode) Fail("the file has no node hierarchy");
    std::vector<std::pair<const aiNode*, int>> stack{{scene_.mRootNode, -1}};
    while (!stack.empty()) {
      auto [ai, parent] = stack.back();
      stack.pop_back();
      if (nodes_.size() > 100000) Fail("more than 100000 nodes");
      Node n;
      n.ai = ai;
      n.parent = parent;
      n.name = ai->mName.C_Str();
      n.static_local = ToEigen(ai->mTransformation);
      const std::size_t tag = n.name.find(kHelperTag);
      if (tag != std::string::npos) {
        n.helper = true;
        n.helper_kind = n.name.substr(tag + kHelperTag.size());
      }
      const int index = static_cast<int>(nodes_.size());
      nodes_.push_back(std::move(n));
      index_by_name_.emplace(nodes_.back().name, index);  // keeps the first of duplicates
      for (unsigned c = ai->mNumChildren; c-- > 0;) stack.push_back({ai->mChildren[c], index});
    }
    children_.assign(nodes_.size(), {});
    for (int i = 1; i < static_cast<int>(nodes_.size()); ++i) {
      children_[nodes_[i].parent].push_back(i);
    }
  }

  void ResolveHelpers() {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (nodes_[i].helper) continue;
      const std::string prefix = nodes_[i].name + std::string(kHelperTag);
      for (int p = nodes_[i].parent; p >= 0 && nodes_[p].helper; p = nodes_[p].parent) {
        if (nodes_[p].name.rfind(prefix, 0) != 0) break;
        nodes_[p].owner = i;
        nodes_[i].helpers.push_back(p);
      }
    }
  }

  // Node index a channel targets; a missing node is an error.
  int ChannelNode(const aiAnimation& anim, const aiNodeAnim& channel) const {
    const auto it = index_by_name_.find(channel.mNodeName.C_Str());
    if (it == index_by_name_.end()) {
      Fail(fmt::format("animation '{}' has a channel for node '{}', which is not in the scene",
                       anim.mName.C_Str(), channel.mNodeName.C_Str()));
    }
    return it->second;
  }

  void CollectAnimated() {
    animated_.assign(nodes_.size(), false);
    maps_.push_back(ChannelMap(nullptr));  // no animation
    for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
      maps_.push_back(ChannelMap(scene_.mAnimations[a]));
      for (std::size_t n = 0; n < nodes_.size(); ++n) {
        if (!maps_.back()[n]) continue;
        animated_[nodes_[n].helper && nodes_[n].owner >= 0 ? nodes_[n].owner : n] = true;
      }
    }
  }

  // Assimp's stand-in for a file without meshes (its Collada reader adds one): a mesh skinned to
  // every node, with material "SkeletonMaterial", in a scene flagged incomplete. Its bones are not
  // the file's: with them every leaf (end) node would become a joint.
  bool IsGeneratedSkeletonMesh(const aiMesh& mesh) const {
    if (!(scene_.mFlags & AI_SCENE_FLAGS_INCOMPLETE) || mesh.mMaterialIndex >= scene_.mNumMaterials)
      return false;
    aiString name;
    if (scene_.mMaterials[mesh.mMaterialIndex]->Get(AI_MATKEY_NAME, name) != AI_SUCCESS)
      return false;
    return std::string_view(name.C_Str()) == "SkeletonMaterial";
  }

  void SelectJoints() {
    std::unordered_set<std::string> cameras_lights;
    for (unsigned i = 0; i < scene_.mNumCameras; ++i) {
      cameras_lights.insert(scene_.mCameras[i]->mName.C_Str());
    }
    for (unsigned i = 0; i < scene_.mNumLights; ++i) {
      cameras_lights.insert(scene_.mLights[i]->mName.C_Str());
    }
    const int n = static_cast<int>(nodes_.size());
    is_bone_.assign(n, false);
    bind_world_.assign(n, Eigen::Affine3d::Identity());
    std::vector<Eigen::Affine3d> static_global(n);
    for (int i = 0; i < n; ++i) {
      static_global[i] = nodes_[i].parent < 0
                             ? nodes_[i].static_local
                             : static_global[nodes_[i].parent] * nodes_[i].static_local;
    }
    // Mesh nodes, to place bind poses in the world.
    std::vector<int> mesh_node(scene_.mNumMeshes, 0);
    for (int i = 0; i < n; ++i) {
      for (unsigned m = 0; m < nodes_[i].ai->mNumMeshes; ++m) {
        const unsigned mesh = nodes_[i].ai->mMeshes[m];
        if (mesh < scene_.mNumMeshes) mesh_node[mesh] = i;
      }
    }
    for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
      const aiMesh* mesh = scene_.mMeshes[m];
      if (IsGeneratedSkeletonMesh(*mesh)) continue;
      for (unsigned b = 0; b < mesh->mNumBones; ++b) {
        const aiBone* bone = mesh->mBones[b];
        const auto it = index_by_name_.find(bone->mName.C_Str());
        if (it == index_by_name_.end() || is_bone_[it->second]) continue;
        is_bone_[it->second] = true;
        bind_world_[it->second] =
            static_global[mesh_node[m]] * ToEigen(bone->mOffsetMatrix).inverse();
      }
    }
    is_joint_.assign(n, false);
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      if (node.helper) continue;
      if (!is_bone_[i] && (!animated_[i] || cameras_lights.count(node.name))) continue;
      is_joint_[i] = true;
      for (int p = node.parent; p > 0 && !is_joint_[p]; p = nodes_[p].parent) {
        if (!nodes_[p].helper) is_joint_[p] = true;
      }
    }
    // Nearest joint ancestor.
    joint_parent_.assign(n, -1);
    for (int i = 1; i < n; ++i) {
      const int p = nodes_[i].parent;
      joint_parent_[i] = is_joint_[p] ? p : joint_parent_[p];
    }
    // Drop lone single-node trees (camera targets, props) when a real skeleton exists.
    std::vector<int> tree_size(n, 0);
    std::vector<bool> tree_has_bone(n, false);
    std::vector<int> root_of(n, -1);
    for (int i = 0; i < n; ++i) {
      if (!is_joint_[i]) continue;
      root_of[i] = joint_parent_[i] < 0 ? i : root_of[joint_parent_[i]];
      ++tree_size[root_of[i]];
      if (is_bone_[i]) tree_has_bone[root_of[i]] = true;
    }
    std::vector<int> roots;
    for (int i = 0; i < n; ++i) {
      if (is_joint_[i] && joint_parent_[i] < 0) roots.push_back(i);
    }
    if (roots.empty()) {
      Fail("no skeleton: the file has no skin bones and no animated nodes");
    }
    if (roots.size() > 1) {
      std::vector<std::string> dropped;
      const bool any_big = std::any_of(roots.begin(), roots.end(),
                                       [&](int r) { return tree_size[r] > 1 || tree_has_bone[r]; });
      if (any_big) {
        for (const int r : roots) {
          if (tree_size[r] > 1 || tree_has_bone[r]) continue;
          is_joint_[r] = false;
          dropped.push_back(nodes_[r].name);
        }
      }
      if (!dropped.empty()) {
        warnings_.push_back(fmt::format("{}: left out {} animated node(s) outside the skeleton: {}",
                                        path_, dropped.size(), fmt::join(dropped, ", ")));
      }
    }
    for (int i = 0; i < n; ++i) {
      if (is_joint_[i]) joints_.push_back(i);
    }
    if (static_cast<int>(joints_.size()) > Skeleton::kMaxJoints) {
      Fail(fmt::format("{} joints, more than the limit of {}", joints_.size(),
                       Skeleton::kMaxJoints));
    }
  }

  // Rest transforms (full affine, world) of every joint and end site.
  void ComputeRest() {
    const int n = static_cast<int>(nodes_.size());
    // Static chain without the helpers' own rotation/scaling: the rest carries translation and
    // pre-/post-rotation, the channels carry the FBX local rotation.
    std::vector<Eigen::Affine3d> rest_global(n);
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      Eigen::Affine3d local = node.static_local;
      if (node.helper && node.owner >= 0 &&
          (node.helper_kind == "Rotation" || node.helper_kind == "Scaling")) {
        local.setIdentity();
      }
      rest_global[i] = node.parent < 0 ? local : rest_global[node.parent] * local;
    }
    rest_world_.assign(n, Eigen::Affine3d::Identity());
    for (const int j : joints_) {
      const int p = joint_parent_[j];
      if (is_bone_[j]) {
        rest_world_[j] = bind_world_[j];
      } else if (p >= 0) {
        rest_world_[j] = rest_world_[p] * (rest_global[p].inverse() * rest_global[j]);
      } else {
        rest_world_[j] = rest_global[j];
      }
    }
    // End sites: leaf nodes right below a joint (through helpers), without meshes.
    for (int i = 0; i < n; ++i) {
      const Node& node = nodes_[i];
      if (is_joint_[i] || node.helper || !children_[i].empty() || node.ai->mNumMeshes > 0) continue;
      const int j = joint_parent_[i];
      if (j < 0) continue;
      bool direct = true;
      for (int p = node.parent; p != j; p = nodes_[p].parent) direct = direct && nodes_[p].helper;
      if (!direct) continue;
      const Eigen::Vector3d world =
          (rest_world_[j] * (rest_global[j].inverse() * rest_global[i])).translation();
      end_sites_.push_back({j, world});
    }
  }

  double FileUnit() const {
    const std::string ext = Ext(path_);
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

  // Rest frames, unique joint names, the translation tolerance and joint-local rests.
  void PrepareRest() {
    const int n = static_cast<int>(nodes_.size());
    frame_index_.assign(n, -1);
    rest_.assign(n, Frame());
    for (const int j : joints_) {
      bool nonuniform = false;
      rest_[j] = ToFrame(rest_world_[j], &nonuniform);
      if (nonuniform) NoteNonuniform(j);
    }
    // Joint names must be unique and non-empty.
    std::unordered_set<std::string> used;
    names_.assign(n, {});
    for (const int j : joints_) {
      // FBX stores node names as raw bytes: refuse what glTF and the JSON reports cannot hold.
      if (!IsValidUtf8(nodes_[j].name)) Fail("joint name is not valid UTF-8");
      std::string base = nodes_[j].name.empty() ? std::string("joint") : nodes_[j].name;
      std::string name = base;
      for (int k = 1; used.count(name); ++k) name = fmt::format("{}.{}", base, k);
      if (name != nodes_[j].name) {
        warnings_.push_back(fmt::format("{}: joint '{}' renamed '{}' (names must be unique)", path_,
                                        nodes_[j].name, name));
      }
      used.insert(name);
      names_[j] = name;
    }
    // Characteristic length for "is this translation animated" tests.
    double extent = 0;
    for (const int j : joints_) extent = std::max(extent, rest_[j].origin.norm());
    translation_tolerance_ = 1e-6 * std::max(extent, 1e-3);
    // Which joints get position channels: roots, and joints whose translation moves.
    has_position_.assign(n, false);
    for (const int j : joints_) has_position_[j] = joint_parent_[j] < 0;
    rest_local_.assign(n, Frame());
    for (const int j : joints_) {
      const int p = joint_parent_[j];
      Frame& local = rest_local_[j];
      if (p < 0) {
        local = rest_[j];
      } else {
        local.rotation = rest_[p].rotation.transpose() * rest_[j].rotation;
        local.origin = rest_[p].rotation.transpose() * (rest_[j].origin - rest_[p].origin);
      }
    }
  }

  void BuildSkeleton(Scene& out) {
    const int n = static_cast<int>(nodes_.size());
    const std::vector<Frame>& rest = rest_;
    const std::vector<std::string>& names = names_;
    std::vector<RawSkeleton::Joint> raw(n);
    for (const int j : joints_) {
      RawSkeleton::Joint& joint = raw[j];
      joint.name = names[j];
      joint.rest_translation = rest_local_[j].origin;
      joint.rest_orientation = Eigen::Quaterniond(rest_local_[j].rotation).normalized();
      if (has_position_[j]) {
        joint.channels = {ChannelType::kXposition, ChannelType::kYposition,
                          ChannelType::kZposition};
      }
      joint.channels.insert(joint.channels.end(), {ChannelType::kZrotation, ChannelType::kYrotation,
                                                   ChannelType::kXrotation});
    }
    for (const auto& [j, world] : end_sites_) {
      raw[j].end_sites.push_back(rest[j].rotation.transpose() * (world - rest[j].origin));
    }
    RawSkeleton skeleton;
    for (auto it = joints_.rbegin(); it != joints_.rend(); ++it) {
      const int j = *it;
      const int p = joint_parent_[j];
      if (p >= 0) raw[p].children.insert(raw[p].children.begin(), std::move(raw[j]));
    }
    for (const int j : joints_) {
      if (joint_parent_[j] < 0) skeleton.roots.push_back(std::move(raw[j]));
    }
    std::string error;
    std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(skeleton, &error);
    if (!built) Fail(error);
    for (const int j : joints_) frame_index_[j] = built->FindJoint(names[j]);
    out.skeleton = std::move(built);
  }

  void NoteNonuniform(int node) {
    if (nonuniform_scale_) return;
    nonuniform_scale_ = true;
    nonuniform_name_ = nodes_[node].name;
  }

  // Per animation: node -> channel (duplicates are reported once, here).
  std::vector<const aiNodeAnim*> ChannelMap(const aiAnimation* anim) {
    std::vector<const aiNodeAnim*> map(nodes_.size(), nullptr);
    if (!anim) return map;
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      const aiNodeAnim* ch = anim->mChannels[c];
      const int n = ChannelNode(*anim, *ch);
      if (map[n]) {
        warnings_.push_back(
            fmt::format("{}: animation '{}' has two channels for node '{}'; the "
                        "first is used",
                        path_, anim->mName.C_Str(), nodes_[n].name));
        continue;
      }
      map[n] = ch;
    }
    return map;
  }

  // The common key spacing (ticks) when every channel with more than two keys is keyed on one
  // evenly spaced grid starting at 0 whose spacing is within 0.1% of `ticks_per_frame`; else 0.
  static double KeyGrid(const aiAnimation& anim, double ticks_per_frame) {
    double grid = 0;
    auto check = [&](auto* keys, unsigned count) {
      if (count <= 2) return true;
      const double dt = (keys[count - 1].mTime - keys[0].mTime) / (count - 1);
      if (!(std::abs(dt - ticks_per_frame) <= 1e-3 * ticks_per_frame)) return false;
      if (grid == 0) grid = dt;
      if (std::abs(dt - grid) > 1e-6 * grid) return false;
      for (unsigned k = 0; k < count; ++k) {
        if (std::abs(keys[k].mTime - k * dt) > 1e-3 * dt) return false;
      }
      return true;
    };
    for (unsigned c = 0; c < anim.mNumChannels; ++c) {
      const aiNodeAnim* ch = anim.mChannels[c];
      if (!check(ch->mPositionKeys, ch->mNumPositionKeys) ||
          !check(ch->mRotationKeys, ch->mNumRotationKeys) ||
          !check(ch->mScalingKeys, ch->mNumScalingKeys)) {
        return 0;
      }
    }
    return grid;
  }

  // Frame timing of an animation: frames per second, ticks per frame, number of frames.
  struct Timing {
    double fps = 30;
    double ticks_per_frame = 1;
    int frames = 1;
  };

  Timing TimingOf(const aiAnimation* anim) const {
    Timing timing;
    if (!anim) return timing;
    const double tps = anim->mTicksPerSecond > 0 ? anim->mTicksPerSecond : 25.0;
    bool integral = true;
    double min_dt = std::numeric_limits<double>::infinity();
    double max_time = 0;
    auto scan = [&](auto* keys, unsigned count) {
      for (unsigned k = 0; k < count; ++k) {
        const double t = keys[k].mTime;
        if (integral && std::abs(t - RoundFast(t)) > 1e-3) integral = false;
        max_time = std::max(max_time, t);
        if (k > 0 && t - keys[k - 1].mTime > 1e-9 * tps) {
          min_dt = std::min(min_dt, t - keys[k - 1].mTime);
        }
      }
    };
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      const aiNodeAnim* ch = anim->mChannels[c];
      scan(ch->mPositionKeys, ch->mNumPositionKeys);
      scan(ch->mRotationKeys, ch->mNumRotationKeys);
      scan(ch->mScalingKeys, ch->mNumScalingKeys);
    }
    if (Ext(path_) == ".fbx" || (tps <= 480 && integral)) {
      timing.fps = SnapRate(tps);
    } else if (std::isfinite(min_dt)) {
      timing.fps = SnapRate(tps / min_dt);
      if (timing.fps < 12) timing.fps = 30;
    }
    timing.ticks_per_frame = tps / timing.fps;
    if (const double grid = KeyGrid(*anim, timing.ticks_per_frame); grid > 0) {
      // Keyed on every frame at a rate a little off the snapped one (BVH "Frame Time: .0083333"
      // written as is): frame f is key f, so nothing is interpolated.
      timing.ticks_per_frame = grid;
    }
    double duration = anim->mDuration > 0 ? anim->mDuration : max_time;
    if (!std::isfinite(duration) || duration < 0) Fail("animation duration is not finite");
    const double frames = std::round(duration / timing.ticks_per_frame) + 1;
    if (!(frames <= kMaxFrames)) {
      Fail(fmt::format("animation '{}' would have {} frames at {} fps (limit {})",
                       anim->mName.C_Str(), frames, timing.fps, kMaxFrames));
    }
    timing.frames = static_cast<int>(frames);
    return timing;
  }

  // One animation sampled on every frame: per frame and joint (in joints_ order) the channel
  // rotation as (x, y, z) Euler angles (ZYX, continuous) and the translation offset from the rest.
  struct Sampled {
    std::string name;
    double fps = 30;
    int frames = 0;
    std::unique_ptr<double[]> values;  // frames x joints x 6 (every value written: no zeroing)
    std::vector<char> moved;           // per joint: the translation left the rest on some frame
  };

  // A transform: translation `o`, and either a rotation `q` times a positive uniform scale `s`
  // (s > 0), or a general linear part `m` (s == 0: non-uniform or negative scale).
  struct Xform {
    Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
    Eigen::Vector3d o = Eigen::Vector3d::Zero();
    double s = 1.0;
    Eigen::Matrix3d m = Eigen::Matrix3d::Identity();

    Eigen::Matrix3d Linear() const { return s > 0 ? Eigen::Matrix3d(s * q.toRotationMatrix()) : m; }
  };

  // parent * local.
  static void Compose(const Xform& parent, const Xform& local, Xform* out) {
    if (parent.s > 0 && local.s > 0) {
      out->q = parent.q * local.q;
      out->s = parent.s * local.s;
      out->o = parent.o + parent.s * (parent.q * local.o);
    } else {
      const Eigen::Matrix3d pm = parent.Linear();
      out->m.noalias() = pm * local.Linear();
      out->o = pm * local.o + parent.o;
      out->s = 0;
    }
  }

  // A file transform as an Xform; near-similarities are re-orthonormalised (float matrices).
  static Xform ToXform(const Eigen::Affine3d& t) {
    Xform x;
    x.o = t.translation();
    x.s = SimilarityScale(t.linear(), 1e-5);
    if (x.s > 0) {
      x.q = Eigen::Quaterniond(Eigen::Matrix3d(t.linear() / x.s)).normalized();
    } else {
      x.m = t.linear();
    }
    return x;
  }

  struct Animated {
    int node;
    const aiNodeAnim* channel;  // null: `fixed` is the local transform
    KeyTrack<aiVectorKey> position, scaling;
    KeyTrack<aiQuatKey> rotation;
    Eigen::Vector3d fallback_t, fallback_s;
    Eigen::Quaterniond fallback_q;
    Xform fixed;
  };

  // The local transform of `e` at `tick`.
  static void SampleLocal(Animated& e, double tick, double snap, Xform* x) {
    x->o = SampleVector(e.position, tick, snap, e.fallback_t);
    x->q = SampleRotation(e.rotation, tick, snap, e.fallback_q);
    if (e.scaling.count == 0 && e.fixed.s > 0) {  // constant uniform scale, decided once
      x->s = e.fixed.s;
      return;
    }
    const Eigen::Vector3d sv = SampleVector(e.scaling, tick, snap, e.fallback_s);
    const double smax = sv.cwiseAbs().maxCoeff();
    x->s = (sv.minCoeff() > 0 && sv.maxCoeff() - sv.minCoeff() <= 1e-6 * smax) ? sv.x() : 0.0;
    if (x->s == 0) x->m = x->q.toRotationMatrix() * sv.asDiagonal();
  }

  // Samples animation `a` (-1: the static pose). Evaluates only the joints and their ancestors,
  // nodes whose chain to the root is static once, and walks every key list with a cursor.
  Sampled SampleAnimation(int a, const std::string& name) {
    const aiAnimation* anim = a >= 0 ? scene_.mAnimations[a] : nullptr;
    const std::vector<const aiNodeAnim*>& map = maps_[a + 1];
    const Timing timing = TimingOf(anim);
    const int n = static_cast<int>(nodes_.size());
    const int num_joints = static_cast<int>(joints_.size());
    const double values = static_cast<double>(timing.frames) * num_joints * 6;
    if (values > kMaxClipValues) {
      Fail(fmt::format("animation '{}' is too large ({} frames x {} joints)", name, timing.frames,
                       num_joints));
    }
    // Nodes to evaluate: joints and their ancestors. Dynamic: animated, or below an animated node.
    std::vector<char> needed(n, 0), dynamic(n, 0);
    for (const int j : joints_) {
      for (int i = j; i >= 0 && !needed[i]; i = nodes_[i].parent) needed[i] = 1;
    }
    // Frames are evaluated in blocks (64 frames), node by node within a block: each channel's keys
    // are then read as one stream, and the per-node globals of a block stay in cache.
    // Per node and frame of the block: the global transform (quaternion and uniform scale when it
    // is a similarity, else a general linear part that ToFrame decomposes).
    // Storage is per needed node (slots), and the block shrinks for very large hierarchies so
    // that it stays within about 2^18 transforms (35 MB).
    std::vector<int> slot(n, -1);
    int num_slots = 0;
    for (int i = 0; i < n; ++i) {
      if (needed[i]) slot[i] = num_slots++;
    }
    const int kBlock = std::clamp((1 << 18) / std::max(num_slots, 1), 1, 64);
    std::vector<Xform> global(static_cast<std::size_t>(num_slots) * kBlock);
    auto at = [&slot, kBlock](int node, int b) {
      return static_cast<std::size_t>(slot[node]) * kBlock + b;
    };
    std::vector<Animated> evaluate;
    for (int i = 0; i < n; ++i) {
      if (!needed[i]) continue;
      const Node& node = nodes_[i];
      const int p = node.parent;
      const aiNodeAnim* ch = map[i];
      // The owner's channel holds the whole chain's transform (Assimp bakes pre-rotation and
      // translation into it when it is "simple"), so the helpers contribute nothing.
      const bool whole_owner =
          node.helper && node.owner >= 0 && map[node.owner] &&
          std::none_of(nodes_[node.owner].helpers.begin(), nodes_[node.owner].helpers.end(),
                       [&](int h) { return map[h] != nullptr; });
      Animated e;
      if (!whole_owner) e.fixed = ToXform(node.static_local);
      e.node = i;
      e.channel = whole_owner ? nullptr : ch;
      if (e.channel) {
        Eigen::Matrix3d rot = Eigen::Matrix3d::Identity(), scl = Eigen::Matrix3d::Identity();
        if (ch->mNumPositionKeys == 0 || ch->mNumRotationKeys == 0 || ch->mNumScalingKeys == 0) {
          node.static_local.computeRotationScaling(&rot, &scl);
        }
        e.fallback_t = node.static_local.translation();
        e.fallback_q = Eigen::Quaterniond(rot);
        e.fallback_s = scl.diagonal();
        // A key list whose keys are all equal is its value (Blender keys every bone's constant
        // translation and scale on every frame): no sampling.
        if (AllKeysEqual(ch->mPositionKeys, ch->mNumPositionKeys)) {
          e.fallback_t = ToVector(ch->mPositionKeys[0].mValue);
        } else {
          e.position.Reset(ch->mPositionKeys, ch->mNumPositionKeys);
        }
        if (AllKeysEqual(ch->mRotationKeys, ch->mNumRotationKeys)) {
          const aiQuaternion& v = ch->mRotationKeys[0].mValue;
          e.fallback_q = Eigen::Quaterniond(v.w, v.x, v.y, v.z).normalized();
        } else {
          e.rotation.Reset(ch->mRotationKeys, ch->mNumRotationKeys);
        }
        if (AllKeysEqual(ch->mScalingKeys, ch->mNumScalingKeys)) {
          e.fallback_s = ToVector(ch->mScalingKeys[0].mValue);
        } else {
          e.scaling.Reset(ch->mScalingKeys, ch->mNumScalingKeys);
        }
        e.fixed.s = 0;  // the channel's scale is sampled
        if (e.scaling.count == 0) {
          const Eigen::Vector3d& sv = e.fallback_s;
          const double smax = sv.cwiseAbs().maxCoeff();
          if (sv.minCoeff() > 0 && sv.maxCoeff() - sv.minCoeff() <= 1e-6 * smax) e.fixed.s = sv.x();
        }
        if (e.position.count == 0 && e.rotation.count == 0 && e.scaling.count == 0) {
          // Constant channel: a static node with the channel's transform.
          Xform x;
          SampleLocal(e, 0, 0, &x);
          e.fixed = x;
          e.channel = nullptr;
        }
      }
      dynamic[i] = e.channel != nullptr || (p >= 0 && dynamic[p]);
      if (dynamic[i]) {
        evaluate.push_back(e);
      } else {
        Xform g = e.fixed;
        if (p >= 0) Compose(global[at(p, 0)], e.fixed, &g);
        for (int b = 0; b < kBlock; ++b) global[at(i, b)] = g;
      }
    }
    // Per joint: the inverse of its joint-local rest rotation.
    std::vector<Eigen::Quaterniond> rest_inverse(num_joints);
    for (int k = 0; k < num_joints; ++k) {
      rest_inverse[k] =
          Eigen::Quaterniond(rest_local_[joints_[k]].rotation).normalized().conjugate();
    }

    Sampled out;
    out.name = name;
    out.fps = timing.fps;
    out.frames = timing.frames;
    out.values.reset(new double[static_cast<std::size_t>(timing.frames) * num_joints * 6]);
    out.moved.assign(num_joints, 0);
    const double moved_tolerance = translation_tolerance_ * translation_tolerance_;
    // Joints whose transform relative to their joint parent has no channel on the way (LHipJoint,
    // a shoulder): while both globals are similarities their values are constant, computed once.
    std::vector<char> own_channel(n, 0);
    for (const Animated& e : evaluate) own_channel[e.node] = e.channel != nullptr;
    std::vector<char> constant(num_joints, 1), cached(num_joints, 0);
    for (int k = 0; k < num_joints; ++k) {
      const int p = joint_parent_[joints_[k]];
      for (int i = joints_[k]; i >= 0 && i != p; i = nodes_[i].parent) {
        if (own_channel[i]) constant[k] = 0;
      }
    }
    std::vector<double> constant_values(static_cast<std::size_t>(num_joints) * 6);
    std::vector<double> cached_scale(num_joints, 0.0);
    std::vector<Eigen::Quaterniond> world(static_cast<std::size_t>(num_slots) * kBlock);
    std::vector<Eigen::Vector3d> previous(num_joints, Eigen::Vector3d::Zero());
    const double snap = 0.01 * timing.ticks_per_frame;
    for (int first = 0; first < timing.frames; first += kBlock) {
      const int count = std::min(kBlock, timing.frames - first);
      for (Animated& e : evaluate) {
        const int i = e.node, p = nodes_[i].parent;
        Xform* const gi = &global[at(i, 0)];
        const Xform* const gp = p < 0 ? nullptr : &global[at(p, 0)];
        for (int b = 0; b < count; ++b) {
          Xform local_sample;
          const Xform* local = &e.fixed;
          if (e.channel) {
            SampleLocal(e, (first + b) * timing.ticks_per_frame, snap, &local_sample);
            local = &local_sample;
          }
          if (gp) {
            Compose(gp[b], *local, &gi[b]);
          } else {
            gi[b] = *local;
          }
        }
      }
      for (int k = 0; k < num_joints; ++k) {
        const int j = joints_[k];
        const int p = joint_parent_[j];
        const Xform* const gj = &global[at(j, 0)];
        const Xform* const gp = p < 0 ? nullptr : &global[at(p, 0)];
        Eigen::Quaterniond* const wj = &world[at(j, 0)];
        const Eigen::Quaterniond* const wp = p < 0 ? nullptr : &world[at(p, 0)];
        for (int b = 0; b < count; ++b) {
          const Xform& g = gj[b];
          Eigen::Quaterniond& w = wj[b];
          if (g.s > 0) {
            w = g.q;
          } else {
            bool nonuniform = false;
            Eigen::Affine3d affine = Eigen::Affine3d::Identity();
            affine.linear() = g.m;
            affine.translation() = g.o;
            w = Eigen::Quaterniond(ToFrame(affine, &nonuniform).rotation);
            if (nonuniform) NoteNonuniform(j);
          }
          double* v = out.values.get() + (static_cast<std::size_t>(first + b) * num_joints + k) * 6;
          double* const constant_v = constant_values.data() + 6 * static_cast<std::size_t>(k);
          // The offset to the parent scales with the parent's (possibly animated) global scale.
          const double parent_scale = gp ? gp[b].s : 1.0;
          const bool similar = g.s > 0 && parent_scale > 0;
          if (constant[k] && similar && cached[k] && cached_scale[k] == parent_scale) {
            std::copy(constant_v, constant_v + 6, v);
            continue;
          }
          Eigen::Quaterniond channel_rotation;
          Eigen::Vector3d translation = g.o;
          if (gp) {
            const Eigen::Quaterniond parent_inverse = wp[b].conjugate();
            channel_rotation = rest_inverse[k] * (parent_inverse * w);
            translation = parent_inverse * (g.o - gp[b].o);
          } else {
            channel_rotation = rest_inverse[k] * w;
          }
          const Eigen::Vector3d xyz = EulerZyxNear(channel_rotation, previous[k]);
          previous[k] = xyz;
          const Eigen::Vector3d delta = translation - rest_local_[j].origin;
          if (delta.squaredNorm() > moved_tolerance) out.moved[k] = 1;
          for (int c = 0; c < 3; ++c) {
            v[c] = xyz[c];
            v[3 + c] = delta[c];
          }
          if (constant[k] && similar) {
            std::copy(v, v + 6, constant_v);
            cached[k] = 1;
            cached_scale[k] = parent_scale;
          }
        }
      }
    }
    return out;
  }

  // Sets has_position_ for animated joints whose local translation leaves the rest.
  void MarkAnimatedTranslations(const Sampled& s) {
    for (std::size_t k = 0; k < joints_.size(); ++k) {
      if (s.moved[k] && animated_[joints_[k]]) has_position_[joints_[k]] = true;
    }
  }

  Clip ToClip(const Sampled& s, const Skeleton& skeleton) {
    const double values =
        static_cast<double>(s.frames) * static_cast<double>(skeleton.num_channels());
    if (values > kMaxClipValues) {
      Fail(fmt::format("animation '{}' is too large ({} frames x {} channels)", s.name, s.frames,
                       skeleton.num_channels()));
    }
    Clip clip(s.frames, skeleton.num_channels(), 1.0 / s.fps);
    clip.set_name(s.name);
    const int num_joints = static_cast<int>(joints_.size());
    for (int f = 0; f < s.frames; ++f) {
      std::span<double> row = clip.frame(f);
      for (int k = 0; k < num_joints; ++k) {
        const int j = frame_index_[joints_[k]];
        const double* v = s.values.get() + (static_cast<std::size_t>(f) * num_joints + k) * 6;
        const std::span<const int> rc = skeleton.rotation_channels(j);
        // Channels are Zrotation Yrotation Xrotation.
        row[rc[0]] = v[2];
        row[rc[1]] = v[1];
        row[rc[2]] = v[0];
        for (int axis = 0; axis < 3; ++axis) {
          const int c = skeleton.translation_channel(j, axis);
          if (c >= 0) row[c] = v[3 + axis];
        }
      }
    }
    for (const double v : clip.values()) {
      if (!std::isfinite(v)) Fail(fmt::format("animation '{}' has non-finite values", s.name));
    }
    return clip;
  }

  const aiScene& scene_;
  const std::string& path_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> children_;
  std::unordered_map<std::string, int> index_by_name_;
  std::vector<bool> animated_;
  std::vector<bool> is_bone_;
  std::vector<bool> is_joint_;
  std::vector<bool> has_position_;
  std::vector<int> joint_parent_;
  std::vector<int> joints_;
  std::vector<int> frame_index_;
  std::vector<Eigen::Affine3d> bind_world_;
  std::vector<Eigen::Affine3d> rest_world_;
  std::vector<Frame> rest_;
  std::vector<Frame> rest_local_;
  std::vector<std::string> names_;
  std::vector<std::pair<int, Eigen::Vector3d>> end_sites_;
  std::vector<std::string> warnings_;
  std::vector<std::vector<const aiNodeAnim*>> maps_;  // [0]: none, [a + 1]: animation a
  double translation_tolerance_ = 1e-9;
  bool nonuniform_scale_ = false;
  std::string nonuniform_name_;
};

}  // namespace

std::vector<std::string> AssimpExtensions() { return {".fbx", ".glb", ".gltf", ".dae"}; }

Scene ReadWithAssimp(const std::string& path) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_ALL_GEOMETRY_LAYERS, false);
  // Materials and (embedded) textures are never used: not reading them saves time and memory on
  // character files.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_MATERIALS, false);
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
  return Converter(scene, path).Run();
}

}  // namespace rigel
