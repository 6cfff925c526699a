#include "core/ik/iterate.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "core/ik/serial.h"
#include "core/ik/stage_fk.h"
#include "core/ik/stages.h"
#include "core/ik/step.h"
#include "core/ik/task_rows.h"
#include "core/ik/validate.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {
namespace {

bool TaskConverged(const StageWork& st, size_t k, const Settings& settings) {
  // A tolerance of 0 never counts as reached: the stage iterates to its cap.
  return st.pos_err[k] <= settings.position_tolerance &&
         st.ang_err[k] <= settings.angle_tolerance && settings.position_tolerance > 0 &&
         settings.angle_tolerance > 0;
}

bool Active(const Rig& rig, std::span<const Target> targets, int t) {
  return rig.tasks[t].weight * targets[t].weight > 0.0;
}

double DrivingError(const Rig& rig, std::span<const Target> targets, const StageWork& st,
                    const Settings& settings) {
  if (st.levels.size() == 1) return st.e.squaredNorm();
  size_t k = 0;
  for (const Level& lv : st.levels) {
    bool done = true;
    for (; k < st.tasks.size() && st.task_row[k] < lv.row_begin + lv.rows; ++k) {
      done = done && (!Active(rig, targets, st.tasks[k]) || TaskConverged(st, k, settings));
    }
    if (!done) return st.e.segment(lv.row_begin, lv.rows).squaredNorm();
  }
  return st.e.squaredNorm();
}

// Index of the highest priority level not yet within tolerance (levels.size() when all are).
int DrivingLevel(const Rig& rig, std::span<const Target> targets, const StageWork& st,
                 const Settings& settings) {
  size_t k = 0;
  for (size_t li = 0; li < st.levels.size(); ++li) {
    const Level& lv = st.levels[li];
    bool done = true;
    for (; k < st.tasks.size() && st.task_row[k] < lv.row_begin + lv.rows; ++k) {
      done = done && (!Active(rig, targets, st.tasks[k]) || TaskConverged(st, k, settings));
    }
    if (!done) return static_cast<int>(li);
  }
  return static_cast<int>(st.levels.size());
}

// Weighted squared error of priority level `level` (the whole system when level is past the
// last one).
double LevelError(const StageWork& st, int level) {
  if (level >= static_cast<int>(st.levels.size())) return st.e.squaredNorm();
  const Level& lv = st.levels[level];
  return st.e.segment(lv.row_begin, lv.rows).squaredNorm();
}

// True when every active task of the levels above `level` is within tolerance.
bool HigherLevelsConverged(const Rig& rig, std::span<const Target> targets, const StageWork& st,
                           const Settings& settings, int level) {
  if (level <= 0) return true;
  const Level& lv = st.levels[std::min<size_t>(level, st.levels.size()) - 1];
  for (size_t k = 0; k < st.tasks.size() && st.task_row[k] < lv.row_begin + lv.rows; ++k) {
    if (Active(rig, targets, st.tasks[k]) && !TaskConverged(st, k, settings)) return false;
  }
  return true;
}

// The weighted squared error at which every active task would just be within tolerance: the
// scale the chord-step rule (Iterate) aims at.
double ToleranceGoal(const Rig& rig, std::span<const Target> targets, const StageWork& st,
                     const Settings& settings) {
  double goal = 0.0;
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const int t = st.tasks[k];
    const Task& task = rig.tasks[t];
    const double w = task.weight * targets[t].weight;
    double tol2 = 0.0;
    if (task.type == TaskType::kPosition || task.type == TaskType::kPose) {
      tol2 += settings.position_tolerance * settings.position_tolerance;
    }
    if (task.type != TaskType::kPosition) {
      tol2 += settings.angle_tolerance * settings.angle_tolerance;
    }
    goal += w * w * tol2;
  }
  return goal;
}

// Uniform value in [0, 1) for restart `restart` and column `col`: a fixed hash (splitmix64), so
// every solve uses the same sequence of restart poses.
double RestartUnit(int restart, int col) {
  std::uint64_t z = (static_cast<std::uint64_t>(restart) << 32) + static_cast<std::uint64_t>(col);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

bool Converged(const Rig& rig, std::span<const Target> targets, const StageWork& st,
               const Settings& settings) {
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    if (Active(rig, targets, st.tasks[k]) && !TaskConverged(st, k, settings)) return false;
  }
  return true;
}

