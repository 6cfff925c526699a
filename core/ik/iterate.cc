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

// One run of the iteration from the current channel values (Iterate): the state its steps share.
// Leaves st.j/st.e/pos_err/ang_err for the returned (accepted) values.
class Iteration {
 public:
  Iteration(const Rig& rig, const Settings& set, std::span<const Target> targets,
            Workspace::Impl& w, StageWork& st, double* theta)
      : rig_(rig),
        set_(set),
        targets_(targets),
        w_(w),
        st_(st),
        theta_(theta),
        s_(rig.skeleton()),
        method_(st.method),
        lm_(st.method == Method::kDlsAdaptive) {}

  Status Run(int* iterations);

 private:
  double TrialError() {
    return multi_ ? LevelError(st_, level_) : DrivingError(rig_, targets_, st_, set_);
  }
  bool KeepsHigher() { return !multi_ || HigherLevelsConverged(rig_, targets_, st_, set_, level_); }
  void Accepted(double next) {
    stall_ = next > err_ * (1.0 - set_.stall_fraction) ? stall_ + 1 : 0;
    err_ = next;
    if (multi_) {
      level_ = DrivingLevel(rig_, targets_, st_, set_);
      err_ = LevelError(st_, level_);
    }
  }
  void SwapSaved() {
    std::swap(st_.j, st_.j_saved);
    std::swap(st_.e, st_.e_saved);
    std::swap(st_.pos_err, st_.pos_err_saved);
    std::swap(st_.ang_err, st_.ang_err_saved);
  }
  void DropStalledLowerLevels();
  bool ChordStepAccepted();
  bool FullStep();
  void CorrectHigherLevels();
  void RejectStep();

  const Rig& rig_;
  const Settings& set_;
  const std::span<const Target> targets_;
  Workspace::Impl& w_;
  StageWork& st_;
  double* const theta_;
  const Skeleton& s_;
  const Method method_;
  const bool lm_;
  bool multi_ = false;
  int level_ = 0;
  double err_ = 0.0;
  bool j_valid_ = false;
  int stall_ = 0;
  double rescue_ = 0.0;
  double lambda_ = 0.0;
  double nu_ = 2;
  bool chord_ok_ = false;
  double step_scale_ = 1.0;
  int it_ = 0;
};

Status Iteration::Run(int* iterations) {
  StartFk(s_, w_, st_, theta_);
  // The Jacobian is filled lazily: not for a pose that turns out converged or a rejected trial.
  FillSystem(rig_, targets_, w_, st_, false);
  // Several priority levels: a step is judged lexicographically. It is kept when it lowers the
  // error of the driving level (the highest one not within tolerance) and leaves every level
  // above it within tolerance; the driving level is then re-read. (Comparing the driving errors
  // of the two poses instead compared different levels' errors whenever a lower level's step
  // pushed a higher one back out of tolerance: the foot then drifted off its target.)
  multi_ = st_.levels.size() > 1;
  level_ = multi_ ? DrivingLevel(rig_, targets_, st_, set_) : 0;
  err_ = multi_ ? LevelError(st_, level_) : DrivingError(rig_, targets_, st_, set_);
  // Every method accepts a step only when it lowers the driving error (seed 002: fixed-lambda
  // DLS, the pseudo-inverse, SVD and QR otherwise oscillate on unreachable targets, e.g. a knee
  // alternating between 2.3 and 26.3 degrees). After a rejection kDlsAdaptive damps harder,
  // kTranspose halves its step, and kDls/kPseudoInverse/kSvd/kQr retry with a damped least-squares
  // step (`rescue`, see RescueAfterReject), until their own step lowers the error again.
  lambda_ = set_.lambda;
  if (method_ == Method::kDlsAdaptive && st_.levels.size() == 1 && st_.rows <= 6) {
    // Single effector: start the damping from the residual (at least 0.1 |e|). A far target
    // then takes shorter, better-aimed first steps (fewer max-step-scaled and rejected trials:
    // 6D arm median 10 -> 9 iterations, p75 34 -> 14); near the target it stays set.lambda.
    lambda_ = std::max(lambda_, 0.1 * std::sqrt(err_));
  }
  Status status = Status::kNotConverged;
  if (st_.cols == 0 || st_.rows == 0) {
    return Converged(rig_, targets_, st_, set_) ? Status::kConverged : Status::kUnreachable;
  }
  st_.active_levels = static_cast<int>(st_.levels.size());
  while (true) {
    if (Converged(rig_, targets_, st_, set_)) {
      status = Status::kConverged;
      break;
    }
    DropStalledLowerLevels();
    if (chord_ok_ && it_ < set_.max_iterations && stall_ < set_.stall_iterations &&
        ChordStepAccepted()) {
      continue;
    }
    if (!j_valid_) {
      FillSystem(rig_, targets_, w_, st_, true);
      j_valid_ = true;
    }
    if (it_ >= set_.max_iterations || stall_ >= set_.stall_iterations) {
      status = Stationary(rig_, st_, theta_) ? Status::kUnreachable : Status::kNotConverged;
      break;
    }
    FullStep();
  }
  *iterations += it_;
  return status;
}

