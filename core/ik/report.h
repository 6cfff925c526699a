// The solve report (internal to core/ik): per-task errors after the solve and the channels on
// their limits (SolveReport, core/ik/rig.h).
#ifndef RIGEL_CORE_IK_REPORT_H_
#define RIGEL_CORE_IK_REPORT_H_

#include <span>

#include "core/ik/plan.h"
#include "core/ik/rig.h"
#include "core/pose.h"

namespace rigel::ik::internal {

// Fills report->position_error/angle_error (per task, from pose.world, or from the last stage's
// own evaluation when it is of the final pose) and report->channels_on_limit. Allocates only
// until the report's vectors have grown once.
void FillReport(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                const Workspace::Impl& w, SolveReport* report);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_REPORT_H_
