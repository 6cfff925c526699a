// One step of the Jacobian-based iteration (internal to core/ik): the preferred-angle bias, the
// damped least-squares step on the block-sparse J J^T, chord steps, priority levels, and joint
// limits as an active set. Called by the general iteration (core/ik/iterate.cc); the serial
// fast path (core/ik/serial.cc) has its own fixed-size step and shares TakeStep/UndoStep and
// Stationary.
#ifndef RIGEL_CORE_IK_STEP_H_
#define RIGEL_CORE_IK_STEP_H_

#include <algorithm>

#include "core/ik/plan.h"
#include "core/ik/rig.h"

namespace rigel::ik::internal {

// Preferred-angle gradient z = grad H (x space, i.e. times the column scale), H = sum alpha_i
// (theta_i - theta_c_i)^psi. Zero on clamped columns. False when no column has a bias.
bool BiasGradient(const Rig& rig, const StageWork& st, const double* theta, const Settings& set,
                  Eigen::VectorXd& z);

// One chord step in channel units (st.dtheta): the last full step's Jacobian (st.j_saved),
// active set and LDL^T factor applied to the current residual st.e. False when it would cross a
// limit or exceed the max step (the caller then takes a full step).
bool ChordStep(const Rig& rig, StageWork& st, const Settings& set, const double* theta);

// One step with limits as an active set: channels whose step would cross a limit are pinned at
// it, their motion moved to the right-hand side and the step re-solved, until no free channel
// crosses. Returns the step in st.dtheta (channel units) and st.x (scaled variables).
void ComputeStep(const Rig& rig, StageWork& st, Method method, double lambda, const Settings& set,
                 const double* theta);

// Stationarity: the error is (nearly) orthogonal to every motion the free channels allow.
bool Stationary(const Rig& rig, StageWork& st, const double* theta);

// Moves the stage's channels onto their limits.
void ClampToLimits(const Rig& rig, StageWork& st, double* theta);

// Takes the step st.dtheta (channel units) from the current channel values, kept inside the
// limits; the values before it stay in st.theta_prev for UndoStep.
inline void TakeStep(const Rig& rig, StageWork& st, double* theta) {
  for (int c = 0; c < st.cols; ++c) {
    const int ch = st.col_channel[c];
    st.theta_prev[c] = theta[ch];
    theta[ch] = std::clamp(theta[ch] + st.dtheta[c], rig.min[ch], rig.max[ch]);
  }
}

// Restores the channel values from before the last TakeStep.
inline void UndoStep(const StageWork& st, double* theta) {
  for (int c = 0; c < st.cols; ++c) theta[st.col_channel[c]] = st.theta_prev[c];
}

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_STEP_H_
