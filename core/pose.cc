#include "core/pose.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <vector>

#include "core/euler.h"
#include "core/fast_math.h"
#include "core/skeleton.h"

namespace rigel {

namespace {

using internal::RotateColumns;

bool IsIdentity(const Eigen::Quaterniond& q) {
  return q.w() == 1.0 && q.x() == 0.0 && q.y() == 0.0 && q.z() == 0.0;
}

}  // namespace

Eigen::Matrix3d LocalRotation(const Skeleton& skeleton, int joint,
                              std::span<const double> channels) {
  const Eigen::Quaterniond& rest = skeleton.rest_orientation(joint);
  Eigen::Matrix3d r = IsIdentity(rest) ? Eigen::Matrix3d::Identity() : rest.toRotationMatrix();
  const std::span<const ChannelType> layout = skeleton.channels();
  for (const int c : skeleton.rotation_channels(joint)) {
    double sn, cs;
    internal::SinCos(channels[c], &sn, &cs);
    RotateColumns(r, ChannelAxis(layout[c]), cs, sn);
  }
  return r;
}

Eigen::Quaterniond LocalQuaternion(const Skeleton& skeleton, int joint,
                                   std::span<const double> channels) {
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  const std::span<const ChannelType> layout = skeleton.channels();
  for (const int c : skeleton.rotation_channels(joint)) {
    q = q * Eigen::Quaterniond(
                Eigen::AngleAxisd(channels[c], Eigen::Vector3d::Unit(ChannelAxis(layout[c]))));
  }
  return q;
}

Eigen::Isometry3d LocalTransform(const Skeleton& skeleton, int joint,
                                 std::span<const double> channels) {
  Eigen::Vector3d t = skeleton.rest_translation(joint);
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.translation_channel(joint, axis);
    if (c >= 0) t[axis] += channels[c];
  }
  Eigen::Isometry3d local;
  local.linear() = LocalRotation(skeleton, joint, channels);
  local.translation() = t;
  local.makeAffine();
  return local;
}

namespace {

// UpdateJointWorld with the sines and cosines of the channels given (channel c at c - base), or
// computed here when `sines` is null.
[[gnu::always_inline]] inline void UpdateJointWorldWith(const Skeleton& skeleton,
                                                        std::span<const double> channels,
                                                        std::span<Eigen::Isometry3d> world,
                                                        int joint, const double* sines,
                                                        const double* cosines, int base) {
  Eigen::Vector3d t = skeleton.rest_translation(joint);
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.translation_channel(joint, axis);
    if (c >= 0) t[axis] += channels[c];
  }
  const int p = skeleton.parent(joint);
  Eigen::Isometry3d& out = world[joint];
  const Eigen::Quaterniond& rest = skeleton.rest_orientation(joint);
  Eigen::Matrix3d r;
  if (p == Skeleton::kNoParent) {
    r = IsIdentity(rest) ? Eigen::Matrix3d::Identity() : rest.toRotationMatrix();
    out.translation() = t;
  } else {
    // Rotate the parent's frame in place: world = parent * local without a 4x4 product.
    const Eigen::Isometry3d& pw = world[p];
    r = IsIdentity(rest) ? Eigen::Matrix3d(pw.linear())
                         : Eigen::Matrix3d(pw.linear() * rest.toRotationMatrix());
    out.translation() = pw.translation() + pw.linear() * t;
  }
  const std::span<const ChannelType> layout = skeleton.channels();
  for (const int c : skeleton.rotation_channels(joint)) {
    double sn, cs;
    if (sines != nullptr) {
      sn = sines[c - base];
      cs = cosines[c - base];
    } else {
      internal::SinCos(channels[c], &sn, &cs);
    }
    RotateColumns(r, ChannelAxis(layout[c]), cs, sn);
  }
  out.linear() = r;
  out.makeAffine();
}

