#include "core/ik/solve.h"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>

#include "core/ik/fast_math.h"
#include "core/ik/two_bone.h"
#include "core/skeleton.h"

namespace rigel::ik {

// ---------------------------------------------------------------------------------------------
// Names.

std::string_view TaskTypeName(TaskType type) {
  switch (type) {
    case TaskType::kPosition:
      return "position";
    case TaskType::kOrientation:
      return "orientation";
    case TaskType::kPose:
      return "pose";
    case TaskType::kAim:
      return "aim";
    case TaskType::kPole:
      return "pole";
  }
  return "?";
}

std::string_view MethodName(Method method) {
  switch (method) {
    case Method::kTranspose:
      return "transpose";
    case Method::kPseudoInverse:
      return "pseudo_inverse";
    case Method::kSvd:
      return "svd";
    case Method::kQr:
      return "qr";
    case Method::kDls:
      return "dls";
    case Method::kDlsAdaptive:
      return "dls_adaptive";
    case Method::kCcd:
      return "ccd";
    case Method::kTwoBone:
      return "two_bone";
  }
  return "?";
}

std::string_view StatusName(Status status) {
  switch (status) {
    case Status::kConverged:
      return "converged";
    case Status::kNotConverged:
      return "not_converged";
    case Status::kUnreachable:
      return "unreachable";
    case Status::kInvalidInput:
      return "invalid_input";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Rig.

Rig::Rig(std::shared_ptr<const Skeleton> skeleton) : skeleton_(std::move(skeleton)) {
  const size_t nc = skeleton_ ? skeleton_->num_channels() : 0;
  const size_t nj = skeleton_ ? skeleton_->num_joints() : 0;
  min.assign(nc, -kInf);
  max.assign(nc, kInf);
  locked.assign(nc, 0);
  preferred.assign(nc, 0.0);
  preferred_gain.assign(nc, 0.0);
  strength.assign(nj, 1.0);
}

int Rig::AddTask(const Task& task) {
  tasks.push_back(task);
  return static_cast<int>(tasks.size()) - 1;
}

void Rig::SetLimits(int channel, double lo, double hi) {
  min[channel] = lo;
  max[channel] = hi;
}

void Rig::Lock(int channel, bool lock) { locked[channel] = lock ? 1 : 0; }

void Rig::SetStrength(int joint, double s) { strength[joint] = s; }

void Rig::SetPreferred(int channel, double value, double gain) {
  preferred[channel] = value;
  preferred_gain[channel] = gain;
}

// ---------------------------------------------------------------------------------------------
// Workspace.

namespace internal {

using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

int PositionRows(const Task& t) {
  return ((t.position_axes & 1) ? 1 : 0) + ((t.position_axes & 2) ? 1 : 0) +
         ((t.position_axes & 4) ? 1 : 0);
}

int TaskRows(const Task& t) {
  switch (t.type) {
    case TaskType::kPosition:
      return PositionRows(t);
    case TaskType::kOrientation:
      return 3;
    case TaskType::kPose:
      return PositionRows(t) + 3;
    case TaskType::kAim:
      return 2;
    case TaskType::kPole:
      return 1;
  }
  return 0;
}

// One priority level's system and factorizations, sized once.
struct Level {
  int row_begin = 0;
  int rows = 0;
  MatrixXd a;   // rows x n: the level's Jacobian (projected into the higher levels' null space).
  MatrixXd m;   // rows x rows.
  MatrixXd p;   // n x rows: pseudo-inverse (multi-level only).
  MatrixXd at;  // n x rows (QR of A^T).
  VectorXd r, beta, tmp_m, tmp_n, house, unit, col;
  Eigen::LLT<MatrixXd> llt;
  Eigen::PartialPivLU<MatrixXd> lu;
  Eigen::JacobiSVD<MatrixXd> svd;
  Eigen::ColPivHouseholderQR<MatrixXd> qr;
};

// The stage's forward kinematics as a flat program: per joint (ancestors first), its translation
// channels fk_channels[t_begin, t_end) and rotation channels [t_end, r_end).
struct FkJoint {
  int joint = 0, parent = -1;
  bool rest_identity = true;
  Eigen::Vector3d rest_t = Eigen::Vector3d::Zero();
  int t_begin = 0, t_end = 0, r_end = 0;
};
struct FkChannel {
  int channel = 0, axis = 0, col = -1;
};

struct StageWork {
  Method method = Method::kDlsAdaptive;
  std::vector<FkJoint> fk;
  std::vector<FkChannel> fk_channels;
  // The channel values (per fk_channels entry) of the last ChainFk.
  std::vector<double> fk_theta;
  // Priority levels taking part in the steps (all, until a higher level stalls above tolerance
  // while lower ones pull: then the lower ones are dropped and the higher ones finish alone).
  int active_levels = 1;
  // True while the joint frames of the last ChainFk match the channels (false after a rejected
  // trial or a restored restart): Solve then reuses them for pose.world.
  bool frames_valid = false;
  bool last_bias = false;                    // The last step used the preferred-angle bias.
  bool step_scaled = false;                  // The last step was scaled down to the max step.
  std::vector<std::uint8_t> joint_in_stage;  // Per skeleton joint.
  std::vector<int> tasks;                    // Rig task indices, sorted by (priority, index).
  std::vector<int> task_row;
  std::vector<int> task_dim;
  std::vector<Eigen::Matrix3d> task_offset_rotation;
  std::vector<Level> levels;
  int rows = 0;
  int cols = 0;
  std::vector<int> joints;  // Joints to update, ancestor-closed, ascending.
  std::vector<int> col_channel;
  std::vector<int> channel_col;  // Per skeleton channel: column or -1.
  std::vector<std::uint8_t> col_rotation;
  std::vector<int> col_joint;
  std::vector<std::vector<int>> task_cols;  // Columns moving the effector joint.
  // kPole: per entry of task_cols, bit 0 = the column moves pole_mid, bit 1 = pole_root.
  std::vector<std::vector<std::uint8_t>> task_col_moves;
  // Single-level damped least squares (kDls, kDlsAdaptive): J J^T is assembled block by block
  // from the columns two tasks share (J is sparse on a tree), factorized by LDL^T.
  struct Block {
    int row_a = 0, dim_a = 0, row_b = 0, dim_b = 0;  // row_a >= row_b: the lower triangle.
    std::vector<int> cols;                           // Columns both tasks depend on.
  };
  bool fast = false;
  std::vector<Block> blocks;
  // Estimated cost of a full step over a chord step (fast stages).
  double full_over_chord = 1.0;
  // 3 or 6 when the stage may take the serial path (one kPosition/kPose task on all axes,
  // DLS, no alternate Jacobian; see IterateSerial), else 0.
  int serial_rows = 0;
  // Per iteration.
  std::vector<Vector3d> axis;
  std::vector<Vector3d> pivot;
  std::vector<double> pos_err, pos_err_saved;
  std::vector<double> ang_err, ang_err_saved;
  // j/e hold the current system; the *_saved buffers hold the last accepted one while a trial
  // step is evaluated (swapped, never copied). Both J buffers share one sparsity pattern.
  MatrixXd j, j_saved, n_proj;
  // Restarts: best channel values (per column) and their error.
  VectorXd best;
  VectorXd e, e_saved, e_work, x, dtheta, fixed, z, scale, theta_prev, grad;
  std::vector<std::uint8_t> clamped;
  // kTwoBone.
  int upper = -1, lower = -1, end = -1, pos_task = -1, pole_task = -1;
};

}  // namespace internal

using internal::StageWork;

struct Workspace::Impl {
  // Structure the workspace was prepared for.
  const Skeleton* skeleton = nullptr;
  std::vector<std::tuple<TaskType, int, int, int, int, std::uint8_t, bool>> task_keys;
  std::vector<std::tuple<Method, std::vector<int>, int, int, int>> stage_keys;
  std::vector<std::uint8_t> locked;
  std::vector<std::uint8_t> relaxed;
  // Joint frames (world), valid for the joints a stage updated.
  std::vector<Eigen::Matrix3d> rot;
  std::vector<Eigen::Vector3d> pos;
  std::vector<Eigen::Matrix3d> rest_rot;
  std::vector<std::uint8_t> rest_identity;
  std::vector<StageWork> stages;
  std::vector<Target> no_targets;
  // Restarts run by the current solve.
  int restarts = 0;
  bool fast_paths = true;
};

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;
void Workspace::SetFastPaths(bool enabled) { impl_->fast_paths = enabled; }

namespace {

using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;
using internal::Level;

bool Fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool IsAncestorOrSelf(const Skeleton& s, int ancestor, int joint) {
  for (int j = joint; j != Skeleton::kNoParent; j = s.parent(j)) {
    if (j == ancestor) return true;
  }
  return false;
}

bool Finite(double v) { return std::isfinite(v); }

bool IsIterative(Method m) { return m != Method::kCcd && m != Method::kTwoBone; }

std::vector<Stage> EffectiveStages(const Rig& rig) {
  if (!rig.stages.empty()) return rig.stages;
  return {Stage{}};
}

std::vector<int> StageTasks(const Rig& rig, const Stage& stage) {
  std::vector<int> t = stage.tasks;
  if (t.empty()) {
    for (int i = 0; i < static_cast<int>(rig.tasks.size()); ++i) t.push_back(i);
  }
  std::stable_sort(t.begin(), t.end(),
                   [&](int a, int b) { return rig.tasks[a].priority < rig.tasks[b].priority; });
  return t;
}

Vector3d AnyPerpendicular(const Vector3d& v) {
  const Vector3d other = std::abs(v.x()) < 0.9 ? Vector3d::UnitX() : Vector3d::UnitY();
  return v.cross(other).normalized();
}

// Rotation vector (scaled axis) of a unit quaternion, angle in [0, pi].
Vector3d ScaledAxis(Eigen::Quaterniond q) {
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  const Vector3d v = q.vec();
  const double s = v.norm();
  if (s < 1e-300) return 2.0 * v;
  return v * (2.0 * std::atan2(s, q.w()) / s);
}

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

// Scaled axis of R_d R_e^T (R_d from the unit quaternion q_d): from the matrix's skew part and
// trace, sin(angle) axis = vee(R - R^T) / 2, cos(angle) = (trace - 1) / 2, away from a half
// turn; through quaternions near it (where the skew part vanishes).
Vector3d RotationError(const Eigen::Quaterniond& q_d, const Eigen::Matrix3d& r_e) {
  const Eigen::Matrix3d r_d = q_d.toRotationMatrix();
  const Eigen::Matrix3d r = r_d * r_e.transpose();
  const Vector3d v(0.5 * (r(2, 1) - r(1, 2)), 0.5 * (r(0, 2) - r(2, 0)), 0.5 * (r(1, 0) - r(0, 1)));
  const double c = 0.5 * (r.trace() - 1.0);
  if (c > -0.5) {
    const double sn = v.norm();
    if (sn < 1e-300) return v;
    return v * AngleOverSine(sn, c);
  }
  return ScaledAxis(q_d * Eigen::Quaterniond(r_e).conjugate());
}

// Rotation vector taking unit vector a onto unit vector d.
Vector3d AimRotation(const Vector3d& a, const Vector3d& d) {
  const Vector3d axis = a.cross(d);
  const double s = axis.norm();
  const double c = a.dot(d);
  if (s > 1e-15) return axis * (std::atan2(s, c) / s);
  if (c >= 0) return Vector3d::Zero();
  return AnyPerpendicular(a) * kPi;
}

using internal::RotateColumns;

// Forward kinematics over the stage's joints (its flattened program st.fk), filling the joint
// frames and the columns' world axes and pivots (seed 001 eq. 21-26: axis k is column ak of the
// rotation after channel k).
void ChainFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta) {
  (void)s;
  for (const internal::FkJoint& f : st.fk) {
    Vector3d local_t = f.rest_t;
    for (int i = f.t_begin; i < f.t_end; ++i) {
      const internal::FkChannel& t = st.fk_channels[i];
      st.fk_theta[i] = theta[t.channel];
      local_t[t.axis] += theta[t.channel];
    }
    Eigen::Matrix3d r;
    Vector3d pos;
    if (f.parent < 0) {
      pos = local_t;
      r = f.rest_identity ? Eigen::Matrix3d::Identity() : w.rest_rot[f.joint];
      for (int i = f.t_begin; i < f.t_end; ++i) {
        const internal::FkChannel& t = st.fk_channels[i];
        if (t.col >= 0) st.axis[t.col] = Vector3d::Unit(t.axis);
      }
    } else {
      const Eigen::Matrix3d& pr = w.rot[f.parent];
      pos = w.pos[f.parent] + pr * local_t;
      r = f.rest_identity ? pr : Eigen::Matrix3d(pr * w.rest_rot[f.joint]);
      for (int i = f.t_begin; i < f.t_end; ++i) {
        const internal::FkChannel& t = st.fk_channels[i];
        if (t.col >= 0) st.axis[t.col] = pr.col(t.axis);
      }
    }
    w.pos[f.joint] = pos;
    for (int i = f.t_end; i < f.r_end; ++i) {
      const internal::FkChannel& rc = st.fk_channels[i];
      st.fk_theta[i] = theta[rc.channel];
      double sn, cs;
      internal::SinCos(theta[rc.channel], &sn, &cs);
      RotateColumns(r, rc.axis, cs, sn);
      if (rc.col >= 0) {
        st.axis[rc.col] = r.col(rc.axis);
        st.pivot[rc.col] = pos;
      }
    }
    w.rot[f.joint] = r;
  }
  st.frames_valid = true;
}

// Forward kinematics at the start of an iteration: skipped when the joint frames are those of
// these exact channel values (a frame-by-frame solve warm-started from the previous answer).
// Only with one stage: another stage may have overwritten shared joints' frames.
void StartFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta) {
  if (st.frames_valid && w.stages.size() == 1) {
    bool same = true;
    for (size_t i = 0; i < st.fk_channels.size() && same; ++i) {
      same = std::bit_cast<std::uint64_t>(theta[st.fk_channels[i].channel]) ==
             std::bit_cast<std::uint64_t>(st.fk_theta[i]);
    }
    if (same) return;
  }
  ChainFk(s, w, st, theta);
}

// Fills the stage's error vector e (weighted) and, when `jacobian`, its Jacobian J (weighted,
// strength-scaled), plus the unweighted per-task errors. Returns the weighted squared error.
double FillSystem(const Rig& rig, std::span<const Target> targets, Workspace::Impl& w,
                  StageWork& st, bool jacobian) {
  double total = 0.0;
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const Task& task = rig.tasks[st.tasks[k]];
    const Target& target = targets[st.tasks[k]];
    const double weight = task.weight * target.weight;
    const int r0 = st.task_row[k];
    const int dim = st.task_dim[k];
    const std::vector<int>& cols = st.task_cols[k];
    const int j = task.joint;
    const Eigen::Matrix3d& rj = w.rot[j];
    const Vector3d p_e = w.pos[j] + rj * task.offset;
    double pos_err = 0.0;
    double ang_err = 0.0;
    int row = r0;
    if (task.type == TaskType::kPosition || task.type == TaskType::kPose) {
      const Vector3d err = target.position - p_e;
      const Vector3d q = task.alternate_jacobian ? target.position : p_e;
      double sq = 0.0;
      const bool all_axes = (task.position_axes & 7) == 7;
      if (jacobian) {
        double* jd = st.j.data();
        const size_t lj = static_cast<size_t>(st.j.rows());
        for (const int c : cols) {
          const Vector3d& a = st.axis[c];
          const Vector3d v =
              st.col_rotation[c] ? Vector3d(weight * a.cross(q - st.pivot[c])) : weight * a;
          double* out = jd + static_cast<size_t>(c) * lj + row;
          if (all_axes) {
            out[0] = v.x();
            out[1] = v.y();
            out[2] = v.z();
          } else {
            int n = 0;
            for (int axis = 0; axis < 3; ++axis) {
              if (task.position_axes & (1 << axis)) out[n++] = v[axis];
            }
          }
        }
      }
      for (int axis = 0; axis < 3; ++axis) {
        if (!(task.position_axes & (1 << axis))) continue;
        sq += err[axis] * err[axis];
        st.e[row] = weight * err[axis];
        ++row;
      }
      pos_err = std::sqrt(sq);
    }
    if (task.type == TaskType::kOrientation || task.type == TaskType::kPose) {
      const Eigen::Matrix3d r_e = rj * st.task_offset_rotation[k];
      const Vector3d err = RotationError(target.orientation, r_e);
      ang_err = err.norm();
      for (int axis = 0; axis < 3; ++axis) st.e[row + axis] = weight * err[axis];
      if (jacobian) {
        double* jd = st.j.data();
        const size_t lj = static_cast<size_t>(st.j.rows());
        for (const int c : cols) {
          double* out = jd + static_cast<size_t>(c) * lj + row;
          if (st.col_rotation[c]) {
            const Vector3d& a = st.axis[c];
            out[0] = weight * a.x();
            out[1] = weight * a.y();
            out[2] = weight * a.z();
          } else {
            out[0] = out[1] = out[2] = 0.0;
          }
        }
      }
      row += 3;
    }
    if (task.type == TaskType::kAim) {
      const Vector3d a = rj * task.aim_axis;
      const Vector3d to = target.position - p_e;
      const double dist = to.norm();
      const Vector3d d = dist > 1e-12 ? Vector3d(to / dist) : a;
      const Vector3d rv = AimRotation(a, d);
      ang_err = rv.norm();
      const Vector3d u1 = AnyPerpendicular(a);
      const Vector3d u2 = a.cross(u1);
      st.e[row] = weight * u1.dot(rv);
      st.e[row + 1] = weight * u2.dot(rv);
      if (jacobian) {
        const double inv = dist > 1e-12 ? 1.0 / dist : 0.0;
        for (const int c : cols) {
          const Vector3d& ax = st.axis[c];
          Vector3d rate;
          if (st.col_rotation[c]) {
            rate = ax + d.cross(ax.cross(p_e - st.pivot[c])) * inv;
          } else {
            rate = d.cross(ax) * inv;
          }
          st.j(row, c) = weight * u1.dot(rate);
          st.j(row + 1, c) = weight * u2.dot(rate);
        }
      }
      row += 2;
    }
    if (task.type == TaskType::kPole) {
      // phi = signed angle about s = (p_e - p_r)/|p_e - p_r| from the chain's plane (through
      // p_m) to the pole: phi = atan2(y, x), y = s.(m x q), x = m.q - (s.m)(s.q) with
      // m = p_m - p_r, q = pole - p_r. The row is its exact derivative: the root, middle and
      // effector all move, and so does the axis s.
      const Vector3d p_r = w.pos[task.pole_root];
      const Vector3d p_m = w.pos[task.pole_mid];
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
      ang_err = std::abs(phi);
      st.e[row] = weight * phi;
      if (jacobian) {
        const std::vector<std::uint8_t>& moves = st.task_col_moves[k];
        const Vector3d mxq = m.cross(qv), qxs = qv.cross(s_axis), sxm = s_axis.cross(m);
        const double sm = s_axis.dot(m), sq = s_axis.dot(qv);
        const double inv_r2 = defined ? 1.0 / (x * x + y * y) : 0.0;
        for (size_t i = 0; i < cols.size(); ++i) {
          const int c = cols[i];
          double value = 0.0;
          if (defined) {
            const Vector3d& ax = st.axis[c];
            const bool rot = st.col_rotation[c] != 0;
            auto rate = [&](const Vector3d& point) {
              return rot ? Vector3d(ax.cross(point - st.pivot[c])) : ax;
            };
            const Vector3d dpe = rate(p_e);
            const Vector3d dpm = (moves[i] & 1) ? rate(p_m) : Vector3d::Zero();
            const Vector3d dpr = (moves[i] & 2) ? rate(p_r) : Vector3d::Zero();
            const Vector3d dm = dpm - dpr;
            const Vector3d dq = -dpr;
            const Vector3d dv = dpe - dpr;
            const Vector3d ds = (dv - s_axis * s_axis.dot(dv)) / len;
            const double dy = ds.dot(mxq) + dm.dot(qxs) + dq.dot(sxm);
            const double dx = dm.dot(qv) + m.dot(dq) - (ds.dot(m) + s_axis.dot(dm)) * sq -
                              sm * (ds.dot(qv) + s_axis.dot(dq));
            value = -(x * dy - y * dx) * inv_r2;
          }
          st.j(row, c) = weight * value;
        }
      }
      row += 1;
    }
    (void)dim;
    st.pos_err[k] = pos_err;
    st.ang_err[k] = ang_err;
    total += st.e.segment(r0, dim).squaredNorm();
  }
  if (jacobian) {
    for (int c = 0; c < st.cols; ++c) {
      if (st.scale[c] != 1.0) st.j.col(c) *= st.scale[c];
    }
  }
  return total;
}

bool TaskConverged(const StageWork& st, size_t k, const Settings& settings) {
  // A tolerance of 0 never counts as reached: the stage iterates to its cap.
  return st.pos_err[k] <= settings.position_tolerance &&
         st.ang_err[k] <= settings.angle_tolerance && settings.position_tolerance > 0 &&
         settings.angle_tolerance > 0;
}

bool Active(const Rig& rig, std::span<const Target> targets, int t) {
  return rig.tasks[t].weight * targets[t].weight > 0.0;
}

bool Converged(const Rig& rig, std::span<const Target> targets, const StageWork& st,
               const Settings& settings) {
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    if (Active(rig, targets, st.tasks[k]) && !TaskConverged(st, k, settings)) return false;
  }
  return true;
}

