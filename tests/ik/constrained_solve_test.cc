// ik::ConstrainedFrame: constraints run where they were declared, before the first stage, between
// two stages, or after the last, and what runs between stages is what the next stage starts from.
// Proved by forward kinematics on a rig whose second chain hangs from a joint a constraint moves.
#include "core/ik/constrained_solve.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "core/constraints/point.h"
#include "core/raw_skeleton.h"
#include "support/test_skeletons.h"

namespace rigel::ik {
namespace constrained_solve_test {
namespace {

using C = ChannelType;
using Eigen::Vector3d;

// root (no channel)
//  |-- a1 (XYZ) --1-- a2 (XYZ) --1-- a3            chain A, solved by stage 0
//  `-- carrier (Xpos Ypos Zpos), at (0.5, 1, 0)
//        `-- b1 (XYZ) --0.8-- b2 (XYZ) --0.8-- b3   chain B, solved by stage 1
enum Joint { kRoot, kA1, kA2, kA3, kCarrier, kB1, kB2, kB3 };

std::shared_ptr<const Skeleton> TwoChains() {
  RawSkeleton raw;
  RawSkeleton::Joint& root = raw.roots.emplace_back();
  root.name = "root";
  const std::vector<C> rot = {C::kXrotation, C::kYrotation, C::kZrotation};
  RawSkeleton::Joint& a1 = testing::AddChild(root, "a1", Vector3d(0, 0.5, 0), rot);
  RawSkeleton::Joint& a2 = testing::AddChild(a1, "a2", Vector3d(1, 0, 0), rot);
  testing::AddChild(a2, "a3", Vector3d(1, 0, 0), {});
  RawSkeleton::Joint& carrier = testing::AddChild(root, "carrier", Vector3d(0.5, 1.0, 0),
                                                  {C::kXposition, C::kYposition, C::kZposition});
  RawSkeleton::Joint& b1 = testing::AddChild(carrier, "b1", Vector3d(0, 0, 0), rot);
  RawSkeleton::Joint& b2 = testing::AddChild(b1, "b2", Vector3d(0, -0.8, 0), rot);
  testing::AddChild(b2, "b3", Vector3d(0, -0.8, 0), {});
  return testing::BuildOrDie(raw);
}

Vector3d FkPosition(const Skeleton& s, const Pose& pose, int joint) {
  Pose fresh(s);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(s);
  return fresh.world[joint].translation();
}

class ConstrainedSolve : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = TwoChains();
    rig_ = Rig(s_);
    const int a = rig_.AddTask({.type = TaskType::kPosition, .joint = kA3});
    const int b = rig_.AddTask({.type = TaskType::kPosition, .joint = kB3});
    for (const auto& [task, root] : {std::pair{a, kA1}, std::pair{b, kB1}}) {
      Stage& st = rig_.stages.emplace_back();
      st.tasks = {task};
      st.chain_root = root;
      st.settings.position_tolerance = 1e-9;
    }
    targets_.resize(2);
    targets_[0].position = Vector3d(1.2, 1.6, 0.4);  // reachable by chain A (length 2)
    targets_[1].position = Vector3d(0.9, 0.6, 0.1);  // reachable by chain B from either place
    carrier_onto_a3_.joint = kCarrier;
    carrier_onto_a3_.target = kA3;
  }

  // Runs one frame with the point constraint (carrier onto a3) declared after `after_stage`.
  Pose RunWith(int after_stage, bool* ok) {
    constraints::Stack stack;
    stack.entries.push_back({carrier_onto_a3_, after_stage});
    constraints::StackState state;
    Workspace ws;
    ConstrainedFrame job{.rig = &rig_,
                         .targets = targets_,
                         .constraints = &stack,
                         .state = &state,
                         .foot_rolls = {},
                         .workspace = &ws};
    Pose pose(*s_);
    SolveReport report;
    bool solved = false;
    *ok = job.Run(0, pose, &report, &solved, &error_);
    EXPECT_EQ(solved, *ok);
    return pose;
  }

  std::shared_ptr<const Skeleton> s_;
  Rig rig_;
  std::vector<Target> targets_;
  constraints::PointConstraint carrier_onto_a3_;
  std::string error_;
};

TEST_F(ConstrainedSolve, BetweenStagesTheNextStageStartsFromTheConstrainedPose) {
  bool ok = false;
  const Pose pose = RunWith(0, &ok);
  ASSERT_TRUE(ok) << error_;
  // Stage 0 put a3 on its target; the constraint carried chain B there; stage 1 then reached B's
  // target from the carried root. All three hold on the written channels.
  EXPECT_LT((FkPosition(*s_, pose, kA3) - targets_[0].position).norm(), 1e-7);
  EXPECT_LT((FkPosition(*s_, pose, kCarrier) - targets_[0].position).norm(), 1e-9);
  EXPECT_LT((FkPosition(*s_, pose, kB3) - targets_[1].position).norm(), 1e-7);
  // pose.world is up to date on return.
  for (int j = 0; j < s_->num_joints(); ++j) {
    EXPECT_LT((pose.world[j].translation() - FkPosition(*s_, pose, j)).norm(), 1e-12) << j;
  }
}

TEST_F(ConstrainedSolve, AfterTheLastStageTheConstraintMovesTheSolvedChain) {
  bool ok = false;
  const Pose pose = RunWith(1, &ok);
  ASSERT_TRUE(ok) << error_;
  // Stage 1 solved B from the carrier's rest place, then the carrier moved: b3 is off its target
  // by exactly the carrier's displacement.
  const Vector3d carried = targets_[0].position - Vector3d(0.5, 1.0, 0);
  EXPECT_LT((FkPosition(*s_, pose, kCarrier) - targets_[0].position).norm(), 1e-7);
  EXPECT_LT((FkPosition(*s_, pose, kB3) - (targets_[1].position + carried)).norm(), 1e-6);
}

TEST_F(ConstrainedSolve, BeforeTheFirstStageTheConstraintSeesTheUnsolvedPose) {
  bool ok = false;
  const Pose pose = RunWith(-1, &ok);
  ASSERT_TRUE(ok) << error_;
  // The carrier went to a3's rest place (2 on +X at height 0.5), before stage 0 moved a3.
  EXPECT_LT((FkPosition(*s_, pose, kCarrier) - Vector3d(2, 0.5, 0)).norm(), 1e-9);
  EXPECT_LT((FkPosition(*s_, pose, kA3) - targets_[0].position).norm(), 1e-7);
  EXPECT_LT((FkPosition(*s_, pose, kB3) - targets_[1].position).norm(), 1e-7);
}

TEST_F(ConstrainedSolve, AFailingConstraintBetweenStagesIsNamed) {
  // A point constraint on a joint without position channels fails when it runs (the stack's
  // Validate would catch it first in a bake; the frame reports it too, naming the entry).
  carrier_onto_a3_.joint = kB1;
  bool ok = true;
  RunWith(0, &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(error_.rfind("constraint 1: ", 0), 0u) << error_;
}

}  // namespace
}  // namespace constrained_solve_test
}  // namespace rigel::ik
