// constraints::Stack: validation names the entry, entries run in declaration order, and only
// those of the requested stage range run.
#include "core/constraints/stack.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "constraint_test_util.h"
#include "core/clip.h"
#include "core/ik/bake.h"

namespace rigel::constraints_test {
namespace stack_test {
namespace {

using constraints::CopyLocationConstraint;
using constraints::Mix;
using constraints::PointConstraint;
using constraints::Stack;
using constraints::StackState;

using ConstraintStack = ConstraintTest;

TEST_F(ConstraintStack, ValidateNamesTheEntry) {
  Stack stack;
  stack.entries.push_back({Make<PointConstraint>(kProp, kHand), -1});
  stack.entries.push_back({PointConstraint(), 0});
  EXPECT_FALSE(stack.Validate(*s_, &error_));
  EXPECT_EQ(error_.rfind("constraint 2: point:", 0), 0u) << error_;
  EXPECT_EQ(constraints::KindName(stack.entries[0].constraint), "point");
  EXPECT_EQ(constraints::ConstrainedJoint(stack.entries[0].constraint), kProp);
}

TEST_F(ConstraintStack, OrderAndStageRanges) {
  const auto point = Make<PointConstraint>(kProp, kHand);
  auto add = Make<CopyLocationConstraint>(kProp, kOther);
  add.mix = Mix::kAdd;
  // point then add: hand + other.
  Stack stack;
  stack.entries.push_back({point, -1});
  stack.entries.push_back({add, 0});
  Pose pose = Posed(*s_);
  const Eigen::Vector3d hand = pose.world[kHand].translation();
  const Eigen::Vector3d other = pose.world[kOther].translation();
  const Eigen::Vector3d own = pose.world[kProp].translation();
  StackState state;
  EXPECT_TRUE(stack.Any(-1, -1));
  EXPECT_FALSE(stack.Any(1, 5));
  ASSERT_TRUE(stack.Evaluate(*s_, pose, 0, -1, -1, state, &error_)) << error_;
  EXPECT_LT((Fk(*s_, pose, kProp).translation() - hand).norm(), kTol);
  ASSERT_TRUE(stack.Evaluate(*s_, pose, 0, 0, 10, state, &error_)) << error_;
  EXPECT_LT((Fk(*s_, pose, kProp).translation() - (hand + other)).norm(), kTol);
  // Reversed order: own + other, then onto the hand.
  Stack reversed;
  reversed.entries.push_back({add, -1});
  reversed.entries.push_back({point, -1});
  Pose again = Posed(*s_);
  StackState fresh;
  ASSERT_TRUE(reversed.Evaluate(*s_, again, 0, -1, 10, fresh, &error_)) << error_;
  EXPECT_LT((Fk(*s_, again, kProp).translation() - hand).norm(), kTol);
  EXPECT_GT((own + other - hand).norm(), 0.1);
}

TEST_F(ConstraintStack, BakeOfAConstraintOnlyRig) {
  constexpr int kFrames = 6;
  Clip clip(kFrames, s_->num_channels(), 1.0 / 30);
  for (int f = 0; f < kFrames; ++f) {
    const Pose pose = Posed(*s_, 0.5 + 0.4 * f);
    std::copy(pose.channels.begin(), pose.channels.end(), clip.frame(f).begin());
  }
  ik::Rig rig(s_);
  Stack stack;
  auto point = Make<PointConstraint>(kProp, kHand);
  point.maintain_offset = true;
  stack.entries.push_back({point, -1});
  std::vector<ik::Target> targets;
  Clip out;
  ik::Workspace workspace;
  ik::BakeSummary summary;
  ik::BakeJob job;
  job.rig = &rig;
  job.targets = &targets;
  job.clip = &clip;
  job.output = &out;
  job.workspace = &workspace;
  job.constraints = &stack;
  job.summary = &summary;
  ASSERT_TRUE(job.Run()) << job.error;
  EXPECT_EQ(summary.frames, kFrames);
  EXPECT_EQ(summary.solved(), 0);
  Pose first(*s_);
  first.SetFromRow(*s_, clip.frame(0));
  const Eigen::Vector3d offset =
      first.world[kProp].translation() - first.world[kHand].translation();
  for (int f = 0; f < kFrames; ++f) {
    Pose baked(*s_);
    baked.SetFromRow(*s_, out.frame(f));
    EXPECT_LT((baked.world[kProp].translation() - baked.world[kHand].translation() - offset).norm(),
              kTol)
        << "frame " << f;
  }
  // An invalid constraint fails validation, naming it.
  stack.entries.push_back({PointConstraint(), -1});
  EXPECT_FALSE(job.Run());
  EXPECT_EQ(job.error.rfind("bake: constraint 2: point:", 0), 0u) << job.error;
}

}  // namespace
}  // namespace stack_test
}  // namespace rigel::constraints_test
