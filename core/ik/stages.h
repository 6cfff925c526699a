// The solver stages (internal to core/ik): one runner per family of methods, each in its own
// file, and the planning hooks of the methods that need more than the common plan. ik::Solve
// runs a rig's stages through their row of the methods table (core/ik/methods.h); the jobs of
// core/ik/solve.h call the runners.
//
// Adding a solver: see core/ik/methods.h (a Method value, one file defining Run<Solver> and, if
// any, Plan<Solver> declared here, one row, one test file).
#ifndef RIGEL_CORE_IK_STAGES_H_
#define RIGEL_CORE_IK_STAGES_H_

#include <span>
#include <string>

#include "core/ik/plan.h"
#include "core/ik/rig.h"
#include "core/pose.h"

namespace rigel::ik::internal {

// Runs stage `stage` of `rig` on pose.channels (in: the start, out: the answer), adding the
// iterations it ran to *iterations. The workspace is prepared for the rig and the frame is
// valid. Returns the stage's status (kInvalidInput only when the stage cannot run).
using StageRunner = Status (*)(const Rig& rig, int stage, std::span<const Target> targets,
                               Pose& pose, Workspace::Impl& w, int* iterations);

// Plans the method-specific part of a stage at Prepare time (its tasks, chain and buffers) and
// checks the stage; `where` names the stage in the error message.
using StagePlanner = bool (*)(const Rig& rig, const Stage& stage, StageWork& st,
                              const std::string& where, std::string* error);

// The Jacobian-based methods (core/ik/iterate.cc): the general iteration, the serial fast path
// (core/ik/serial.cc) and restarts.
Status RunIterative(const Rig& rig, int stage, std::span<const Target> targets, Pose& pose,
                    Workspace::Impl& w, int* iterations);

// Cyclic coordinate descent (core/ik/ccd.cc).
Status RunCcd(const Rig& rig, int stage, std::span<const Target> targets, Pose& pose,
              Workspace::Impl& w, int* iterations);

// Analytic two-bone stage over TwoBoneJob (core/ik/two_bone.cc).
Status RunTwoBone(const Rig& rig, int stage, std::span<const Target> targets, Pose& pose,
                  Workspace::Impl& w, int* iterations);

// FABRIK (core/ik/fabrik.cc).
Status RunFabrik(const Rig& rig, int stage, std::span<const Target> targets, Pose& pose,
                 Workspace::Impl& w, int* iterations);

// Prepare-time checks of a CCD stage (needs a position or pose task). `where` names the stage
// in the error message.
bool PlanCcd(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
             std::string* error);

// Prepare-time plan of a two-bone stage: its position and pole tasks and its upper, lower and
// end joints (found from the position task's joint when the stage leaves them at -1).
bool PlanTwoBone(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
                 std::string* error);

// Prepare-time plan of a FABRIK stage: its one position or pose task, its chain (the joints with
// free rotation channels from chain_root, or the path's top, to the effector) and its buffers.
bool PlanFabrik(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
                std::string* error);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_STAGES_H_
