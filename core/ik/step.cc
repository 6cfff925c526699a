#include "core/ik/step.h"

#include <algorithm>
#include <cmath>

#include "core/ik/linear.h"

namespace rigel::ik::internal {

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

namespace {

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

// st.x = J^T beta over the free columns (0 on clamped ones): J column-major with leading
// dimension `lj` (the current or the saved Jacobian), beta of st.rows entries, task by task.
template <int N>
[[gnu::always_inline]] inline void FreeColumnsTimesBeta(StageWork& st, const double* j, int lj,
                                                        const double* beta_all) {
  st.x.setZero();
  for (size_t k = 0; k < st.tasks.size(); ++k) {
    const int r0 = st.task_row[k];
    const int dim = N > 0 ? N : st.task_dim[k];
    const double* beta = beta_all + r0;
    for (const int c : st.task_cols[k]) {
      if (st.clamped[c]) continue;
      const double* jc = j + static_cast<size_t>(c) * lj + r0;
      double v = 0.0;
      for (int p = 0; p < dim; ++p) v += jc[p] * beta[p];
      st.x[c] += v;
    }
  }
}

// The LDL^T of st.levels[0].m in place: fixed-size for one 3- or 6-row task (N > 0), on 6 x 6
// (or 3 x 3) blocks when the rows are a multiple of 6 (or 3), by the column sweep otherwise.
// False when a pivot is not positive.
template <int N>
bool Factorize(StageWork& st) {
  Level& lv = st.levels[0];
  const int m = st.rows;
  if constexpr (N > 0) {
    return Ldlt<N>(lv.m.data(), m, lv.tmp_m.data());
  } else {
    if (m % 6 == 0) return BlockLdlt<6>(lv.m.data(), m, lv.tmp_m.data(), lv.work.data());
    if (m % 3 == 0) return BlockLdlt<3>(lv.m.data(), m, lv.tmp_m.data(), lv.work.data());
    return Ldlt<0>(lv.m.data(), m, lv.tmp_m.data());
  }
}

// x := (L D L^T)^-1 x with the factor Factorize<N> left in st.levels[0].
template <int N>
void SolveFactored(StageWork& st, double* x) {
  const Level& lv = st.levels[0];
  const int m = st.rows;
  if constexpr (N > 0) {
    LdltSolve<N>(lv.m.data(), m, lv.tmp_m.data(), x);
  } else if (m % 6 == 0) {
    BlockLdltSolve<6>(lv.m.data(), m, lv.tmp_m.data(), x);
  } else if (m % 3 == 0) {
    BlockLdltSolve<3>(lv.m.data(), m, lv.tmp_m.data(), x);
  } else {
    LdltSolve<0>(lv.m.data(), m, lv.tmp_m.data(), x);
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
  if (!Factorize<N>(st)) {
    // Singular (lambda = 0 at a singular pose): damp slightly so the step stays finite.
    AssembleNormal(st, lambda * lambda);
    double largest = 0.0;
    for (int i = 0; i < m; ++i) largest = std::max(largest, lv.m(i, i));
    AssembleNormal(st, lambda * lambda + 1e-10 * std::max(largest, 1e-300));
    if (!Factorize<N>(st)) {
      st.x.setZero();
      return;
    }
  }
  SolveFactored<N>(st, lv.beta.data());
  FreeColumnsTimesBeta<N>(st, j, lj, lv.beta.data());
  if (bias) st.x -= st.z;
}

// Chord step: x = J_k^T (J_k J_k^T + lambda^2 I)^-1 e with the Jacobian (st.j_saved), active set
// and factorization of the last full step, for the current residual st.e. Free columns only.
template <int N>
void ChordStepN(StageWork& st) {
  Level& lv = st.levels[0];
  const double* j = st.j_saved.data();
  const int lj = static_cast<int>(st.j_saved.rows());
  lv.beta = st.e;
  SolveFactored<N>(st, lv.beta.data());
  FreeColumnsTimesBeta<N>(st, j, lj, lv.beta.data());
}

// FastDlsStepN at the stage's size: fixed 6 or 3 rows for one task, runtime otherwise.
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
  // Priority levels: x = sum_l (J_l N_l)^+ (V_l - J_l x_<l),  N_l+1 = N_l - (J_l N_l)^+ (J_l
  // N_l).
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
    // The next levels' null space: N -= A^+ A with the exact, rank-revealing pseudo-inverse
    // A^+ = A^T (A A^T)^+ (eigenvalues below 1e-10 of the largest dropped), whatever damping the
    // step used. With the damped inverse I - A^+ A is not a projector, and the lower levels'
    // steps leaked into the higher levels' task space.
    lv.m.noalias() = lv.a * lv.a.transpose();
    lv.eig.compute(lv.m);
    const double top = lv.eig.eigenvalues().maxCoeff();
    for (int i = 0; i < lv.rows; ++i) {
      const double s = lv.eig.eigenvalues()[i];
      lv.tmp_m[i] = top > 0 && s > 1e-10 * top ? 1.0 / s : 0.0;
    }
    lv.g.noalias() = lv.eig.eigenvectors() * lv.tmp_m.head(lv.rows).asDiagonal();
    lv.m.noalias() = lv.g * lv.eig.eigenvectors().transpose();
    lv.p.noalias() = lv.a.transpose() * lv.m;
    st.n_proj.noalias() -= lv.p * lv.a;
  }
  if (bias) st.x.noalias() -= st.n_proj * st.z;
}

}  // namespace

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

}  // namespace rigel::ik::internal