// The error the iteration drives down: the weighted squared error of the highest priority level
// that is not yet within tolerance (all rows when there is one level).
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

// Factorizes level.a for `method`. Returns false if the matrix is numerically singular for the
// undamped LU (the caller then damps slightly).
void Factor(Level& lv, Method method, double lambda, int n) {
  switch (method) {
    case Method::kTranspose:
      break;
    case Method::kPseudoInverse: {
      lv.m.noalias() = lv.a * lv.a.transpose();
      lv.lu.compute(lv.m);
      // PartialPivLU does not detect singularity: look at U's diagonal and damp slightly when
      // (J J^T) is singular, so the step stays finite (seed 002's singular configurations).
      const auto diag = lv.lu.matrixLU().diagonal().cwiseAbs();
      const double largest = diag.maxCoeff();
      if (!(diag.minCoeff() > 1e-12 * largest) || !(largest > 0)) {
        const double damp = 1e-10 * std::max(largest, 1e-300);
        lv.m.diagonal().array() += damp;
        lv.lu.compute(lv.m);
      }
      break;
    }
    case Method::kSvd:
      lv.svd.compute(lv.a, Eigen::ComputeThinU | Eigen::ComputeThinV);
      break;
    case Method::kQr:
      lv.at = lv.a.transpose();
      lv.qr.compute(lv.at);
      break;
    case Method::kDls:
    case Method::kDlsAdaptive:
    default:
      lv.m.noalias() = lv.a * lv.a.transpose();
      lv.m.diagonal().array() += lambda * lambda;
      lv.llt.compute(lv.m);
      break;
  }
  (void)n;
}

