// Cyclic coordinate descent stages (Method::kCcd): per sweep, every channel from the effector
// inward turns (rotation: in the plane normal to its world axis, seed 002 "3D CCD") or slides
// (translation) to bring the effector point towards its target, then is clamped to its limits.
// Position goals only (kPosition, the position of kPose); other tasks count for convergence.
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "core/ik/iterate.h"
#include "core/ik/stage_fk.h"
#include "core/ik/stages.h"
#include "core/ik/step.h"
#include "core/ik/task_rows.h"
#include "core/ik/validate.h"
#include "core/skeleton.h"

namespace rigel::ik::internal {

using Eigen::Vector3d;

bool PlanCcd(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
             std::string* error) {
  (void)stage;
  bool any = false;
  for (const int t : st.tasks) {
    any |= rig.tasks[t].type == TaskType::kPosition || rig.tasks[t].type == TaskType::kPose;
  }
  if (!any) return Fail(error, where + ": CCD needs a position or pose task");
  return true;
}

Status RunCcd(const Rig& rig, int stage_index, std::span<const Target> targets, Pose& pose,
              Workspace::Impl& w, int* iterations) {
  const Skeleton& s = rig.skeleton();
  const Settings& set = rig.stages[stage_index].settings;
  StageWork& st = w.stages[stage_index];
  double* theta = pose.channels.data();
  ClampToLimits(rig, st, theta);
  int it = 0;
  double err = kInf;
  int stall = 0;
  Status status = Status::kNotConverged;
  while (true) {
    ChainFk(s, w, st, theta);
    const double next = FillSystem(rig, targets, w, st, false);
    if (Converged(rig, targets, st, set)) {
      status = Status::kConverged;
      break;
    }
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = next;
    if (it >= set.max_iterations || stall >= set.stall_iterations) {
      FillSystem(rig, targets, w, st, true);
      status = Stationary(rig, st, theta) ? Status::kUnreachable : Status::kNotConverged;
      break;
    }
    ++it;
    for (size_t k = 0; k < st.tasks.size(); ++k) {
      const Task& task = rig.tasks[st.tasks[k]];
      const Target& target = targets[st.tasks[k]];
      if (task.type != TaskType::kPosition && task.type != TaskType::kPose) continue;
      if (task.weight * target.weight <= 0) continue;
      if (k > 0) ChainFk(s, w, st, theta);
      Vector3d mask = Vector3d::Zero();
      for (int axis = 0; axis < 3; ++axis) mask[axis] = (task.position_axes >> axis) & 1;
      Vector3d p_e = w.pos[task.joint] + w.rot[task.joint] * task.offset;
      const Vector3d& g = target.position;
      const std::vector<int>& cols = st.task_cols[k];
      for (auto rit = cols.rbegin(); rit != cols.rend(); ++rit) {
        const int c = *rit;
        const int ch = st.col_channel[c];
        const Vector3d& a = st.axis[c];
        double delta;
        if (st.col_rotation[c]) {
          const Vector3d u = p_e - st.pivot[c];
          // Masked goal: free axes follow the effector.
          const Vector3d v =
              (g - st.pivot[c]).cwiseProduct(mask) + u.cwiseProduct(Vector3d::Ones() - mask);
          const Vector3d u_p = u - a * a.dot(u);
          const Vector3d v_p = v - a * a.dot(v);
          if (u_p.squaredNorm() < 1e-24 || v_p.squaredNorm() < 1e-24) continue;
          delta = std::atan2(a.dot(u_p.cross(v_p)), u_p.dot(v_p));
        } else {
          delta = a.dot((g - p_e).cwiseProduct(mask));
        }
        const double next_value = std::clamp(theta[ch] + delta, rig.min[ch], rig.max[ch]);
        delta = next_value - theta[ch];
        theta[ch] = next_value;
        if (st.col_rotation[c]) {
          p_e = st.pivot[c] + Eigen::AngleAxisd(delta, a) * (p_e - st.pivot[c]);
        } else {
          p_e += a * delta;
        }
      }
    }
  }
  *iterations += it;
  return status;
}

}  // namespace rigel::ik::internal
