// The Assimp front's sampling (importers/assimp_converter.h): the frame rate and count of each
// animation, every joint's channel values sampled on every frame, and the clips.
#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/pose.h"
#include "core/scene.h"
#include "importers/assimp_converter.h"
#include "importers/assimp_keys.h"
#include "importers/fast_euler.h"
#include "io/file_format.h"

namespace rigel::assimp_internal {

namespace {

// Snaps `x` to the nearest whole number when within 0.1%.
double SnapRate(double x) {
  const double r = std::round(x);
  return (r > 0 && std::abs(x - r) <= 1e-3 * x) ? r : x;
}

}  // namespace

double Converter::StatedStackDuration(const aiAnimation& anim) const {
  const FbxStackRange* found = nullptr;
  for (const FbxStackRange& s : stacks_) {
    if (s.name != anim.mName.C_Str()) continue;
    if (found) return -1;  // two stacks of one name: which is which is unknown
    found = &s;
  }
  if (!found || !found->has_stop || (found->start == 0 && found->stop == 0)) return -1;
  // Assimp: CONVERT_FBX_TIME(t) * anim_fps, then stop - start.
  const double tps = anim.mTicksPerSecond;
  const double start = static_cast<double>(found->start) / kFbxTicksPerSecond * tps;
  const double stop = static_cast<double>(found->stop) / kFbxTicksPerSecond * tps;
  return stop - start;
}

double Converter::KeyGrid(const aiAnimation& anim, double ticks_per_frame) {
  double grid = 0;
  // A key list on a grid: every key at a whole number of steps `dt` from time 0, dt within 0.1%
  // of a frame. Dense lists (a key per frame) and sparse ones (rigel's reduced keys: frames kept
  // by key reduction) alike; the step comes from the last key and its frame number.
  auto check = [&](auto* keys, unsigned count) {
    if (count <= 2 && (count == 0 || keys[count - 1].mTime <= ticks_per_frame * 1.5)) return true;
    const double steps = std::round(keys[count - 1].mTime / ticks_per_frame);
    if (!(steps >= 1)) return false;
    const double dt = keys[count - 1].mTime / steps;
    if (!(std::abs(dt - ticks_per_frame) <= 1e-3 * ticks_per_frame)) return false;
    if (grid == 0) grid = dt;
    if (std::abs(dt - grid) > 1e-6 * grid) return false;
    for (unsigned k = 0; k < count; ++k) {
      const double at = keys[k].mTime / dt;
      if (std::abs(at - std::round(at)) > 1e-3) return false;
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

void Converter::NoteRateSource(const Timing& timing, const std::string& name) {
  using Source = Timing::RateSource;
  const char* no_rate = LowerExtension(path_) == ".fbx"
                            ? "the file states no frame rate (FBX time mode 'default' and no "
                              "custom rate)"
                            : "the file states no frame rate";
  switch (timing.rate_source) {
    case Source::kStated:
      return;
    case Source::kKeySpacing:
      warnings_.push_back(
          fmt::format("{}: animation '{}': {}; {} fps taken from the spacing of "
                      "its keys",
                      path_, name, no_rate, timing.fps));
      return;
    case Source::kAssumedSingleKey:
      warnings_.push_back(fmt::format(
          "{}: animation '{}' has a single key and the file states no frame rate: its frame "
          "time is unknown, 1/{} s assumed",
          path_, name, timing.fps));
      return;
    case Source::kAssumedSparse:
      warnings_.push_back(fmt::format(
          "{}: animation '{}': {} and its keys, {:.4g} s apart at the closest, are too sparse "
          "to be frames: {} fps assumed",
          path_, name, no_rate, timing.key_spacing, timing.fps));
      return;
  }
}

double Converter::FbxStatedRate(double tps) const {
  const aiMetadata* meta = scene_.mMetaData;
  if (meta == nullptr) return tps;
  int mode = -1;
  double custom = 0;
  for (unsigned i = 0; i < meta->mNumProperties; ++i) {
    const std::string_view key = meta->mKeys[i].C_Str();
    const aiMetadataEntry& e = meta->mValues[i];
    if (key == "FrameRate" && e.mType == AI_INT32) mode = *static_cast<const int32_t*>(e.mData);
    if (key == "CustomFrameRate" && e.mType == AI_DOUBLE) {
      custom = *static_cast<const double*>(e.mData);
    }
    if (key == "CustomFrameRate" && e.mType == AI_FLOAT) {
      custom = *static_cast<const float*>(e.mData);
    }
  }
  constexpr int kDefaultMode = 0, kCustomMode = 14;
  if (mode == kDefaultMode || mode == kCustomMode) return custom > 0 ? custom : 0.0;
  return tps;
}

Converter::Timing Converter::TimingOf(const aiAnimation* anim) const {
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
  for (unsigned c = 0; c < anim->mNumMorphMeshChannels; ++c) {  // blend-shape weight keys
    scan(anim->mMorphMeshChannels[c]->mKeys, anim->mMorphMeshChannels[c]->mNumKeys);
  }
  const bool fbx = LowerExtension(path_) == ".fbx";
  const double stated = fbx ? FbxStatedRate(tps) : 0.0;
  if (stated > 0) {
    timing.fps = SnapRate(stated);
  } else if (fbx && assumed_fps_ > 0) {  // keyed by rigel's copy at the rate its sampler assumes
    timing.fps = assumed_fps_;
    timing.rate_source = Timing::RateSource::kAssumedSparse;
    timing.key_spacing = assumed_key_spacing_;
  } else if (!fbx && tps <= 480 && integral) {
    timing.fps = SnapRate(tps);
  } else if (std::isfinite(min_dt)) {
    timing.fps = SnapRate(tps / min_dt);
    using Source = Timing::RateSource;
    timing.rate_source = fbx ? Source::kKeySpacing : Source::kStated;  // glTF: keys are frames
    if (timing.fps < 12) {
      timing.fps = 30;
      timing.rate_source = Source::kAssumedSparse;
      timing.key_spacing = min_dt / tps;
    }
  } else {
    timing.rate_source = Timing::RateSource::kAssumedSingleKey;
  }
  timing.ticks_per_frame = tps / timing.fps;
  if (const double grid = KeyGrid(*anim, timing.ticks_per_frame); grid > 0) {
    // Keyed on every frame at a rate a little off the snapped one (BVH "Frame Time: .0083333"
    // written as is): frame f is key f, so nothing is interpolated.
    timing.ticks_per_frame = grid;
  }
  double duration = anim->mDuration > 0 ? anim->mDuration : max_time;
  // A widened stack (keys past its stop were read): the take is its stated range.
  if (const double range = StatedStackDuration(*anim); range >= 0) duration = range;
  if (!std::isfinite(duration) || duration < 0) Fail("animation duration is not finite");
  const double frames = std::round(duration / timing.ticks_per_frame) + 1;
  if (!(frames <= kMaxFrames)) {
    Fail(fmt::format("animation '{}' would have {} frames at {} fps (limit {})",
                     anim->mName.C_Str(), frames, timing.fps, kMaxFrames));
  }
  timing.frames = static_cast<int>(frames);
  return timing;
}

// SampleAnimation's working state. Frames are evaluated in blocks, node by node within a block
// (PlanNodes says why); per node and frame of the block, global transforms and rotations are kept
// per needed node (slot), at At(node, b).
struct Converter::Sampling {
  Timing timing;
  int num_joints = 0;
  std::vector<int> slot;
  int num_slots = 0;
  int block = 1;
  std::vector<Xform> global;
  std::vector<Animated> evaluate;  // the dynamic nodes, parent first
  bool animated_scale = false;
  std::vector<Eigen::Quaterniond> world;  // per slot and frame of the block, as `global`
  // Per joint (joints_ order).
  std::vector<Eigen::Quaterniond> rest_inverse;
  std::vector<char> constant, cached;
  std::vector<double> constant_values;
  std::vector<double> cached_scale;
  std::vector<Eigen::Vector3d> previous;
  double moved_tolerance = 0;
  // The path with scale (PrepareJoints).
  std::vector<Eigen::Matrix3d> to_rigel, linear, frame;
  std::unique_ptr<double[]> scaled_values;
  int rigid_nonuniform = -1, scaled_nonuniform = -1;  // first node each path could not carry
  std::vector<char> scaled_moved;
  std::vector<Eigen::Vector3d> scaled_previous;
  std::vector<int> joint_slot;

  std::size_t At(int node, int b) const { return static_cast<std::size_t>(slot[node]) * block + b; }
};

Converter::Sampled Converter::SampleAnimation(int a, const std::string& name) {
  const aiAnimation* anim = a >= 0 ? scene_.mAnimations[a] : nullptr;
  const std::vector<const aiNodeAnim*>& map = maps_[a + 1];
  Sampling st;
  st.timing = TimingOf(anim);
  const Timing& timing = st.timing;
  if (!record_world_) NoteRateSource(timing, name);
  const int num_joints = static_cast<int>(joints_.size());
  st.num_joints = num_joints;
  const double values = static_cast<double>(timing.frames) * num_joints * 6;
  if (values > kMaxClipValues) {
    Fail(fmt::format("animation '{}' is too large ({} frames x {} joints)", name, timing.frames,
                     num_joints));
  }
  if (record_world_) {
    record_world_->assign(static_cast<std::size_t>(timing.frames) * num_joints,
                          Eigen::Vector3d::Zero());
    record_linear_->assign(static_cast<std::size_t>(timing.frames) * num_joints,
                           Eigen::Matrix3d::Zero());
  }
  PlanNodes(map, st);
  Sampled out;
  out.name = name;
  out.anim = a;
  out.ticks_per_frame = timing.ticks_per_frame;
  out.fps = timing.fps;
  out.frames = timing.frames;
  out.values.reset(new double[static_cast<std::size_t>(timing.frames) * num_joints * 6]);
  out.moved.assign(num_joints, 0);
  PrepareJoints(st, out);
  for (int first = 0; first < timing.frames; first += st.block) {
    const int count = std::min(st.block, timing.frames - first);
    EvaluateNodes(st, first, count);
    for (int k = 0; k < num_joints; ++k) SampleJoint(st, k, first, count, out);
  }
  KeepScalePathOrNot(st, out);
  return out;
}

void Converter::PlanNodes(const std::vector<const aiNodeAnim*>& map, Sampling& st) {
  const int n = static_cast<int>(nodes_.size());
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
  st.slot.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (needed[i]) st.slot[i] = st.num_slots++;
  }
  st.block = std::clamp((1 << 18) / std::max(st.num_slots, 1), 1, 64);
  st.global = std::vector<Xform>(static_cast<std::size_t>(st.num_slots) * st.block);
  // Inherit type Rrs acts at the top of a node's chain, or on the node when its channel holds the
  // whole chain (the helpers are then identities).
  std::vector<char> drop_on_owner(n, 0);
  st.animated_scale = pose_scales_rest_;
  for (int i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    const int p = nodes_[i].parent;
    Animated e = AnimatedNode(i, map, st.timing, drop_on_owner, &st.animated_scale);
    dynamic[i] = e.channel != nullptr || (p >= 0 && dynamic[p]);
    if (dynamic[i]) {
      st.evaluate.push_back(e);
    } else {
      Xform g = e.fixed;
      if (p >= 0) Compose(st.global[st.At(p, 0)], e.fixed, &g, e.drop_parent_scale);
      for (int b = 0; b < st.block; ++b) st.global[st.At(i, b)] = g;
    }
  }
}

Animated Converter::AnimatedNode(int i, const std::vector<const aiNodeAnim*>& map,
                                 const Timing& timing, std::vector<char>& drop_on_owner,
                                 bool* animated_scale) {
  const Node& node = nodes_[i];
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
  e.drop_parent_scale = (node.drop_parent_scale && !whole_owner) || drop_on_owner[i];
  if (node.drop_parent_scale && whole_owner) drop_on_owner[node.owner] = 1;
  e.channel = whole_owner ? nullptr : ch;
  if (!e.channel) return e;
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
    e.position.Reset(ch->mPositionKeys, ch->mNumPositionKeys, timing.ticks_per_frame);
  }
  if (AllKeysEqual(ch->mRotationKeys, ch->mNumRotationKeys)) {
    const aiQuaternion& v = ch->mRotationKeys[0].mValue;
    e.fallback_q = Eigen::Quaterniond(v.w, v.x, v.y, v.z).normalized();
  } else {
    e.rotation.Reset(ch->mRotationKeys, ch->mNumRotationKeys, timing.ticks_per_frame);
  }
  if (AllKeysEqual(ch->mScalingKeys, ch->mNumScalingKeys)) {
    e.fallback_s = ToVector(ch->mScalingKeys[0].mValue);
  } else {
    e.scaling.Reset(ch->mScalingKeys, ch->mNumScalingKeys, timing.ticks_per_frame);
  }
  // Scale channels: some node's scale leaves its static (rest) value.
  if (e.scaling.count > 0) {
    *animated_scale = true;
  } else {
    const Eigen::Matrix3d& l = node.static_local.linear();
    const Eigen::Vector3d rest_s(l.col(0).norm(), l.col(1).norm(), l.col(2).norm());
    if ((e.fallback_s.cwiseAbs() - rest_s).cwiseAbs().maxCoeff() >
        1e-6 * std::max(1.0, rest_s.maxCoeff())) {
      *animated_scale = true;
    }
  }
  // The channel's scale is sampled, unless it is constant and uniform.
  e.fixed.s = e.scaling.count == 0 ? UniformScale(e.fallback_s) : 0.0;
  if (e.position.count == 0 && e.rotation.count == 0 && e.scaling.count == 0) {
    // Constant channel: a static node with the channel's transform.
    Xform x;
    SampleLocal(e, 0, &x);
    e.fixed = x;
    e.channel = nullptr;
  }
  return e;
}

void Converter::PrepareJoints(Sampling& st, Sampled& out) {
  const int n = static_cast<int>(nodes_.size());
  const int num_joints = st.num_joints;
  // Per joint: the inverse of its joint-local rest rotation.
  st.rest_inverse.resize(num_joints);
  for (int k = 0; k < num_joints; ++k) {
    st.rest_inverse[k] =
        Eigen::Quaterniond(rest_local_[joints_[k]].rotation).normalized().conjugate();
  }
  st.moved_tolerance = translation_tolerance_ * translation_tolerance_;
  // Joints whose transform relative to their joint parent has no channel on the way (LHipJoint,
  // a shoulder): while both globals are similarities their values are constant, computed once.
  std::vector<char> own_channel(n, 0);
  for (const Animated& e : st.evaluate) own_channel[e.node] = e.channel != nullptr;
  st.constant.assign(num_joints, 1);
  st.cached.assign(num_joints, 0);
  for (int k = 0; k < num_joints; ++k) {
    const int p = joint_parent_[joints_[k]];
    for (int i = joints_[k]; i >= 0 && i != p; i = nodes_[i].parent) {
      if (own_channel[i]) st.constant[k] = 0;
    }
  }
  st.constant_values.assign(static_cast<std::size_t>(num_joints) * 6, 0.0);
  st.cached_scale.assign(num_joints, 0.0);
  st.world.resize(static_cast<std::size_t>(st.num_slots) * st.block);
  st.previous.assign(num_joints, Eigen::Vector3d::Zero());
  // With scale: per joint, rest world linear^-1 * rest rotation (a source world linear times it
  // is rigel's world linear: the scale relative to the rest), and rigel's world linear and
  // rotation frame per joint and frame of the block.
  // The rotations and translations of that path go to `scaled_values` (and `scaled_moved`,
  // `scaled_previous`): they replace the rigid path's only when some joint does scale, so a file
  // whose scale keys only restate the rest keeps its values bit for bit.
  if (st.animated_scale) {
    const std::size_t frames = static_cast<std::size_t>(st.timing.frames);
    out.scales.reset(new double[frames * num_joints * 3]);
    out.scaled.assign(num_joints, 0);
    st.scaled_values.reset(new double[frames * num_joints * 6]);
    st.scaled_moved.assign(num_joints, 0);
    st.scaled_previous.assign(num_joints, Eigen::Vector3d::Zero());
    st.to_rigel.resize(num_joints);
    for (int k = 0; k < num_joints; ++k) {
      const int j = joints_[k];
      st.to_rigel[k] = rest_world_[j].linear().inverse() * rest_[j].rotation;
    }
    st.linear.resize(static_cast<std::size_t>(num_joints) * st.block);
    st.frame.resize(static_cast<std::size_t>(num_joints) * st.block);
  }
  st.joint_slot.assign(n, -1);
  for (int k = 0; k < num_joints; ++k) st.joint_slot[joints_[k]] = k;
}

void Converter::EvaluateNodes(Sampling& st, int first, int count) {
  for (Animated& e : st.evaluate) {
    const int i = e.node, p = nodes_[i].parent;
    Xform* const gi = &st.global[st.At(i, 0)];
    const Xform* const gp = p < 0 ? nullptr : &st.global[st.At(p, 0)];
    for (int b = 0; b < count; ++b) {
      Xform local_sample;
      const Xform* local = &e.fixed;
      if (e.channel) {
        SampleLocal(e, (first + b) * st.timing.ticks_per_frame, &local_sample);
        local = &local_sample;
      }
      if (gp) {
        Compose(gp[b], *local, &gi[b], e.drop_parent_scale);
      } else {
        gi[b] = *local;
      }
    }
  }
}

void Converter::SampleJoint(Sampling& st, int k, int first, int count, Sampled& out) {
  const int num_joints = st.num_joints;
  const int block = st.block;
  const int j = joints_[k];
  const int p = joint_parent_[j];
  const Xform* const gj = &st.global[st.At(j, 0)];
  const Xform* const gp = p < 0 ? nullptr : &st.global[st.At(p, 0)];
  Eigen::Quaterniond* const wj = &st.world[st.At(j, 0)];
  const Eigen::Quaterniond* const wp = p < 0 ? nullptr : &st.world[st.At(p, 0)];
  for (int b = 0; b < count; ++b) {
    const Xform& g = gj[b];
    if (record_world_) {
      const std::size_t at_frame = static_cast<std::size_t>(first + b) * num_joints + k;
      (*record_world_)[at_frame] = g.o;
      (*record_linear_)[at_frame] = g.Linear();
    }
    if (st.animated_scale) {
      SampleScaled(
          k, p < 0 ? -1 : st.joint_slot[p], b, block, g, gp ? &gp[b] : nullptr, st.to_rigel,
          st.linear, st.frame, st.rest_inverse[k], st.scaled_previous[k],
          st.scaled_values.get() + (static_cast<std::size_t>(first + b) * num_joints + k) * 6,
          out.scales.get() + (static_cast<std::size_t>(first + b) * num_joints + k) * 3,
          st.scaled_moved[k], out.scaled[k], st.scaled_nonuniform, j);
    }
    Eigen::Quaterniond& w = wj[b];
    if (g.s > 0) {
      w = g.q;
    } else {
      bool nonuniform = false;
      Eigen::Affine3d affine = Eigen::Affine3d::Identity();
      affine.linear() = g.m;
      affine.translation() = g.o;
      w = Eigen::Quaterniond(ToFrame(affine, &nonuniform).rotation);
      if (nonuniform) {
        // With a scale path running, its verdict stands unless it is dropped (below).
        if (st.animated_scale) {
          if (st.rigid_nonuniform < 0) st.rigid_nonuniform = j;
        } else {
          NoteNonuniform(j);
        }
      }
    }
    double* v = out.values.get() + (static_cast<std::size_t>(first + b) * num_joints + k) * 6;
    double* const constant_v = st.constant_values.data() + 6 * static_cast<std::size_t>(k);
    // The offset to the parent scales with the parent's (possibly animated) global scale.
    const double parent_scale = gp ? gp[b].s : 1.0;
    const bool similar = g.s > 0 && parent_scale > 0;
    if (st.constant[k] && similar && st.cached[k] && st.cached_scale[k] == parent_scale) {
      std::copy(constant_v, constant_v + 6, v);
      continue;
    }
    Eigen::Quaterniond channel_rotation;
    Eigen::Vector3d translation = g.o;
    if (gp) {
      const Eigen::Quaterniond parent_inverse = wp[b].conjugate();
      channel_rotation = st.rest_inverse[k] * (parent_inverse * w);
      translation = parent_inverse * (g.o - gp[b].o);
    } else {
      channel_rotation = st.rest_inverse[k] * w;
    }
    const Eigen::Vector3d xyz = EulerZyxNear(channel_rotation, st.previous[k]);
    st.previous[k] = xyz;
    const Eigen::Vector3d delta = translation - rest_local_[j].origin;
    if (delta.squaredNorm() > st.moved_tolerance) out.moved[k] = 1;
    for (int c = 0; c < 3; ++c) {
      v[c] = xyz[c];
      v[3 + c] = delta[c];
    }
    if (st.constant[k] && similar) {
      std::copy(v, v + 6, constant_v);
      st.cached[k] = 1;
      st.cached_scale[k] = parent_scale;
    }
  }
}

void Converter::KeepScalePathOrNot(Sampling& st, Sampled& out) {
  if (!st.animated_scale) return;
  if (std::find(out.scaled.begin(), out.scaled.end(), 1) != out.scaled.end()) {
    out.values = std::move(st.scaled_values);
    out.moved = std::move(st.scaled_moved);
    if (st.scaled_nonuniform >= 0) NoteNonuniform(st.scaled_nonuniform);
  } else {
    out.scales.reset();
    out.scaled.clear();
    if (st.rigid_nonuniform >= 0) NoteNonuniform(st.rigid_nonuniform);
  }
}

void Converter::SampleScaled(int k, int parent_k, int b, int block, const Xform& g, const Xform* gp,
                             const std::vector<Eigen::Matrix3d>& to_rigel,
                             std::vector<Eigen::Matrix3d>& linear,
                             std::vector<Eigen::Matrix3d>& frame,
                             const Eigen::Quaterniond& rest_inverse, Eigen::Vector3d& previous,
                             double* v, double* scale, char& moved, char& scaled, int& nonuniform,
                             int j) {
  auto at = [block, b](int joint) { return static_cast<std::size_t>(joint) * block + b; };
  // rigel's world linear of the joint: the source's relative to its rest, on the rest frame.
  const Eigen::Matrix3d lin = g.Linear() * to_rigel[k];
  linear[at(k)] = lin;
  // The parent's part of it, and the joint's own R * S.
  Eigen::Matrix3d parent_linear = Eigen::Matrix3d::Identity();
  Eigen::Matrix3d parent_frame = Eigen::Matrix3d::Identity();
  if (parent_k >= 0) {
    parent_linear = linear[at(parent_k)];
    parent_frame = frame[at(parent_k)];
  }
  const bool compensate = nodes_[j].inherit_rrs && parent_k >= 0;
  const Eigen::Matrix3d own = (compensate ? parent_frame : parent_linear).inverse() * lin;
  Eigen::Vector3d s(own.col(0).norm(), own.col(1).norm(), own.col(2).norm());
  Eigen::Matrix3d r = own;
  bool exact = s.minCoeff() > 0 && std::isfinite(s.maxCoeff());
  if (exact) {
    for (int i = 0; i < 3; ++i) r.col(i) /= s[i];
    // R * S with R a rotation: its columns orthonormal (no shear), right-handed.
    exact = (r.transpose() * r - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() < 1e-6 &&
            r.determinant() > 0;
  }
  if (!exact) {
    if (nonuniform < 0) nonuniform = j;
    r = RotationOf(own);
    if (r.determinant() < 0) r = -r;
    s = (r.transpose() * own).diagonal();
  }
  frame[at(k)] = parent_frame * r;
  const Eigen::Quaterniond channel_rotation = rest_inverse * Eigen::Quaterniond(r).normalized();
  const Eigen::Vector3d xyz = EulerZyxNear(channel_rotation, previous);
  previous = xyz;
  const Eigen::Vector3d translation =
      gp ? Eigen::Vector3d(parent_linear.inverse() * (g.o - gp->o)) : g.o;
  const Eigen::Vector3d delta = translation - rest_local_[j].origin;
  const double moved_tolerance = translation_tolerance_ * translation_tolerance_;
  if (delta.squaredNorm() > moved_tolerance) moved = 1;
  for (int c = 0; c < 3; ++c) {
    v[c] = xyz[c];
    v[3 + c] = delta[c];
    scale[c] = s[c] - 1.0;
    if (std::abs(scale[c]) > 1e-5) scaled = 1;  // float keys restating 1 (0.9999988) do not count
  }
}

void Converter::MarkAnimatedTranslations(const Sampled& s) {
  for (std::size_t k = 0; k < joints_.size(); ++k) {
    if (s.moved[k]) has_position_[joints_[k]] = true;
    if (!s.scaled.empty() && s.scaled[k]) has_scale_[joints_[k]] = true;
  }
}

Clip Converter::ToClip(const Sampled& s, const Skeleton& skeleton) {
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
        const int sc = skeleton.scale_channel(j, axis);
        if (sc >= 0) {
          row[sc] =
              s.scales ? s.scales[(static_cast<std::size_t>(f) * num_joints + k) * 3 + axis] : 0.0;
        }
      }
    }
  }
  for (const double v : clip.values()) {
    if (!std::isfinite(v)) Fail(fmt::format("animation '{}' has non-finite values", s.name));
  }
  return clip;
}