// out = A^+ rhs (method's pseudo-inverse); A and its factorization are in `lv`.
void Apply(Level& lv, Method method, double svd_threshold, const VectorXd& rhs, VectorXd& out) {
  switch (method) {
    case Method::kTranspose: {
      // Buss's step: h = <V, J J^T V> / |J J^T V|^2 along J^T V.
      out.noalias() = lv.a.transpose() * rhs;
      lv.tmp_m.noalias() = lv.a * out;
      const double denom = lv.tmp_m.squaredNorm();
      const double h = denom > 0 ? rhs.dot(lv.tmp_m) / denom : 0.0;
      out *= h;
      break;
    }
    case Method::kPseudoInverse:
      lv.beta = lv.lu.solve(rhs);
      out.noalias() = lv.a.transpose() * lv.beta;
      break;
    case Method::kSvd: {
      const auto& sv = lv.svd.singularValues();
      const int k = static_cast<int>(sv.size());
      const double cut = k > 0 ? svd_threshold * sv[0] : 0.0;
      auto t = lv.tmp_m.head(k);
      t.noalias() = lv.svd.matrixU().transpose() * rhs;
      for (int i = 0; i < k; ++i) t[i] = sv[i] > cut && sv[i] > 0 ? t[i] / sv[i] : 0.0;
      out.noalias() = lv.svd.matrixV() * t;
      break;
    }
    case Method::kQr: {
      // A^T P = Q R  =>  A = P R^T Q^T;  minimum-norm x = Q [R11^-T (P^T b)_1..r; 0].
      const int r = static_cast<int>(lv.qr.rank());
      lv.tmp_m.noalias() = lv.qr.colsPermutation().transpose() * rhs;
      lv.tmp_n.setZero();
      lv.tmp_n.head(r) = lv.tmp_m.head(r);
      lv.qr.matrixQR()
          .topLeftCorner(r, r)
          .template triangularView<Eigen::Upper>()
          .transpose()
          .solveInPlace(lv.tmp_n.head(r));
      const int n = static_cast<int>(lv.at.rows());
      const int steps = static_cast<int>(lv.qr.hCoeffs().size());
      for (int i = steps - 1; i >= 0; --i) {
        lv.tmp_n.tail(n - i).applyHouseholderOnTheLeft(lv.qr.matrixQR().col(i).tail(n - i - 1),
                                                       lv.qr.hCoeffs()[i], lv.house.data());
      }
      out = lv.tmp_n;
      break;
    }
    case Method::kDls:
    case Method::kDlsAdaptive:
    default:
      lv.beta = rhs;
      lv.llt.solveInPlace(lv.beta);
      out.noalias() = lv.a.transpose() * lv.beta;
      break;
  }
}

// Preferred-angle gradient z = grad H (x space, i.e. times the column scale), H = sum alpha_i
// (theta_i - theta_c_i)^psi. Zero on clamped columns.
bool BiasGradient(const Rig& rig, const StageWork& st, const double* theta, const Settings& set,
                  VectorXd& z) {
  bool any = false;
  for (int c = 0; c < st.cols; ++c) {
    const int ch = st.col_channel[c];
    const double alpha = rig.preferred_gain[ch];
    if (alpha == 0.0 || st.clamped[c]) {
      z[c] = 0.0;
      continue;
    }
    const double diff = theta[ch] - rig.preferred[ch];
    double pw = 1.0;
    for (int i = 1; i < set.preferred_power; ++i) pw *= diff;
    z[c] = set.preferred_step * set.preferred_power * alpha * pw * st.scale[c];
    any = true;
  }
  return any;
}

// ---- Single-level damped least squares without copying J ----

// m(row_a.., row_b..) += J(row_a.., c) J(row_b.., c)^T over the block's free columns, for any
// block size.
void AccumulateBlock(const StageWork& st, const StageWork::Block& b, double* m, int ld) {
  const double* j = st.j.data();
  const int lj = static_cast<int>(st.j.rows());
  const bool diagonal = b.row_a == b.row_b;
  for (const int c : b.cols) {
    if (st.clamped[c]) continue;
    const double* ja = j + static_cast<size_t>(c) * lj + b.row_a;
    const double* jb = j + static_cast<size_t>(c) * lj + b.row_b;
    for (int q = 0; q < b.dim_b; ++q) {
      const double v = jb[q];
      double* out = m + static_cast<size_t>(b.row_b + q) * ld + b.row_a;
      // A diagonal block needs only its lower triangle (p >= q).
      for (int p = diagonal ? q : 0; p < b.dim_a; ++p) out[p] += ja[p] * v;
    }
  }
}

// The same for fixed block sizes (DB a multiple of 3): the block is summed over the columns in
// registers, three output columns at a time (one load and store of m per entry instead of one
// per column).
template <int DA, int DB, bool kDiagonal = false>
void AccumulateBlockInRegisters(const StageWork& st, const StageWork::Block& b, double* m, int ld) {
  static_assert(DB % 3 == 0);
  const double* j = st.j.data();
  const int lj = static_cast<int>(st.j.rows());
#pragma GCC unroll 2
  for (int q0 = 0; q0 < DB; q0 += 3) {
    double acc[3][DA] = {};
    for (const int c : b.cols) {
      if (st.clamped[c]) continue;
      const double* col = j + static_cast<size_t>(c) * lj;
      const double* ja = col + b.row_a;
      const double* jb = col + b.row_b + q0;
#pragma GCC unroll 3
      for (int q = 0; q < 3; ++q) {
        const double v = jb[q];
#pragma GCC unroll 6
        for (int p = 0; p < DA; ++p) acc[q][p] += ja[p] * v;
      }
    }
#pragma GCC unroll 3
    for (int q = 0; q < 3; ++q) {
      double* out = m + static_cast<size_t>(b.row_b + q0 + q) * ld + b.row_a;
      // A diagonal block needs only its lower triangle (p >= q).
#pragma GCC unroll 6
      for (int p = kDiagonal ? q0 + q : 0; p < DA; ++p) out[p] += acc[q][p];
    }
  }
}

// Lower triangle (and the diagonal blocks) of J J^T + damp I for the free columns.
void AssembleNormal(StageWork& st, double damp) {
  MatrixXd& m = st.levels[0].m;
  m.setZero();
  double* data = m.data();
  const int ld = static_cast<int>(m.rows());
  for (const StageWork::Block& b : st.blocks) {
    if (b.row_a == b.row_b && b.dim_a == 6) {
      AccumulateBlockInRegisters<6, 6, true>(st, b, data, ld);
    } else if (b.row_a == b.row_b && b.dim_a == 3) {
      AccumulateBlockInRegisters<3, 3, true>(st, b, data, ld);
    } else if (b.dim_a == 6 && b.dim_b == 6) {
      AccumulateBlockInRegisters<6, 6>(st, b, data, ld);
    } else if (b.dim_a == 3 && b.dim_b == 3) {
      AccumulateBlockInRegisters<3, 3>(st, b, data, ld);
    } else if (b.dim_a == 6 && b.dim_b == 3) {
      AccumulateBlockInRegisters<6, 3>(st, b, data, ld);
    } else if (b.dim_a == 3 && b.dim_b == 6) {
      AccumulateBlockInRegisters<3, 6>(st, b, data, ld);
    } else {
      AccumulateBlock(st, b, data, ld);
    }
  }
  for (int i = 0; i < ld; ++i) data[static_cast<size_t>(i) * ld + i] += damp;
}

