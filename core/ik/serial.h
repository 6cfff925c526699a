// The serial fast path of the iteration (internal to core/ik). A stage with one position task
// (3 rows) or pose task (6 rows) on all axes, solved by damped least squares without the
// preferred-angle bias: the common case of one chain and one effector (an arm, a leg, a spine).
// IterateSerial runs the same iteration as the general one (core/ik/iterate.cc: same steps,
// damping schedule, active set, max step and stopping rules) on N x N systems held in fixed-size
// arrays, with the rows of core/ik/task_rows.h.
#ifndef RIGEL_CORE_IK_SERIAL_H_
#define RIGEL_CORE_IK_SERIAL_H_

#include <span>

#include "core/ik/plan.h"
#include "core/ik/rig.h"

namespace rigel::ik::internal {

// True when stage `st` may take the serial path for this frame (Prepare found it eligible, its
// task is on this frame and no column has a preferred-angle gain).
bool SerialEligible(const Rig& rig, std::span<const Target> targets, const StageWork& st);

// One run of the iteration from the channel values `theta` on an eligible stage. Adds the
// iterations run to *iterations; leaves st.j/st.e/pos_err/ang_err for the returned values.
Status IterateSerial(const Rig& rig, const Settings& set, std::span<const Target> targets,
                     Workspace::Impl& w, StageWork& st, double* theta, int* iterations);

// The serial path's error (st.e, st.pos_err, st.ang_err) and Jacobian (st.j, strength-scaled) at
// the current joint frames. Returns |e|^2. For tests (internal::EvaluateStage).
double SerialSystem(const Rig& rig, std::span<const Target> targets, const Workspace::Impl& w,
                    StageWork& st);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_SERIAL_H_
