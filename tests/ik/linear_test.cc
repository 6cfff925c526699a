// The linear kernels of the iteration (core/ik/linear.h) against Eigen's reference
// decompositions: the in-place LDL^T at fixed sizes 3 and 6, at a runtime size and on 3 x 3 and
// 6 x 6 blocks, and every
// method's Factor/Apply on full-rank and rank-deficient systems.
#include "core/ik/linear.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <random>

namespace rigel::ik::internal {
namespace linear_test {
namespace {

Eigen::MatrixXd Random(int rows, int cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (int c = 0; c < cols; ++c) {
    for (int r = 0; r < rows; ++r) m(r, c) = u(rng);
  }
  return m;
}

// Solves (J J^T + damp I) x = b with Ldlt<N>/LdltSolve<N> from the lower triangle only.
template <int N>
Eigen::VectorXd SolveWithLdlt(const Eigen::MatrixXd& spd, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(spd.rows());
  Eigen::MatrixXd lower = spd.triangularView<Eigen::Lower>();
  // The upper part is never read: fill it with garbage to prove it.
  for (int c = 1; c < n; ++c) {
    for (int r = 0; r < c; ++r) lower(r, c) = 1e300;
  }
  Eigen::VectorXd inv_d(n), x = b;
  EXPECT_TRUE(Ldlt<N>(lower.data(), n, inv_d.data()));
  LdltSolve<N>(lower.data(), n, inv_d.data(), x.data());
  return x;
}

TEST(Linear, LdltSolvesSymmetricPositiveDefiniteSystems) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    for (const int n : {3, 6, 5, 11}) {
      const Eigen::MatrixXd j = Random(n, n + 4, rng);
      const Eigen::MatrixXd spd = j * j.transpose() + 1e-3 * Eigen::MatrixXd::Identity(n, n);
      const Eigen::VectorXd b = Random(n, 1, rng);
      const Eigen::VectorXd reference = spd.ldlt().solve(b);
      Eigen::VectorXd x;
      if (n == 3) {
        x = SolveWithLdlt<3>(spd, b);
      } else if (n == 6) {
        x = SolveWithLdlt<6>(spd, b);
      } else {
        x = SolveWithLdlt<0>(spd, b);
      }
      EXPECT_LE((x - reference).norm(), 1e-10 * (1 + reference.norm())) << n;
      EXPECT_LE((spd * x - b).norm(), 1e-10 * (1 + b.norm())) << n;
    }
  }
}

TEST(Linear, LdltRejectsANonPositivePivot) {
  Eigen::Matrix3d m;
  m << 1, 0, 0, 2, 4, 0, 0, 0, -1;  // Lower triangle of a matrix with a negative pivot.
  Eigen::Vector3d inv_d;
  EXPECT_FALSE(Ldlt<3>(m.data(), 3, inv_d.data()));
  Eigen::Matrix3d zero = Eigen::Matrix3d::Zero();
  EXPECT_FALSE(Ldlt<0>(zero.data(), 3, inv_d.data()));
}

// BlockLdlt<B>/BlockLdltSolve<B> (the multi-effector systems: rows a multiple of 6 or 3) against
// Eigen's LDL^T, from the lower triangle only, and against the column sweep Ldlt<0> they replace.
template <int B>
void ExpectBlockLdltSolves(int n, std::mt19937_64& rng) {
  const Eigen::MatrixXd j = Random(n, n + 30, rng);
  const Eigen::MatrixXd spd = j * j.transpose() + 1e-3 * Eigen::MatrixXd::Identity(n, n);
  const Eigen::VectorXd b = Random(n, 1, rng);
  const Eigen::VectorXd reference = spd.ldlt().solve(b);
  Eigen::MatrixXd lower = spd.triangularView<Eigen::Lower>();
  for (int c = 1; c < n; ++c) {
    for (int r = 0; r < c; ++r) lower(r, c) = 1e300;  // Never read.
  }
  Eigen::MatrixXd sweep = lower;
  Eigen::VectorXd inv_d(n), inv_d_sweep(n), work(n * B), x = b;
  ASSERT_TRUE(BlockLdlt<B>(lower.data(), n, inv_d.data(), work.data())) << n;
  BlockLdltSolve<B>(lower.data(), n, inv_d.data(), x.data());
  EXPECT_LE((x - reference).norm(), 1e-10 * (1 + reference.norm())) << n;
  EXPECT_LE((spd * x - b).norm(), 1e-10 * (1 + b.norm())) << n;
  // The same factor as the column sweep (L below the diagonal, 1 / D), to rounding.
  ASSERT_TRUE(Ldlt<0>(sweep.data(), n, inv_d_sweep.data()));
  EXPECT_LE((inv_d - inv_d_sweep).cwiseAbs().maxCoeff(), 1e-12 * inv_d_sweep.cwiseAbs().maxCoeff());
  for (int c = 0; c < n; ++c) {
    for (int r = c + 1; r < n; ++r) EXPECT_NEAR(lower(r, c), sweep(r, c), 1e-9) << r << "," << c;
  }
}

TEST(Linear, BlockLdltSolvesMultiEffectorSystems) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    for (const int n : {6, 12, 18, 24, 36}) ExpectBlockLdltSolves<6>(n, rng);
    for (const int n : {3, 9, 15, 24}) ExpectBlockLdltSolves<3>(n, rng);
  }
}

