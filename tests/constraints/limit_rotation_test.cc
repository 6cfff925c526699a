// LimitRotationConstraint: clamped channels proven by FK (validity_test.cc holds the validity
// matrix).
#include "core/constraints/limit_rotation.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace limit_rotation_test {
namespace {

using constraints::LimitRotationConstraint;

constexpr int kArmZ = 6, kArmX = 7, kArmY = 8;  // arm's channels (root has 0-5)

using LimitRotation = ConstraintTest;

TEST_F(LimitRotation, ClampsMaskedAxesOnly) {
  LimitRotationConstraint c = ArmLimit();
  c.axes = 0b101;  // x and z limited; y free
  Pose pose = Posed(*s_);
  pose.channels[kArmZ] = 0.5 + 2 * 3.14159265358979323846;  // 0.5 after a whole turn: over max
  pose.channels[kArmX] = -0.15;                             // inside
  pose.channels[kArmY] = 1.2;                               // outside, but y is not limited
  pose.UpdateWorld(*s_);
  ASSERT_TRUE(Run(c, pose)) << error_;
  EXPECT_EQ(pose.channels[kArmZ], 0.1);
  EXPECT_EQ(pose.channels[kArmX], -0.15);
  EXPECT_EQ(pose.channels[kArmY], 1.2);
  // World transforms are those of the clamped channels.
  EXPECT_LT(AngleBetween(pose.world[kHand].linear(), Fk(*s_, pose, kHand).linear()), kTol);
  EXPECT_LT((pose.world[kHand].translation() - Fk(*s_, pose, kHand).translation()).norm(), kTol);
}

TEST_F(LimitRotation, InfluenceOnThreeChannelsIsASlerp) {
  LimitRotationConstraint c = ArmLimit();
  Pose limited = Posed(*s_);
  limited.channels[kArmX] = 0.9;
  limited.UpdateWorld(*s_);
  Pose pose = limited;
  const Eigen::Matrix3d own = pose.world[kArm].linear();
  ASSERT_TRUE(Run(c, limited)) << error_;
  const Eigen::Matrix3d full = Fk(*s_, limited, kArm).linear();
  c.influence = 0.5;
  ASSERT_TRUE(Run(c, pose)) << error_;
  EXPECT_GT(AngleBetween(own, full), 0.1);
  ExpectHalfway(Fk(*s_, pose, kArm).linear(), own, full);
}

TEST_F(LimitRotation, InfluenceOnOneChannelIsALerp) {
  LimitRotationConstraint c;
  c.joint = kStub;
  c.min = Eigen::Vector3d::Constant(-1);
  c.max = Eigen::Vector3d(1, 1, 0.25);
  c.influence = 0.5;
  Pose pose = Posed(*s_);
  const int channel = s_->rotation_channels(kStub)[0];
  pose.channels[channel] = 0.75;
  pose.UpdateWorld(*s_);
  ASSERT_TRUE(Run(c, pose)) << error_;
  EXPECT_NEAR(pose.channels[channel], 0.5, kTol);
}

}  // namespace
}  // namespace limit_rotation_test
}  // namespace rigel::constraints_test