// In-place LDL^T of the lower triangle of the column-major n x n matrix `a`: its strictly lower
// part becomes L (unit diagonal implied), its diagonal D, and inv_d receives 1 / D. No square
// roots; every inner loop runs down a contiguous column. False when a pivot is not positive
// (the caller damps and retries).
template <int N = 0>
bool Ldlt(double* a, int n_runtime, double* inv_d) {
  if constexpr (N > 0) {
    // Fixed size: every loop fully unrolled, the matrix in registers.
    (void)n_runtime;
    double m[N][N];
#pragma GCC unroll 16
    for (int q = 0; q < N; ++q) {
#pragma GCC unroll 16
      for (int p = q; p < N; ++p) m[q][p] = a[q * N + p];
    }
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k) {
#pragma GCC unroll 16
      for (int p = 0; p < k; ++p) {
        const double w = m[p][k] * m[p][p];
#pragma GCC unroll 16
        for (int i = k; i < N; ++i) m[k][i] -= w * m[p][i];
      }
      const double d = m[k][k];
      if (!(d > 0 && d <= std::numeric_limits<double>::max())) return false;
      const double inv = 1.0 / d;
      inv_d[k] = inv;
#pragma GCC unroll 16
      for (int i = k + 1; i < N; ++i) m[k][i] *= inv;
    }
#pragma GCC unroll 16
    for (int q = 0; q < N; ++q) {
#pragma GCC unroll 16
      for (int p = q; p < N; ++p) a[q * N + p] = m[q][p];
    }
    return true;
  } else {
    const int n = n_runtime;
    for (int k = 0; k < n; ++k) {
      double* col_k = a + static_cast<size_t>(k) * n;
      for (int p = 0; p < k; ++p) {
        const double* col_p = a + static_cast<size_t>(p) * n;
        const double l = col_p[k];
        if (l == 0.0) continue;  // Zeros are common in the sparse multi-effector systems.
        const double w = l * col_p[p];
        for (int i = k; i < n; ++i) col_k[i] -= w * col_p[i];
      }
      const double d = col_k[k];
      if (!(d > 0 && d <= std::numeric_limits<double>::max())) return false;
      const double inv = 1.0 / d;
      inv_d[k] = inv;
      for (int i = k + 1; i < n; ++i) col_k[i] *= inv;
    }
    return true;
  }
}

// Solves L D L^T x = x in place (L, D from Ldlt). Both triangular sweeps update a column (or a
// row) of x at a time, so no long chain of dependent operations forms.
template <int N = 0>
void LdltSolve(const double* l, int n_runtime, const double* inv_d, double* x) {
  if constexpr (N > 0) {
    (void)n_runtime;
    double v[N];
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) v[i] = x[i];
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) {
#pragma GCC unroll 16
      for (int r = i + 1; r < N; ++r) v[r] -= l[i * N + r] * v[i];
    }
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) v[i] *= inv_d[i];
#pragma GCC unroll 16
    for (int i = N - 1; i > 0; --i) {
#pragma GCC unroll 16
      for (int r = 0; r < i; ++r) v[r] -= l[r * N + i] * v[i];
    }
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) x[i] = v[i];
  } else {
    const int n = n_runtime;
    for (int i = 0; i < n; ++i) {
      const double* col_i = l + static_cast<size_t>(i) * n;
      const double v = x[i];
      if (v == 0.0) continue;
      for (int r = i + 1; r < n; ++r) x[r] -= col_i[r] * v;
    }
    for (int i = 0; i < n; ++i) x[i] *= inv_d[i];
    for (int i = n - 1; i > 0; --i) {
      const double v = x[i];
      if (v == 0.0) continue;
      for (int r = 0; r < i; ++r) x[r] -= l[static_cast<size_t>(r) * n + i] * v;
    }
  }
}

// st.x = J^T (J J^T + lambda^2 I)^-1 rhs over the free columns (st.x on clamped columns is left
// to the caller), with the null-space bias of SolveLevels when `bias`.
// N > 0: one task of N rows (compile-time sizes for the 3- and 6-row chains).
template <int N>
void FastDlsStepN(StageWork& st, double lambda, bool bias) {
  Level& lv = st.levels[0];
  const int m = st.rows;
  const double* j = st.j.data();
  const int lj = static_cast<int>(st.j.rows());
  lv.beta = st.e_work;
  if (bias) {
    // Seeds 000/003 eq. 4.28-4.30: (J J^T) beta = V + J z, theta' = J^T beta - z.
    for (size_t k = 0; k < st.tasks.size(); ++k) {
      const int r0 = st.task_row[k];
      const int dim = N > 0 ? N : st.task_dim[k];
      for (const int c : st.task_cols[k]) {
        if (st.clamped[c] || st.z[c] == 0.0) continue;
        const double* jc = j + static_cast<size_t>(c) * lj + r0;
        for (int p = 0; p < dim; ++p) lv.beta[r0 + p] += jc[p] * st.z[c];
      }
    }
  }
  AssembleNormal(st, lambda * lambda);
  if (!Ldlt<N>(lv.m.data(), m, lv.tmp_m.data())) {
    // Singular (lambda = 0 at a singular pose): damp slightly so the step stays finite.
    AssembleNormal(st, lambda * lambda);
    double largest = 0.0;
    for (int i = 0; i < m; ++i) largest = std::max(largest, lv.m(i, i));
    AssembleNormal(st, lambda * lambda + 1e-10 * std::max(largest, 1e-300));
    if (!Ldlt<N>(lv.m.data(), m, lv.tmp_m.data())) {
      st.x.setZero();
      return;
    }
  }
  LdltSolve<N>(lv.m.data(), m, lv.tmp_m.data(), lv.beta.data());
  st.x.setZero();
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const int r0 = st.task_row[k];
    const int dim = N > 0 ? N : st.task_dim[k];
    const double* beta = lv.beta.data() + r0;
    for (const int c : st.task_cols[k]) {
      if (st.clamped[c]) continue;
      const double* jc = j + static_cast<size_t>(c) * lj + r0;
      double v = 0.0;
      for (int p = 0; p < dim; ++p) v += jc[p] * beta[p];
      st.x[c] += v;
    }
  }
  if (bias) st.x -= st.z;
}

// Chord step: x = J_k^T (J_k J_k^T + lambda^2 I)^-1 e with the Jacobian (st.j_saved), active set
// and factorization of the last full step, for the current residual st.e. Free columns only.
template <int N>
void ChordStepN(StageWork& st) {
  Level& lv = st.levels[0];
  const int m = st.rows;
  const double* j = st.j_saved.data();
  const int lj = static_cast<int>(st.j_saved.rows());
  lv.beta = st.e;
  LdltSolve<N>(lv.m.data(), m, lv.tmp_m.data(), lv.beta.data());
  st.x.setZero();
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const int r0 = st.task_row[k];
    const int dim = N > 0 ? N : st.task_dim[k];
    const double* beta = lv.beta.data() + r0;
    for (const int c : st.task_cols[k]) {
      if (st.clamped[c]) continue;
      const double* jc = j + static_cast<size_t>(c) * lj + r0;
      double v = 0.0;
      for (int p = 0; p < dim; ++p) v += jc[p] * beta[p];
      st.x[c] += v;
    }
  }
}

// One chord step in channel units (st.dtheta). False when it would cross a limit or exceed the
// max step (the caller then takes a full step).
bool ChordStep(const Rig& rig, StageWork& st, const Settings& set, const double* theta) {
  if (st.tasks.size() == 1 && st.rows == 6) {
    ChordStepN<6>(st);
  } else if (st.tasks.size() == 1 && st.rows == 3) {
    ChordStepN<3>(st);
  } else {
    ChordStepN<0>(st);
  }
  if (!st.x.allFinite()) return false;
  st.dtheta = st.x.cwiseProduct(st.scale);
  if (set.max_step > 0 && st.dtheta.cwiseAbs().maxCoeff() > set.max_step) return false;
  for (int c = 0; c < st.cols; ++c) {
    if (st.clamped[c]) continue;
    const int ch = st.col_channel[c];
    const double next = theta[ch] + st.dtheta[c];
    if (next < rig.min[ch] || next > rig.max[ch]) return false;
  }
  return true;
}

void FastDlsStep(StageWork& st, double lambda, bool bias) {
  if (st.tasks.size() == 1 && st.rows == 6) {
    FastDlsStepN<6>(st, lambda, bias);
  } else if (st.tasks.size() == 1 && st.rows == 3) {
    FastDlsStepN<3>(st, lambda, bias);
  } else {
    FastDlsStepN<0>(st, lambda, bias);
  }
}