// The error the iteration drives down: the weighted squared error of the highest priority level

namespace {

// One run of the iteration from the current channel values. Leaves st.j/st.e/pos_err/ang_err
// for the returned (accepted) values.
Status Iterate(const Rig& rig, const Settings& set, std::span<const Target> targets,
               Workspace::Impl& w, StageWork& st, double* theta, int* iterations) {
  if (w.fast_paths && SerialEligible(rig, targets, st)) {
    return IterateSerial(rig, set, targets, w, st, theta, iterations);
  }
  const Skeleton& s = rig.skeleton();
  const Method method = st.method;
  StartFk(s, w, st, theta);
  // The Jacobian is filled lazily: not for a pose that turns out converged or a rejected trial.
  FillSystem(rig, targets, w, st, false);
  bool j_valid = false;
  int stall = 0;
  // Several priority levels: a step is judged lexicographically. It is kept when it lowers the
  // error of the driving level (the highest one not within tolerance) and leaves every level
  // above it within tolerance; the driving level is then re-read. (Comparing the driving errors
  // of the two poses instead compared different levels' errors whenever a lower level's step
  // pushed a higher one back out of tolerance: the foot then drifted off its target.)
  const bool multi = st.levels.size() > 1;
  int level = multi ? DrivingLevel(rig, targets, st, set) : 0;
  double err = multi ? LevelError(st, level) : DrivingError(rig, targets, st, set);
  auto trial_error = [&] {
    return multi ? LevelError(st, level) : DrivingError(rig, targets, st, set);
  };
  auto keeps_higher = [&] { return !multi || HigherLevelsConverged(rig, targets, st, set, level); };
  auto accepted = [&](double next) {
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = next;
    if (multi) {
      level = DrivingLevel(rig, targets, st, set);
      err = LevelError(st, level);
    }
  };
  // Every method accepts a step only when it lowers the driving error (seed 002: fixed-lambda
  // DLS, the pseudo-inverse, SVD and QR otherwise oscillate on unreachable targets, e.g. a knee
  // alternating between 2.3 and 26.3 degrees). After a rejection kDlsAdaptive damps harder,
  // kTranspose halves its step, and kDls/kPseudoInverse/kSvd/kQr retry with a damped least-squares
  // step (`rescue`, see RescueAfterReject), until their own step lowers the error again.
  const bool lm = method == Method::kDlsAdaptive;
  double rescue = 0.0;
  double lambda = set.lambda;
  if (method == Method::kDlsAdaptive && st.levels.size() == 1 && st.rows <= 6) {
    // Single effector: start the damping from the residual (at least 0.1 |e|). A far target
    // then takes shorter, better-aimed first steps (fewer max-step-scaled and rejected trials:
    // 6D arm median 10 -> 9 iterations, p75 34 -> 14); near the target it stays set.lambda.
    lambda = std::max(lambda, 0.1 * std::sqrt(err));
  }
  double nu = 2;
  bool chord_ok = false;
  double step_scale = 1.0;
  int it = 0;
  Status status = Status::kNotConverged;
  if (st.cols == 0 || st.rows == 0) {
    return Converged(rig, targets, st, set) ? Status::kConverged : Status::kUnreachable;
  }
  st.active_levels = static_cast<int>(st.levels.size());
  auto swap_saved = [&st] {
    std::swap(st.j, st.j_saved);
    std::swap(st.e, st.e_saved);
    std::swap(st.pos_err, st.pos_err_saved);
    std::swap(st.ang_err, st.ang_err_saved);
  };
  while (true) {
    if (Converged(rig, targets, st, set)) {
      status = Status::kConverged;
      break;
    }
    if (stall >= set.stall_iterations && it < set.max_iterations && st.active_levels > 1) {
      // A higher level stalls above tolerance while lower ones still pull (their steps' second
      // order effects): drop the lower levels and let the higher ones finish alone.
      const int driving = DrivingLevel(rig, targets, st, set);
      if (driving + 1 < st.active_levels) {
        st.active_levels = driving + 1;
        stall = 0;
        lambda = set.lambda;
        step_scale = 1.0;
      }
    }
    if (chord_ok && it < set.max_iterations && stall < set.stall_iterations) {
      // Reuse the last full step's Jacobian and factorization for the new residual (cheap:
      // no Jacobian, no factorization); kept only when it lowers the error.
      chord_ok = false;
      if (ChordStep(rig, st, set, theta)) {
        TakeStep(rig, st, theta);
        ++it;
        swap_saved();
        ChainFk(s, w, st, theta);
        FillSystem(rig, targets, w, st, false);
        const double next = trial_error();
        if (next < err && keeps_higher()) {
          // st.j holds the old Jacobian: stale for the new pose (filled lazily).
          // Chord steps converge linearly (rate r = next / err), a full step quadratically:
          // take another chord step only while the chord steps still needed to reach the
          // tolerance, at rate r, cost less than one full step.
          const double r = next / err;
          chord_ok = false;
          if (r < 0.25) {
            const double goal = ToleranceGoal(rig, targets, st, set);
            const double needed =
                next <= goal ? 0.0
                             : (goal > 0 && r > 0 ? std::log(goal / next) / std::log(r) : kInf);
            chord_ok = std::ceil(needed) <= st.full_over_chord;
          }
          std::swap(st.j, st.j_saved);  // Keep the factorized Jacobian in j_saved.
          accepted(next);
          j_valid = false;
          continue;
        }
        UndoStep(st, theta);
        swap_saved();
        st.frames_valid = false;
      }
    }
    if (!j_valid) {
      FillSystem(rig, targets, w, st, true);
      j_valid = true;
    }
    if (it >= set.max_iterations || stall >= set.stall_iterations) {
      status = Stationary(rig, st, theta) ? Status::kUnreachable : Status::kNotConverged;
      break;
    }
    if (multi) {
      // The lower levels act once the higher ones are within tolerance (until then their steps
      // only fight the higher levels' convergence through second-order effects).
      st.active_levels = std::min(static_cast<int>(st.levels.size()), level + 1);
    }
    if (rescue > 0) {
      ComputeStep(rig, st, Method::kDls, std::max(rescue, lambda), set, theta);
    } else {
      ComputeStep(rig, st, method, lambda, set, theta);
    }
    double predicted = 0.0;
    if (method == Method::kDlsAdaptive && st.levels.size() == 1) {
      st.e_work = st.e;
      st.e_work.noalias() -= st.j * st.x;
      predicted = err - st.e_work.squaredNorm();
    }
    if (method == Method::kTranspose) st.dtheta *= step_scale;
    TakeStep(rig, st, theta);
    ++it;
    // The trial system goes into the spare buffers; the accepted one stays in *_saved.
    swap_saved();
    ChainFk(s, w, st, theta);
    FillSystem(rig, targets, w, st, false);
    j_valid = false;
    if (multi && level > 0 && !keeps_higher()) {
      // Corrector: a lower level's step moves along the higher levels' linearized null space,
      // and their curvature takes them back out of tolerance (second order in the step). Up to
      // three Gauss-Newton steps of the higher levels alone restore them before the step is
      // judged; the corrected pose is the trial (UndoStep still restores the accepted one).
      const int active = st.active_levels;
      const bool bias = st.last_bias;
      st.active_levels = level;
      for (int k = 0; k < 3 && !keeps_higher(); ++k) {
        FillSystem(rig, targets, w, st, true);
        ComputeStep(rig, st, Method::kDls, set.lambda_min, set, theta);
        for (int c = 0; c < st.cols; ++c) {
          const int ch = st.col_channel[c];
          theta[ch] = std::clamp(theta[ch] + st.dtheta[c], rig.min[ch], rig.max[ch]);
        }
        ChainFk(s, w, st, theta);
        FillSystem(rig, targets, w, st, false);
      }
      st.active_levels = active;
      st.last_bias = bias;
    }
    const double next = trial_error();
    // The fixed methods test steps without the preferred-angle bias only: a bias step moves along
    // the task's null space and may raise its error to second order (taken back by the next
    // step).
    if (lm || method == Method::kTranspose || !st.last_bias) {
      if (!(next < err) || !keeps_higher()) {
        // Reject: restore (the joint frames are recomputed before their next use), damp harder
        // (or halve the transpose step) and retry.
        UndoStep(st, theta);
        swap_saved();
        j_valid = true;
        st.frames_valid = false;
        if (method == Method::kTranspose) {
          step_scale *= 0.5;
          if (step_scale < 1e-12) stall = set.stall_iterations;
        } else if (!lm) {
          if (RescueAfterReject(set, err, &rescue)) stall = set.stall_iterations;
        } else if (DampAfterReject(st.levels.size() == 1, set, &lambda, &nu)) {
          stall = set.stall_iterations;
        }
        continue;
      }
      // After an accepted full step the next step may reuse its Jacobian and factorization (a
      // chord step, kept only if it lowers the error). Only for larger systems (several
      // effectors), where the Jacobian and its factorization cost more than the FK: on a single
      // 3/6-row chain a full Gauss-Newton step is cheap and converges faster.
      chord_ok = lm && st.fast && st.rows > 6 && !st.last_bias;
      if (method == Method::kTranspose) {
        step_scale = std::min(1.0, step_scale * 2.0);
      } else if (!lm) {
        RescueAfterAccept(set, &rescue);
      } else {
        DampAfterAccept(st.levels.size() == 1, err, next, predicted, set, &lambda, &nu);
      }
    }
    accepted(next);
  }
  *iterations += it;
  return status;
}

}  // namespace

