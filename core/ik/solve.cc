#include "core/ik/solve.h"

#include <algorithm>
#include <string>

#include "core/ik/ik_fk_blend.h"
#include "core/ik/plan.h"
#include "core/ik/report.h"
#include "core/ik/stage_fk.h"
#include "core/ik/stages.h"
#include "core/ik/two_bone.h"
#include "core/ik/validate.h"
#include "core/skeleton.h"

namespace rigel::ik {

using internal::IsIterative;
using internal::ValidateFrame;

namespace {

template <typename Job>
bool ValidateStageJob(const Job& job, bool iterative, std::string* error) {
  if (!job.rig || !job.pose || !job.workspace) return Fail(error, "rig, pose or workspace is null");
  if (!job.workspace->IsPreparedFor(*job.rig)) {
    return Fail(error, "workspace is not prepared for this rig");
  }
  const int nstages = static_cast<int>(std::max<size_t>(job.rig->stages.size(), 1));
  if (job.stage < 0 || job.stage >= nstages) return Fail(error, "stage out of range");
  const Method m =
      job.rig->stages.empty() ? Method::kDlsAdaptive : job.rig->stages[job.stage].method;
  if (iterative != IsIterative(m) || m == Method::kTwoBone) {
    return Fail(error, "stage method does not match the job");
  }
  return ValidateFrame(*job.rig, job.targets, *job.pose, error);
}

// The position target of the effector `joint` this frame (the first active kPosition/kPose task on
// it), else the effector's current position.
Eigen::Vector3d EffectorGoal(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                             int joint) {
  for (size_t t = 0; t < rig.tasks.size(); ++t) {
    const Task& task = rig.tasks[t];
    if (task.joint == joint && rig.tasks[t].weight * targets[t].weight > 0 &&
        (task.type == TaskType::kPosition || task.type == TaskType::kPose)) {
      return targets[t].position;
    }
  }
  return pose.world[joint].translation();
}

// Pole tasks of iterative stages keep the swivel continuous from frame to frame, as a kTwoBone
// stage does (Swivel's rule, core/ik/two_bone.h): where the pole nears the limb's axis (root ->
// effector goal) or the goal crosses the pole's line, the solve aims at a pole turned from the
// previous frame's elbow direction towards the given one. Returns the targets the stages solve
// for (the given ones when the rig has no such pole).
std::span<const Target> AimPoles(const Rig& rig, std::span<const Target> targets, Pose& pose,
                                 Workspace::Impl& w) {
  bool any = false;
  for (const Workspace::Impl::IterativePole& p : w.poles) {
    any = any || rig.tasks[p.task].weight * targets[p.task].weight > 0;
  }
  if (!any) return targets;
  const Skeleton& s = rig.skeleton();
  pose.UpdateWorld(s);
  w.pole_targets.assign(targets.begin(), targets.end());
  for (Workspace::Impl::IterativePole& p : w.poles) {
    const Task& task = rig.tasks[p.task];
    const double t_prev = p.swivel.Begin();
    p.axis.setZero();
    if (task.weight * targets[p.task].weight <= 0) {
      p.swivel.Reset();
      continue;
    }
    const Eigen::Vector3d root = pose.world[task.pole_root].translation();
    const Eigen::Vector3d axis = EffectorGoal(rig, targets, pose, task.joint) - root;
    if (axis.norm() <= 1e-12) continue;
    p.axis = axis.normalized();
    const Eigen::Vector3d q = targets[p.task].position - root;
    const Eigen::Vector3d want = SwivelTarget(&p.swivel, t_prev, p.axis, true, q, &p.prev);
    if (want.norm() <= 0) continue;
    const Eigen::Vector3d along = p.axis * p.axis.dot(q);
    const double off = std::max((q - along).norm(), 1e-3 * q.norm());
    w.pole_targets[p.task].position = root + along + want.normalized() * off;
  }
  return w.pole_targets;
}

// After the solve: each iterative pole's elbow direction as solved, and its jump.
void RecordPoles(const Rig& rig, std::span<const Target> aimed, const Pose& pose,
                 Workspace::Impl& w) {
  if (aimed.data() != w.pole_targets.data()) return;
  for (Workspace::Impl::IterativePole& p : w.poles) {
    if (p.axis.squaredNorm() == 0) continue;
    const Task& task = rig.tasks[p.task];
    const Eigen::Vector3d elbow =
        pose.world[task.pole_mid].translation() - pose.world[task.pole_root].translation();
    if ((elbow - p.axis * p.axis.dot(elbow)).norm() <= 1e-9 * elbow.norm()) continue;
    SwivelRecord(&p.swivel, p.axis, elbow, p.prev);
  }
}

// The runner of a stage's method (its row of core/ik/methods.h).
internal::StageRunner RunnerFor(Method method) { return RowOf(method).run; }

}  // namespace

bool IterativeJob::Validate(std::string* error) const {
  return ValidateStageJob(*this, true, error);
}

bool IterativeJob::Run() const {
  if (!Validate()) return false;
  int iterations = 0;
  workspace->impl().restarts = 0;
  const Status status =
      internal::RunIterative(*rig, stage, targets, *pose, workspace->impl(), &iterations);
  if (report) {
    report->status = status;
    report->iterations += iterations;
    report->restarts += workspace->impl().restarts;
  }
  return true;
}

bool CcdJob::Validate(std::string* error) const {
  if (!ValidateStageJob(*this, false, error)) return false;
  if (rig->stages.empty() || rig->stages[stage].method != Method::kCcd) {
    return Fail(error, "stage is not a CCD stage");
  }
  return true;
}

bool CcdJob::Run() const {
  if (!Validate()) return false;
  int iterations = 0;
  const Status status =
      internal::RunCcd(*rig, stage, targets, *pose, workspace->impl(), &iterations);
  if (report) {
    report->status = status;
    report->iterations += iterations;
  }
  return true;
}

bool Solve(const Rig& rig, std::span<const Target> targets, Pose& pose, Workspace& workspace,
           SolveReport* report, const BetweenStages* between) {
  std::string error;
  auto invalid = [&](const std::string& message) {
    if (report) {
      report->status = Status::kInvalidInput;
      report->iterations = 0;
      report->message = message;
    }
    return false;
  };
  if (!workspace.IsPreparedFor(rig) && !workspace.Prepare(rig, &error)) return invalid(error);
  if (!ValidateFrame(rig, targets, pose, &error)) return invalid(error);
  const Skeleton& s = rig.skeleton();
  Workspace::Impl& w = workspace.impl();
  // The animated pose, kept for the IK/FK blend (before the limits act on it).
  const bool blend = internal::WantsIkFkBlend(rig, targets);
  if (blend) std::copy(pose.channels.begin(), pose.channels.end(), w.fk_channels.begin());
  for (int c = 0; c < s.num_channels(); ++c) {
    pose.channels[c] = std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
  }
  w.restarts = 0;
  const std::span<const Target> aimed = AimPoles(rig, targets, pose, w);
  int iterations = 0;
  bool all_converged = true;
  bool any_unreachable = false;
  int failed_stage = -1;
  for (size_t si = 0; si < w.stages.size(); ++si) {
    const Method m = w.stages[si].method;
    const int idx = static_cast<int>(si);
    const Status st = RunnerFor(m)(rig, idx, aimed, pose, w, &iterations);
    if (st == Status::kInvalidInput) return invalid("stage " + std::to_string(si) + " failed");
    if (st != Status::kConverged) {
      all_converged = false;
      if (failed_stage < 0) failed_stage = idx;
    }
    if (st == Status::kUnreachable) any_unreachable = true;
    if (between != nullptr && si + 1 < w.stages.size() && between->wants(idx)) {
      pose.UpdateWorld(s, 0);
      if (!between->run(idx, pose, &error)) return invalid(error);
    }
  }
  internal::UpdateWorldAfterSolve(s, w, pose);
  RecordPoles(rig, aimed, pose, w);
  if (report) {
    report->status = all_converged     ? Status::kConverged
                     : any_unreachable ? Status::kUnreachable
                                       : Status::kNotConverged;
    report->iterations = iterations;
    report->restarts = w.restarts;
    report->message.reserve(64);  // Grows once; later solves reuse it.
    report->message.clear();
    if (failed_stage >= 0) {
      report->message = "stage ";
      report->message += std::to_string(failed_stage);
      report->message += " stopped above tolerance";
    }
    internal::FillReport(rig, targets, pose, w, report);
  }
  if (blend) {
    // The report describes the solve; the blend then moves the chains back towards the animation.
    internal::IkFkJointWeights(rig, targets, w, w.joint_blend);
    int first = s.num_joints();
    IkFkBlendJob job{.skeleton = &s,
                     .fk = w.fk_channels,
                     .ik = pose.channels,
                     .weights = w.joint_blend,
                     .output = pose.channels,
                     .first_changed = &first};
    job.Run();
    if (first < s.num_joints()) pose.UpdateWorld(s, first);
  }
  return true;
}

}  // namespace rigel::ik
