#include "core/ik/constrained_solve.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/ik/plan.h"

namespace rigel::ik {

namespace {
constexpr int kAfterAnyStage = 1 << 30;

// The targets with each foot-rolled effector's goal replaced by its rolled ankle (the target holds
// the planted ankle), in the workspace's scratch; `goals` views them. False with `error` when a
// foot roll's effector is not a pose effector.
bool RollGoals(const Rig& rig, std::span<const Target> targets,
               std::span<const constraints::FootRollRig> foot_rolls, Workspace& workspace,
               std::span<const Target>* goals, std::string* error) {
  // Prepared first: a preparation starts the workspace afresh, scratch included (a failed one is
  // reported by Solve).
  if (!workspace.IsPreparedFor(rig)) workspace.Prepare(rig);
  std::vector<Target>& rolled = workspace.impl().rolled_targets;
  rolled.assign(targets.begin(), targets.end());
  for (size_t i = 0; i < foot_rolls.size(); ++i) {
    const int task = foot_rolls[i].task;
    if (task < 0 || task >= static_cast<int>(rolled.size()) ||
        task >= static_cast<int>(rig.tasks.size()) || rig.tasks[task].type != TaskType::kPose) {
      *error = "foot roll " + std::to_string(i + 1) +
               ": its effector must be a pose effector (position and rotation)";
      return false;
    }
    Target& t = rolled[task];
    Eigen::Isometry3d planted = Eigen::Isometry3d::Identity();
    planted.linear() = t.orientation.normalized().toRotationMatrix();
    planted.translation() = t.position;
    const Eigen::Isometry3d goal = foot_rolls[i].Goal(planted);
    t.position = goal.translation();
    t.orientation = Eigen::Quaterniond(goal.linear());
  }
  *goals = rolled;
  return true;
}

}  // namespace

bool ConstrainedFrame::Run(int frame, Pose& pose, SolveReport* report, bool* solved,
                           std::string* error) const {
  const Skeleton& skeleton = rig->skeleton();
  const bool has_constraints = constraints != nullptr && !constraints->entries.empty();
  *solved = false;
  if (has_constraints && constraints->Any(-1, -1)) {
    pose.UpdateWorld(skeleton, 0);
    if (!constraints->Evaluate(skeleton, pose, frame, -1, -1, *state, error)) return false;
  }
  // The index of the stage the solve ends with (an empty stack runs one implicit stage).
  const int last_stage = std::max(0, static_cast<int>(rig->stages.size()) - 1);
  if (!has_constraints || !rig->tasks.empty()) {
    // The constraints declared after stage k, run by Solve before stage k + 1.
    struct Interleave final : BetweenStages {
      bool wants(int stage) const override { return stack->Any(stage, stage); }
      bool run(int stage, Pose& p, std::string* why) const override {
        failed = !stack->Evaluate(*skeleton, p, frame, stage, stage, *state, why);
        return !failed;
      }
      const constraints::Stack* stack;
      const Skeleton* skeleton;
      constraints::StackState* state;
      int frame;
      mutable bool failed = false;
    } interleave;
    interleave.stack = constraints;
    interleave.skeleton = &skeleton;
    interleave.state = state;
    interleave.frame = frame;
    const bool interleaved =
        has_constraints && last_stage > 0 && constraints->Any(0, last_stage - 1);
    std::span<const Target> goals = targets;
    if (!foot_rolls.empty() && !RollGoals(*rig, targets, foot_rolls, *workspace, &goals, error)) {
      return false;
    }
    if (!Solve(*rig, goals, pose, *workspace, report, interleaved ? &interleave : nullptr)) {
      *error = interleave.failed ? report->message : "invalid rig: " + report->message;
      return false;
    }
    *solved = true;
    for (size_t i = 0; i < foot_rolls.size(); ++i) {
      std::string why;
      if (!foot_rolls[i].TurnToe(skeleton, pose, &why)) {
        *error = "foot roll " + std::to_string(i + 1) + ": " + why;
        return false;
      }
    }
  } else {
    *report = SolveReport();
    report->status = Status::kConverged;
    pose.UpdateWorld(skeleton, 0);
  }
  if (has_constraints && constraints->Any(last_stage, kAfterAnyStage)) {
    if (!constraints->Evaluate(skeleton, pose, frame, last_stage, kAfterAnyStage, *state, error)) {
      return false;
    }
  }
  return true;
}

}  // namespace rigel::ik