Status RunIterative(const Rig& rig, int stage_index, std::span<const Target> targets, Pose& pose,
                    Workspace::Impl& w, int* iterations) {
  static const Settings kDefault{};
  const Settings& set = rig.stages.empty() ? kDefault : rig.stages[stage_index].settings;
  StageWork& st = w.stages[stage_index];
  double* theta = pose.channels.data();
  for (int c = 0; c < st.cols; ++c) {
    st.scale[c] = rig.strength[st.col_joint[c]];
  }
  ClampToLimits(rig, st, theta);
  Status status = Iterate(rig, set, targets, w, st, theta, iterations);
  if (status == Status::kConverged || set.restarts <= 0 || st.cols == 0) return status;
  // Restarts from a fixed sequence of poses inside the limits; keep the best end.
  double best_err = st.e.squaredNorm();
  Status best_status = status;
  for (int c = 0; c < st.cols; ++c) st.best[c] = theta[st.col_channel[c]];
  for (int r = 0; r < set.restarts; ++r) {
    for (int c = 0; c < st.cols; ++c) {
      const int ch = st.col_channel[c];
      double lo = rig.min[ch], hi = rig.max[ch];
      if (st.col_rotation[c]) {
        // A rotation channel without a finite range restarts within one turn of its limits.
        if (!std::isfinite(lo)) lo = std::isfinite(hi) ? hi - 2 * kPi : -kPi;
        if (!std::isfinite(hi)) hi = lo + 2 * kPi;
      }
      theta[ch] = std::isfinite(lo) && std::isfinite(hi)
                      ? std::clamp(lo + RestartUnit(r, c) * (hi - lo), rig.min[ch], rig.max[ch])
                      : st.best[c];
    }
    ++w.restarts;
    status = Iterate(rig, set, targets, w, st, theta, iterations);
    if (status == Status::kConverged) return status;
    const double e2 = st.e.squaredNorm();
    if (e2 < best_err) {
      best_err = e2;
      best_status = status;
      for (int c = 0; c < st.cols; ++c) st.best[c] = theta[st.col_channel[c]];
    }
  }
  for (int c = 0; c < st.cols; ++c) theta[st.col_channel[c]] = st.best[c];
  st.frames_valid = false;
  return best_status;
}

