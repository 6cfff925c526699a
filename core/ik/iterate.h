// The general Jacobian-based iteration (internal to core/ik): convergence and stall rules,
// Levenberg-Marquardt damping, chord steps, priority levels, restarts. One stage runs through
// RunIterative (core/ik/stages.h); a stage eligible for the serial fast path is handed to
// IterateSerial (core/ik/serial.h), which follows the same rules on fixed-size systems.
#ifndef RIGEL_CORE_IK_ITERATE_H_
#define RIGEL_CORE_IK_ITERATE_H_

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <span>

#include "core/ik/plan.h"
#include "core/ik/rig.h"

namespace rigel::ik::internal {

// True when every active task of the stage (weight * target weight > 0) is within the stage's
// tolerances (from the last FillSystem). A tolerance of 0 never counts as reached.
bool Converged(const Rig& rig, std::span<const Target> targets, const StageWork& st,
               const Settings& settings);

// Damping after a rejected trial: Nielsen's update (lambda^2 *= nu, nu doubles) when `nielsen`
// (single-level kDlsAdaptive), else lambda *= 10. True when lambda reached lambda_max (the
// caller then counts the stage as stalled).
inline bool DampAfterReject(bool nielsen, const Settings& set, double* lambda, double* nu) {
  if (nielsen) {
    *lambda = std::max(*lambda, 1e-6) * std::sqrt(*nu);
    *nu *= 2;
  } else {
    *lambda = std::max(*lambda, 1e-6) * 10.0;
  }
  if (*lambda > set.lambda_max) {
    *lambda = set.lambda_max;
    return true;
  }
  return false;
}

// Damping after an accepted step that lowered the error from `err` to `next` where the linear
// model predicted a drop of `predicted`: Nielsen's update from the gain ratio
// rho = (err - next) / predicted when `nielsen` and predicted > 0, else lambda /= 10.
inline void DampAfterAccept(bool nielsen, double err, double next, double predicted,
                            const Settings& set, double* lambda, double* nu) {
  if (nielsen && predicted > 0) {
    const double rho = (err - next) / predicted;
    const double t = 2 * rho - 1;
    *lambda = std::max(*lambda * std::sqrt(std::max(1.0 / 3, 1 - t * t * t)), set.lambda_min);
    *nu = 2;
  } else {
    *lambda = std::max(*lambda * 0.1, set.lambda_min);
  }
}

// Step acceptance for the methods without their own damping (kDls, kPseudoInverse, kSvd, kQr):
// after a step that did not lower the driving error `err` (weighted squared), the next steps are
// damped least-squares steps with lambda = `rescue` (0 = the method's own step): it starts at
// max(2 Settings::lambda, 0.1 |e|) and doubles on every further rejection. True when it passed
// lambda_max (the caller then counts the stage as stalled).
inline bool RescueAfterReject(const Settings& set, double err, double* rescue) {
  *rescue = *rescue > 0 ? *rescue * 2 : std::max(2 * set.lambda, 0.1 * std::sqrt(err));
  return *rescue > set.lambda_max;
}

// After an accepted step: the rescue damping halves, and the method's own step returns once it
// falls below Settings::lambda (a rejected own step starts the rescue again).
inline void RescueAfterAccept(const Settings& set, double* rescue) {
  if (*rescue <= 0) return;
  *rescue *= 0.5;
  if (*rescue < set.lambda) *rescue = 0;
}

// Test hook: the stage's weighted error (`error`, its rows) and Jacobian (`jacobian`, rows x
// num_channels: the stage's columns at their channels, zero elsewhere) at the channel values
// `channels`, built by the solver's own code: the serial fast path's SerialError and
// SerialJacobian when `serial`, FillSystem otherwise (strength scales and weights included).
// False when the workspace is not prepared for the rig, the stage is out of range or not
// iterative, or `serial` is asked of a stage that is not eligible.
bool EvaluateStage(const Rig& rig, std::span<const Target> targets,
                   std::span<const double> channels, Workspace& workspace, int stage, bool serial,
                   Eigen::MatrixXd* jacobian, Eigen::VectorXd* error);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_ITERATE_H_