void Iteration::DropStalledLowerLevels() {
  if (stall_ >= set_.stall_iterations && it_ < set_.max_iterations && st_.active_levels > 1) {
    // A higher level stalls above tolerance while lower ones still pull (their steps' second
    // order effects): drop the lower levels and let the higher ones finish alone.
    const int driving = DrivingLevel(rig_, targets_, st_, set_);
    if (driving + 1 < st_.active_levels) {
      st_.active_levels = driving + 1;
      stall_ = 0;
      lambda_ = set_.lambda;
      step_scale_ = 1.0;
    }
  }
}

// Reuse the last full step's Jacobian and factorization for the new residual (cheap: no
// Jacobian, no factorization); kept only when it lowers the error. False when there was no
// chord step or it was not kept (the accepted pose restored).
bool Iteration::ChordStepAccepted() {
  chord_ok_ = false;
  if (!ChordStep(rig_, st_, set_, theta_)) return false;
  TakeStep(rig_, st_, theta_);
  ++it_;
  SwapSaved();
  ChainFk(s_, w_, st_, theta_);
  FillSystem(rig_, targets_, w_, st_, false);
  const double next = TrialError();
  if (next < err_ && KeepsHigher()) {
    // st.j holds the old Jacobian: stale for the new pose (filled lazily).
    // Chord steps converge linearly (rate r = next / err), a full step quadratically:
    // take another chord step only while the chord steps still needed to reach the
    // tolerance, at rate r, cost less than one full step.
    const double r = next / err_;
    chord_ok_ = false;
    if (r < 0.25) {
      const double goal = ToleranceGoal(rig_, targets_, st_, set_);
      const double needed =
          next <= goal ? 0.0 : (goal > 0 && r > 0 ? std::log(goal / next) / std::log(r) : kInf);
      chord_ok_ = std::ceil(needed) <= st_.full_over_chord;
    }
    std::swap(st_.j, st_.j_saved);  // Keep the factorized Jacobian in j_saved.
    Accepted(next);
    j_valid_ = false;
    return true;
  }
  UndoStep(st_, theta_);
  SwapSaved();
  st_.frames_valid = false;
  return false;
}

