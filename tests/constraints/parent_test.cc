// ParentConstraint: results proven by FK on the tree of constraint_test_util.h (the prop under a
// rotated root follows the hand); validity_test.cc holds the validity matrix, follow_test.cc the
// snap without offset.
#include "core/constraints/parent.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace parent_test {
namespace {

using constraints::ParentConstraint;

class Parent : public ConstraintTest {
 protected:
  // Checks that the prop's world transform, by FK from the pose's channels, is `expected`.
  void ExpectProp(const Pose& pose, const Eigen::Isometry3d& expected, int frame = 0) {
    const Eigen::Isometry3d prop = Fk(*s_, pose, kProp);
    EXPECT_LT((prop.translation() - expected.translation()).norm(), kTol) << "frame " << frame;
    EXPECT_LT(AngleBetween(prop.linear(), expected.linear()), kTol) << "frame " << frame;
  }

  const ParentConstraint prop_on_hand_ = Make<ParentConstraint>(kProp, kHand);
};

TEST_F(Parent, RunOfAnInvalidJobFails) {
  ParentConstraint c = prop_on_hand_;
  c.target = -1;
  Pose pose = Posed(*s_);
  EXPECT_FALSE(Run(c, pose));
}

TEST_F(Parent, MaintainOffsetKeepsTheInitialRelativeTransform) {
  Pose first = Posed(*s_, 1.0);
  const Eigen::Isometry3d hand_from_prop = first.world[kHand].inverse() * first.world[kProp];
  const Eigen::Isometry3d prop_before = first.world[kProp];
  ASSERT_TRUE(Run(prop_on_hand_, first, 0)) << error_;
  ExpectProp(first, prop_before);  // first frame: nothing moves
  // Another pose: the prop keeps its transform relative to the hand.
  Pose second = Posed(*s_, -2.0);
  ASSERT_TRUE(Run(prop_on_hand_, second, 1)) << error_;
  ExpectProp(second, Fk(*s_, second, kHand) * hand_from_prop, 1);
}

TEST_F(Parent, InfluenceHalfIsHalfway) {
  ParentConstraint c = prop_on_hand_;
  c.maintain_offset = false;
  c.influence = 0.5;
  Pose pose = Posed(*s_);
  const Eigen::Isometry3d own = pose.world[kProp];
  const Eigen::Isometry3d goal = pose.world[kHand];
  ASSERT_TRUE(Run(c, pose)) << error_;
  const Eigen::Isometry3d prop = Fk(*s_, pose, kProp);
  EXPECT_LT((prop.translation() - 0.5 * (own.translation() + goal.translation())).norm(), kTol);
  ExpectHalfway(prop.linear(), own.linear(), goal.linear());
}

TEST_F(Parent, SwitchKeepsTheWorldPoseContinuous) {
  ParentConstraint c = prop_on_hand_;
  c.switches = {{0, kHand}, {5, kOther}};
  EXPECT_EQ(c.TargetAt(-3), kHand);
  EXPECT_EQ(c.TargetAt(4), kHand);
  EXPECT_EQ(c.TargetAt(5), kOther);
  Eigen::Isometry3d hand_from_prop, other_from_prop;
  for (int f = 0; f < 10; ++f) {
    Pose pose = Posed(*s_, 1.0 + 0.3 * f);
    if (f == 0) hand_from_prop = pose.world[kHand].inverse() * pose.world[kProp];
    // Expected: before the switch the hand carries the prop; at the switch frame the prop is
    // where the hand would put it, and from then on it keeps that offset to `other`.
    Eigen::Isometry3d expected;
    if (f < 5) {
      expected = pose.world[kHand] * hand_from_prop;
    } else {
      if (f == 5)
        other_from_prop = pose.world[kOther].inverse() * pose.world[kHand] * hand_from_prop;
      expected = pose.world[kOther] * other_from_prop;
    }
    ASSERT_TRUE(Run(c, pose, f)) << error_;
    ExpectProp(pose, expected, f);
  }
  EXPECT_EQ(state_.target, kOther);
}

}  // namespace
}  // namespace parent_test
}  // namespace rigel::constraints_test
