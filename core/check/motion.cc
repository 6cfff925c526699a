#include "core/check/motion.h"

#include <algorithm>
#include <cmath>

#include "core/pose.h"
#include "core/retarget/humanoid.h"

namespace rigel::check {

Motion TrackClip(const Skeleton& skeleton, const Clip* clip, int stride, int count,
                 const std::vector<bool>* tracked) {
  const int joints = skeleton.num_joints();
  const std::span<const EndSite> ends = skeleton.end_sites();
  Motion m;
  const int frames = clip == nullptr ? 1 : count < 0 ? clip->num_frames() : count;
  for (int f = 0; f < frames; f += std::max(stride, 1)) m.frame.push_back(f);
  if (frames > 0 && m.frame.back() != frames - 1) m.frame.push_back(frames - 1);
  m.frames = static_cast<int>(m.frame.size());
  m.points = joints + static_cast<int>(ends.size());
  m.position.assign(static_cast<size_t>(m.frames) * m.points, Eigen::Vector3d::Zero());
  const std::vector<double> rest_row(skeleton.num_channels(), 0.0);
  const std::span<const ChannelType> layout = skeleton.channels();
  std::vector<Eigen::Matrix3d> rotation(joints);
  // Skeletons with scale: positions from FK with scale (core/pose.h); end sites scale with their
  // joint.
  std::vector<Eigen::Isometry3d> world;
  std::vector<Eigen::Matrix3d> linear;
  for (int i = 0; i < m.frames; ++i) {
    const std::span<const double> row =
        clip == nullptr ? std::span<const double>(rest_row) : clip->frame(m.frame[i]);
    Eigen::Vector3d* out = m.position.data() + static_cast<size_t>(i) * m.points;
    if (skeleton.has_scale()) {
      world.resize(joints);
      linear.resize(joints);
      ForwardKinematicsScaled(skeleton, row, world, linear);
      for (int j = 0; j < joints; ++j) out[j] = world[j].translation();
      for (size_t e = 0; e < ends.size(); ++e) {
        const int p = ends[e].parent;
        out[joints + e] = world[p].translation() + linear[p] * ends[e].offset;
      }
      continue;
    }
    // The next sample's row is far from this one (several frames on, in a clip of megabytes):
    // ask for the channels this loop will read there now, so they are in cache when it comes.
    const double* next_row =
        clip != nullptr && i + 1 < m.frames ? clip->frame(m.frame[i + 1]).data() : nullptr;
    for (int j = 0; j < joints; ++j) {
      if (tracked != nullptr && !(*tracked)[j]) continue;
      if (next_row != nullptr && skeleton.channel_begin(j + 1) > skeleton.channel_begin(j)) {
        __builtin_prefetch(next_row + skeleton.channel_begin(j));
        __builtin_prefetch(next_row + skeleton.channel_begin(j + 1) - 1);
      }
      Eigen::Vector3d t = skeleton.rest_translation(j);
      Eigen::Matrix3d local = skeleton.rest_orientation(j).toRotationMatrix();
      for (int c = skeleton.channel_begin(j); c < skeleton.channel_begin(j + 1); ++c) {
        const int axis = ChannelAxis(layout[c]);
        if (IsTranslation(layout[c])) {
          t[axis] += row[c];
        } else {
          // local * R_axis(angle): two columns turn about the third.
          const double cs = std::cos(row[c]), sn = std::sin(row[c]);
          const int u = (axis + 1) % 3, v = (axis + 2) % 3;
          const Eigen::Vector3d cu = local.col(u), cv = local.col(v);
          local.col(u) = cs * cu + sn * cv;
          local.col(v) = cs * cv - sn * cu;
        }
      }
      const int p = skeleton.parent(j);
      if (p < 0) {
        rotation[j] = local;
        out[j] = t;
      } else {
        rotation[j] = rotation[p] * local;
        out[j] = out[p] + rotation[p] * t;
      }
    }
    for (size_t e = 0; e < ends.size(); ++e) {
      const int p = ends[e].parent;
      if (tracked != nullptr && !(*tracked)[p]) continue;
      out[joints + e] = out[p] + rotation[p] * ends[e].offset;
    }
  }
  return m;
}

namespace {

using retarget::Role;

// Every point (joint or end site) at or below `joint`.
std::vector<int> Subtree(const Skeleton& s, int joint) {
  std::vector<bool> in(s.num_joints(), false);
  std::vector<int> points;
  for (int j = joint; j < s.num_joints(); ++j) {
    if (j == joint || (s.parent(j) >= 0 && in[s.parent(j)])) {
      in[j] = true;
      points.push_back(j);
    }
  }
  const std::span<const EndSite> ends = s.end_sites();
  for (size_t e = 0; e < ends.size(); ++e) {
    if (in[ends[e].parent]) points.push_back(s.num_joints() + static_cast<int>(e));
  }
  return points;
}

// The children joints and end sites of `joint`.
std::vector<int> Tip(const Skeleton& s, int joint) {
  std::vector<int> points(s.children(joint).begin(), s.children(joint).end());
  const std::span<const EndSite> ends = s.end_sites();
  for (size_t e = 0; e < ends.size(); ++e) {
    if (ends[e].parent == joint) points.push_back(s.num_joints() + static_cast<int>(e));
  }
  return points;
}

}  // namespace

BodyParts FindBodyParts(const Skeleton& s) {
  BodyParts b;
  const retarget::HumanoidJoints h = retarget::ClassifyHumanoid(s);
  const auto role = [&h](Role r) { return h[r]; };
  constexpr std::array<std::array<Role, 3>, 4> kLimbs = {{
      {Role::kLeftUpperArm, Role::kLeftLowerArm, Role::kLeftHand},
      {Role::kRightUpperArm, Role::kRightLowerArm, Role::kRightHand},
      {Role::kLeftUpperLeg, Role::kLeftLowerLeg, Role::kLeftFoot},
      {Role::kRightUpperLeg, Role::kRightLowerLeg, Role::kRightFoot},
  }};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 3; ++i) b.limbs[k][i] = role(kLimbs[k][i]);
  }
  b.head = role(Role::kHead);
  const bool legs =
      b.limbs[2][0] >= 0 && b.limbs[2][2] >= 0 && b.limbs[3][0] >= 0 && b.limbs[3][2] >= 0;
  b.humanoid = role(Role::kHips) >= 0 && b.head >= 0 && legs;
  if (!b.humanoid) {
    b.hips = 0;
    for (int j = 0; j < s.num_joints(); ++j) {
      if (s.children(j).size() > 1) {
        b.hips = j;
        break;
      }
    }
    b.soles = Subtree(s, 0);
    return b;
  }
  b.hips = role(Role::kHips);
  b.left = b.limbs[2][0];
  b.right = b.limbs[3][0];
  b.head_tip = Tip(s, b.head);
  for (int side = 0; side < 2; ++side) {
    const int foot = b.limbs[2 + side][2];
    const int toes = role(side == 0 ? Role::kLeftToes : Role::kRightToes);
    b.foot_tip[side] = toes >= 0 ? std::vector<int>{toes} : Tip(s, foot);
    b.toes[side] = toes >= 0;
    b.soles.push_back(foot);
    for (const int p : Tip(s, foot)) b.soles.push_back(p);
    if (toes >= 0 && s.parent(toes) != foot) b.soles.push_back(toes);
    if (toes >= 0) {
      for (const int p : Tip(s, toes)) b.soles.push_back(p);
    }
    if (b.limbs[side][2] >= 0) b.hand_tip[side] = Tip(s, b.limbs[side][2]);
  }
  return b;
}

std::vector<bool> TrackedJoints(const Skeleton& s, const BodyParts& b) {
  if (!b.humanoid) return std::vector<bool>(s.num_joints(), true);
  std::vector<bool> tracked(s.num_joints(), false);
  auto mark = [&](int point) {
    int j = point < s.num_joints() ? point : s.end_sites()[point - s.num_joints()].parent;
    for (; j >= 0 && !tracked[j]; j = s.parent(j)) tracked[j] = true;
  };
  mark(b.hips);
  mark(b.head);
  for (const auto& limb : b.limbs) {
    for (const int j : limb) {
      if (j >= 0) mark(j);
    }
  }
  for (const std::vector<int>* points :
       {&b.head_tip, &b.foot_tip[0], &b.foot_tip[1], &b.hand_tip[0], &b.hand_tip[1], &b.soles}) {
    for (const int p : *points) mark(p);
  }
  return tracked;
}

}  // namespace rigel::check
