// OrientConstraint: validity matrix, then results proven by FK (constraint_test_util.h's tree).
#include "core/constraints/orient.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::OrientConstraint;
using constraints::State;

TEST(OrientConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(OrientConstraint().Validate(*s, &error));
  OrientConstraint c;
  c.joint = kOther;
  c.target = kHand;
  EXPECT_TRUE(c.Validate(*s, &error)) << error;
  c.axes = 0;
  EXPECT_FALSE(c.Validate(*s, &error));
  c.axes = 0b111;
  c.joint = kArm;  // the hand moves with the arm
  EXPECT_FALSE(c.Validate(*s, &error));
  EXPECT_NE(error.find("target 'hand' is a descendant of 'arm'"), std::string::npos) << error;
  c.joint = kStub;  // one rotation channel
  EXPECT_FALSE(c.Validate(*s, &error));
  EXPECT_NE(error.find("this needs three"), std::string::npos) << error;
}

TEST(OrientConstraint, FullOffsetMaskAndInfluence) {
  const auto s = Tree();
  std::string error;
  {
    OrientConstraint c;
    c.joint = kOther;
    c.target = kHand;
    Pose pose = Posed(*s);
    const Eigen::Vector3d position = pose.world[kOther].translation();
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    EXPECT_LT(AngleBetween(Fk(*s, pose, kOther).linear(), Fk(*s, pose, kHand).linear()), kTol);
    EXPECT_LT((Fk(*s, pose, kOther).translation() - position).norm(), kTol);
  }
  {  // Maintain offset across poses.
    OrientConstraint c;
    c.joint = kOther;
    c.target = kHand;
    c.maintain_offset = true;
    Pose first = Posed(*s, 1);
    const Eigen::Matrix3d offset =
        first.world[kHand].linear().transpose() * first.world[kOther].linear();
    State state;
    ASSERT_TRUE(c.Run(*s, first, 0, state, &error)) << error;
    Pose second = Posed(*s, 2.5);
    ASSERT_TRUE(c.Run(*s, second, 1, state, &error)) << error;
    EXPECT_LT(
        AngleBetween(Fk(*s, second, kOther).linear(), Fk(*s, second, kHand).linear() * offset),
        kTol);
  }
  {  // Mask x and z: those world Euler angles from the target, y its own.
    OrientConstraint c;
    c.joint = kOther;
    c.target = kHand;
    c.axes = 0b101;
    Pose pose = Posed(*s);
    const Eigen::Vector3d own = EulerXYZ(pose.world[kOther].linear());
    const Eigen::Vector3d goal = EulerXYZ(pose.world[kHand].linear());
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Vector3d got = EulerXYZ(Fk(*s, pose, kOther).linear());
    EXPECT_NEAR(got.x(), goal.x(), kTol);
    EXPECT_NEAR(got.y(), own.y(), kTol);
    EXPECT_NEAR(got.z(), goal.z(), kTol);
    EXPECT_GT(std::abs(own.y() - goal.y()), 0.01);
  }
  {  // Influence 0.5: halfway.
    OrientConstraint c;
    c.joint = kOther;
    c.target = kHand;
    c.influence = 0.5;
    Pose pose = Posed(*s);
    const Eigen::Matrix3d own = pose.world[kOther].linear();
    const Eigen::Matrix3d goal = pose.world[kHand].linear();
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Matrix3d got = Fk(*s, pose, kOther).linear();
    EXPECT_NEAR(AngleBetween(got, own), AngleBetween(got, goal), kTol);
    EXPECT_NEAR(AngleBetween(got, own) + AngleBetween(got, goal), AngleBetween(own, goal), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
