// Input checks shared by the IK kernel: the rig (Workspace::Prepare) and one frame's targets and
// pose (ik::Solve and the stage jobs). Internal to core/ik.
#ifndef RIGEL_CORE_IK_VALIDATE_H_
#define RIGEL_CORE_IK_VALIDATE_H_

#include <cmath>
#include <span>
#include <string>

#include "core/fail.h"
#include "core/ik/methods.h"
#include "core/ik/rig.h"
#include "core/pose.h"

namespace rigel::ik::internal {

// std::isfinite, spelled short for the long validity conditions.
inline bool Finite(double v) { return std::isfinite(v); }

// True for the Jacobian-based methods (MethodRow::iterative, core/ik/methods.h).
inline bool IsIterative(Method m) { return RowOf(m).iterative; }

// Checks the rig's per-channel and per-joint arrays, its tasks and its stages' indices and
// settings (the list is Workspace::Prepare's, core/ik/solve.h). Stage checks that need the
// stage's plan (CCD and two-bone joints) are the planner's (core/ik/plan.cc).
bool ValidateRig(const Rig& rig, std::string* error);

// Checks one frame: the pose matches the rig's skeleton and is finite, there is one finite
// target per task with a non-negative weight and unit orientations where they are used.
bool ValidateFrame(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                   std::string* error);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_VALIDATE_H_