// x = step in scaled variables for the current (clamped) system.
void SolveLevels(const Rig& rig, StageWork& st, Method method, double lambda, const Settings& set,
                 const double* theta) {
  const bool bias = method != Method::kTranspose && BiasGradient(rig, st, theta, set, st.z);
  st.last_bias = bias;
  if (st.fast) {
    FastDlsStep(st, lambda, bias);
    return;
  }
  if (st.levels.size() == 1 || method == Method::kTranspose) {
    Level& lv = st.levels[0];
    if (st.levels.size() == 1) {
      lv.a = st.j;
      for (int c = 0; c < st.cols; ++c) {
        if (st.clamped[c]) lv.a.col(c).setZero();
      }
    } else {
      // Transpose ignores priorities: one stacked system.
      lv.a = st.j;
      for (int c = 0; c < st.cols; ++c) {
        if (st.clamped[c]) lv.a.col(c).setZero();
      }
    }
    Factor(lv, method, lambda, st.cols);
    if (bias) {
      // Seeds 000/003 eq. 4.28-4.30: theta' = J^T beta - z, (J J^T) beta = V + J z.
      lv.r = st.e_work;
      lv.r.noalias() += lv.a * st.z;
      Apply(lv, method, set.svd_threshold, lv.r, st.x);
      st.x -= st.z;
    } else {
      Apply(lv, method, set.svd_threshold, st.e_work, st.x);
    }
    return;
  }
  // Priority levels: x = sum_l (J_l N_l)^+ (V_l - J_l x_<l),  N_l+1 = N_l - (J_l N_l)^+ (J_l N_l).
  st.x.setZero();
  st.n_proj.setIdentity();
  for (int li = 0; li < st.active_levels; ++li) {
    Level& lv = st.levels[li];
    lv.a.noalias() = st.j.middleRows(lv.row_begin, lv.rows) * st.n_proj;
    for (int c = 0; c < st.cols; ++c) {
      if (st.clamped[c]) lv.a.col(c).setZero();
    }
    lv.r = st.e_work.segment(lv.row_begin, lv.rows);
    lv.r.noalias() -= st.j.middleRows(lv.row_begin, lv.rows) * st.x;
    Factor(lv, method, lambda, st.cols);
    Apply(lv, method, set.svd_threshold, lv.r, lv.tmp_n);
    if (set.max_step > 0) {
      // A lower level may use only what the higher ones left of the step budget.
      const double used = st.x.cwiseProduct(st.scale).cwiseAbs().maxCoeff();
      const double wants = lv.tmp_n.cwiseProduct(st.scale).cwiseAbs().maxCoeff();
      // Lower levels move in smaller steps (a tenth of the budget): their nonlinear side
      // effects on the higher levels stay second order.
      const double budget =
          &lv == &st.levels[0] ? set.max_step : std::min(set.max_step - used, 0.1 * set.max_step);
      if (wants > budget && wants > 0) lv.tmp_n *= std::max(0.0, budget) / wants;
    }
    st.x += lv.tmp_n;
    for (int i = 0; i < lv.rows; ++i) {
      lv.unit.setZero();
      lv.unit[i] = 1.0;
      Apply(lv, method, set.svd_threshold, lv.unit, lv.col);
      lv.p.col(i) = lv.col;
    }
    st.n_proj.noalias() -= lv.p * lv.a;
  }
  if (bias) st.x.noalias() -= st.n_proj * st.z;
}

// One step with limits as an active set: returns dtheta in st.dtheta (channel units).
void ComputeStep(const Rig& rig, StageWork& st, Method method, double lambda, const Settings& set,
                 const double* theta) {
  std::fill(st.clamped.begin(), st.clamped.end(), 0);
  st.fixed.setZero();
  st.step_scaled = false;
  {
    // Warm active set: a channel on a limit that the descent direction J^T e pushes outward
    // starts pinned (saves the pass that would find it).
    for (int c = 0; c < st.cols; ++c) {
      const int ch = st.col_channel[c];
      const bool at_max = theta[ch] >= rig.max[ch], at_min = theta[ch] <= rig.min[ch];
      if (!at_max && !at_min) continue;
      const double g = st.j.col(c).dot(st.e);
      if ((g > 0 && at_max) || (g < 0 && at_min)) st.clamped[c] = 1;
    }
  }
  for (int pass = 0; pass <= st.cols; ++pass) {
    st.e_work = st.e;
    if (pass > 0) {
      for (int c = 0; c < st.cols; ++c) {
        if (st.clamped[c]) st.e_work.noalias() -= st.j.col(c) * st.fixed[c];
      }
    }
    SolveLevels(rig, st, method, lambda, set, theta);
    for (int c = 0; c < st.cols; ++c) {
      if (st.clamped[c]) st.x[c] = st.fixed[c];
    }
    if (!st.x.allFinite()) st.x.setZero();
    st.dtheta = st.x.cwiseProduct(st.scale);
    if (set.max_step > 0) {
      const double largest = st.dtheta.cwiseAbs().maxCoeff();
      if (largest > set.max_step) {
        st.step_scaled = true;
        const double f = set.max_step / largest;
        st.dtheta *= f;
        st.x *= f;
      }
    }
    bool violated = false;
    for (int c = 0; c < st.cols; ++c) {
      if (st.clamped[c]) continue;
      const int ch = st.col_channel[c];
      const double next = theta[ch] + st.dtheta[c];
      if (next < rig.min[ch] || next > rig.max[ch]) {
        const double bound = next < rig.min[ch] ? rig.min[ch] : rig.max[ch];
        st.clamped[c] = 1;
        st.fixed[c] = (bound - theta[ch]) / st.scale[c];
        violated = true;
      }
    }
    if (!violated) break;
    // Pinned columns keep their (possibly max-step scaled) values consistent.
    for (int c = 0; c < st.cols; ++c) {
      if (st.clamped[c]) st.x[c] = st.fixed[c];
    }
  }
}

// Stationarity: the error is (nearly) orthogonal to every motion the free channels allow.
bool Stationary(const Rig& rig, StageWork& st, const double* theta) {
  st.grad.noalias() = st.j.transpose() * st.e;
  double g2 = 0.0;
  for (int c = 0; c < st.cols; ++c) {
    const int ch = st.col_channel[c];
    const double g = st.grad[c];
    if ((g > 0 && theta[ch] >= rig.max[ch]) || (g < 0 && theta[ch] <= rig.min[ch])) continue;
    g2 += g * g;
  }
  const double scale = st.j.norm() * st.e.norm();
  return std::sqrt(g2) <= 1e-3 * scale + 1e-300;
}

