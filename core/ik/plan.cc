#include "core/ik/plan.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "core/ik/stages.h"
#include "core/ik/task_rows.h"
#include "core/ik/validate.h"
#include "core/skeleton.h"

namespace rigel::ik {

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;
void Workspace::SetFastPaths(bool enabled) { impl_->fast_paths = enabled; }

void Workspace::ResetContinuity() {
  for (internal::StageWork& st : impl_->stages) st.swivel.Reset();
  for (Impl::IterativePole& p : impl_->poles) p.swivel.Reset();
}

namespace internal {
namespace {

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

// The method-specific part of a stage's plan (core/ik/stages.h). True when there is none.
bool PlanMethod(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
                std::string* error) {
  const StagePlanner plan = RowOf(stage.method).plan;  // core/ik/methods.h
  return plan == nullptr || plan(rig, stage, st, where, error);
}

// The keys IsPreparedFor compares and the workspace's joint frames.
void PlanWorkspace(const Rig& rig, Workspace::Impl& w) {
  const Skeleton& s = rig.skeleton();
  const int nj = s.num_joints();
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
  w.fk_channels.assign(s.num_channels(), 0.0);
  w.channel_sin.assign(s.num_channels(), 0.0);
  w.channel_cos.assign(s.num_channels(), 0.0);
  w.joint_blend.assign(nj, 1.0);
  w.relaxed.assign(nj, 0);
  for (int j = 0; j < nj; ++j) w.relaxed[j] = rig.strength[j] == 0.0 ? 1 : 0;
  w.rot.assign(nj, Eigen::Matrix3d::Identity());
  w.pos.assign(nj, Vector3d::Zero());
  w.world_scale.assign(nj, 1.0);
  w.rest_rot.resize(nj);
  w.rest_identity.resize(nj);
  for (int j = 0; j < nj; ++j) {
    w.rest_rot[j] = s.rest_orientation(j).toRotationMatrix();
    w.rest_identity[j] = w.rest_rot[j].isIdentity(0.0) ? 1 : 0;
  }
}

// The stage's joints (every ancestor-or-self of its tasks' joints), its columns (their channels
// under chain_root, not locked, not relaxed) and its flat FK program.
void PlanColumns(const Rig& rig, const Stage& stage, const Workspace::Impl& w, StageWork& st) {
  const Skeleton& s = rig.skeleton();
  const int nj = s.num_joints();
  const int nc = s.num_channels();
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
    if (!needed[j] || rig.locked[c] || w.relaxed[j] || IsScale(s.channels()[c])) continue;
    if (stage.chain_root >= 0 && !IsAncestorOrSelf(s, stage.chain_root, j)) continue;
    st.channel_col[c] = static_cast<int>(st.col_channel.size());
    st.col_channel.push_back(c);
    st.col_joint.push_back(j);
    st.col_rotation.push_back(IsRotation(s.channels()[c]) ? 1 : 0);
  }
  st.cols = static_cast<int>(st.col_channel.size());
  st.frames_valid = false;
  st.joint_in_stage.assign(nj, 0);
  for (const int j : st.joints) st.joint_in_stage[j] = 1;
  st.fk.clear();
  st.fk_channels.clear();
  for (const int j : st.joints) {
    FkJoint f;
    f.joint = j;
    f.parent = s.parent(j) == Skeleton::kNoParent ? -1 : s.parent(j);
    f.rest_identity = w.rest_identity[j] != 0;
    f.rest_t = s.rest_translation(j);
    for (int axis = 0; axis < 3; ++axis) f.scale_c[axis] = s.scale_channel(j, axis);
    f.compensate = s.scale_inheritance(j) == ScaleInheritance::kCompensate;
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
  st.fk_rotation_channels.clear();
  for (const FkJoint& f : st.fk) {
    for (int i = f.t_end; i < f.r_end; ++i) {
      st.fk_rotation_channels.push_back(st.fk_channels[i].channel);
    }
  }
  st.fk_angle.assign(st.fk_rotation_channels.size(), 0.0);
  st.fk_sin.assign(st.fk_rotation_channels.size(), 0.0);
  st.fk_cos.assign(st.fk_rotation_channels.size(), 0.0);
}

// The stage's rows: per task its first row, row count, columns (those moving its joint) and
// offset rotation; the priority levels; for pole tasks which columns move the pole joints.
void PlanRows(const Rig& rig, StageWork& st) {
  const Skeleton& s = rig.skeleton();
  const int ncols = st.cols;
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
    st.task_dim[k] = TaskRowCount(t);
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
}

// Single-level DLS stages: the serial fast path's eligibility, the block pattern of J J^T and
// the chord-step cost ratio. Transpose and CCD stack every task in one level.
void PlanNormalEquations(const Rig& rig, const Stage& stage, StageWork& st) {
  const size_t ntasks = st.tasks.size();
  const int ncols = st.cols;
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
        StageWork::Block blk;
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
    for (const FkChannel& fc : st.fk_channels) fk += fc.col >= 0 ? 40.0 : 20.0;
    for (const StageWork::Block& blk : st.blocks) {
      assembly += static_cast<double>(blk.dim_a) * blk.dim_b * static_cast<double>(blk.cols.size());
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
}

// Every buffer of the iteration, sized once.
void SizeBuffers(const Stage& stage, StageWork& st) {
  const size_t ntasks = st.tasks.size();
  const int ncols = st.cols;
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
    if (st.levels.size() > 1) {
      lv.g = MatrixXd::Zero(r, r);
      lv.eig = Eigen::SelfAdjointEigenSolver<MatrixXd>(r);
    }
    lv.r = VectorXd::Zero(r);
    lv.beta = VectorXd::Zero(r);
    lv.tmp_m = VectorXd::Zero(std::max(r, 1));
    lv.work = VectorXd::Zero(static_cast<Eigen::Index>(r) * 6);
    lv.tmp_n = VectorXd::Zero(ncols);
    lv.unit = VectorXd::Zero(r);
    lv.col = VectorXd::Zero(ncols);
    lv.house = VectorXd::Zero(std::max(ncols, r) + 1);
    // Every pseudo-inverse method may fall back to a damped step after a rejected one (Iterate).
    if (stage.method != Method::kTranspose) lv.llt = Eigen::LLT<MatrixXd>(r);
    if (stage.method == Method::kPseudoInverse) {
      lv.lu = Eigen::PartialPivLU<MatrixXd>(r);
    } else if (stage.method == Method::kSvd) {
      lv.svd = Eigen::JacobiSVD<MatrixXd>(r, ncols, Eigen::ComputeThinU | Eigen::ComputeThinV);
    } else if (stage.method == Method::kQr) {
      lv.at = MatrixXd::Zero(ncols, r);
      lv.qr = Eigen::ColPivHouseholderQR<MatrixXd>(ncols, r);
    }
  }
}

// Plans every stage of `rig` into `w` (a fresh Impl). False, with `error`, when the rig is
// invalid; `w` is then half-built and must be dropped.
bool BuildPlan(const Rig& rig, Workspace::Impl& w, std::string* error) {
  if (!ValidateRig(rig, error)) return false;
  PlanWorkspace(rig, w);
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
    PlanColumns(rig, stage, w, st);
    PlanRows(rig, st);
    PlanNormalEquations(rig, stage, st);
    SizeBuffers(stage, st);
    if (!PlanMethod(rig, stage, st, where, error)) return false;
  }
  return true;
}

}  // namespace
}  // namespace internal

bool Workspace::Prepare(const Rig& rig, std::string* error) {
  // Built aside and swapped in only once complete: a failed Prepare leaves the workspace as it
  // was, so IsPreparedFor never accepts a half-built plan.
  auto next = std::make_unique<Impl>();
  next->fast_paths = impl_->fast_paths;
  if (!internal::BuildPlan(rig, *next, error)) return false;
  for (size_t si = 0; si < next->stages.size(); ++si) {
    const internal::StageWork& st = next->stages[si];
    if (!internal::IsIterative(st.method)) continue;
    for (const int t : st.tasks) {
      if (rig.tasks[t].type != TaskType::kPole) continue;
      Impl::IterativePole p;
      p.task = t;
      p.stage = static_cast<int>(si);
      next->poles.push_back(p);
    }
  }
  next->pole_targets.reserve(rig.tasks.size());
  impl_ = std::move(next);
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

}  // namespace rigel::ik