Converter::Approximation Converter::MeasureApproximation(const std::vector<Sampled>& sampled,
                                                         const Scene& out) {
  Approximation worst;
  const Skeleton& skeleton = *out.skeleton;
  const int num_joints = static_cast<int>(joints_.size());
  Eigen::AlignedBox3d box;
  for (const int j : joints_) box.extend(rest_[j].origin);
  worst.size = num_joints > 0 ? box.sizes().maxCoeff() : 0.0;
  // Per joint: its reach (farthest child, end site or vertex it moves at rest, world units) and
  // the map from a
  // rest world offset to the file's local coordinates (pseudo-inverse: a zero rest scale
  // collapses the points it carries).
  std::vector<double> reach(num_joints, 0.0);
  std::vector<Eigen::Matrix3d> rest_inverse(num_joints);
  std::vector<int> slot(nodes_.size(), -1);
  for (int k = 0; k < num_joints; ++k) {
    const int j = joints_[k];
    slot[j] = k;
    rest_inverse[k] = rest_world_[j].linear().completeOrthogonalDecomposition().pseudoInverse();
  }
  for (int k = 0; k < num_joints; ++k) {
    const int p = joint_parent_[joints_[k]];
    if (p >= 0 && slot[p] >= 0) {
      reach[slot[p]] =
          std::max(reach[slot[p]], (rest_[joints_[k]].origin - rest_[p].origin).norm());
    }
  }
  for (const auto& [j, at] : end_sites_) {
    if (slot[j] >= 0) reach[slot[j]] = std::max(reach[slot[j]], (at - rest_[j].origin).norm());
  }
  // And the mesh vertices it moves, at bind.
  std::vector<int> slot_of_joint(skeleton.num_joints(), -1);
  for (int k = 0; k < num_joints; ++k) slot_of_joint[frame_index_[joints_[k]]] = k;
  auto carry = [&](int joint, const Eigen::Vector3d& origin, const Eigen::Vector3d& vertex) {
    const int k = joint >= 0 ? slot_of_joint[joint] : -1;
    if (k >= 0) reach[k] = std::max(reach[k], (vertex - origin).norm());
  };
  for (const Mesh& mesh : out.meshes) {
    for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
      if (!mesh.skinned()) {
        carry(mesh.attach_joint, mesh.attach_bind.translation(), mesh.positions[v]);
        continue;
      }
      for (int i = 0; i < Mesh::kMaxInfluences; ++i) {
        if (mesh.vertex_weights[v][i] <= 0) continue;
        const int s = mesh.vertex_joints[v][i];
        carry(mesh.skin_joints[s], mesh.bind_world[s].translation(), mesh.positions[v]);
      }
    }
  }
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  std::vector<Eigen::Matrix3d> linear(skeleton.num_joints());
  std::vector<Eigen::Vector3d> source;
  std::vector<Eigen::Matrix3d> source_linear;
  record_world_ = &source;
  record_linear_ = &source_linear;
  auto note = [](Approximation::Worst& w, double d, const std::string& joint, const Clip& clip,
                 int f) {
    if (d <= w.distance) return;  // a NaN is the worst of all
    w = {d, joint, clip.name(), f};
  };
  for (std::size_t c = 0; c < sampled.size() && c < out.clips.size(); ++c) {
    SampleAnimation(sampled[c].anim, sampled[c].name);
    const Clip& clip = out.clips[c];
    for (int f = 0; f < clip.num_frames(); ++f) {
      ForwardKinematicsScaled(skeleton, clip.frame(f), world, linear);
      for (int k = 0; k < num_joints; ++k) {
        const int j = joints_[k], r = frame_index_[j];
        const std::size_t at = static_cast<std::size_t>(f) * num_joints + k;
        note(worst.joint, (world[r].translation() - source[at]).norm(), names_[j], clip, f);
        // A point at rest offset y from the joint: rigel carries it in its rest frame
        // (rest_[j].rotation), the file in its local coordinates (rest_inverse).
        const Eigen::Matrix3d e =
            linear[r] * rest_[j].rotation.transpose() - source_linear[at] * rest_inverse[k];
        const double largest =
            std::sqrt(std::max(0.0, Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>()
                                        .computeDirect(e.transpose() * e, Eigen::EigenvaluesOnly)
                                        .eigenvalues()
                                        .maxCoeff()));
        note(worst.carried, largest * reach[k], names_[j], clip, f);
      }
    }
  }
  record_world_ = nullptr;
  record_linear_ = nullptr;
  return worst;
}

}  // namespace rigel::assimp_internal
