#include "core/ik/linear.h"

#include <algorithm>

namespace rigel::ik::internal {

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

}  // namespace rigel::ik::internal
