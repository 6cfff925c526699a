// Jacobians over a skeleton's channels (seed 001).
//
// A column per skeleton channel (a whole Clip row). Rows are the effector's twist
// (v_x, v_y, v_z, w_x, w_y, w_z): v is the linear velocity of the effector point, w the angular
// velocity of its frame, per unit change of the channel (radian or length unit).
//
// World Jacobian (Procedure 1, eqs. 18-26): a rotation channel's world axis is the column of its
// joint's rotation after the channels up to and including it, in product order:
//   a_k = (world_from_parent.R * rest_orientation * R_a0 * ... * R_ak).col(ak)
// which is seed 001's eq. 21-26 (the channels listed after k do not move axis k). Its column is
// [a_k x (p_effector - p_joint); a_k]. A translation channel moves the joint along its parent's
// axis: [world_from_parent.R.col(axis); 0]. Channels of joints that are not ancestors of (or equal
// to) the effector joint have zero columns.
//
// Body Jacobian (Procedures 2-3): each channel's unit twist is mapped into the effector frame by
// the adjoint of effector_from_channel_frame, where the channel frame is the joint frame truncated
// after that channel (the "adjusted" rotation of Procedure 3). The two agree after the frame
// change J_world = diag(R_e, R_e) J_body, with R_e the effector frame's world rotation.
#ifndef RIGEL_CORE_IK_JACOBIAN_H_
#define RIGEL_CORE_IK_JACOBIAN_H_

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <span>

namespace rigel {
class Skeleton;
}

namespace rigel::ik {

using Matrix6d = Eigen::Matrix<double, 6, 6>;
using Vector6d = Eigen::Matrix<double, 6, 1>;

// Adjoint of a rigid transform b_from_a, mapping twists [v; w] in frame a to frame b:
//   [R, p^ R; 0, R]   (seed 001 eq. 5).
Matrix6d Adjoint(const Eigen::Isometry3d& b_from_a);

// World Jacobian of the effector point world_from_joint[joint] * offset (offset in joint space).
// `channels` is a whole Clip row and `world` its FK result (Pose::world). `jacobian` must be
// 6 x num_channels; it is overwritten.
void WorldJacobian(const Skeleton& skeleton, std::span<const double> channels,
                   std::span<const Eigen::Isometry3d> world, int joint,
                   const Eigen::Vector3d& offset, Eigen::Ref<Eigen::MatrixXd> jacobian);

// Body Jacobian of the effector frame world_from_joint[joint] * Translation(offset) (the joint's
// rotation), built from adjoints. Rows are [v; w] in the effector frame. Same arguments as
// WorldJacobian.
void BodyJacobian(const Skeleton& skeleton, std::span<const double> channels,
                  std::span<const Eigen::Isometry3d> world, int joint,
                  const Eigen::Vector3d& offset, Eigen::Ref<Eigen::MatrixXd> jacobian);

// World axis of every channel (rotation: the axis of seed 001 eq. 21; translation: the parent's
// axis) and its pivot (the joint origin for rotations; unused for translations). Spans have
// num_channels entries.
void ChannelAxes(const Skeleton& skeleton, std::span<const double> channels,
                 std::span<const Eigen::Isometry3d> world, std::span<Eigen::Vector3d> axes,
                 std::span<Eigen::Vector3d> pivots);

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_JACOBIAN_H_
