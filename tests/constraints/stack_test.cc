// constraints::Stack: validation names the entry, entries run in declaration order, and only
// those of the requested stage range run.
#include "core/constraints/stack.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::CopyLocationConstraint;
using constraints::Mix;
using constraints::PointConstraint;
using constraints::Stack;
using constraints::StackState;

TEST(ConstraintStack, ValidateNamesTheEntry) {
  const auto s = Tree();
  Stack stack;
  PointConstraint ok;
  ok.joint = kProp;
  ok.target = kHand;
  stack.entries.push_back({ok, -1});
  stack.entries.push_back({PointConstraint(), 0});
  std::string error;
  EXPECT_FALSE(stack.Validate(*s, &error));
  EXPECT_EQ(error.rfind("constraint 2: point:", 0), 0u) << error;
  EXPECT_EQ(constraints::KindName(stack.entries[0].constraint), "point");
  EXPECT_EQ(constraints::ConstrainedJoint(stack.entries[0].constraint), kProp);
}

TEST(ConstraintStack, OrderAndStageRanges) {
  const auto s = Tree();
  PointConstraint point;
  point.joint = kProp;
  point.target = kHand;
  CopyLocationConstraint add;
  add.joint = kProp;
  add.target = kOther;
  add.mix = Mix::kAdd;
  std::string error;
  // point then add: hand + other.
  Stack stack;
  stack.entries.push_back({point, -1});
  stack.entries.push_back({add, 0});
  Pose pose = Posed(*s);
  const Eigen::Vector3d hand = pose.world[kHand].translation();
  const Eigen::Vector3d other = pose.world[kOther].translation();
  const Eigen::Vector3d own = pose.world[kProp].translation();
  StackState state;
  EXPECT_TRUE(stack.Any(-1, -1));
  EXPECT_FALSE(stack.Any(1, 5));
  ASSERT_TRUE(stack.Evaluate(*s, pose, 0, -1, -1, state, &error)) << error;
  EXPECT_LT((Fk(*s, pose, kProp).translation() - hand).norm(), kTol);
  ASSERT_TRUE(stack.Evaluate(*s, pose, 0, 0, 10, state, &error)) << error;
  EXPECT_LT((Fk(*s, pose, kProp).translation() - (hand + other)).norm(), kTol);
  // Reversed order: own + other, then onto the hand.
  Stack reversed;
  reversed.entries.push_back({add, -1});
  reversed.entries.push_back({point, -1});
  Pose again = Posed(*s);
  StackState fresh;
  ASSERT_TRUE(reversed.Evaluate(*s, again, 0, -1, 10, fresh, &error)) << error;
  EXPECT_LT((Fk(*s, again, kProp).translation() - hand).norm(), kTol);
  EXPECT_GT((own + other - hand).norm(), 0.1);
}

}  // namespace
}  // namespace rigel::constraints_test