// One joint of FK with scale: world (rigid frame, exact position) and linear from the parent's.
void UpdateJointScaled(const Skeleton& skeleton, std::span<const double> channels,
                       std::span<Eigen::Isometry3d> world, std::span<Eigen::Matrix3d> linear,
                       int joint) {
  Eigen::Vector3d t = skeleton.rest_translation(joint);
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.translation_channel(joint, axis);
    if (c >= 0) t[axis] += channels[c];
  }
  const Eigen::Matrix3d local = LocalRotation(skeleton, joint, channels);
  const Eigen::Vector3d scale = LocalScale(skeleton, joint, channels);
  const int p = skeleton.parent(joint);
  Eigen::Isometry3d& out = world[joint];
  if (p == Skeleton::kNoParent) {
    out.linear() = local;
    out.translation() = t;
    linear[joint] = local * scale.asDiagonal();
  } else {
    const Eigen::Isometry3d& pw = world[p];
    out.linear() = pw.linear() * local;
    out.translation() = pw.translation() + linear[p] * t;
    // kCompensate: the parent's rotation frame, without its scale.
    const Eigen::Matrix3d parent =
        skeleton.scale_inheritance(joint) == ScaleInheritance::kCompensate
            ? Eigen::Matrix3d(pw.linear())
            : linear[p];
    linear[joint] = parent * local * scale.asDiagonal();
  }
  out.makeAffine();
}

}  // namespace

Eigen::Vector3d LocalScale(const Skeleton& skeleton, int joint, std::span<const double> channels) {
  Eigen::Vector3d s = Eigen::Vector3d::Ones();
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.scale_channel(joint, axis);
    if (c >= 0) s[axis] += channels[c];
  }
  return s;
}

void ForwardKinematicsScaled(const Skeleton& skeleton, std::span<const double> channels,
                             std::span<Eigen::Isometry3d> world,
                             std::span<Eigen::Matrix3d> linear) {
  assert(static_cast<int>(world.size()) >= skeleton.num_joints() && "world span too small");
  assert(static_cast<int>(linear.size()) >= skeleton.num_joints() && "linear span too small");
  for (int i = 0; i < skeleton.num_joints(); ++i) {
    UpdateJointScaled(skeleton, channels, world, linear, i);
  }
}

void UpdateJointWorld(const Skeleton& skeleton, std::span<const double> channels,
                      std::span<Eigen::Isometry3d> world, int joint) {
  if (skeleton.has_scale()) {
    // The parent's scaled linear part is not kept in `world`: the chain's, from its root.
    thread_local std::vector<int> chain;
    thread_local std::vector<Eigen::Matrix3d> linear;
    chain.clear();
    for (int j = joint; j != Skeleton::kNoParent; j = skeleton.parent(j)) chain.push_back(j);
    if (static_cast<int>(linear.size()) < skeleton.num_joints()) {
      linear.resize(skeleton.num_joints());
    }
    // Recompute the ancestors into a scratch copy of their frames (world of the ancestors is
    // up to date; only `joint` is written).
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const int j = *it;
      if (j == joint) {
        UpdateJointScaled(skeleton, channels, world, linear, j);
      } else {
        const Eigen::Isometry3d kept = world[j];
        UpdateJointScaled(skeleton, channels, world, linear, j);
        world[j] = kept;
      }
    }
    return;
  }
  UpdateJointWorldWith(skeleton, channels, world, joint, nullptr, nullptr, 0);
}

