#include "core/ik/task_rows.h"

#include <cmath>

#include "core/ik/solve.h"
#include "core/skeleton.h"

namespace rigel::ik {
namespace internal {

using Eigen::Vector3d;

Vector3d ScaledAxis(Eigen::Quaterniond q) {
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  const Vector3d v = q.vec();
  const double s = v.norm();
  if (s < 1e-300) return 2.0 * v;
  return v * (2.0 * std::atan2(s, q.w()) / s);
}

Vector3d AimRotation(const Vector3d& a, const Vector3d& d) {
  const Vector3d axis = a.cross(d);
  const double s = axis.norm();
  const double c = a.dot(d);
  if (s > 1e-15) return axis * (std::atan2(s, c) / s);
  if (c >= 0) return Vector3d::Zero();
  return AnyPerpendicular(a) * kPi;
}

int PositionRowCount(const Task& t) {
  return ((t.position_axes & 1) ? 1 : 0) + ((t.position_axes & 2) ? 1 : 0) +
         ((t.position_axes & 4) ? 1 : 0);
}

int TaskRowCount(const Task& t) {
  switch (t.type) {
    case TaskType::kPosition:
      return PositionRowCount(t);
    case TaskType::kOrientation:
      return 3;
    case TaskType::kPose:
      return PositionRowCount(t) + 3;
    case TaskType::kAim:
      return 2;
    case TaskType::kPole:
      return 1;
  }
  return 0;
}

TaskErrors PositionRows(const Task& task, const Target& target, double weight, const Vector3d& p_e,
                        const Columns& columns, std::span<const int> cols, const RowBlock& out) {
  const Vector3d err = target.position - p_e;
  const Vector3d q = task.alternate_jacobian ? target.position : p_e;
  if (out.j) {
    const bool all_axes = (task.position_axes & 7) == 7;
    for (const int c : cols) {
      const Vector3d v =
          weight * PointVelocity(columns.axis[c], columns.pivot[c], columns.rotation[c], q);
      double* o = out.j + static_cast<size_t>(c) * out.ld + out.row;
      if (all_axes) {
        o[0] = v.x();
        o[1] = v.y();
        o[2] = v.z();
      } else {
        int n = 0;
        for (int axis = 0; axis < 3; ++axis) {
          if (task.position_axes & (1 << axis)) o[n++] = v[axis];
        }
      }
    }
  }
  double sq = 0.0;
  int row = out.row;
  for (int axis = 0; axis < 3; ++axis) {
    if (!(task.position_axes & (1 << axis))) continue;
    sq += err[axis] * err[axis];
    out.e[row] = weight * err[axis];
    ++row;
  }
  return {std::sqrt(sq), 0.0};
}

TaskErrors OrientationRows(const Target& target, double weight, const Eigen::Matrix3d& r_e,
                           const Columns& columns, std::span<const int> cols, const RowBlock& out) {
  const Vector3d err = RotationError(target.orientation, r_e);
  for (int axis = 0; axis < 3; ++axis) out.e[out.row + axis] = weight * err[axis];
  if (out.j) {
    for (const int c : cols) {
      const Vector3d w = weight * AngularVelocity(columns.axis[c], columns.rotation[c]);
      double* o = out.j + static_cast<size_t>(c) * out.ld + out.row;
      o[0] = w.x();
      o[1] = w.y();
      o[2] = w.z();
    }
  }
  return {0.0, err.norm()};
}

TaskErrors PoseRows(const Task& task, const Target& target, double weight, const Vector3d& p_e,
                    const Eigen::Matrix3d& r_e, const Columns& columns, std::span<const int> cols,
                    const RowBlock& out) {
  const TaskErrors position = PositionRows(task, target, weight, p_e, columns, cols, out);
  RowBlock below = out;
  below.row += PositionRowCount(task);
  const TaskErrors orientation = OrientationRows(target, weight, r_e, columns, cols, below);
  return {position.position, orientation.angle};
}

TaskErrors AimRows(const Task& task, const Target& target, double weight,
                   const Eigen::Matrix3d& r_joint, const Vector3d& p_e, const Columns& columns,
                   std::span<const int> cols, const RowBlock& out) {
  const Vector3d a = r_joint * task.aim_axis;
  const Vector3d to = target.position - p_e;
  const double dist = to.norm();
  const Vector3d d = dist > 1e-12 ? Vector3d(to / dist) : a;
  const Vector3d rv = AimRotation(a, d);
  const Vector3d u1 = AnyPerpendicular(a);
  const Vector3d u2 = a.cross(u1);
  out.e[out.row] = weight * u1.dot(rv);
  out.e[out.row + 1] = weight * u2.dot(rv);
  if (out.j) {
    const double inv = dist > 1e-12 ? 1.0 / dist : 0.0;
    for (const int c : cols) {
      const Vector3d& ax = columns.axis[c];
      const bool rot = columns.rotation[c] != 0;
      const Vector3d rate =
          AngularVelocity(ax, rot) + d.cross(PointVelocity(ax, columns.pivot[c], rot, p_e)) * inv;
      double* o = out.j + static_cast<size_t>(c) * out.ld + out.row;
      o[0] = weight * u1.dot(rate);
      o[1] = weight * u2.dot(rate);
    }
  }
  return {0.0, rv.norm()};
}

TaskErrors PoleRows(const Target& target, double weight, const Vector3d& p_e, const Vector3d& p_r,
                    const Vector3d& p_m, const Columns& columns, std::span<const int> cols,
                    std::span<const std::uint8_t> moves, const RowBlock& out) {
  // phi = atan2(y, x), y = s.(m x q), x = m.q - (s.m)(s.q) with m = p_m - p_r, q = pole - p_r.
  const Vector3d v = p_e - p_r;
  const double len = v.norm();
  double phi = 0.0;
  bool defined = false;
  Vector3d s_axis = Vector3d::Zero(), m = p_m - p_r, qv = target.position - p_r;
  double x = 0.0, y = 0.0;
  if (len > 1e-12) {
    s_axis = v / len;
    const Vector3d m_perp = m - s_axis * s_axis.dot(m);
    const Vector3d q_perp = qv - s_axis * s_axis.dot(qv);
    const double m2 = m_perp.squaredNorm();
    if (m2 > 1e-18 * m.squaredNorm() && m2 > 0 && q_perp.squaredNorm() > 0) {
      y = s_axis.dot(m.cross(qv));
      x = m.dot(qv) - s_axis.dot(m) * s_axis.dot(qv);
      phi = std::atan2(y, x);
      defined = x * x + y * y > 0;
    }
  }
  out.e[out.row] = weight * phi;
  if (out.j) {
    const Vector3d mxq = m.cross(qv), qxs = qv.cross(s_axis), sxm = s_axis.cross(m);
    const double sm = s_axis.dot(m), sq = s_axis.dot(qv);
    const double inv_r2 = defined ? 1.0 / (x * x + y * y) : 0.0;
    for (size_t i = 0; i < cols.size(); ++i) {
      const int c = cols[i];
      double value = 0.0;
      if (defined) {
        const Vector3d& ax = columns.axis[c];
        const Vector3d& pivot = columns.pivot[c];
        const bool rot = columns.rotation[c] != 0;
        const Vector3d dpe = PointVelocity(ax, pivot, rot, p_e);
        const Vector3d dpm = (moves[i] & 1) ? PointVelocity(ax, pivot, rot, p_m) : Vector3d::Zero();
        const Vector3d dpr = (moves[i] & 2) ? PointVelocity(ax, pivot, rot, p_r) : Vector3d::Zero();
        const Vector3d dm = dpm - dpr;
        const Vector3d dq = -dpr;
        const Vector3d dv = dpe - dpr;
        const Vector3d ds = (dv - s_axis * s_axis.dot(dv)) / len;
        const double dy = ds.dot(mxq) + dm.dot(qxs) + dq.dot(sxm);
        const double dx = dm.dot(qv) + m.dot(dq) - (ds.dot(m) + s_axis.dot(dm)) * sq -
                          sm * (ds.dot(qv) + s_axis.dot(dq));
        value = -(x * dy - y * dx) * inv_r2;
      }
      out.j[static_cast<size_t>(c) * out.ld + out.row] = weight * value;
    }
  }
  return {0.0, std::abs(phi)};
}

double FillSystem(const Rig& rig, std::span<const Target> targets, Workspace::Impl& w,
                  StageWork& st, bool jacobian) {
  const Columns columns{st.axis.data(), st.pivot.data(), st.col_rotation.data()};
  double total = 0.0;
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const Task& task = rig.tasks[st.tasks[k]];
    const Target& target = targets[st.tasks[k]];
    const double weight = task.weight * target.weight;
    const int r0 = st.task_row[k];
    const std::vector<int>& cols = st.task_cols[k];
    const Eigen::Matrix3d& rj = w.rot[task.joint];
    const Vector3d p_e = w.pos[task.joint] + rj * task.offset;
    const RowBlock out{jacobian ? st.j.data() : nullptr, static_cast<size_t>(st.j.rows()),
                       st.e.data(), r0};
    TaskErrors err;
    switch (task.type) {
      case TaskType::kPosition:
        err = PositionRows(task, target, weight, p_e, columns, cols, out);
        break;
      case TaskType::kOrientation:
        err = OrientationRows(target, weight, rj * st.task_offset_rotation[k], columns, cols, out);
        break;
      case TaskType::kPose:
        err = PoseRows(task, target, weight, p_e, rj * st.task_offset_rotation[k], columns, cols,
                       out);
        break;
      case TaskType::kAim:
        err = AimRows(task, target, weight, rj, p_e, columns, cols, out);
        break;
      case TaskType::kPole:
        err = PoleRows(target, weight, p_e, w.pos[task.pole_root], w.pos[task.pole_mid], columns,
                       cols, st.task_col_moves[k], out);
        break;
    }
    st.pos_err[k] = err.position;
    st.ang_err[k] = err.angle;
    total += st.e.segment(r0, st.task_dim[k]).squaredNorm();
  }
  if (jacobian) {
    for (int c = 0; c < st.cols; ++c) {
      if (st.scale[c] != 1.0) st.j.col(c) *= st.scale[c];
    }
  }
  return total;
}

}  // namespace internal

