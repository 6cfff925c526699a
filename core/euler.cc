#include "core/euler.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace rigel {
namespace {

constexpr std::array<std::array<int, 3>, 6> kAxes = {{
    {0, 1, 2},  // XYZ
    {0, 2, 1},  // XZY
    {1, 0, 2},  // YXZ
    {1, 2, 0},  // YZX
    {2, 0, 1},  // ZXY
    {2, 1, 0},  // ZYX
}};
constexpr std::array<std::string_view, 6> kNames = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};

// Sign of the permutation (a0, a1, a2): +1 for cyclic XYZ/YZX/ZXY, -1 otherwise.
double Parity(const std::array<int, 3>& a) { return ((a[1] - a[0] + 3) % 3 == 1) ? 1.0 : -1.0; }

}  // namespace

std::array<int, 3> EulerAxes(EulerOrder order) { return kAxes[static_cast<int>(order)]; }

std::string_view EulerOrderName(EulerOrder order) { return kNames[static_cast<int>(order)]; }

std::optional<EulerOrder> ParseEulerOrder(std::string_view text) {
  if (text.size() != 3) return std::nullopt;
  std::array<int, 3> axes{};
  for (int i = 0; i < 3; ++i) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    if (c < 'X' || c > 'Z') return std::nullopt;
    axes[i] = c - 'X';
  }
  return EulerOrderFromAxes(axes);
}

std::optional<EulerOrder> EulerOrderFromAxes(const std::array<int, 3>& axes) {
  for (int i = 0; i < 6; ++i) {
    if (kAxes[i] == axes) return static_cast<EulerOrder>(i);
  }
  return std::nullopt;
}

Eigen::Matrix3d AxisRotation(int axis, double radians) {
  return Eigen::AngleAxisd(radians, Eigen::Vector3d::Unit(axis)).toRotationMatrix();
}

Eigen::Matrix3d EulerToMatrix(EulerOrder order, const Eigen::Vector3d& xyz) {
  const auto a = EulerAxes(order);
  return AxisRotation(a[0], xyz[a[0]]) * AxisRotation(a[1], xyz[a[1]]) *
         AxisRotation(a[2], xyz[a[2]]);
}

Eigen::Quaterniond EulerToQuaternion(EulerOrder order, const Eigen::Vector3d& xyz) {
  const auto a = EulerAxes(order);
  return Eigen::AngleAxisd(xyz[a[0]], Eigen::Vector3d::Unit(a[0])) *
         Eigen::AngleAxisd(xyz[a[1]], Eigen::Vector3d::Unit(a[1])) *
         Eigen::AngleAxisd(xyz[a[2]], Eigen::Vector3d::Unit(a[2]));
}

// For R = R_i(t0) R_j(t1) R_k(t2) with (i, j, k) a permutation of parity s:
//   R(i, k) = s * sin(t1)
//   t0 = atan2(-s * R(j, k), R(k, k)),  t2 = atan2(-s * R(i, j), R(i, i)).
// At gimbal lock (cos t1 = 0) only t0 + s' t2 is defined; we put it all in t0:
//   t0 = atan2(s * R(k, j), R(j, j)),   t2 = 0.
Eigen::Vector3d MatrixToEuler(const Eigen::Matrix3d& r, EulerOrder order) {
  const auto a = EulerAxes(order);
  const int i = a[0], j = a[1], k = a[2];
  const double s = Parity(a);
  const double sin1 = std::clamp(s * r(i, k), -1.0, 1.0);
  const double cos1 = std::hypot(r(i, i), r(i, j));
  double t0, t1, t2;
  if (cos1 > 1e-12) {
    t0 = std::atan2(-s * r(j, k), r(k, k));
    t1 = std::atan2(sin1, cos1);
    t2 = std::atan2(-s * r(i, j), r(i, i));
  } else {
    t0 = std::atan2(s * r(k, j), r(j, j));
    t1 = sin1 > 0 ? kPi / 2 : -kPi / 2;
    t2 = 0.0;
  }
  Eigen::Vector3d xyz;
  xyz[i] = t0;
  xyz[j] = t1;
  xyz[k] = t2;
  return xyz;
}

double WrapNear(double angle, double reference) {
  const double turns = std::round((reference - angle) / (2 * kPi));
  return angle + turns * 2 * kPi;
}

Eigen::Vector3d MatrixToEulerNear(const Eigen::Matrix3d& r, EulerOrder order,
                                  const Eigen::Vector3d& previous) {
  const auto a = EulerAxes(order);
  const int i = a[0], j = a[1], k = a[2];
  Eigen::Vector3d first = MatrixToEuler(r, order);
  const double cos1 = std::cos(first[j]);
  if (std::abs(cos1) < 1e-9) {
    // Gimbal lock: R fixes only c = t0 + sign * t2 (sign = +-1 depends on the order and on the
    // side of the lock). Our decomposition set t2 = 0, so c = first[i]. Keep the split nearest the
    // previous frame: move both angles by half the excess. The sign is found by testing which
    // candidate reproduces R, which is exact and cheaper to trust than a case table.
    Eigen::Vector3d best;
    double best_error = INFINITY;
    for (const double sign : {1.0, -1.0}) {
      const double base = previous[i] + sign * previous[k];
      const double excess = WrapNear(first[i], base) - base;
      Eigen::Vector3d out;
      out[i] = previous[i] + excess / 2;
      out[k] = previous[k] + sign * excess / 2;
      out[j] = WrapNear(first[j], previous[j]);
      const double error = (EulerToMatrix(order, out) - r).squaredNorm();
      if (error < best_error) {
        best_error = error;
        best = out;
      }
    }
    return best;
  }
  Eigen::Vector3d second;
  second[i] = first[i] + kPi;
  second[j] = kPi - first[j];
  second[k] = first[k] + kPi;
  Eigen::Vector3d best;
  double best_distance = INFINITY;
  for (const Eigen::Vector3d* candidate : {&first, &second}) {
    Eigen::Vector3d c;
    for (int n = 0; n < 3; ++n) c[n] = WrapNear((*candidate)[n], previous[n]);
    const double d = (c - previous).squaredNorm();
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Eigen::Vector3d EulerNearest(EulerOrder order, const Eigen::Vector3d& xyz,
                             const Eigen::Vector3d& previous) {
  const auto a = EulerAxes(order);
  Eigen::Vector3d second;
  second[a[0]] = xyz[a[0]] + kPi;
  second[a[1]] = kPi - xyz[a[1]];
  second[a[2]] = xyz[a[2]] + kPi;
  Eigen::Vector3d best = xyz;
  double best_distance = INFINITY;
  for (const Eigen::Vector3d* candidate : {&xyz, static_cast<const Eigen::Vector3d*>(&second)}) {
    Eigen::Vector3d c;
    for (int n = 0; n < 3; ++n) {
      // Keep the value untouched when it is already within pi (bit-exact pass-through).
      const double v = (*candidate)[n];
      c[n] = std::abs(v - previous[n]) <= kPi ? v : WrapNear(v, previous[n]);
    }
    const double d = (c - previous).squaredNorm();
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Eigen::Vector3d QuaternionToEulerNear(const Eigen::Quaterniond& q, EulerOrder order,
                                      const Eigen::Vector3d& previous_xyz) {
  return MatrixToEulerNear(q.normalized().toRotationMatrix(), order, previous_xyz);
}

}  // namespace rigel