void ForwardKinematics(const Skeleton& skeleton, std::span<const double> channels,
                       std::span<Eigen::Isometry3d> world, int from) {
  if (skeleton.has_scale()) {
    thread_local std::vector<Eigen::Matrix3d> linear;
    if (static_cast<int>(linear.size()) < skeleton.num_joints()) {
      linear.resize(skeleton.num_joints());
    }
    ForwardKinematicsScaled(skeleton, channels, world, linear);
    return;
  }
  assert(static_cast<int>(world.size()) >= skeleton.num_joints() && "world span too small");
  assert(static_cast<int>(channels.size()) >= skeleton.num_channels() && "channel span too small");
  const int first = std::max(from, 0);
  if (first >= skeleton.num_joints()) return;
  // Every channel's sine and cosine first, in one vectorized pass (bit for bit SinCos); the
  // scratch grows once per thread.
  const int c0 = skeleton.channel_begin(first);
  const int n = skeleton.num_channels() - c0;
  thread_local std::vector<double> sines, cosines;
  if (static_cast<int>(sines.size()) < n) {
    sines.resize(n);
    cosines.resize(n);
  }
  internal::SinCosBatch(channels.data() + c0, n, sines.data(), cosines.data());
  for (int i = first; i < skeleton.num_joints(); ++i) {
    UpdateJointWorldWith(skeleton, channels, world, i, sines.data(), cosines.data(), c0);
  }
}

Eigen::Vector3d EndSitePosition(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world,
                                int end_site) {
  const EndSite& e = skeleton.end_sites()[end_site];
  return world[e.parent] * e.offset;
}

Pose::Pose(const Skeleton& skeleton)
    : channels(skeleton.num_channels(), 0.0),
      world(skeleton.num_joints(), Eigen::Isometry3d::Identity()) {
  UpdateWorld(skeleton);
}

void Pose::SetFromRow(const Skeleton& skeleton, std::span<const double> row) {
  assert(static_cast<int>(row.size()) == skeleton.num_channels());
  std::copy(row.begin(), row.end(), channels.begin());
  UpdateWorld(skeleton);
}

void Pose::UpdateWorld(const Skeleton& skeleton, int from) {
  if (skeleton.has_scale()) {
    linear.resize(skeleton.num_joints());
    ForwardKinematicsScaled(skeleton, channels, world, linear);
    return;
  }
  linear.clear();
  ForwardKinematics(skeleton, channels, world, from);
}

Eigen::Affine3d Pose::ScaledWorld(int joint) const {
  Eigen::Affine3d a(world[joint].matrix());
  if (!linear.empty()) a.linear() = linear[joint];
  return a;
}

bool Pose::matches(const Skeleton& skeleton) const {
  return static_cast<int>(channels.size()) == skeleton.num_channels() &&
         static_cast<int>(world.size()) == skeleton.num_joints();
}

void SetRotationChannels(const Skeleton& s, int joint, const Eigen::Matrix3d& rotation,
                         std::span<double> row, std::span<const double> near) {
  const std::span<const int> rc = s.rotation_channels(joint);
  const std::span<const ChannelType> layout = s.channels();
  if (rc.size() == 3) {
    const EulerOrder order = *s.rotation_order(joint);
    Eigen::Vector3d prev;
    for (const int c : rc) prev[ChannelAxis(layout[c])] = near[c];
    const Eigen::Vector3d xyz = MatrixToEulerNear(rotation, order, prev);
    for (const int c : rc) row[c] = xyz[ChannelAxis(layout[c])];
  } else if (rc.size() == 1) {
    const int a = ChannelAxis(layout[rc[0]]);
    const int b = (a + 1) % 3;
    const int c = (a + 2) % 3;
    const double angle =
        std::atan2(rotation(c, b) - rotation(b, c), rotation(b, b) + rotation(c, c));
    row[rc[0]] = WrapNear(angle, near[rc[0]]);
  } else if (rc.size() == 2) {
    const int a0 = ChannelAxis(layout[rc[0]]);
    const int a1 = ChannelAxis(layout[rc[1]]);
    const std::optional<EulerOrder> order = EulerOrderFromAxes({a0, a1, 3 - a0 - a1});
    if (!order) return;
    Eigen::Vector3d prev = Eigen::Vector3d::Zero();
    prev[a0] = near[rc[0]];
    prev[a1] = near[rc[1]];
    const Eigen::Vector3d xyz = MatrixToEulerNear(rotation, *order, prev);
    row[rc[0]] = xyz[a0];
    row[rc[1]] = xyz[a1];
  }
}

}  // namespace rigel
