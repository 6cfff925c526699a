// Skeleton builders of the IK tests (the finite-difference tree of the Jacobian tests). The arm
// rig of the solver tests and its targets: arm_rig.h; shared skeletons: support/test_skeletons.h.
#ifndef RIGEL_TESTS_IK_IK_TEST_UTIL_H_
#define RIGEL_TESTS_IK_IK_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <memory>
#include <string>
#include <vector>

#include "core/euler.h"
#include "core/ik/rig.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"
#include "support/test_skeletons.h"

namespace rigel::testing {

inline std::vector<ChannelType> RotationChannels(EulerOrder order) {
  std::vector<ChannelType> out;
  for (const int a : EulerAxes(order)) out.push_back(static_cast<ChannelType>(3 + a));
  return out;
}

inline std::shared_ptr<const Skeleton> Build(const RawSkeleton& raw) {
  std::string error;
  std::unique_ptr<Skeleton> s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return std::shared_ptr<const Skeleton>(std::move(s));
}

// The finite-difference tree of the Jacobian tests, for Euler order `order`:
//
//   root (6: position + rotation, order O; position_last: rotations first)
//    ├─ spine (3: rotation O)                    rest orientation: a tilt
//    │   └─ slider (6: Y position first, rotations O, then X/Z position)
//    │       └─ hand (3: rotation O)              rest orientation: a turn about Y
//    └─ leg (3: rotation O): off the hand's path
inline std::shared_ptr<const Skeleton> FdTree(EulerOrder order, bool position_last) {
  RawSkeleton raw;
  raw.roots.emplace_back();
  RawSkeleton::Joint& root = raw.roots.back();
  root.name = "root";
  root.rest_translation = Eigen::Vector3d(0.1, 0.9, -0.2);
  const std::vector<C> rot = RotationChannels(order);
  std::vector<C> pos = {C::kXposition, C::kYposition, C::kZposition};
  root.channels = position_last ? rot : pos;
  root.channels.insert(root.channels.end(), (position_last ? pos : rot).begin(),
                       (position_last ? pos : rot).end());
  root.children.emplace_back();
  RawSkeleton::Joint& spine = root.children.back();
  spine.name = "spine";
  spine.rest_translation = Eigen::Vector3d(0.0, 0.3, 0.05);
  spine.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.4, Eigen::Vector3d(1, 2, 3).normalized()));
  spine.channels = rot;
  spine.children.emplace_back();
  RawSkeleton::Joint& slider = spine.children.back();
  slider.name = "slider";
  slider.rest_translation = Eigen::Vector3d(0.2, 0.25, 0.0);
  slider.channels = {C::kYposition};
  slider.channels.insert(slider.channels.end(), rot.begin(), rot.end());
  slider.channels.push_back(C::kXposition);
  slider.channels.push_back(C::kZposition);
  slider.children.emplace_back();
  RawSkeleton::Joint& hand = slider.children.back();
  hand.name = "hand";
  hand.rest_translation = Eigen::Vector3d(0.0, 0.0, 0.3);
  hand.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(-0.7, Eigen::Vector3d::UnitY()));
  hand.channels = rot;
  // A sibling branch: its channels must have zero columns (off-path).
  root.children.emplace_back();
  root.children.back().name = "leg";
  root.children.back().rest_translation = Eigen::Vector3d(0.1, -0.1, 0);
  root.children.back().channels = rot;
  return Build(raw);
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_IK_IK_TEST_UTIL_H_