using internal::AimRotation;
using internal::ScaledAxis;

void TaskError(const Skeleton& skeleton, const Task& task, const Target& target,
               std::span<const Eigen::Isometry3d> world, double* position_error,
               double* angle_error) {
  (void)skeleton;
  double pe = 0.0, ae = 0.0;
  const Eigen::Isometry3d& wj = world[task.joint];
  const Eigen::Vector3d p_e = wj * task.offset;
  if (task.type == TaskType::kPosition || task.type == TaskType::kPose) {
    Eigen::Vector3d err = target.position - p_e;
    for (int axis = 0; axis < 3; ++axis) {
      if (!(task.position_axes & (1 << axis))) err[axis] = 0.0;
    }
    pe = err.norm();
  }
  if (task.type == TaskType::kOrientation || task.type == TaskType::kPose) {
    const Eigen::Quaterniond q_e(
        Eigen::Matrix3d(wj.linear() * task.offset_rotation.toRotationMatrix()));
    ae = ScaledAxis(target.orientation * q_e.conjugate()).norm();
  }
  if (task.type == TaskType::kAim) {
    const Eigen::Vector3d a = wj.linear() * task.aim_axis;
    const Eigen::Vector3d to = target.position - p_e;
    if (to.norm() > 1e-12) ae = AimRotation(a, to.normalized()).norm();
  }
  if (task.type == TaskType::kPole) {
    const Eigen::Vector3d p_r = world[task.pole_root].translation();
    const Eigen::Vector3d p_m = world[task.pole_mid].translation();
    Eigen::Vector3d s_axis = p_e - p_r;
    if (s_axis.norm() > 1e-12) {
      s_axis.normalize();
      const Eigen::Vector3d m = p_m - p_r;
      const Eigen::Vector3d m_perp = m - s_axis * s_axis.dot(m);
      const Eigen::Vector3d q = target.position - p_r;
      const Eigen::Vector3d q_perp = q - s_axis * s_axis.dot(q);
      if (m_perp.norm() > 1e-12 && q_perp.norm() > 1e-12) {
        ae = std::abs(std::atan2(s_axis.dot(m_perp.cross(q_perp)), m_perp.dot(q_perp)));
      }
    }
  }
  if (position_error) *position_error = pe;
  if (angle_error) *angle_error = ae;
}

}  // namespace rigel::ik
