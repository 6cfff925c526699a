// Euler angles <-> rotations for the six rotation orders, with continuity.
//
// Convention (BVH, Maya "rotate order" as listed in a file's CHANNELS line): an order names the
// axes in the order their channels appear, and the rotation is the product of the elementary
// rotations in that same order:  kZXY  ->  R = Rz(z) * Rx(x) * Ry(y).
// Applied to a column vector, the last-listed axis acts first (intrinsic rotation in listed order).
// Angles are radians and are always passed as (x, y, z): angles.x() is the rotation about X
// whatever the order.
#ifndef RIGEL_CORE_EULER_H_
#define RIGEL_CORE_EULER_H_

#include <Eigen/Geometry>
#include <array>
#include <optional>
#include <string_view>

namespace rigel {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDegPerRad = 180.0 / kPi;
constexpr double kRadPerDeg = kPi / 180.0;

// The six Tait-Bryan orders, named by their axes in product order.
enum class EulerOrder : unsigned char { kXYZ, kXZY, kYXZ, kYZX, kZXY, kZYX };

// Axis indices (0 = X, 1 = Y, 2 = Z) of an order, in product order.
std::array<int, 3> EulerAxes(EulerOrder order);

// "XYZ", "ZXY", ...
std::string_view EulerOrderName(EulerOrder order);

// Parses "XYZ" (case-insensitive). Returns nullopt for anything else.
std::optional<EulerOrder> ParseEulerOrder(std::string_view text);

// The order whose product axes are `axes` (a permutation of 0, 1, 2); nullopt otherwise.
std::optional<EulerOrder> EulerOrderFromAxes(const std::array<int, 3>& axes);

// Rotation of angle `radians` about the unit axis `axis` (0 = X, 1 = Y, 2 = Z).
Eigen::Matrix3d AxisRotation(int axis, double radians);

// R = R_a0(angles[a0]) * R_a1(angles[a1]) * R_a2(angles[a2]) for order (a0, a1, a2).
Eigen::Matrix3d EulerToMatrix(EulerOrder order, const Eigen::Vector3d& xyz_radians);
Eigen::Quaterniond EulerToQuaternion(EulerOrder order, const Eigen::Vector3d& xyz_radians);

// One decomposition of `rotation` (orthonormal) into (x, y, z) angles for `order`, with the middle
// angle in [-pi/2, pi/2] and the others in (-pi, pi]. At gimbal lock (middle angle = +-pi/2) the
// first angle takes the whole remaining rotation and the last is 0.
Eigen::Vector3d MatrixToEuler(const Eigen::Matrix3d& rotation, EulerOrder order);

// The decomposition of `rotation` closest to `previous_xyz` (no 360 degree jumps): among the two
// Euler solutions, each angle is shifted by whole turns towards the previous value, and the one
// nearest `previous_xyz` (sum of squared differences) wins. At gimbal lock the free sum/difference
// of first and last angles is split to stay nearest the previous values.
Eigen::Vector3d MatrixToEulerNear(const Eigen::Matrix3d& rotation, EulerOrder order,
                                  const Eigen::Vector3d& previous_xyz);
Eigen::Vector3d QuaternionToEulerNear(const Eigen::Quaterniond& q, EulerOrder order,
                                      const Eigen::Vector3d& previous_xyz);

// The triple equivalent to `xyz_radians` (the same rotation for `order`) nearest `previous_xyz`:
// of the two Euler solutions (a, b, c) and (a + pi, pi - b, c + pi) (first, middle, last angle in
// product order), each angle shifted by whole turns to lie within pi of the previous value, the
// one nearest `previous_xyz` (sum of squared differences). When that is the input itself it comes
// back bit for bit. Writers call it key after key so curves have no 360 degree wraps.
Eigen::Vector3d EulerNearest(EulerOrder order, const Eigen::Vector3d& xyz_radians,
                             const Eigen::Vector3d& previous_xyz);

// `angle` shifted by whole turns to lie within pi of `reference`.
double WrapNear(double angle, double reference);

}  // namespace rigel

#endif  // RIGEL_CORE_EULER_H_
