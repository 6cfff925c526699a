// Shared fixture of the constraint tests: a small tree with mixed rotation orders, rest
// orientations and a six-channel prop under a rotated parent, posed away from rest.
//
//   root (Xpos Ypos Zpos Zrot Xrot Yrot)
//    |-- arm (ZXY, rest orientation 30 deg about (1,1,0)) --1.0-- hand (XYZ) --0.5-- (end)
//    |-- prop (Xpos Ypos Zpos Yrot Xrot Zrot, rest orientation 20 deg about Z), 0.3 from root
//    |-- other (Zrot Yrot Xrot), 0.7 from root on -X
//    `-- stub (Zrot only), 0.2 from root on Y
#ifndef RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_
#define RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/skeleton.h"
#include "core/skeleton_builder.h"

namespace rigel::constraints_test {

using C = ChannelType;

enum Joint { kRoot = 0, kArm = 1, kHand = 2, kProp = 3, kOther = 4, kStub = 5 };

inline std::shared_ptr<const Skeleton> Tree() {
  RawSkeleton raw;
  RawSkeleton::Joint& root = raw.roots.emplace_back();
  root.name = "root";
  root.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint& arm = root.children.emplace_back();
  arm.name = "arm";
  arm.rest_translation = Eigen::Vector3d(0.1, 0.2, 0);
  arm.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.5236, Eigen::Vector3d(1, 1, 0).normalized()));
  arm.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint& hand = arm.children.emplace_back();
  hand.name = "hand";
  hand.rest_translation = Eigen::Vector3d(1.0, 0, 0);
  hand.channels = {C::kXrotation, C::kYrotation, C::kZrotation};
  RawSkeleton::Joint& prop = root.children.emplace_back();
  prop.name = "prop";
  prop.rest_translation = Eigen::Vector3d(0, 0, 0.3);
  prop.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.349, Eigen::Vector3d::UnitZ()));
  prop.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kYrotation, C::kXrotation, C::kZrotation};
  RawSkeleton::Joint& other = root.children.emplace_back();
  other.name = "other";
  other.rest_translation = Eigen::Vector3d(-0.7, 0, 0);
  other.channels = {C::kZrotation, C::kYrotation, C::kXrotation};
  RawSkeleton::Joint& stub = root.children.emplace_back();
  stub.name = "stub";
  stub.rest_translation = Eigen::Vector3d(0, 0.2, 0);
  stub.channels = {C::kZrotation};
  std::string error;
  std::unique_ptr<Skeleton> s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return std::shared_ptr<const Skeleton>(std::move(s));
}

// A pose away from rest: every channel gets a distinct value (seeded by `k`), world updated.
inline Pose Posed(const Skeleton& s, double k = 1.0) {
  Pose pose(s);
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    pose.channels[c] = 0.1 * k * (static_cast<double>(c % 5) - 1.7) + 0.05 * static_cast<double>(c);
  }
  pose.UpdateWorld(s);
  return pose;
}

// World transform of `joint` recomputed by FK from the pose's channels alone.
inline Eigen::Isometry3d Fk(const Skeleton& s, const Pose& pose, int joint) {
  Pose fresh(s);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(s);
  return fresh.world[joint];
}

// Angle between two rotations (radians).
inline double AngleBetween(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

// World Euler angles (x, y, z) for R = Rz(z) Ry(y) Rx(x), computed here from the matrix entries
// (independently of core/euler).
inline Eigen::Vector3d EulerXYZ(const Eigen::Matrix3d& r) {
  return Eigen::Vector3d(std::atan2(r(2, 1), r(2, 2)), -std::asin(r(2, 0)),
                         std::atan2(r(1, 0), r(0, 0)));
}

constexpr double kTol = 1e-9;

}  // namespace rigel::constraints_test

#endif  // RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_
