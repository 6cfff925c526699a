// Fast angle math of the Assimp front's sampling loop (importers/assimp_sampling.cc): atan2, the
// wrap towards the previous frame and the ZYX Euler decomposition without libm calls where they
// dominated the import. Internal to rigel_io.
#ifndef RIGEL_IMPORTERS_FAST_EULER_H_
#define RIGEL_IMPORTERS_FAST_EULER_H_

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "core/euler.h"

namespace rigel::assimp_internal {

// atan2 to within a couple of ulp, about twice as fast as libm's (it dominated the import): Cephes'
// atan (range reduction to |t| <= 0.66, rational approximation of degree 4/5), plus quadrants.
inline double FastAtan2(double y, double x) {
  const double ax = std::abs(x), ay = std::abs(y);
  if (!(ax > 0) || !std::isfinite(ax) || !std::isfinite(ay)) return std::atan2(y, x);
  double t = ay / ax;
  double base = 0, more = 0;
  if (t > 2.41421356237309504880) {  // tan(3 pi / 8)
    base = kPi / 2;
    more = 6.123233995736765886130e-17;
    t = -1.0 / t;
  } else if (t > 0.66) {
    base = kPi / 4;
    more = 0.5 * 6.123233995736765886130e-17;
    t = (t - 1.0) / (t + 1.0);
  }
  const double z = t * t;
  const double p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z -
                     7.500855792314704667340e1) *
                        z -
                    1.228866684490136173410e2) *
                       z -
                   6.485021904942025371773e1;
  const double q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z +
                     4.328810604912902668951e2) *
                        z +
                    4.853903996359136964868e2) *
                       z +
                   1.945506571482613964425e2;
  double a = base + (t * (z * p / q) + t + more);
  if (x < 0) a = kPi - a;
  return std::signbit(y) ? -a : a;
}

// `angle` shifted by whole turns to lie within pi of `reference`: WrapNear without a branch or a
// libm call (round to nearest by the 1.5 * 2^52 trick, exact for |turns| < 2^51).
inline double WrapNearFast(double angle, double reference) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
  const double turns = ((reference - angle) * (1.0 / (2 * kPi)) + kRound) - kRound;
  return angle + turns * (2 * kPi);
}

// MatrixToEulerNear(r, EulerOrder::kZYX, previous) with fewer transcendental calls (the middle
// angle's cosine is the hypotenuse already computed) and no data-dependent branches; defers to
// the library near gimbal lock.
inline Eigen::Vector3d EulerZyxNear(const Eigen::Quaterniond& q, const Eigen::Vector3d& previous) {
  // The five entries of R(q) needed. R = Rz(z) Ry(y) Rx(x): R(2,0) = -sin y,
  // R(1,0) / R(0,0) = tan z, R(2,1) / R(2,2) = tan x.
  const double qw = q.w(), qx = q.x(), qy = q.y(), qz = q.z();
  const double r00 = 1 - 2 * (qy * qy + qz * qz), r10 = 2 * (qx * qy + qw * qz),
               r20 = 2 * (qx * qz - qw * qy), r21 = 2 * (qy * qz + qw * qx),
               r22 = 1 - 2 * (qx * qx + qy * qy);
  const double sin_y = std::clamp(-r20, -1.0, 1.0);
  const double cos_y = std::sqrt(r22 * r22 + r21 * r21);
  if (cos_y < 1e-6) {
    return MatrixToEulerNear(q.normalized().toRotationMatrix(), EulerOrder::kZYX, previous);
  }
  const double x = FastAtan2(r21, r22), y = FastAtan2(sin_y, cos_y), z = FastAtan2(r10, r00);
  // The two decompositions (x, y, z) and (x + pi, pi - y, z + pi), each moved by whole turns
  // towards the previous frame; the nearer one wins.
  const double x1 = WrapNearFast(x, previous.x()), y1 = WrapNearFast(y, previous.y()),
               z1 = WrapNearFast(z, previous.z());
  const double x2 = WrapNearFast(x + kPi, previous.x()), y2 = WrapNearFast(kPi - y, previous.y()),
               z2 = WrapNearFast(z + kPi, previous.z());
  auto sq = [](double v) { return v * v; };
  const double d1 = sq(x1 - previous.x()) + sq(y1 - previous.y()) + sq(z1 - previous.z());
  const double d2 = sq(x2 - previous.x()) + sq(y2 - previous.y()) + sq(z2 - previous.z());
  const bool second = d2 < d1;
  return Eigen::Vector3d(second ? x2 : x1, second ? y2 : y1, second ? z2 : z1);
}

// std::round without the libm call, for |x| < 2^51 (else x itself; whole already).
inline double RoundFast(double x) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
  return std::abs(x) < 2251799813685248.0 ? (x + kRound) - kRound : x;
}

}  // namespace rigel::assimp_internal

#endif  // RIGEL_IMPORTERS_FAST_EULER_H_
