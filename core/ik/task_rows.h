// The Jacobian of the IK solver (internal to core/ik): one function per task type that writes
// the task's error rows and Jacobian rows, built from two column primitives (the velocity of a
// world point and the angular velocity of a frame when one channel moves). Every solver path
// builds its rows here: the general iteration and CCD through FillSystem, the serial fast path
// (core/ik/serial.cc) through the same primitives, WorldJacobian (core/ik/jacobian.h) too.
// tests/ik/task_rows_test.cc checks the rows the solver builds against central finite
// differences for every task type, Euler order and channel kind.
//
// Conventions: a column belongs to one channel, with its world axis and (rotation channels) its
// pivot, the joint origin after the joint's translation channels (seed 001 eqs. 21-26). A row
// block holds weight * d(effector quantity)/d(channel); the error rows hold weight * (goal -
// current), so J dtheta = e is the Gauss-Newton step. Errors that are rotations (orientation,
// aim, pole) are linearized at the current pose: their rows are the rates of the rotation the
// solver drives (see each function).
#ifndef RIGEL_CORE_IK_TASK_ROWS_H_
#define RIGEL_CORE_IK_TASK_ROWS_H_

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/ik/plan.h"
#include "core/ik/rig.h"

namespace rigel::ik::internal {

// ---- Column primitives ----

// d(point)/d(channel): a rotation channel turns `point` about `axis` through `pivot`
// (axis x (point - pivot)); a translation channel moves it along `axis`.
[[gnu::always_inline]] inline Eigen::Vector3d PointVelocity(const Eigen::Vector3d& axis,
                                                            const Eigen::Vector3d& pivot,
                                                            bool rotation,
                                                            const Eigen::Vector3d& point) {
  return rotation ? Eigen::Vector3d(axis.cross(point - pivot)) : axis;
}

// Angular velocity of a frame carried by the channel: `axis` for a rotation channel, zero for a
// translation channel.
[[gnu::always_inline]] inline Eigen::Vector3d AngularVelocity(const Eigen::Vector3d& axis,
                                                              bool rotation) {
  return rotation ? axis : Eigen::Vector3d::Zero();
}

// ---- Rotation errors ----

// A unit vector orthogonal to v (v unit length): v x X, or v x Y when v is near X.
inline Eigen::Vector3d AnyPerpendicular(const Eigen::Vector3d& v) {
  const Eigen::Vector3d other =
      std::abs(v.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  return v.cross(other).normalized();
}

// Rotation vector (scaled axis) of a unit quaternion, angle in [0, pi].
Eigen::Vector3d ScaledAxis(Eigen::Quaterniond q);

// angle / sin(angle) for the angle with sine sn >= 0 and cosine c (the scale from vee(R - R^T)/2
// to the rotation vector). Below sn = 0.01 with c > 0 (near convergence) the series of
// asin(s) / s to s^6 is exact to double precision (the next term is 3e-18) and spares atan2.
inline double AngleOverSine(double sn, double c) {
  if (c > 0 && sn < 0.01) {
    const double s2 = sn * sn;
    return 1.0 + s2 * (1.0 / 6.0 + s2 * (3.0 / 40.0 + s2 * (5.0 / 112.0)));
  }
  return std::atan2(sn, c) / sn;
}

// Scaled axis of R_d R_e^T, with r_d the matrix of the unit quaternion q_d: from the matrix's
// skew part and trace, sin(angle) axis = vee(R - R^T) / 2, cos(angle) = (trace - 1) / 2, away
// from a half turn; through quaternions near it (where the skew part vanishes).
inline Eigen::Vector3d RotationError(const Eigen::Matrix3d& r_d, const Eigen::Quaterniond& q_d,
                                     const Eigen::Matrix3d& r_e) {
  const Eigen::Matrix3d r = r_d * r_e.transpose();
  const Eigen::Vector3d v(0.5 * (r(2, 1) - r(1, 2)), 0.5 * (r(0, 2) - r(2, 0)),
                          0.5 * (r(1, 0) - r(0, 1)));
  const double c = 0.5 * (r.trace() - 1.0);
  if (c > -0.5) {
    const double sn = v.norm();
    if (sn < 1e-300) return v;
    return v * AngleOverSine(sn, c);
  }
  return ScaledAxis(q_d * Eigen::Quaterniond(r_e).conjugate());
}

// The same with R_d computed from q_d.
inline Eigen::Vector3d RotationError(const Eigen::Quaterniond& q_d, const Eigen::Matrix3d& r_e) {
  return RotationError(q_d.toRotationMatrix(), q_d, r_e);
}

// Rotation vector taking unit vector a onto unit vector d.
Eigen::Vector3d AimRotation(const Eigen::Vector3d& a, const Eigen::Vector3d& d);

// ---- Task rows ----

// Rows of a task: kPosition 1-3 (Task::position_axes), kOrientation 3, kPose both, kAim 2,
// kPole 1.
int PositionRowCount(const Task& task);
int TaskRowCount(const Task& task);

// The stage's columns at the current pose (arrays indexed by stage column).
struct Columns {
  const Eigen::Vector3d* axis = nullptr;   // World axis.
  const Eigen::Vector3d* pivot = nullptr;  // World pivot (rotation channels).
  const std::uint8_t* rotation = nullptr;  // 1: rotation channel, 0: translation channel.
};

// Where a task writes: rows [row, row + TaskRowCount) of the column-major Jacobian `j` (leading
// dimension ld; nullptr = the error only) and of the error vector `e`.
struct RowBlock {
  double* j = nullptr;
  std::size_t ld = 0;
  double* e = nullptr;
  int row = 0;
};

// A task's unweighted errors, as SolveReport has them: position (length units) and angle
// (radians).
struct TaskErrors {
  double position = 0.0;
  double angle = 0.0;
};

// kPosition: e = weight * (target - p_e) on the task's axes; rows weight * d(q)/d(theta) with
// q = p_e, or q = the target for Task::alternate_jacobian (seed 002's alternate Jacobian).
TaskErrors PositionRows(const Task& task, const Target& target, double weight,
                        const Eigen::Vector3d& p_e, const Columns& columns,
                        std::span<const int> cols, const RowBlock& out);

// kOrientation: e = weight * log(R_d R_e^T) (scaled axis, world); rows weight * the effector
// frame's angular velocity (exact where the error is zero; elsewhere the first-order rate, the
// usual choice: the log map's Jacobian is left out).
TaskErrors OrientationRows(const Target& target, double weight, const Eigen::Matrix3d& r_e,
                           const Columns& columns, std::span<const int> cols, const RowBlock& out);

// kPose: PositionRows then OrientationRows below them.
TaskErrors PoseRows(const Task& task, const Target& target, double weight,
                    const Eigen::Vector3d& p_e, const Eigen::Matrix3d& r_e, const Columns& columns,
                    std::span<const int> cols, const RowBlock& out);

// kAim: with a the world aim axis and d the unit direction from p_e to the target, r the
// rotation vector taking a onto d and (u1, u2) an orthonormal pair normal to a:
// e = weight * (u1.r, u2.r). Rows: weight * (u1, u2) . (w + d x dp_e / |target - p_e|), the rate
// at which a turns towards d (w the frame's angular velocity; the second term is d's turn as the
// effector point moves). This is -de/dtheta exactly where the error is zero and to first order
// elsewhere.
TaskErrors AimRows(const Task& task, const Target& target, double weight,
                   const Eigen::Matrix3d& r_joint, const Eigen::Vector3d& p_e,
                   const Columns& columns, std::span<const int> cols, const RowBlock& out);

// kPole: phi = the signed angle about s = (p_e - p_r)/|p_e - p_r| from the chain's plane
// (through p_m) to the pole; e = weight * phi. The row is -weight * dphi/dtheta exactly: the
// root, middle and effector all move, and so does the axis s. `moves[i]` says whether column
// cols[i] moves p_m (bit 0) and p_r (bit 1).
TaskErrors PoleRows(const Target& target, double weight, const Eigen::Vector3d& p_e,
                    const Eigen::Vector3d& p_r, const Eigen::Vector3d& p_m, const Columns& columns,
                    std::span<const int> cols, std::span<const std::uint8_t> moves,
                    const RowBlock& out);

// Fills the stage's error vector st.e (weighted) and, when `jacobian`, its Jacobian st.j
// (weighted, strength-scaled by st.scale) from the joint frames of the last ChainFk, plus the
// unweighted per-task errors st.pos_err/st.ang_err. Returns the weighted squared error.
double FillSystem(const Rig& rig, std::span<const Target> targets, Workspace::Impl& w,
                  StageWork& st, bool jacobian);

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_TASK_ROWS_H_
