// ParentConstraint: validity matrix, then results proven by FK on the tree of
// constraint_test_util.h (the prop under a rotated root follows the hand).
#include "core/constraints/parent.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::ParentConstraint;
using constraints::State;

ParentConstraint Valid() {
  ParentConstraint c;
  c.joint = kProp;
  c.target = kHand;
  return c;
}

TEST(ParentConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(ParentConstraint().Validate(*s, &error));
  {
    ParentConstraint c = Valid();
    c.joint = 99;
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    ParentConstraint c = Valid();
    c.target = kProp;
    EXPECT_FALSE(c.Validate(*s, &error));
    EXPECT_NE(error.find("own target"), std::string::npos) << error;
  }
  {
    ParentConstraint c = Valid();
    c.influence = 1.5;
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    ParentConstraint c = Valid();
    c.joint = kOther;  // no position channels
    c.target = kHand;
    EXPECT_FALSE(c.Validate(*s, &error));
    EXPECT_NE(error.find("Xposition"), std::string::npos) << error;
  }
  {
    ParentConstraint c = Valid();
    c.switches = {{5, kHand}, {5, kOther}};
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    ParentConstraint c = Valid();
    Pose pose = Posed(*s);
    State state;
    c.target = -1;
    EXPECT_FALSE(c.Run(*s, pose, 0, state, &error));
  }
  EXPECT_TRUE(Valid().Validate(*s, &error)) << error;
}

TEST(ParentConstraint, NoOffsetSnapsOntoTarget) {
  const auto s = Tree();
  ParentConstraint c = Valid();
  c.maintain_offset = false;
  Pose pose = Posed(*s);
  State state;
  std::string error;
  ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
  const Eigen::Isometry3d prop = Fk(*s, pose, kProp);
  const Eigen::Isometry3d hand = Fk(*s, pose, kHand);
  EXPECT_LT((prop.translation() - hand.translation()).norm(), kTol);
  EXPECT_LT(AngleBetween(prop.linear(), hand.linear()), kTol);
}

TEST(ParentConstraint, MaintainOffsetKeepsTheInitialRelativeTransform) {
  const auto s = Tree();
  const ParentConstraint c = Valid();
  State state;
  std::string error;
  Pose first = Posed(*s, 1.0);
  const Eigen::Isometry3d hand_from_prop = first.world[kHand].inverse() * first.world[kProp];
  const Eigen::Isometry3d prop_before = first.world[kProp];
  ASSERT_TRUE(c.Run(*s, first, 0, state, &error)) << error;
  // First frame: nothing moves.
  EXPECT_LT((Fk(*s, first, kProp).translation() - prop_before.translation()).norm(), kTol);
  EXPECT_LT(AngleBetween(Fk(*s, first, kProp).linear(), prop_before.linear()), kTol);
  // Another pose: the prop keeps its transform relative to the hand.
  Pose second = Posed(*s, -2.0);
  ASSERT_TRUE(c.Run(*s, second, 1, state, &error)) << error;
  const Eigen::Isometry3d expected = Fk(*s, second, kHand) * hand_from_prop;
  const Eigen::Isometry3d prop = Fk(*s, second, kProp);
  EXPECT_LT((prop.translation() - expected.translation()).norm(), kTol);
  EXPECT_LT(AngleBetween(prop.linear(), expected.linear()), kTol);
}

TEST(ParentConstraint, InfluenceHalfIsHalfway) {
  const auto s = Tree();
  ParentConstraint c = Valid();
  c.maintain_offset = false;
  c.influence = 0.5;
  Pose pose = Posed(*s);
  const Eigen::Isometry3d own = pose.world[kProp];
  const Eigen::Isometry3d goal = pose.world[kHand];
  State state;
  std::string error;
  ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
  const Eigen::Isometry3d prop = Fk(*s, pose, kProp);
  EXPECT_LT((prop.translation() - 0.5 * (own.translation() + goal.translation())).norm(), kTol);
  // Halfway in rotation: equal angles to both ends, summing to the whole.
  const double to_own = AngleBetween(prop.linear(), own.linear());
  const double to_goal = AngleBetween(prop.linear(), goal.linear());
  EXPECT_NEAR(to_own, to_goal, kTol);
  EXPECT_NEAR(to_own + to_goal, AngleBetween(own.linear(), goal.linear()), kTol);
}

TEST(ParentConstraint, SwitchKeepsTheWorldPoseContinuous) {
  const auto s = Tree();
  ParentConstraint c = Valid();
  c.switches = {{0, kHand}, {5, kOther}};
  EXPECT_EQ(c.TargetAt(-3), kHand);
  EXPECT_EQ(c.TargetAt(4), kHand);
  EXPECT_EQ(c.TargetAt(5), kOther);
  State state;
  std::string error;
  Eigen::Isometry3d hand_from_prop, other_from_prop;
  for (int f = 0; f < 10; ++f) {
    Pose pose = Posed(*s, 1.0 + 0.3 * f);
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
    ASSERT_TRUE(c.Run(*s, pose, f, state, &error)) << error;
    const Eigen::Isometry3d prop = Fk(*s, pose, kProp);
    EXPECT_LT((prop.translation() - expected.translation()).norm(), kTol) << "frame " << f;
    EXPECT_LT(AngleBetween(prop.linear(), expected.linear()), kTol) << "frame " << f;
  }
  EXPECT_EQ(state.target, kOther);
}

}  // namespace
}  // namespace rigel::constraints_test