bool EvaluateStage(const Rig& rig, std::span<const Target> targets,
                   std::span<const double> channels, Workspace& workspace, int stage, bool serial,
                   Eigen::MatrixXd* jacobian, Eigen::VectorXd* error) {
  if (!workspace.IsPreparedFor(rig) || targets.size() != rig.tasks.size()) return false;
  if (channels.size() != static_cast<size_t>(rig.skeleton().num_channels())) return false;
  Workspace::Impl& w = workspace.impl();
  if (stage < 0 || stage >= static_cast<int>(w.stages.size())) return false;
  StageWork& st = w.stages[stage];
  if (!IsIterative(st.method)) return false;
  if (serial && !SerialEligible(rig, targets, st)) return false;
  for (int c = 0; c < st.cols; ++c) st.scale[c] = rig.strength[st.col_joint[c]];
  ChainFk(rig.skeleton(), w, st, channels.data());
  if (serial) {
    SerialSystem(rig, targets, w, st);
  } else {
    FillSystem(rig, targets, w, st, true);
  }
  st.frames_valid = false;
  *error = st.e;
  jacobian->setZero(st.rows, rig.skeleton().num_channels());
  for (int c = 0; c < st.cols; ++c) jacobian->col(st.col_channel[c]) = st.j.col(c);
  return true;
}

}  // namespace rigel::ik::internal
