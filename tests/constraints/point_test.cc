// PointConstraint: validity matrix, then results proven by FK (constraint_test_util.h's tree).
#include "core/constraints/point.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::PointConstraint;
using constraints::State;

TEST(PointConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(PointConstraint().Validate(*s, &error));
  PointConstraint c;
  c.joint = kProp;
  c.target = kHand;
  EXPECT_TRUE(c.Validate(*s, &error)) << error;
  c.axes = 0;
  EXPECT_FALSE(c.Validate(*s, &error));
  c.axes = 0b111;
  c.influence = -0.1;
  EXPECT_FALSE(c.Validate(*s, &error));
  c.influence = 1;
  c.joint = kOther;  // rotation channels only
  EXPECT_FALSE(c.Validate(*s, &error));
  EXPECT_NE(error.find("point: joint 'other' has no Xposition channel"), std::string::npos)
      << error;
}

TEST(PointConstraint, FullMaskedOffsetAndInfluence) {
  const auto s = Tree();
  std::string error;
  {  // All axes: on the target; rotation untouched.
    PointConstraint c;
    c.joint = kProp;
    c.target = kHand;
    Pose pose = Posed(*s);
    const Eigen::Matrix3d rotation = pose.world[kProp].linear();
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    EXPECT_LT((Fk(*s, pose, kProp).translation() - Fk(*s, pose, kHand).translation()).norm(), kTol);
    EXPECT_LT(AngleBetween(Fk(*s, pose, kProp).linear(), rotation), kTol);
  }
  {  // Mask xz: y keeps its own value.
    PointConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.axes = 0b101;
    Pose pose = Posed(*s);
    const Eigen::Vector3d own = pose.world[kProp].translation();
    const Eigen::Vector3d goal = pose.world[kHand].translation();
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Vector3d p = Fk(*s, pose, kProp).translation();
    EXPECT_NEAR(p.x(), goal.x(), kTol);
    EXPECT_NEAR(p.y(), own.y(), kTol);
    EXPECT_NEAR(p.z(), goal.z(), kTol);
    EXPECT_GT(std::abs(own.y() - goal.y()), 0.01);  // the mask is visible
  }
  {  // Maintain offset, then influence 0.5.
    PointConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.maintain_offset = true;
    Pose first = Posed(*s, 1);
    const Eigen::Vector3d offset =
        first.world[kProp].translation() - first.world[kHand].translation();
    State state;
    ASSERT_TRUE(c.Run(*s, first, 0, state, &error)) << error;
    Pose second = Posed(*s, 3);
    ASSERT_TRUE(c.Run(*s, second, 1, state, &error)) << error;
    EXPECT_LT(
        (Fk(*s, second, kProp).translation() - Fk(*s, second, kHand).translation() - offset).norm(),
        kTol);
    c.influence = 0.5;
    Pose third = Posed(*s, -1);
    const Eigen::Vector3d own = third.world[kProp].translation();
    const Eigen::Vector3d goal = third.world[kHand].translation() + offset;
    ASSERT_TRUE(c.Run(*s, third, 2, state, &error)) << error;
    EXPECT_LT((Fk(*s, third, kProp).translation() - 0.5 * (own + goal)).norm(), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
