// World and body Jacobians against central finite differences, for every Euler order, 3- and
// 6-channel joints, a floating root and a prismatic (position-channel) joint.
//
//   root (6: position + rotation, order O)      rest orientation: identity
//    └─ spine (3: rotation O)                    rest orientation: a tilt
//        └─ slider (6: Y position first, rotations O, then X/Z position)
//            └─ hand (3: rotation O) + effector offset (End Site-like)
#include "core/ik/jacobian.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "core/pose.h"
#include "ik_test_util.h"

namespace rigel::ik {
namespace jacobian_test {
namespace {

// Twist of the effector by central differences: linear velocity of the point, angular velocity
// from log(R(+h) R(-h)^T) / 2h.
Eigen::MatrixXd FiniteDifference(const Skeleton& s, std::vector<double> channels, int joint,
                                 const Eigen::Vector3d& offset, double h) {
  Eigen::MatrixXd j(6, s.num_channels());
  std::vector<Eigen::Isometry3d> plus(s.num_joints()), minus(s.num_joints());
  for (int c = 0; c < s.num_channels(); ++c) {
    const double keep = channels[c];
    channels[c] = keep + h;
    ForwardKinematics(s, channels, plus);
    channels[c] = keep - h;
    ForwardKinematics(s, channels, minus);
    channels[c] = keep;
    j.col(c).head<3>() = (plus[joint] * offset - minus[joint] * offset) / (2 * h);
    const Eigen::AngleAxisd d(
        Eigen::Matrix3d(plus[joint].linear() * minus[joint].linear().transpose()));
    j.col(c).tail<3>() = d.axis() * d.angle() / (2 * h);
  }
  return j;
}

class JacobianTest : public ::testing::TestWithParam<std::tuple<EulerOrder, bool>> {};

TEST_P(JacobianTest, WorldAndBodyMatchFiniteDifferences) {
  const auto [order, position_last] = GetParam();
  const auto skeleton = rigel::testing::FdTree(order, position_last);
  const Skeleton& s = *skeleton;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-2.5, 2.5);
  const int hand = s.FindJoint("hand");
  const Eigen::Vector3d offset(0.05, -0.02, 0.11);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> ch(s.num_channels());
    for (double& v : ch) v = angle(rng);
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    ForwardKinematics(s, ch, world);
    Eigen::MatrixXd jw(6, s.num_channels()), jb(6, s.num_channels());
    WorldJacobian(s, ch, world, hand, offset, jw);
    BodyJacobian(s, ch, world, hand, offset, jb);
    const Eigen::MatrixXd fd = FiniteDifference(s, ch, hand, offset, 1e-6);
    EXPECT_LE((jw - fd).cwiseAbs().maxCoeff(), 1e-7) << EulerOrderName(order) << "\nworld\n"
                                                     << jw << "\nfd\n"
                                                     << fd;
    // Frame change: J_world = diag(R_e, R_e) J_body.
    Eigen::Matrix<double, 6, 6> frame = Eigen::Matrix<double, 6, 6>::Zero();
    frame.topLeftCorner<3, 3>() = world[hand].linear();
    frame.bottomRightCorner<3, 3>() = world[hand].linear();
    EXPECT_LE((frame * jb - jw).cwiseAbs().maxCoeff(), 1e-12) << EulerOrderName(order);
    // Off-path joint: zero columns.
    const int leg = s.FindJoint("leg");
    for (int c = s.channel_begin(leg); c < s.channel_begin(leg) + s.channel_count(leg); ++c) {
      EXPECT_EQ(jw.col(c).norm(), 0.0);
      EXPECT_EQ(jb.col(c).norm(), 0.0);
    }
    // Channel axes: the rotation rows of the Jacobian.
    std::vector<Eigen::Vector3d> axes(s.num_channels()), pivots(s.num_channels());
    ChannelAxes(s, ch, world, axes, pivots);
    for (const int c : s.rotation_channels(hand))
      EXPECT_LE((axes[c] - jw.col(c).tail<3>()).norm(), 1e-15);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOrders, JacobianTest,
                         ::testing::Combine(::testing::Values(EulerOrder::kXYZ, EulerOrder::kXZY,
                                                              EulerOrder::kYXZ, EulerOrder::kYZX,
                                                              EulerOrder::kZXY, EulerOrder::kZYX),
                                            ::testing::Bool()));

TEST(Adjoint, MapsTwistsLikeTheTransform) {
  Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
  t.linear() = Eigen::AngleAxisd(0.3, Eigen::Vector3d(0, 1, 1).normalized()).toRotationMatrix();
  t.translation() = Eigen::Vector3d(1, 2, 3);
  // A pure rotation about the frame's origin is seen, in the other frame, as a rotation about
  // the point t.translation(): v = p x w.
  Vector6d twist;
  twist << 0, 0, 0, 0, 0, 1;
  const Vector6d mapped = Adjoint(t) * twist;
  const Eigen::Vector3d w = t.linear() * Eigen::Vector3d::UnitZ();
  EXPECT_LE((mapped.tail<3>() - w).norm(), 1e-15);
  EXPECT_LE((mapped.head<3>() - t.translation().cross(w)).norm(), 1e-15);
}

}  // namespace
}  // namespace jacobian_test
}  // namespace rigel::ik
