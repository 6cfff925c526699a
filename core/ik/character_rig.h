// A character's IK set-up, whole: named effectors with their current targets, the rig (tasks,
// limits, locks, stages), the constraints and foot rolls, and the solver's storage. A Lua rig
// script declares one (rigel.Rig is a box around it), the Python rigel.Rig wraps one, and a C++
// program builds one directly; BakeJob::character runs it over a clip.
//
//   ik::CharacterRig character(scene.skeleton);
//   ik::Task hand;
//   hand.joint = skeleton.FindJoint("RightHand");
//   character.AddEffector(hand);                        // named "RightHand"
//   ik::BakeJob job;
//   job.character = &character;                         // rig, targets, constraints, foot rolls
//   job.clip = &clip;
//   job.output = &baked;
//   job.on_frame = [&](int f, Pose& pose, std::string*) {
//     character.targets[0].position = ...;
//     return ik::FrameAction::kSolve;
//   };
//   if (!job.Run()) ... job.error ...
#ifndef RIGEL_CORE_IK_CHARACTER_RIG_H_
#define RIGEL_CORE_IK_CHARACTER_RIG_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/constraints/foot_roll.h"
#include "core/constraints/stack.h"
#include "core/ik/rig.h"
#include "core/ik/solve.h"

namespace rigel::ik {

struct CharacterRig {
  explicit CharacterRig(std::shared_ptr<const Skeleton> skeleton) : rig(std::move(skeleton)) {}

  // Adds an effector: `task` (its joint required), `target` its first target, named `name`
  // (empty: the joint's name for a position effector, "<joint>.<type>" for the other types, as
  // core/ik/methods.h spells types). A pole task without pole_mid takes the effector joint's
  // parent, without pole_root the mid joint's parent (hip, knee, ankle). Returns the effector's
  // index (the task's), or -1 with `error` set when:
  // - the joint is not a joint of the skeleton;
  // - an effector of that name exists ("effector 'X' already exists");
  // - a pole's root and mid are not ancestors of the effector joint, root above mid.
  int AddEffector(const Task& task, const Target& target = {}, std::string name = {},
                  std::string* error = nullptr);
  // The index of the effector named `name`, -1 when none.
  int FindEffector(std::string_view name) const;

  Rig rig;
  std::vector<std::string> names;  // one per effector (task)
  std::vector<Target> targets;     // one per effector: this frame's goals
  // Constraints in declaration order, and their captured offsets for a solve outside a bake (a
  // bake starts its own).
  constraints::Stack constraints;
  constraints::StackState constraint_state;
  // Foot rolls on pose effectors, in declaration order.
  std::vector<constraints::FootRollRig> foot_rolls;
  // Solver storage reused from solve to solve, and the last solve's report.
  Workspace workspace;
  SolveReport report;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_CHARACTER_RIG_H_
