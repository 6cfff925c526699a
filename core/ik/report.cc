#include "core/ik/report.h"

#include "core/ik/solve.h"
#include "core/ik/validate.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {

void FillReport(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                const Workspace::Impl& w, SolveReport* report) {
  const Skeleton& s = rig.skeleton();
  const size_t ntasks = rig.tasks.size();
  report->position_error.resize(ntasks);
  report->angle_error.resize(ntasks);
  // One iterative stage whose last evaluation is of the final pose already holds the position,
  // orientation and pose tasks' errors (the same quantities as TaskError's, to rounding).
  const StageWork* st = nullptr;
  if (w.stages.size() == 1 && w.stages[0].frames_valid && IsIterative(w.stages[0].method)) {
    st = &w.stages[0];
  }
  for (size_t i = 0; i < ntasks; ++i) report->position_error[i] = -1.0;
  if (st) {
    for (size_t k = 0; k < st->tasks.size(); ++k) {
      const int t = st->tasks[k];
      const TaskType type = rig.tasks[t].type;
      if (type == TaskType::kPosition || type == TaskType::kPose ||
          type == TaskType::kOrientation) {
        report->position_error[t] = st->pos_err[k];
        report->angle_error[t] = st->ang_err[k];
      }
    }
  }
  for (size_t i = 0; i < ntasks; ++i) {
    if (report->position_error[i] >= 0.0) continue;
    TaskError(s, rig.tasks[i], targets[i], pose.world, &report->position_error[i],
              &report->angle_error[i]);
  }
  report->limbs.clear();
  for (size_t si = 0; si < w.stages.size(); ++si) {
    const StageWork& sw = w.stages[si];
    if (sw.method != Method::kTwoBone) continue;
    LimbSwivel limb;
    limb.stage = static_cast<int>(si);
    if (sw.pole_task >= 0 && rig.tasks[sw.pole_task].weight * targets[sw.pole_task].weight > 0) {
      limb.pole_task = sw.pole_task;
    }
    limb.jump = sw.swivel.jump;
    limb.pole_weight = sw.swivel.pole_weight;
    limb.pole_degenerate = sw.swivel.pole_degenerate;
    limb.reached = sw.reached;
    report->limbs.push_back(limb);
  }
  report->channels_on_limit.clear();
  report->channels_on_limit.reserve(s.num_channels());  // Grows once.
  for (int c = 0; c < s.num_channels(); ++c) {
    if (pose.channels[c] <= rig.min[c] || pose.channels[c] >= rig.max[c]) {
      report->channels_on_limit.push_back(c);
    }
  }
}

}  // namespace rigel::ik::internal
