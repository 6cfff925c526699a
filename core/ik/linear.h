// Linear-algebra kernels of the IK iteration (internal to core/ik): the per-priority-level
// systems factorized by Eigen (LLT, LU, SVD, QR) for every method, and an in-place LDL^T with
// fixed-size (register-held) and runtime-size variants for the damped least-squares fast paths.
// Header-only: the step code (core/ik/step.cc) inlines them as it did when they shared its file.
#ifndef RIGEL_CORE_IK_LINEAR_H_
#define RIGEL_CORE_IK_LINEAR_H_

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cstddef>
#include <limits>

#include "core/ik/rig.h"

namespace rigel::ik::internal {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// One priority level's system and factorizations, sized once.
struct Level {
  int row_begin = 0;
  int rows = 0;
  MatrixXd a;   // rows x n: the level's Jacobian (projected into the higher levels' null space).
  MatrixXd m;   // rows x rows.
  MatrixXd p;   // n x rows: A^T (A A^T)^+ (multi-level only).
  MatrixXd g;   // rows x rows: (A A^T)'s eigenvectors scaled (multi-level only).
  MatrixXd at;  // n x rows (QR of A^T).
  VectorXd r, beta, tmp_m, tmp_n, house, unit, col;
  VectorXd work;  // BlockLdlt's W (rows x 6).
  Eigen::LLT<MatrixXd> llt;
  Eigen::PartialPivLU<MatrixXd> lu;
  Eigen::JacobiSVD<MatrixXd> svd;
  Eigen::ColPivHouseholderQR<MatrixXd> qr;
  Eigen::SelfAdjointEigenSolver<MatrixXd> eig;  // of A A^T (multi-level only)
};

// Factorizes level.a for `method` (nothing for kTranspose; J J^T by LU, slightly damped when it
// is singular, for kPseudoInverse; SVD of A; QR of A^T; J J^T + lambda^2 I by LLT for the DLS
// methods). `n` is the number of columns.
inline void Factor(Level& lv, Method method, double lambda, int n) {
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

// out = A^+ rhs with the method's pseudo-inverse; A and its factorization are in `lv` (Factor).
// kTranspose takes Buss's step h A^T rhs; kSvd drops singular values below svd_threshold times
// the largest; kQr gives the minimum-norm solution of a consistent system (on a rank-deficient,
// inconsistent one it solves the pivot rows only: docs/ik.md, known limits).
inline void Apply(Level& lv, Method method, double svd_threshold, const VectorXd& rhs,
                  VectorXd& out) {
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

// Block LDL^T: the same factorization as Ldlt<0> (same output layout: L strictly below the
// diagonal, inv_d = 1 / D) for n = nb * B, computed on B x B blocks with fixed-size kernels
// (each block update a B x B x B product the compiler unrolls): about 1.6x faster than the
// column sweep for the 24 x 24 systems of four six-D effectors, whose short columns the sweep
// spends on loop overhead. `work` holds n * B doubles (W = L D per block column). Rounding
// differs from Ldlt<0> in the last bits (another summation order).
template <int B>
bool BlockLdlt(double* a, int n, double* inv_d, double* work) {
  using Mat = Eigen::Matrix<double, B, B>;
  using Blk = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
  const int nb = n / B;
  const Eigen::OuterStride<> stride(n);
  auto block = [&](double* base, int row_block, int col_block) {
    return Blk(base + static_cast<size_t>(col_block * B) * n + row_block * B, B, B, stride);
  };
  for (int k = 0; k < nb; ++k) {
    Blk akk = block(a, k, k);
    Mat d = akk;
    if (!Ldlt<B>(d.data(), B, inv_d + k * B)) return false;
    akk.template triangularView<Eigen::Lower>() = d.template triangularView<Eigen::Lower>();
    for (int i = k + 1; i < nb; ++i) {
      Blk aik = block(a, i, k);
      // W L_kk^T = A_ik (L_kk unit lower): column j of W is A_j - sum_{p<j} L(j, p) W_p.
      Mat w = aik;
#pragma GCC unroll 8
      for (int j = 1; j < B; ++j) {
#pragma GCC unroll 8
        for (int p = 0; p < j; ++p) w.col(j) -= d(j, p) * w.col(p);
      }
      Blk(work + i * B, B, B, stride) = w;
#pragma GCC unroll 8
      for (int j = 0; j < B; ++j) aik.col(j) = w.col(j) * inv_d[k * B + j];
    }
    for (int j = k + 1; j < nb; ++j) {
      const Mat wjk = Blk(work + j * B, B, B, stride);
      for (int i = j; i < nb; ++i) {
        const Mat lik = block(a, i, k);
        block(a, i, j).noalias() -= lik * wjk.transpose();
      }
    }
  }
  return true;
}

// Solves L D L^T x = x in place for a BlockLdlt<B> factor: block forward and backward sweeps
// with fixed-size B x B kernels.
template <int B>
void BlockLdltSolve(const double* l, int n, const double* inv_d, double* x) {
  using Vec = Eigen::Matrix<double, B, 1>;
  using CBlk = Eigen::Map<const Eigen::Matrix<double, B, B>, 0, Eigen::OuterStride<>>;
  const int nb = n / B;
  const Eigen::OuterStride<> stride(n);
  auto block = [&](int row_block, int col_block) {
    return CBlk(l + static_cast<size_t>(col_block * B) * n + row_block * B, B, B, stride);
  };
  for (int k = 0; k < nb; ++k) {
    Eigen::Map<Vec> xk(x + k * B);
    for (int p = 0; p < k; ++p) xk.noalias() -= block(k, p) * Vec(Eigen::Map<const Vec>(x + p * B));
    // Unit lower triangular block: forward substitution.
    Vec v = xk;
#pragma GCC unroll 8
    for (int i = 0; i < B; ++i) {
      const CBlk lkk = block(k, k);
#pragma GCC unroll 8
      for (int r = i + 1; r < B; ++r) v[r] -= lkk(r, i) * v[i];
    }
    xk = v;
  }
  for (int i = 0; i < n; ++i) x[i] *= inv_d[i];
  for (int k = nb - 1; k >= 0; --k) {
    Eigen::Map<Vec> xk(x + k * B);
    for (int p = k + 1; p < nb; ++p) {
      xk.noalias() -= block(p, k).transpose() * Vec(Eigen::Map<const Vec>(x + p * B));
    }
    Vec v = xk;
    const CBlk lkk = block(k, k);
#pragma GCC unroll 8
    for (int i = B - 1; i > 0; --i) {
#pragma GCC unroll 8
      for (int r = 0; r < i; ++r) v[r] -= lkk(i, r) * v[i];
    }
    xk = v;
  }
}

}  // namespace rigel::ik::internal

#endif  // RIGEL_CORE_IK_LINEAR_H_
