// Small math kernels shared by forward kinematics (core/pose.cc) and the IK solver (core/ik).
#ifndef RIGEL_CORE_FAST_MATH_H_
#define RIGEL_CORE_FAST_MATH_H_

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>

namespace rigel::internal {

// sin and cos of x for |x| < 1e5 (SinCos and SinCosBatch): Cody-Waite reduction by pi/2 and the
// fdlibm kernels (minimax on [-pi/4, pi/4]). The quadrant is taken from the rounding constant's
// low mantissa bits and chosen with bit masks, without branches or table lookups (joint angles
// cross quadrants at random), so a loop of it vectorizes.
[[gnu::always_inline]] inline void SinCosInRange(double x, double* sin_out, double* cos_out) {
  constexpr double kTwoOverPi = 6.36619772367581382433e-01;
  constexpr double kPio2Hi = 1.57079632673412561417e+00;  // First 33 bits of pi/2.
  constexpr double kPio2Lo = 6.07710050650619224932e-11;  // pi/2 - kPio2Hi.
  // Round to nearest without a libm call: adding 1.5 * 2^52 drops the fraction (|x| < 1e5), and
  // t = 1.5 * 2^52 + k exactly: its low mantissa bits are k's (two's complement mod 4).
  constexpr double kRound = 6755399441055744.0;
  const double t = x * kTwoOverPi + kRound;
  const double k = t - kRound;
  const std::uint64_t q = std::bit_cast<std::uint64_t>(t);
  const double r = (x - k * kPio2Hi) - k * kPio2Lo;
  const double z = r * r;
  const double sp =
      -1.66666666666666324348e-01 +
      z * (8.33333333332248946124e-03 +
           z * (-1.98412698298579493134e-04 +
                z * (2.75573137070700676789e-06 +
                     z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))));
  const double cp =
      4.16666666666666019037e-02 +
      z * (-1.38888888888741095749e-03 +
           z * (2.48015872894767294178e-05 +
                z * (-2.75573143513906633035e-07 +
                     z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11))));
  const double hz = 0.5 * z;
  const double w = 1.0 - hz;
  const std::uint64_t s_bits = std::bit_cast<std::uint64_t>(r + r * z * sp);
  const std::uint64_t c_bits = std::bit_cast<std::uint64_t>(w + (((1.0 - w) - hz) + z * z * cp));
  const std::uint64_t odd = 0 - (q & 1);               // all ones in quadrants 1 and 3
  const std::uint64_t sin_sign = (q & 2) << 62;        // quadrants 2, 3
  const std::uint64_t cos_sign = ((q + 1) & 2) << 62;  // quadrants 1, 2
  *sin_out = std::bit_cast<double>(((c_bits & odd) | (s_bits & ~odd)) ^ sin_sign);
  *cos_out = std::bit_cast<double>(((s_bits & odd) | (c_bits & ~odd)) ^ cos_sign);
}

// sin and cos of x to about 1 ulp: SinCosInRange, cheaper than libm's sincos for the few-radian
// angles of joints; exact libm for large or non-finite arguments. Deterministic.
inline void SinCos(double x, double* sin_out, double* cos_out) {
  if (!(std::abs(x) < 1e5)) {
    *sin_out = std::sin(x);
    *cos_out = std::cos(x);
    return;
  }
  SinCosInRange(x, sin_out, cos_out);
}

// SinCos of n angles at once, bit for bit what SinCos gives each: SinCosInRange over the array
// (a loop that vectorizes: two angles per SSE2 instruction on any x86-64), then libm for the
// arguments outside |x| < 1e5 (and NaN, inf), as SinCos sends them.
inline void SinCosBatch(const double* x, int n, double* sin_out, double* cos_out) {
  for (int i = 0; i < n; ++i) SinCosInRange(x[i], sin_out + i, cos_out + i);
  // A separate pass: the range test inside the loop above keeps GCC from vectorizing it.
  bool outside = false;
  for (int i = 0; i < n; ++i) outside |= !(std::abs(x[i]) < 1e5);
  if (outside) {
    for (int i = 0; i < n; ++i) {
      if (!(std::abs(x[i]) < 1e5)) {
        sin_out[i] = std::sin(x[i]);
        cos_out[i] = std::cos(x[i]);
      }
    }
  }
}

// r := r * (elementary rotation about `axis` (0 = X, 1 = Y, 2 = Z) by the angle with cosine c
// and sine s): only the two columns orthogonal to the axis change. The columns are compile-time
// indices per case, so r can stay in registers along a joint chain (a runtime column index
// sends it through memory, and the next rotation's loads stall on the last one's stores).
template <int I, int K>
[[gnu::always_inline]] inline void RotateColumnPair(Eigen::Matrix3d& r, double c, double s) {
  const Eigen::Vector3d ci = r.col(I);
  const Eigen::Vector3d ck = r.col(K);
  r.col(I) = c * ci + s * ck;
  r.col(K) = c * ck - s * ci;
}

[[gnu::always_inline]] inline void RotateColumns(Eigen::Matrix3d& r, int axis, double c, double s) {
  switch (axis) {
    case 0:
      RotateColumnPair<1, 2>(r, c, s);
      break;
    case 1:
      RotateColumnPair<2, 0>(r, c, s);
      break;
    default:
      RotateColumnPair<0, 1>(r, c, s);
      break;
  }
}

}  // namespace rigel::internal

#endif  // RIGEL_CORE_FAST_MATH_H_