void ClampToLimits(const Rig& rig, StageWork& st, double* theta) {
  for (int c = 0; c < st.cols; ++c) {
    const int ch = st.col_channel[c];
    theta[ch] = std::clamp(theta[ch], rig.min[ch], rig.max[ch]);
  }
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

// Damping after a rejected trial: Nielsen's update (lambda^2 *= nu, nu doubles) when `nielsen`
// (single-level kDlsAdaptive), else lambda *= 10. True when lambda reached lambda_max (the
// caller then counts the stage as stalled).
bool DampAfterReject(bool nielsen, const Settings& set, double* lambda, double* nu) {
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
void DampAfterAccept(bool nielsen, double err, double next, double predicted, const Settings& set,
                     double* lambda, double* nu) {
  if (nielsen && predicted > 0) {
    const double rho = (err - next) / predicted;
    const double t = 2 * rho - 1;
    *lambda = std::max(*lambda * std::sqrt(std::max(1.0 / 3, 1 - t * t * t)), set.lambda_min);
    *nu = 2;
  } else {
    *lambda = std::max(*lambda * 0.1, set.lambda_min);
  }
}

// Takes the step st.dtheta (channel units) from the current channel values, kept inside the
// limits; the values before it stay in st.theta_prev for UndoStep.
void TakeStep(const Rig& rig, StageWork& st, double* theta) {
  for (int c = 0; c < st.cols; ++c) {
    const int ch = st.col_channel[c];
    st.theta_prev[c] = theta[ch];
    theta[ch] = std::clamp(theta[ch] + st.dtheta[c], rig.min[ch], rig.max[ch]);
  }
}

// Restores the channel values from before the last TakeStep.
void UndoStep(const StageWork& st, double* theta) {
  for (int c = 0; c < st.cols; ++c) theta[st.col_channel[c]] = st.theta_prev[c];
}

// ---- Serial fast path ----
// A stage with one position task (3 rows) or pose task (6 rows) on all axes, solved by damped
// least squares without the preferred-angle bias: the common case of one chain and one effector
// (an arm, a leg, a spine). IterateSerial<N> runs the same iteration as Iterate (same steps,
// damping schedule, active set, max step and stopping rules) on N x N systems held in
// fixed-size arrays.

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
    // RotationError with R_d precomputed for the solve.
    const Eigen::Matrix3d r_e = rj * st.task_offset_rotation[0];
    const Eigen::Matrix3d r = r_d * r_e.transpose();
    Vector3d v(0.5 * (r(2, 1) - r(1, 2)), 0.5 * (r(0, 2) - r(2, 0)), 0.5 * (r(1, 0) - r(0, 1)));
    const double c = 0.5 * (r.trace() - 1.0);
    if (c > -0.5) {
      const double sn = v.norm();
      if (sn >= 1e-300) v *= AngleOverSine(sn, c);
    } else {
      v = RotationError(target.orientation, r_e);
    }
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
    const Vector3d& a = st.axis[c];
    const double f = weight * st.scale[c];
    if (st.col_rotation[c]) {
      const Vector3d v = a.cross(p_e - st.pivot[c]);
      out[0] = f * v.x();
      out[1] = f * v.y();
      out[2] = f * v.z();
      if constexpr (N == 6) {
        out[3] = f * a.x();
        out[4] = f * a.y();
        out[5] = f * a.z();
      }
    } else {
      out[0] = f * a.x();
      out[1] = f * a.y();
      out[2] = f * a.z();
      if constexpr (N == 6) out[3] = out[4] = out[5] = 0.0;
    }
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
    // Lower triangle of J J^T + damp I over the free columns.
    double m[N * N];
    auto assemble = [&](double damp) {
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
    };
    assemble(lambda * lambda);
    double inv_d[N];
    bool ok = Ldlt<N>(m, N, inv_d);
    if (!ok) {
      // Singular (lambda = 0 at a singular pose): damp slightly so the step stays finite.
      assemble(lambda * lambda);
      double largest = 0.0;
      for (int i = 0; i < N; ++i) largest = std::max(largest, m[i * N + i]);
      assemble(lambda * lambda + 1e-10 * std::max(largest, 1e-300));
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
Status IterateSerial(const Rig& rig, const Settings& set, std::span<const Target> targets,
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
    SerialStep<N>(rig, st, lambda, set, theta);
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
    if (adaptive) swap_saved();
    ChainFk(s, w, st, theta);
    const double next = SerialError<N>(task, target, r_d, weight, w, st);
    j_valid = false;
    if (adaptive) {
      if (!(next < err)) {
        UndoStep(st, theta);
        swap_saved();
        j_valid = true;
        st.frames_valid = false;
        if (DampAfterReject(true, set, &lambda, &nu)) stall = set.stall_iterations;
        continue;
      }
      DampAfterAccept(true, err, next, predicted, set, &lambda, &nu);
    }
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = next;
  }
  *iterations += it;
  return status;
}

// One run of the iteration from the current channel values. Leaves st.j/st.e/pos_err/ang_err
// for the returned (accepted) values.
Status Iterate(const Rig& rig, const Settings& set, std::span<const Target> targets,
               Workspace::Impl& w, StageWork& st, double* theta, int* iterations) {
  if (w.fast_paths && SerialEligible(rig, targets, st)) {
    return st.serial_rows == 6 ? IterateSerial<6>(rig, set, targets, w, st, theta, iterations)
                               : IterateSerial<3>(rig, set, targets, w, st, theta, iterations);
  }
  const Skeleton& s = rig.skeleton();
  const Method method = st.method;
  StartFk(s, w, st, theta);
  // The Jacobian is filled lazily: not for a pose that turns out converged or a rejected trial.
  FillSystem(rig, targets, w, st, false);
  bool j_valid = false;
  double err = DrivingError(rig, targets, st, set);
  const bool adaptive = method == Method::kDlsAdaptive || method == Method::kTranspose;
  double lambda = set.lambda;
  if (method == Method::kDlsAdaptive && st.levels.size() == 1 && st.rows <= 6) {
    // Single effector: start the damping from the residual (at least 0.1 |e|). A far target
    // then takes shorter, better-aimed first steps (fewer max-step-scaled and rejected trials:
    // 6D arm median 10 -> 9 iterations, p75 34 -> 14); near the target it stays set.lambda.
    lambda = std::max(lambda, 0.1 * std::sqrt(err));
  }
  double nu = 2;
  bool chord_ok = false;
  double transpose_scale = 1.0;
  int stall = 0;
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
        transpose_scale = 1.0;
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
        const double next = DrivingError(rig, targets, st, set);
        if (next < err) {
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
          stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
          err = next;
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
    ComputeStep(rig, st, method, lambda, set, theta);
    double predicted = 0.0;
    if (method == Method::kDlsAdaptive && st.levels.size() == 1) {
      st.e_work = st.e;
      st.e_work.noalias() -= st.j * st.x;
      predicted = err - st.e_work.squaredNorm();
    }
    if (method == Method::kTranspose) st.dtheta *= transpose_scale;
    TakeStep(rig, st, theta);
    ++it;
    // The trial system goes into the spare buffers; the accepted one stays in *_saved.
    if (adaptive) swap_saved();
    ChainFk(s, w, st, theta);
    FillSystem(rig, targets, w, st, false);
    j_valid = false;
    const double next = DrivingError(rig, targets, st, set);
    if (adaptive) {
      if (!(next < err)) {
        // Reject: restore (the joint frames are recomputed before their next use), damp harder
        // (or halve the transpose step) and retry.
        UndoStep(st, theta);
        swap_saved();
        j_valid = true;
        st.frames_valid = false;
        if (method == Method::kTranspose) {
          transpose_scale *= 0.5;
          if (transpose_scale < 1e-12) stall = set.stall_iterations;
        } else if (DampAfterReject(method == Method::kDlsAdaptive && st.levels.size() == 1, set,
                                   &lambda, &nu)) {
          stall = set.stall_iterations;
        }
        continue;
      }
      // After an accepted full step the next step may reuse its Jacobian and factorization (a
      // chord step, kept only if it lowers the error). Only for larger systems (several
      // effectors), where the Jacobian and its factorization cost more than the FK: on a single
      // 3/6-row chain a full Gauss-Newton step is cheap and converges faster.
      chord_ok = st.fast && st.rows > 6 && !st.last_bias;
      if (method == Method::kTranspose) {
        transpose_scale = std::min(1.0, transpose_scale * 2.0);
      } else {
        DampAfterAccept(method == Method::kDlsAdaptive && st.levels.size() == 1, err, next,
                        predicted, set, &lambda, &nu);
      }
    }
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = next;
  }
  *iterations += it;
  return status;
}

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

Status RunTwoBone(const Rig& rig, int stage_index, std::span<const Target> targets, Pose& pose,
                  Workspace::Impl& w, int* iterations) {
  const Skeleton& s = rig.skeleton();
  const Settings& set = rig.stages[stage_index].settings;
  StageWork& st = w.stages[stage_index];
  pose.UpdateWorld(s);
  const Task& task = rig.tasks[st.pos_task];
  TwoBoneJob job;
  job.skeleton = &s;
  job.channels = pose.channels;
  job.world = pose.world;
  job.upper = st.upper;
  job.lower = st.lower;
  job.end = st.end;
  job.offset = task.offset;
  job.target = targets[st.pos_task].position;
  if (st.pole_task >= 0 && rig.tasks[st.pole_task].weight * targets[st.pole_task].weight > 0) {
    job.pole = targets[st.pole_task].position;
    job.use_pole = true;
  }
  job.min = rig.min;
  job.max = rig.max;
  bool reached = false;
  job.reached = &reached;
  if (!job.Run()) return Status::kInvalidInput;
  // Limits: the analytic answer is projected onto the limits of the two joints.
  for (const int j : {st.upper, st.lower}) {
    for (const int c : s.rotation_channels(j)) {
      pose.channels[c] = std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
    }
  }
  pose.UpdateWorld(s);
  *iterations += 1;
  double pe = 0, ae = 0;
  TaskError(s, task, targets[st.pos_task], pose.world, &pe, &ae);
  if (pe <= set.position_tolerance) return Status::kConverged;
  return reached ? Status::kNotConverged : Status::kUnreachable;
}

// Validates the rig's data arrays and tasks.
bool ValidateRig(const Rig& rig, std::string* error) {
  if (!rig.skeleton_ptr()) return Fail(error, "rig has no skeleton");
  const Skeleton& s = rig.skeleton();
  const size_t nc = s.num_channels();
  const size_t nj = s.num_joints();
  if (rig.min.size() != nc || rig.max.size() != nc || rig.locked.size() != nc ||
      rig.preferred.size() != nc || rig.preferred_gain.size() != nc) {
    return Fail(error, "rig per-channel arrays: expected " + std::to_string(nc) + " entries");
  }
  if (rig.strength.size() != nj) {
    return Fail(error, "rig strength: expected " + std::to_string(nj) + " entries, got " +
                           std::to_string(rig.strength.size()));
  }
  for (size_t c = 0; c < nc; ++c) {
    if (std::isnan(rig.min[c]) || std::isnan(rig.max[c]) || rig.min[c] > rig.max[c]) {
      return Fail(error, "channel " + std::to_string(c) + ": limits min > max or NaN");
    }
    if (!Finite(rig.preferred[c]) || !Finite(rig.preferred_gain[c]) || rig.preferred_gain[c] < 0) {
      return Fail(error, "channel " + std::to_string(c) + ": bad preferred value or gain");
    }
  }
  for (size_t j = 0; j < nj; ++j) {
    if (!Finite(rig.strength[j]) || rig.strength[j] < 0) {
      return Fail(error, "joint '" + s.name(static_cast<int>(j)) + "': negative strength");
    }
  }
  const int n = s.num_joints();
  for (size_t i = 0; i < rig.tasks.size(); ++i) {
    const Task& t = rig.tasks[i];
    const std::string where =
        "task " + std::to_string(i) + " (" + std::string(TaskTypeName(t.type)) + ")";
    if (t.joint < 0 || t.joint >= n) return Fail(error, where + ": joint out of range");
    if (!t.offset.allFinite()) return Fail(error, where + ": offset not finite");
    if (!t.offset_rotation.coeffs().allFinite() ||
        std::abs(t.offset_rotation.norm() - 1.0) > 1e-6) {
      return Fail(error, where + ": offset_rotation not unit length");
    }
    if (!Finite(t.weight) || t.weight < 0) return Fail(error, where + ": negative weight");
    if ((t.type == TaskType::kPosition || t.type == TaskType::kPose) &&
        (t.position_axes & 7) == 0) {
      return Fail(error, where + ": no position axis");
    }
    if (t.type == TaskType::kAim &&
        (!t.aim_axis.allFinite() || std::abs(t.aim_axis.norm() - 1.0) > 1e-6)) {
      return Fail(error, where + ": aim_axis not unit length");
    }
    if (t.type == TaskType::kPole) {
      if (t.pole_root < 0 || t.pole_root >= n || t.pole_mid < 0 || t.pole_mid >= n) {
        return Fail(error, where + ": pole_root/pole_mid out of range");
      }
      if (!IsAncestorOrSelf(s, t.pole_root, t.pole_mid) ||
          !IsAncestorOrSelf(s, t.pole_mid, t.joint) || t.pole_root == t.pole_mid ||
          t.pole_mid == t.joint) {
        return Fail(error, where + ": pole_root and pole_mid must be ancestors of the joint");
      }
    }
  }
  for (size_t i = 0; i < rig.stages.size(); ++i) {
    const Stage& st = rig.stages[i];
    const std::string where =
        "stage " + std::to_string(i) + " (" + std::string(MethodName(st.method)) + ")";
    for (const int t : st.tasks) {
      if (t < 0 || t >= static_cast<int>(rig.tasks.size())) {
        return Fail(error, where + ": task index out of range");
      }
    }
    if (st.chain_root < -1 || st.chain_root >= n) {
      return Fail(error, where + ": chain_root out of range");
    }
    const Settings& x = st.settings;
    if (x.max_iterations < 1 || !(x.position_tolerance >= 0) || !(x.angle_tolerance >= 0) ||
        !(x.lambda >= 0) || !(x.lambda_min >= 0) || !(x.lambda_max >= x.lambda_min) ||
        x.stall_iterations < 1 || x.preferred_power < 2 || x.preferred_power % 2 != 0 ||
        !Finite(x.max_step) || !Finite(x.preferred_step) || !(x.svd_threshold >= 0)) {
      return Fail(error, where + ": settings out of range");
    }
  }
  return true;
}

}  // namespace

bool Workspace::Prepare(const Rig& rig, std::string* error) {
  if (!ValidateRig(rig, error)) return false;
  Impl& w = *impl_;
  const Skeleton& s = rig.skeleton();
  const int nj = s.num_joints();
  const int nc = s.num_channels();
  w.skeleton = &s;
  w.task_keys.clear();
  for (const Task& t : rig.tasks) {
    w.task_keys.emplace_back(t.type, t.joint, t.pole_root, t.pole_mid, t.priority, t.position_axes,
                             t.alternate_jacobian);
  }
  w.stage_keys.clear();
  for (const Stage& st : rig.stages) {
    w.stage_keys.emplace_back(st.method, st.tasks, st.chain_root, st.upper, st.lower);
  }
  w.locked = rig.locked;
  w.relaxed.assign(nj, 0);
  for (int j = 0; j < nj; ++j) w.relaxed[j] = rig.strength[j] == 0.0 ? 1 : 0;
  w.rot.assign(nj, Eigen::Matrix3d::Identity());
  w.pos.assign(nj, Vector3d::Zero());
  w.rest_rot.resize(nj);
  w.rest_identity.resize(nj);
  for (int j = 0; j < nj; ++j) {
    w.rest_rot[j] = s.rest_orientation(j).toRotationMatrix();
    w.rest_identity[j] = w.rest_rot[j].isIdentity(0.0) ? 1 : 0;
  }
  const std::vector<Stage> stages = EffectiveStages(rig);
  w.stages.clear();
  w.stages.resize(stages.size());
  for (size_t si = 0; si < stages.size(); ++si) {
    const Stage& stage = stages[si];
    StageWork& st = w.stages[si];
    const std::string where =
        "stage " + std::to_string(si) + " (" + std::string(MethodName(stage.method)) + ")";
    st.method = stage.method;
    st.tasks = StageTasks(rig, stage);
    if (st.tasks.empty()) return Fail(error, where + ": no task to solve");
    // Joints to update: every ancestor-or-self of the tasks' joints.
    std::vector<std::uint8_t> needed(nj, 0);
    for (const int t : st.tasks) {
      for (int j = rig.tasks[t].joint; j != Skeleton::kNoParent; j = s.parent(j)) needed[j] = 1;
    }
    st.joints.clear();
    for (int j = 0; j < nj; ++j) {
      if (needed[j]) st.joints.push_back(j);
    }
    // Columns: channels of needed joints under chain_root, not locked, not relaxed.
    st.col_channel.clear();
    st.col_joint.clear();
    st.col_rotation.clear();
    st.channel_col.assign(nc, -1);
    for (int c = 0; c < nc; ++c) {
      const int j = s.channel_joint(c);
      if (!needed[j] || rig.locked[c] || w.relaxed[j]) continue;
      if (stage.chain_root >= 0 && !IsAncestorOrSelf(s, stage.chain_root, j)) continue;
      st.channel_col[c] = static_cast<int>(st.col_channel.size());
      st.col_channel.push_back(c);
      st.col_joint.push_back(j);
      st.col_rotation.push_back(IsRotation(s.channels()[c]) ? 1 : 0);
    }
    st.cols = static_cast<int>(st.col_channel.size());
    const int ncols = st.cols;
    st.frames_valid = false;
    st.joint_in_stage.assign(nj, 0);
    for (const int j : st.joints) st.joint_in_stage[j] = 1;
    st.fk.clear();
    st.fk_channels.clear();
    for (const int j : st.joints) {
      internal::FkJoint f;
      f.joint = j;
      f.parent = s.parent(j) == Skeleton::kNoParent ? -1 : s.parent(j);
      f.rest_identity = w.rest_identity[j] != 0;
      f.rest_t = s.rest_translation(j);
      f.t_begin = static_cast<int>(st.fk_channels.size());
      for (int axis = 0; axis < 3; ++axis) {
        const int c = s.translation_channel(j, axis);
        if (c >= 0) st.fk_channels.push_back({c, axis, st.channel_col[c]});
      }
      f.t_end = static_cast<int>(st.fk_channels.size());
      for (const int c : s.rotation_channels(j)) {
        st.fk_channels.push_back({c, ChannelAxis(s.channels()[c]), st.channel_col[c]});
      }
      f.r_end = static_cast<int>(st.fk_channels.size());
      st.fk.push_back(f);
    }
    st.fk_theta.assign(st.fk_channels.size(), 0.0);
    auto cols_of = [&](int joint) {
      std::vector<int> out;
      for (int col = 0; col < ncols; ++col) {
        if (IsAncestorOrSelf(s, st.col_joint[col], joint)) out.push_back(col);
      }
      return out;
    };
    const size_t ntasks = st.tasks.size();
    st.task_row.assign(ntasks, 0);
    st.task_dim.assign(ntasks, 0);
    st.task_cols.assign(ntasks, {});
    st.task_offset_rotation.assign(ntasks, Eigen::Matrix3d::Identity());
    st.levels.clear();
    int row = 0;
    for (size_t k = 0; k < ntasks; ++k) {
      const Task& t = rig.tasks[st.tasks[k]];
      if (k == 0 || t.priority != rig.tasks[st.tasks[k - 1]].priority) {
        st.levels.emplace_back();
        st.levels.back().row_begin = row;
      }
      st.task_row[k] = row;
      st.task_dim[k] = internal::TaskRows(t);
      row += st.task_dim[k];
      st.levels.back().rows += st.task_dim[k];
      st.task_cols[k] = cols_of(t.joint);
      st.task_offset_rotation[k] = t.offset_rotation.normalized().toRotationMatrix();
    }
    st.rows = row;
    st.task_col_moves.assign(ntasks, {});
    for (size_t k = 0; k < ntasks; ++k) {
      const Task& t = rig.tasks[st.tasks[k]];
      if (t.type != TaskType::kPole) continue;
      for (const int col : st.task_cols[k]) {
        std::uint8_t moves = 0;
        if (IsAncestorOrSelf(s, st.col_joint[col], t.pole_mid)) moves |= 1;
        if (IsAncestorOrSelf(s, st.col_joint[col], t.pole_root)) moves |= 2;
        st.task_col_moves[k].push_back(moves);
      }
    }
    st.fast = (stage.method == Method::kDls || stage.method == Method::kDlsAdaptive) &&
              st.levels.size() == 1;
    st.serial_rows = 0;
    if (st.fast && ntasks == 1) {
      const Task& t = rig.tasks[st.tasks[0]];
      if ((t.position_axes & 7) == 7 && !t.alternate_jacobian &&
          (t.type == TaskType::kPosition || t.type == TaskType::kPose)) {
        st.serial_rows = t.type == TaskType::kPose ? 6 : 3;
      }
    }
    st.blocks.clear();
    if (st.fast) {
      for (size_t a = 0; a < ntasks; ++a) {
        for (size_t b = 0; b <= a; ++b) {
          internal::StageWork::Block blk;
          blk.row_a = st.task_row[a];
          blk.dim_a = st.task_dim[a];
          blk.row_b = st.task_row[b];
          blk.dim_b = st.task_dim[b];
          std::set_intersection(st.task_cols[a].begin(), st.task_cols[a].end(),
                                st.task_cols[b].begin(), st.task_cols[b].end(),
                                std::back_inserter(blk.cols));
          if (!blk.cols.empty()) st.blocks.push_back(std::move(blk));
        }
      }
      // Cost of a full step relative to a chord step, from the operation counts: a chord step
      // runs the FK (about 40 flops per rotation channel), J^T beta and the two triangular
      // solves; a full step adds filling J, assembling J J^T and factorizing it.
      double fk = 0.0, assembly = 0.0;
      for (const internal::FkChannel& fc : st.fk_channels) fk += fc.col >= 0 ? 40.0 : 20.0;
      for (const internal::StageWork::Block& blk : st.blocks) {
        assembly +=
            static_cast<double>(blk.dim_a) * blk.dim_b * static_cast<double>(blk.cols.size());
      }
      const double rc = static_cast<double>(st.rows) * ncols,
                   r2 = static_cast<double>(st.rows) * st.rows;
      const double chord = fk + rc + r2;
      st.full_over_chord = (chord + rc + assembly + r2 * st.rows / 6.0) / chord;
    }
    if (!IsIterative(stage.method) || stage.method == Method::kTranspose) {
      // One stacked system (transpose and CCD ignore priorities).
      if (st.levels.size() > 1) {
        st.levels.resize(1);
        st.levels[0].row_begin = 0;
        st.levels[0].rows = st.rows;
      }
    }
    const int m = st.rows;
    st.axis.assign(ncols, Vector3d::Zero());
    st.pivot.assign(ncols, Vector3d::Zero());
    st.pos_err.assign(ntasks, 0.0);
    st.ang_err.assign(ntasks, 0.0);
    st.pos_err_saved.assign(ntasks, 0.0);
    st.ang_err_saved.assign(ntasks, 0.0);
    st.best = VectorXd::Zero(ncols);
    st.j = MatrixXd::Zero(m, ncols);
    st.j_saved = MatrixXd::Zero(m, ncols);
    st.n_proj = st.levels.size() > 1 ? MatrixXd::Zero(ncols, ncols) : MatrixXd();
    st.e = VectorXd::Zero(m);
    st.e_saved = VectorXd::Zero(m);
    st.e_work = VectorXd::Zero(m);
    for (VectorXd* v : {&st.x, &st.dtheta, &st.fixed, &st.z, &st.scale, &st.theta_prev, &st.grad}) {
      *v = VectorXd::Zero(ncols);
    }
    st.clamped.assign(ncols, 0);
    for (Level& lv : st.levels) {
      const int r = lv.rows;
      lv.a = MatrixXd::Zero(r, ncols);
      lv.m = MatrixXd::Zero(r, r);
      lv.p = st.levels.size() > 1 ? MatrixXd::Zero(ncols, r) : MatrixXd();
      lv.r = VectorXd::Zero(r);
      lv.beta = VectorXd::Zero(r);
      lv.tmp_m = VectorXd::Zero(std::max(r, 1));
      lv.tmp_n = VectorXd::Zero(ncols);
      lv.unit = VectorXd::Zero(r);
      lv.col = VectorXd::Zero(ncols);
      lv.house = VectorXd::Zero(std::max(ncols, r) + 1);
      if (stage.method == Method::kDls || stage.method == Method::kDlsAdaptive) {
        lv.llt = Eigen::LLT<MatrixXd>(r);
      } else if (stage.method == Method::kPseudoInverse) {
        lv.lu = Eigen::PartialPivLU<MatrixXd>(r);
      } else if (stage.method == Method::kSvd) {
        lv.svd = Eigen::JacobiSVD<MatrixXd>(r, ncols, Eigen::ComputeThinU | Eigen::ComputeThinV);
      } else if (stage.method == Method::kQr) {
        lv.at = MatrixXd::Zero(ncols, r);
        lv.qr = Eigen::ColPivHouseholderQR<MatrixXd>(ncols, r);
      }
    }
    if (stage.method == Method::kCcd) {
      bool any = false;
      for (const int t : st.tasks) {
        any |= rig.tasks[t].type == TaskType::kPosition || rig.tasks[t].type == TaskType::kPose;
      }
      if (!any) return Fail(error, where + ": CCD needs a position or pose task");
    }
    if (stage.method == Method::kTwoBone) {
      st.pos_task = -1;
      st.pole_task = -1;
      for (const int t : st.tasks) {
        const TaskType type = rig.tasks[t].type;
        if (st.pos_task < 0 && (type == TaskType::kPosition || type == TaskType::kPose)) {
          st.pos_task = t;
        }
        if (st.pole_task < 0 && type == TaskType::kPole) st.pole_task = t;
      }
      if (st.pos_task < 0) return Fail(error, where + ": two-bone needs a position or pose task");
      st.end = rig.tasks[st.pos_task].joint;
      st.lower = stage.lower;
      st.upper = stage.upper;
      if (st.lower < 0) {
        for (int j = s.parent(st.end); j != Skeleton::kNoParent; j = s.parent(j)) {
          if (!s.rotation_channels(j).empty()) {
            st.lower = j;
            break;
          }
        }
      }
      if (st.upper < 0 && st.lower >= 0) {
        for (int j = s.parent(st.lower); j != Skeleton::kNoParent; j = s.parent(j)) {
          if (s.rotation_channels(j).size() == 3) {
            st.upper = j;
            break;
          }
        }
      }
      if (st.upper < 0 || st.lower < 0 || st.upper >= nj || st.lower >= nj ||
          !IsAncestorOrSelf(s, st.upper, st.lower) || !IsAncestorOrSelf(s, st.lower, st.end) ||
          st.upper == st.lower || st.lower == st.end || s.rotation_channels(st.upper).size() != 3 ||
          (s.rotation_channels(st.lower).size() != 1 &&
           s.rotation_channels(st.lower).size() != 3)) {
        return Fail(error, where +
                               ": no valid upper/lower/end joints (upper needs 3 rotation "
                               "channels, lower 1 or 3)");
      }
    }
  }
  return true;
}

bool Workspace::IsPreparedFor(const Rig& rig) const {
  const Impl& w = *impl_;
  if (!rig.skeleton_ptr() || w.skeleton != &rig.skeleton()) return false;
  if (w.task_keys.size() != rig.tasks.size() || w.stage_keys.size() != rig.stages.size()) {
    return false;
  }
  for (size_t i = 0; i < rig.tasks.size(); ++i) {
    const Task& t = rig.tasks[i];
    if (w.task_keys[i] != std::make_tuple(t.type, t.joint, t.pole_root, t.pole_mid, t.priority,
                                          t.position_axes, t.alternate_jacobian)) {
      return false;
    }
  }
  for (size_t i = 0; i < rig.stages.size(); ++i) {
    const Stage& st = rig.stages[i];
    const auto& key = w.stage_keys[i];
    if (std::get<0>(key) != st.method || std::get<1>(key) != st.tasks ||
        std::get<2>(key) != st.chain_root || std::get<3>(key) != st.upper ||
        std::get<4>(key) != st.lower) {
      return false;
    }
  }
  if (w.locked != rig.locked || rig.strength.size() != w.relaxed.size()) return false;
  for (size_t j = 0; j < w.relaxed.size(); ++j) {
    if (w.relaxed[j] != (rig.strength[j] == 0.0 ? 1 : 0)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Jobs and Solve.

namespace {

bool ValidateFrame(const Rig& rig, std::span<const Target> targets, const Pose& pose,
                   std::string* error) {
  if (!rig.skeleton_ptr()) return Fail(error, "rig has no skeleton");
  const Skeleton& s = rig.skeleton();
  if (!pose.matches(s)) {
    return Fail(error, "pose does not match the skeleton: expected " +
                           std::to_string(s.num_channels()) + " channels, got " +
                           std::to_string(pose.channels.size()));
  }
  if (targets.size() != rig.tasks.size()) {
    return Fail(error, "targets: expected " + std::to_string(rig.tasks.size()) + ", got " +
                           std::to_string(targets.size()));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& t = targets[i];
    if (!t.position.allFinite() || !t.orientation.coeffs().allFinite() || !Finite(t.weight) ||
        t.weight < 0) {
      return Fail(error, "target " + std::to_string(i) + ": not finite or negative weight");
    }
    const TaskType type = rig.tasks[i].type;
    if ((type == TaskType::kOrientation || type == TaskType::kPose) &&
        std::abs(t.orientation.norm() - 1.0) > 1e-6) {
      return Fail(error, "target " + std::to_string(i) + ": orientation not unit length");
    }
  }
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    if (!Finite(pose.channels[c])) {
      return Fail(error, "pose channel " + std::to_string(c) + " is not finite");
    }
  }
  return true;
}

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

// pose.world for every joint: the last stage's joint frames when they are current (they are
// computed exactly as ForwardKinematics does), forward kinematics for the other joints.
void UpdateWorldAfterSolve(const Skeleton& s, const Workspace::Impl& w, Pose& pose) {
  const StageWork& last = w.stages.back();
  if (!last.frames_valid) {
    pose.UpdateWorld(s);
    return;
  }
  const int nj = s.num_joints();
  for (int j = 0; j < nj; ++j) {
    Eigen::Isometry3d& out = pose.world[j];
    if (last.joint_in_stage[j]) {
      out.linear() = w.rot[j];
      out.translation() = w.pos[j];
      out.makeAffine();
      continue;
    }
    Vector3d t = s.rest_translation(j);
    for (int axis = 0; axis < 3; ++axis) {
      const int c = s.translation_channel(j, axis);
      if (c >= 0) t[axis] += pose.channels[c];
    }
    const int p = s.parent(j);
    Eigen::Matrix3d r;
    if (p == Skeleton::kNoParent) {
      r = w.rest_identity[j] ? Eigen::Matrix3d::Identity() : w.rest_rot[j];
      out.translation() = t;
    } else {
      const Eigen::Isometry3d& pw = pose.world[p];
      r = w.rest_identity[j] ? Eigen::Matrix3d(pw.linear())
                             : Eigen::Matrix3d(pw.linear() * w.rest_rot[j]);
      out.translation() = pw.translation() + pw.linear() * t;
    }
    const std::span<const ChannelType> layout = s.channels();
    for (const int c : s.rotation_channels(j)) {
      double sn, cs;
      internal::SinCos(pose.channels[c], &sn, &cs);
      RotateColumns(r, ChannelAxis(layout[c]), cs, sn);
    }
    out.linear() = r;
    out.makeAffine();
  }
}

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
  report->channels_on_limit.clear();
  report->channels_on_limit.reserve(s.num_channels());  // Grows once.
  for (int c = 0; c < s.num_channels(); ++c) {
    if (pose.channels[c] <= rig.min[c] || pose.channels[c] >= rig.max[c]) {
      report->channels_on_limit.push_back(c);
    }
  }
}

}  // namespace

bool IterativeJob::Validate(std::string* error) const {
  return ValidateStageJob(*this, true, error);
}

bool IterativeJob::Run() const {
  if (!Validate()) return false;
  int iterations = 0;
  workspace->impl().restarts = 0;
  const Status status = RunIterative(*rig, stage, targets, *pose, workspace->impl(), &iterations);
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
  const Status status = RunCcd(*rig, stage, targets, *pose, workspace->impl(), &iterations);
  if (report) {
    report->status = status;
    report->iterations += iterations;
  }
  return true;
}

bool Solve(const Rig& rig, std::span<const Target> targets, Pose& pose, Workspace& workspace,
           SolveReport* report) {
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
  for (int c = 0; c < s.num_channels(); ++c) {
    pose.channels[c] = std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
  }
  Workspace::Impl& w = workspace.impl();
  w.restarts = 0;
  int iterations = 0;
  bool all_converged = true;
  bool any_unreachable = false;
  int failed_stage = -1;
  for (size_t si = 0; si < w.stages.size(); ++si) {
    const Method m = w.stages[si].method;
    const int idx = static_cast<int>(si);
    Status st;
    if (m == Method::kCcd) {
      st = RunCcd(rig, idx, targets, pose, w, &iterations);
    } else if (m == Method::kTwoBone) {
      st = RunTwoBone(rig, idx, targets, pose, w, &iterations);
    } else {
      st = RunIterative(rig, idx, targets, pose, w, &iterations);
    }
    if (st == Status::kInvalidInput) return invalid("stage " + std::to_string(si) + " failed");
    if (st != Status::kConverged) {
      all_converged = false;
      if (failed_stage < 0) failed_stage = idx;
    }
    if (st == Status::kUnreachable) any_unreachable = true;
  }
  UpdateWorldAfterSolve(s, w, pose);
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
    FillReport(rig, targets, pose, w, report);
  }
  return true;
}

void TaskError(const Skeleton& skeleton, const Task& task, const Target& target,
               std::span<const Eigen::Isometry3d> world, double* position_error,
               double* angle_error) {
  (void)skeleton;
  double pe = 0.0, ae = 0.0;
  const Eigen::Isometry3d& wj = world[task.joint];
  const Vector3d p_e = wj * task.offset;
  if (task.type == TaskType::kPosition || task.type == TaskType::kPose) {
    Vector3d err = target.position - p_e;
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
    const Vector3d a = wj.linear() * task.aim_axis;
    const Vector3d to = target.position - p_e;
    if (to.norm() > 1e-12) ae = AimRotation(a, to.normalized()).norm();
  }
  if (task.type == TaskType::kPole) {
    const Vector3d p_r = world[task.pole_root].translation();
    const Vector3d p_m = world[task.pole_mid].translation();
    Vector3d s_axis = p_e - p_r;
    if (s_axis.norm() > 1e-12) {
      s_axis.normalize();
      const Vector3d m = p_m - p_r;
      const Vector3d m_perp = m - s_axis * s_axis.dot(m);
      const Vector3d q = target.position - p_r;
      const Vector3d q_perp = q - s_axis * s_axis.dot(q);
      if (m_perp.norm() > 1e-12 && q_perp.norm() > 1e-12) {
        ae = std::abs(std::atan2(s_axis.dot(m_perp.cross(q_perp)), m_perp.dot(q_perp)));
      }
    }
  }
  if (position_error) *position_error = pe;
  if (angle_error) *angle_error = ae;
}

}  // namespace rigel::ik
