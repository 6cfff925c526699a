#include "core/ik/serial.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/ik/iterate.h"
#include "core/ik/linear.h"
#include "core/ik/stage_fk.h"
#include "core/ik/step.h"
#include "core/ik/task_rows.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {

using Eigen::Vector3d;

// True when stage `st` may take the serial path for this frame.
bool SerialEligible(const Rig& rig, std::span<const Target> targets, const StageWork& st) {
  if (st.serial_rows == 0) return false;
  const int t = st.tasks[0];
  if (!(rig.tasks[t].weight * targets[t].weight > 0.0)) return false;
  for (int c = 0; c < st.cols; ++c) {
    if (rig.preferred_gain[st.col_channel[c]] != 0.0) return false;
  }
  return true;
}

namespace {

// The task's error at the current joint frames: st.e (weighted), st.pos_err[0], st.ang_err[0].
// Returns |e|^2.
template <int N>
double SerialError(const Task& task, const Target& target, const Eigen::Matrix3d& r_d,
                   double weight, const Workspace::Impl& w, StageWork& st) {
  const Eigen::Matrix3d& rj = w.rot[task.joint];
  const Vector3d err = target.position - (w.pos[task.joint] + rj * task.offset);
  double* e = st.e.data();
  double total = 0.0;
  for (int i = 0; i < 3; ++i) {
    e[i] = weight * err[i];
    total += e[i] * e[i];
  }
  st.pos_err[0] = err.norm();
  if constexpr (N == 6) {
    // The orientation rows' error (task_rows.h) with R_d precomputed for the solve.
    const Vector3d v = RotationError(r_d, target.orientation, rj * st.task_offset_rotation[0]);
    st.ang_err[0] = v.norm();
    for (int i = 0; i < 3; ++i) {
      e[3 + i] = weight * v[i];
      total += e[3 + i] * e[3 + i];
    }
  } else {
    st.ang_err[0] = 0.0;
  }
  return total;
}

// J (N x cols, column-major, weighted and strength-scaled) at the current joint frames.
template <int N>
void SerialJacobian(const Task& task, double weight, const Workspace::Impl& w, StageWork& st) {
  const Vector3d p_e = w.pos[task.joint] + w.rot[task.joint] * task.offset;
  double* out = st.j.data();
  for (int c = 0; c < st.cols; ++c, out += N) {
    // The position (and pose) rows of task_rows.h, with the strength scale folded in.
    const double f = weight * st.scale[c];
    const bool rotation = st.col_rotation[c] != 0;
    const Vector3d v = PointVelocity(st.axis[c], st.pivot[c], rotation, p_e);
    out[0] = f * v.x();
    out[1] = f * v.y();
    out[2] = f * v.z();
    if constexpr (N == 6) {
      const Vector3d omega = AngularVelocity(st.axis[c], rotation);
      out[3] = f * omega.x();
      out[4] = f * omega.y();
      out[5] = f * omega.z();
    }
  }
}

// Lower triangle of J J^T + damp I over the free columns, into m (N x N, row q holds p >= q).
template <int N>
[[gnu::always_inline]] inline void AssembleSerialNormal(const double* j,
                                                        const std::uint8_t* clamped, int n,
                                                        double damp, double* m) {
  for (int q = 0; q < N; ++q) {
    for (int p = q; p < N; ++p) m[q * N + p] = 0.0;
  }
  for (int c = 0; c < n; ++c) {
    if (clamped[c]) continue;
    const double* jc = j + c * N;
    for (int q = 0; q < N; ++q) {
      for (int p = q; p < N; ++p) m[q * N + p] += jc[p] * jc[q];
    }
  }
  for (int i = 0; i < N; ++i) m[i * N + i] += damp;
}

// x = J^T (J J^T + lambda^2 I)^-1 rhs on the free columns (rhs is overwritten), `fixed` on the
// clamped ones; a non-finite solution is no step.
template <int N>
[[gnu::always_inline]] inline void SolveFreeColumns(const double* j, const std::uint8_t* clamped,
                                                    const double* fixed, int n, double lambda,
                                                    double* rhs, double* x) {
  double m[N * N];
  AssembleSerialNormal<N>(j, clamped, n, lambda * lambda, m);
  double inv_d[N];
  bool ok = Ldlt<N>(m, N, inv_d);
  if (!ok) {
    // Singular (lambda = 0 at a singular pose): damp slightly so the step stays finite.
    AssembleSerialNormal<N>(j, clamped, n, lambda * lambda, m);
    double largest = 0.0;
    for (int i = 0; i < N; ++i) largest = std::max(largest, m[i * N + i]);
    AssembleSerialNormal<N>(j, clamped, n, lambda * lambda + 1e-10 * std::max(largest, 1e-300), m);
    ok = Ldlt<N>(m, N, inv_d);
  }
  bool finite = true;
  if (ok) {
    LdltSolve<N>(m, N, inv_d, rhs);
    for (int c = 0; c < n; ++c) {
      if (clamped[c]) {
        x[c] = fixed[c];
        continue;
      }
      const double* jc = j + c * N;
      double v = 0.0;
      for (int r = 0; r < N; ++r) v += jc[r] * rhs[r];
      x[c] = v;
      finite = finite && std::isfinite(v);
    }
  } else {
    for (int c = 0; c < n; ++c) x[c] = clamped[c] ? fixed[c] : 0.0;
  }
  if (!finite) {
    for (int c = 0; c < n; ++c) x[c] = 0.0;
  }
}

// ComputeStep for the serial system: st.x (scaled variables) and st.dtheta (channel units).
template <int N>
void SerialStep(const Rig& rig, StageWork& st, double lambda, const Settings& set,
                const double* theta) {
  const int n = st.cols;
  const double* j = st.j.data();
  const double* e = st.e.data();
  std::uint8_t* clamped = st.clamped.data();
  double* fixed = st.fixed.data();
  double* x = st.x.data();
  double* dtheta = st.dtheta.data();
  const double* scale = st.scale.data();
  st.step_scaled = false;
  for (int c = 0; c < n; ++c) {
    clamped[c] = 0;
    fixed[c] = 0.0;
    const int ch = st.col_channel[c];
    const bool at_max = theta[ch] >= rig.max[ch], at_min = theta[ch] <= rig.min[ch];
    if (!at_max && !at_min) continue;
    double g = 0.0;
    for (int r = 0; r < N; ++r) g += j[c * N + r] * e[r];
    if ((g > 0 && at_max) || (g < 0 && at_min)) clamped[c] = 1;
  }
  for (int pass = 0; pass <= n; ++pass) {
    double rhs[N];
    for (int r = 0; r < N; ++r) rhs[r] = e[r];
    if (pass > 0) {
      for (int c = 0; c < n; ++c) {
        if (!clamped[c]) continue;
        for (int r = 0; r < N; ++r) rhs[r] -= j[c * N + r] * fixed[c];
      }
    }
    SolveFreeColumns<N>(j, clamped, fixed, n, lambda, rhs, x);
    double largest = 0.0;
    for (int c = 0; c < n; ++c) {
      dtheta[c] = x[c] * scale[c];
      largest = std::max(largest, std::abs(dtheta[c]));
    }
    if (set.max_step > 0 && largest > set.max_step) {
      st.step_scaled = true;
      const double f = set.max_step / largest;
      for (int c = 0; c < n; ++c) {
        dtheta[c] *= f;
        x[c] *= f;
      }
    }
    bool violated = false;
    for (int c = 0; c < n; ++c) {
      if (clamped[c]) continue;
      const int ch = st.col_channel[c];
      const double next = theta[ch] + dtheta[c];
      if (next < rig.min[ch] || next > rig.max[ch]) {
        const double bound = next < rig.min[ch] ? rig.min[ch] : rig.max[ch];
        clamped[c] = 1;
        fixed[c] = (bound - theta[ch]) / scale[c];
        violated = true;
      }
    }
    if (!violated) break;
    for (int c = 0; c < n; ++c) {
      if (clamped[c]) x[c] = fixed[c];
    }
  }
}

// Iterate for the serial system (see Iterate for the rules).
template <int N>
Status IterateSerialN(const Rig& rig, const Settings& set, std::span<const Target> targets,
                      Workspace::Impl& w, StageWork& st, double* theta, int* iterations) {
  const Skeleton& s = rig.skeleton();
  const Method method = st.method;
  const Task& task = rig.tasks[st.tasks[0]];
  const Target& target = targets[st.tasks[0]];
  const double weight = task.weight * target.weight;
  Eigen::Matrix3d r_d = Eigen::Matrix3d::Identity();
  if constexpr (N == 6) r_d = target.orientation.toRotationMatrix();
  const bool adaptive = method == Method::kDlsAdaptive;
  const int n = st.cols;
  auto converged = [&] {
    return st.pos_err[0] <= set.position_tolerance && st.ang_err[0] <= set.angle_tolerance &&
           set.position_tolerance > 0 && set.angle_tolerance > 0;
  };
  auto swap_saved = [&st] {
    std::swap(st.j, st.j_saved);
    std::swap(st.e, st.e_saved);
    std::swap(st.pos_err, st.pos_err_saved);
    std::swap(st.ang_err, st.ang_err_saved);
  };
  StartFk(s, w, st, theta);
  double err = SerialError<N>(task, target, r_d, weight, w, st);
  bool j_valid = false;
  double lambda = set.lambda;
  if (adaptive) lambda = std::max(lambda, 0.1 * std::sqrt(err));
  double nu = 2;
  double rescue = 0.0;  // kDls: damping after a rejected step (see Iterate).
  int stall = 0;
  int it = 0;
  Status status = Status::kNotConverged;
  st.active_levels = 1;
  st.last_bias = false;
  if (n == 0) return converged() ? Status::kConverged : Status::kUnreachable;
  while (true) {
    if (converged()) {
      status = Status::kConverged;
      break;
    }
    if (!j_valid) {
      SerialJacobian<N>(task, weight, w, st);
      j_valid = true;
    }
    if (it >= set.max_iterations || stall >= set.stall_iterations) {
      status = Stationary(rig, st, theta) ? Status::kUnreachable : Status::kNotConverged;
      break;
    }
    SerialStep<N>(rig, st, std::max(lambda, rescue), set, theta);
    double predicted = 0.0;
    if (adaptive) {
      const double* j = st.j.data();
      double r[N];
      for (int i = 0; i < N; ++i) r[i] = st.e[i];
      for (int c = 0; c < n; ++c) {
        const double xc = st.x[c];
        for (int i = 0; i < N; ++i) r[i] -= j[c * N + i] * xc;
      }
      double r2 = 0.0;
      for (int i = 0; i < N; ++i) r2 += r[i] * r[i];
      predicted = err - r2;
    }
    TakeStep(rig, st, theta);
    ++it;
    swap_saved();
    ChainFk(s, w, st, theta);
    const double next = SerialError<N>(task, target, r_d, weight, w, st);
    j_valid = false;
    if (!(next < err)) {
      UndoStep(st, theta);
      swap_saved();
      j_valid = true;
      st.frames_valid = false;
      if (!adaptive) {
        if (RescueAfterReject(set, err, &rescue)) stall = set.stall_iterations;
      } else if (DampAfterReject(true, set, &lambda, &nu)) {
        stall = set.stall_iterations;
      }
      continue;
    }
    if (adaptive) {
      DampAfterAccept(true, err, next, predicted, set, &lambda, &nu);
    } else {
      RescueAfterAccept(set, &rescue);
    }
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = next;
  }
  *iterations += it;
  return status;
}

}  // namespace

Status IterateSerial(const Rig& rig, const Settings& set, std::span<const Target> targets,
                     Workspace::Impl& w, StageWork& st, double* theta, int* iterations) {
  return st.serial_rows == 6 ? IterateSerialN<6>(rig, set, targets, w, st, theta, iterations)
                             : IterateSerialN<3>(rig, set, targets, w, st, theta, iterations);
}

double SerialSystem(const Rig& rig, std::span<const Target> targets, const Workspace::Impl& w,
                    StageWork& st) {
  const Task& task = rig.tasks[st.tasks[0]];
  const Target& target = targets[st.tasks[0]];
  const double weight = task.weight * target.weight;
  const Eigen::Matrix3d r_d = target.orientation.toRotationMatrix();
  if (st.serial_rows == 6) {
    SerialJacobian<6>(task, weight, w, st);
    return SerialError<6>(task, target, r_d, weight, w, st);
  }
  SerialJacobian<3>(task, weight, w, st);
  return SerialError<3>(task, target, r_d, weight, w, st);
}

}  // namespace rigel::ik::internal