TEST(Linear, BlockLdltRejectsANonPositivePivotInAnyBlock) {
  // Positive definite except for one row: the pivot of row `bad` is D = -1, whichever block of
  // six it falls in.
  for (const int bad : {0, 5, 6, 13, 23}) {
    Eigen::MatrixXd m = Eigen::MatrixXd::Identity(24, 24);
    m(bad, bad) = -1.0;
    Eigen::VectorXd inv_d(24), work(24 * 6);
    EXPECT_FALSE(BlockLdlt<6>(m.data(), 24, inv_d.data(), work.data())) << bad;
  }
}

// A level sized as Workspace::Prepare sizes it.
Level MakeLevel(const Eigen::MatrixXd& a, Method method) {
  const int r = static_cast<int>(a.rows()), n = static_cast<int>(a.cols());
  Level lv;
  lv.rows = r;
  lv.a = a;
  lv.m = Eigen::MatrixXd::Zero(r, r);
  lv.beta = Eigen::VectorXd::Zero(r);
  lv.tmp_m = Eigen::VectorXd::Zero(std::max(r, 1));
  lv.tmp_n = Eigen::VectorXd::Zero(n);
  lv.house = Eigen::VectorXd::Zero(std::max(n, r) + 1);
  if (method == Method::kSvd) {
    lv.svd = Eigen::JacobiSVD<Eigen::MatrixXd>(r, n, Eigen::ComputeThinU | Eigen::ComputeThinV);
  } else if (method == Method::kQr) {
    lv.at = Eigen::MatrixXd::Zero(n, r);
    lv.qr = Eigen::ColPivHouseholderQR<Eigen::MatrixXd>(n, r);
  }
  return lv;
}

Eigen::VectorXd Step(const Eigen::MatrixXd& a, Method method, double lambda,
                     const Eigen::VectorXd& rhs) {
  Level lv = MakeLevel(a, method);
  Factor(lv, method, lambda, static_cast<int>(a.cols()));
  Eigen::VectorXd out(a.cols());
  Apply(lv, method, 1e-9, rhs, out);
  return out;
}

TEST(Linear, EveryMethodAgreesWithItsDefinition) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::MatrixXd a = Random(6, 9, rng);  // Full row rank, as a 6D task on 9 channels.
    const Eigen::VectorXd b = Random(6, 1, rng);
    const Eigen::MatrixXd pinv = a.completeOrthogonalDecomposition().pseudoInverse();
    const Eigen::VectorXd least_norm = pinv * b;
    for (const Method m : {Method::kPseudoInverse, Method::kSvd, Method::kQr}) {
      EXPECT_LE((Step(a, m, 0.0, b) - least_norm).norm(), 1e-9 * least_norm.norm())
          << MethodName(m);
    }
    const double lambda = 0.3;
    const Eigen::VectorXd dls =
        a.transpose() *
        (a * a.transpose() + lambda * lambda * Eigen::MatrixXd::Identity(6, 6)).ldlt().solve(b);
    for (const Method m : {Method::kDls, Method::kDlsAdaptive}) {
      EXPECT_LE((Step(a, m, lambda, b) - dls).norm(), 1e-12 * dls.norm()) << MethodName(m);
    }
    // Buss's transpose step: h J^T V with h = <V, J J^T V> / |J J^T V|^2.
    const Eigen::VectorXd jtv = a.transpose() * b;
    const Eigen::VectorXd jjtv = a * jtv;
    const Eigen::VectorXd transpose = jtv * (b.dot(jjtv) / jjtv.squaredNorm());
    EXPECT_LE((Step(a, Method::kTranspose, 0.0, b) - transpose).norm(), 1e-12 * transpose.norm());
  }
}

TEST(Linear, RankDeficientSystemsGiveTheMinimumNormStep) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    // Rank 4 in 6 rows: two rows repeat combinations of the others (a singular pose).
    Eigen::MatrixXd a = Random(6, 9, rng);
    a.row(4) = 0.5 * a.row(0) - a.row(1);
    a.row(5) = a.row(2) + 2.0 * a.row(3);
    const Eigen::VectorXd b = Random(6, 1, rng);
    const Eigen::MatrixXd pinv = a.completeOrthogonalDecomposition().pseudoInverse();
    const Eigen::VectorXd least_norm = pinv * b;
    EXPECT_LE((Step(a, Method::kSvd, 0.0, b) - least_norm).norm(), 1e-8 * least_norm.norm());
    // kQr (column-pivoted QR of A^T, not a complete orthogonal decomposition) solves the rank's
    // pivot rows exactly and ignores the others: the minimum-norm solution when the right-hand
    // side is in the range of A, not the least-squares one otherwise (docs/ik.md, known limits).
    const Eigen::VectorXd consistent = a * Random(9, 1, rng);
    const Eigen::VectorXd consistent_norm = pinv * consistent;
    EXPECT_LE((Step(a, Method::kQr, 0.0, consistent) - consistent_norm).norm(),
              1e-8 * consistent_norm.norm());
    // The LU pseudo-inverse damps a singular J J^T slightly: its step stays finite.
    EXPECT_TRUE(Step(a, Method::kPseudoInverse, 0.0, b).allFinite());
  }
}

}  // namespace
}  // namespace linear_test
}  // namespace rigel::ik::internal
