// LimitRotationConstraint: validity matrix, then clamped channels proven by FK.
#include "core/constraints/limit_rotation.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::LimitRotationConstraint;
using constraints::State;

constexpr int kArmZ = 6, kArmX = 7, kArmY = 8;  // arm's channels (root has 0-5)

LimitRotationConstraint ArmLimit() {
  LimitRotationConstraint c;
  c.joint = kArm;
  c.min = Eigen::Vector3d(-0.2, -0.3, -0.1);
  c.max = Eigen::Vector3d(0.2, 0.3, 0.1);
  return c;
}

TEST(LimitRotationConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(LimitRotationConstraint().Validate(*s, &error));
  EXPECT_TRUE(ArmLimit().Validate(*s, &error)) << error;
  LimitRotationConstraint c = ArmLimit();
  c.min.y() = 0.5;
  EXPECT_FALSE(c.Validate(*s, &error));
  EXPECT_NE(error.find("min > max on axis y"), std::string::npos) << error;
  c = ArmLimit();
  c.axes = 0;
  EXPECT_FALSE(c.Validate(*s, &error));
  c = ArmLimit();
  c.influence = 2;
  EXPECT_FALSE(c.Validate(*s, &error));
}

TEST(LimitRotationConstraint, ClampsMaskedAxesOnly) {
  const auto s = Tree();
  std::string error;
  State state;
  LimitRotationConstraint c = ArmLimit();
  c.axes = 0b101;  // x and z limited; y free
  Pose pose = Posed(*s);
  pose.channels[kArmZ] = 0.5 + 2 * 3.14159265358979323846;  // 0.5 after a whole turn: over max
  pose.channels[kArmX] = -0.15;                             // inside
  pose.channels[kArmY] = 1.2;                               // outside, but y is not limited
  pose.UpdateWorld(*s);
  ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
  EXPECT_EQ(pose.channels[kArmZ], 0.1);
  EXPECT_EQ(pose.channels[kArmX], -0.15);
  EXPECT_EQ(pose.channels[kArmY], 1.2);
  // World transforms are those of the clamped channels.
  EXPECT_LT(AngleBetween(pose.world[kHand].linear(), Fk(*s, pose, kHand).linear()), kTol);
  EXPECT_LT((pose.world[kHand].translation() - Fk(*s, pose, kHand).translation()).norm(), kTol);
}

TEST(LimitRotationConstraint, InfluenceAndSingleChannel) {
  const auto s = Tree();
  std::string error;
  State state;
  {
    LimitRotationConstraint c = ArmLimit();
    Pose limited = Posed(*s);
    limited.channels[kArmX] = 0.9;
    limited.UpdateWorld(*s);
    Pose pose = limited;
    const Eigen::Matrix3d own = pose.world[kArm].linear();
    ASSERT_TRUE(c.Run(*s, limited, 0, state, &error)) << error;
    const Eigen::Matrix3d full = Fk(*s, limited, kArm).linear();
    c.influence = 0.5;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Matrix3d got = Fk(*s, pose, kArm).linear();
    EXPECT_GT(AngleBetween(own, full), 0.1);
    EXPECT_NEAR(AngleBetween(got, own), AngleBetween(got, full), kTol);
    EXPECT_NEAR(AngleBetween(got, own) + AngleBetween(got, full), AngleBetween(own, full), kTol);
  }
  {
    LimitRotationConstraint c;
    c.joint = kStub;
    c.min = Eigen::Vector3d::Constant(-1);
    c.max = Eigen::Vector3d(1, 1, 0.25);
    c.influence = 0.5;
    Pose pose = Posed(*s);
    const int channel = s->rotation_channels(kStub)[0];
    pose.channels[channel] = 0.75;
    pose.UpdateWorld(*s);
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    EXPECT_NEAR(pose.channels[channel], 0.5, kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