// One full step: computed with the current Jacobian, taken, judged; false when it was rejected.
bool Iteration::FullStep() {
  if (multi_) {
    // The lower levels act once the higher ones are within tolerance (until then their steps
    // only fight the higher levels' convergence through second-order effects).
    st_.active_levels = std::min(static_cast<int>(st_.levels.size()), level_ + 1);
  }
  if (rescue_ > 0) {
    ComputeStep(rig_, st_, Method::kDls, std::max(rescue_, lambda_), set_, theta_);
  } else {
    ComputeStep(rig_, st_, method_, lambda_, set_, theta_);
  }
  double predicted = 0.0;
  if (method_ == Method::kDlsAdaptive && st_.levels.size() == 1) {
    st_.e_work = st_.e;
    st_.e_work.noalias() -= st_.j * st_.x;
    predicted = err_ - st_.e_work.squaredNorm();
  }
  if (method_ == Method::kTranspose) st_.dtheta *= step_scale_;
  TakeStep(rig_, st_, theta_);
  ++it_;
  // The trial system goes into the spare buffers; the accepted one stays in *_saved.
  SwapSaved();
  ChainFk(s_, w_, st_, theta_);
  FillSystem(rig_, targets_, w_, st_, false);
  j_valid_ = false;
  if (multi_ && level_ > 0 && !KeepsHigher()) CorrectHigherLevels();
  const double next = TrialError();
  // The fixed methods test steps without the preferred-angle bias only: a bias step moves along
  // the task's null space and may raise its error to second order (taken back by the next
  // step).
  if (lm_ || method_ == Method::kTranspose || !st_.last_bias) {
    if (!(next < err_) || !KeepsHigher()) {
      RejectStep();
      return false;
    }
    // After an accepted full step the next step may reuse its Jacobian and factorization (a
    // chord step, kept only if it lowers the error). Only for larger systems (several
    // effectors), where the Jacobian and its factorization cost more than the FK: on a single
    // 3/6-row chain a full Gauss-Newton step is cheap and converges faster.
    chord_ok_ = lm_ && st_.fast && st_.rows > 6 && !st_.last_bias;
    if (method_ == Method::kTranspose) {
      step_scale_ = std::min(1.0, step_scale_ * 2.0);
    } else if (!lm_) {
      RescueAfterAccept(set_, &rescue_);
    } else {
      DampAfterAccept(st_.levels.size() == 1, err_, next, predicted, set_, &lambda_, &nu_);
    }
  }
  Accepted(next);
  return true;
}

// Corrector: a lower level's step moves along the higher levels' linearized null space,
// and their curvature takes them back out of tolerance (second order in the step). Up to
// three Gauss-Newton steps of the higher levels alone restore them before the step is
// judged; the corrected pose is the trial (UndoStep still restores the accepted one).
void Iteration::CorrectHigherLevels() {
  const int active = st_.active_levels;
  const bool bias = st_.last_bias;
  st_.active_levels = level_;
  for (int k = 0; k < 3 && !KeepsHigher(); ++k) {
    FillSystem(rig_, targets_, w_, st_, true);
    ComputeStep(rig_, st_, Method::kDls, set_.lambda_min, set_, theta_);
    for (int c = 0; c < st_.cols; ++c) {
      const int ch = st_.col_channel[c];
      theta_[ch] = std::clamp(theta_[ch] + st_.dtheta[c], rig_.min[ch], rig_.max[ch]);
    }
    ChainFk(s_, w_, st_, theta_);
    FillSystem(rig_, targets_, w_, st_, false);
  }
  st_.active_levels = active;
  st_.last_bias = bias;
}

// Reject: restore (the joint frames are recomputed before their next use), damp harder
// (or halve the transpose step) and retry.
void Iteration::RejectStep() {
  UndoStep(st_, theta_);
  SwapSaved();
  j_valid_ = true;
  st_.frames_valid = false;
  if (method_ == Method::kTranspose) {
    step_scale_ *= 0.5;
    if (step_scale_ < 1e-12) stall_ = set_.stall_iterations;
  } else if (!lm_) {
    if (RescueAfterReject(set_, err_, &rescue_)) stall_ = set_.stall_iterations;
  } else if (DampAfterReject(st_.levels.size() == 1, set_, &lambda_, &nu_)) {
    stall_ = set_.stall_iterations;
  }
}

// One run of the iteration from the current channel values. Leaves st.j/st.e/pos_err/ang_err
// for the returned (accepted) values.
Status Iterate(const Rig& rig, const Settings& set, std::span<const Target> targets,
               Workspace::Impl& w, StageWork& st, double* theta, int* iterations) {
  if (w.fast_paths && SerialEligible(rig, targets, st)) {
    return IterateSerial(rig, set, targets, w, st, theta, iterations);
  }
  return Iteration(rig, set, targets, w, st, theta).Run(iterations);
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
