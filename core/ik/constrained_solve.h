// One frame of a rig that holds constraints: the constraints declared before the first solver
// stage, the solve (with the constraints declared after stage k run between stage k and stage
// k + 1), then the constraints declared after the last stage. rig:solve, rig:bake (through
// BakeJob) and `rigel bake` all solve a constrained frame here, so the order is one definition.
//
//   constraints::StackState state;                 // offsets captured on the first frame
//   ik::ConstrainedFrame frame{.rig = &rig, .targets = targets, .constraints = &stack,
//                              .state = &state, .workspace = &ws};
//   frame.Run(f, pose, &report, &solved, &error);
#ifndef RIGEL_CORE_IK_CONSTRAINED_SOLVE_H_
#define RIGEL_CORE_IK_CONSTRAINED_SOLVE_H_

#include <span>
#include <string>

#include "core/constraints/foot_roll.h"
#include "core/constraints/stack.h"
#include "core/ik/rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {

struct ConstrainedFrame {
  // Runs frame `frame` (0-based; selects parent-switch targets) on `pose`, whose channels are the
  // start (the animated pose, warm start) and receive the answer; pose.world is brought up to date
  // first and is up to date on return. Order, by each entry's after_stage (stack.h):
  //   1. entries with after_stage < 0 (declared before any stage);
  //   2. ik::Solve, and between stages k and k + 1 the entries with after_stage == k; the goals
  //      of the foot-rolled effectors are their rolled ankles (the targets hold the planted
  //      ankles), and after the solve their toe joints turn;
  //   3. entries with after_stage >= the last stage's index (after the solve and its IK/FK
  //      blend; with one stage, or none, every entry with after_stage >= 0).
  // A rig with constraints and no task is not solved: `solved` is false and the report says
  // converged with no iteration. Returns false with `error` set ("invalid rig: ..." when the
  // solve rejected its input, "foot roll 1: ..." for a foot roll whose effector is not a pose
  // effector or whose toe cannot turn, else the failing constraint's message, "constraint 2:
  // ...").
  bool Run(int frame, Pose& pose, SolveReport* report, bool* solved, std::string* error) const;

  const Rig* rig = nullptr;
  std::span<const Target> targets;
  // May be null or empty: a plain solve.
  const constraints::Stack* constraints = nullptr;
  constraints::StackState* state = nullptr;
  // Foot rolls on pose effectors (rig:foot_roll), validated by the caller (FootRollRig::Validate).
  std::span<const constraints::FootRollRig> foot_rolls;
  Workspace* workspace = nullptr;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_CONSTRAINED_SOLVE_H_
