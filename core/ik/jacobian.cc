#include "core/ik/jacobian.h"

#include <cassert>

#include "core/ik/task_rows.h"
#include "core/skeleton.h"

namespace rigel::ik {
namespace {

Eigen::Matrix3d Hat(const Eigen::Vector3d& p) {
  Eigen::Matrix3d h;
  h << 0, -p.z(), p.y(), p.z(), 0, -p.x(), -p.y(), p.x(), 0;
  return h;
}

// world_from_parent of `joint` (identity for a root).
Eigen::Isometry3d ParentWorld(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world,
                              int joint) {
  const int p = skeleton.parent(joint);
  return p == Skeleton::kNoParent ? Eigen::Isometry3d::Identity() : world[p];
}

// Calls fn(channel, frame) for each channel of `joint`, where frame is the channel frame:
// translation channels get the parent frame moved to the joint origin; rotation channel k gets
// the joint frame truncated after channel k.
template <typename Fn>
void ForEachChannelFrame(const Skeleton& skeleton, std::span<const double> channels,
                         std::span<const Eigen::Isometry3d> world, int joint, Fn&& fn) {
  const Eigen::Isometry3d parent = ParentWorld(skeleton, world, joint);
  Eigen::Isometry3d frame = parent;
  frame.translation() = world[joint].translation();
  for (int axis = 0; axis < 3; ++axis) {
    const int c = skeleton.translation_channel(joint, axis);
    if (c >= 0) fn(c, frame);
  }
  Eigen::Matrix3d r = parent.linear() * skeleton.rest_orientation(joint).toRotationMatrix();
  const std::span<const ChannelType> layout = skeleton.channels();
  for (const int c : skeleton.rotation_channels(joint)) {
    r = r * AxisRotation(ChannelAxis(layout[c]), channels[c]);
    frame.linear() = r;
    fn(c, frame);
  }
}

}  // namespace

Matrix6d Adjoint(const Eigen::Isometry3d& b_from_a) {
  Matrix6d ad;
  const Eigen::Matrix3d r = b_from_a.linear();
  ad.topLeftCorner<3, 3>() = r;
  ad.topRightCorner<3, 3>() = Hat(b_from_a.translation()) * r;
  ad.bottomLeftCorner<3, 3>().setZero();
  ad.bottomRightCorner<3, 3>() = r;
  return ad;
}

void ChannelAxes(const Skeleton& skeleton, std::span<const double> channels,
                 std::span<const Eigen::Isometry3d> world, std::span<Eigen::Vector3d> axes,
                 std::span<Eigen::Vector3d> pivots) {
  const std::span<const ChannelType> layout = skeleton.channels();
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    ForEachChannelFrame(skeleton, channels, world, j, [&](int c, const Eigen::Isometry3d& frame) {
      axes[c] = frame.linear().col(ChannelAxis(layout[c]));
      pivots[c] = frame.translation();
    });
  }
}

void WorldJacobian(const Skeleton& skeleton, std::span<const double> channels,
                   std::span<const Eigen::Isometry3d> world, int joint,
                   const Eigen::Vector3d& offset, Eigen::Ref<Eigen::MatrixXd> jacobian) {
  assert(jacobian.rows() == 6 && jacobian.cols() == skeleton.num_channels());
  jacobian.setZero();
  const Eigen::Vector3d p_e = world[joint] * offset;
  const std::span<const ChannelType> layout = skeleton.channels();
  for (int j = joint; j != Skeleton::kNoParent; j = skeleton.parent(j)) {
    ForEachChannelFrame(skeleton, channels, world, j, [&](int c, const Eigen::Isometry3d& frame) {
      // The solver's column primitives (core/ik/task_rows.h): one Jacobian.
      const Eigen::Vector3d a = frame.linear().col(ChannelAxis(layout[c]));
      const bool rotation = IsRotation(layout[c]);
      jacobian.col(c).head<3>() = internal::PointVelocity(a, frame.translation(), rotation, p_e);
      jacobian.col(c).tail<3>() = internal::AngularVelocity(a, rotation);
    });
  }
}

void BodyJacobian(const Skeleton& skeleton, std::span<const double> channels,
                  std::span<const Eigen::Isometry3d> world, int joint,
                  const Eigen::Vector3d& offset, Eigen::Ref<Eigen::MatrixXd> jacobian) {
  assert(jacobian.rows() == 6 && jacobian.cols() == skeleton.num_channels());
  jacobian.setZero();
  Eigen::Isometry3d world_from_effector = world[joint];
  world_from_effector.translation() = world[joint] * offset;
  const Eigen::Isometry3d effector_from_world = world_from_effector.inverse();
  const std::span<const ChannelType> layout = skeleton.channels();
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (!IsAncestorOrSelf(skeleton, j, joint)) continue;
    ForEachChannelFrame(skeleton, channels, world, j, [&](int c, const Eigen::Isometry3d& frame) {
      // Unit twist of the channel in its own frame: a rotation about, or a slide along, the
      // channel's local axis through the frame origin.
      Vector6d twist = Vector6d::Zero();
      const int axis = ChannelAxis(layout[c]);
      if (IsRotation(layout[c])) {
        twist[3 + axis] = 1.0;
      } else {
        twist[axis] = 1.0;
      }
      jacobian.col(c) = Adjoint(effector_from_world * frame) * twist;
    });
  }
}

}  // namespace rigel::ik
