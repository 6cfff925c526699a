// Skeletons and helpers shared by the IK tests.
#ifndef RIGEL_TESTS_IK_IK_TEST_UTIL_H_
#define RIGEL_TESTS_IK_IK_TEST_UTIL_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/euler.h"
#include "core/ik/rig.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"

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

// A chain: joint i has channels `layouts[i]` and rest offset `offsets[i]` from its parent.
inline std::shared_ptr<const Skeleton> Chain(const std::vector<std::vector<ChannelType>>& layouts,
                                             const std::vector<Eigen::Vector3d>& offsets) {
  RawSkeleton raw;
  raw.roots.emplace_back();
  RawSkeleton::Joint* j = &raw.roots.back();
  for (size_t i = 0; i < layouts.size(); ++i) {
    j->name = "j" + std::to_string(i);
    j->channels = layouts[i];
    j->rest_translation = offsets[i];
    if (i + 1 < layouts.size()) {
      j->children.emplace_back();
      j = &j->children.back();
    }
  }
  return Build(raw);
}

// The 7-DOF arm of the benchmark: shoulder (3, ZXY), elbow (1, Y), wrist (3, ZXY); links 0.3,
// 0.25, 0.08 m along X; the effector is an offset of 0.08 from the wrist.
inline std::shared_ptr<const Skeleton> Arm() {
  using C = ChannelType;
  return Chain({{C::kZrotation, C::kXrotation, C::kYrotation},
                {C::kYrotation},
                {C::kZrotation, C::kXrotation, C::kYrotation}},
               {Eigen::Vector3d::Zero(), Eigen::Vector3d(0.3, 0, 0), Eigen::Vector3d(0.25, 0, 0)});
}

// Limits used by the arm benchmark and tests (radians), per channel in layout order.
inline void ArmLimits(ik::Rig& rig) {
  const double d = kPi / 180;
  const double lo[7] = {-170 * d, -100 * d, -90 * d, 0 * d, -170 * d, -80 * d, -60 * d};
  const double hi[7] = {170 * d, 100 * d, 90 * d, 150 * d, 170 * d, 80 * d, 60 * d};
  for (int c = 0; c < 7; ++c) rig.SetLimits(c, lo[c], hi[c]);
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_IK_IK_TEST_UTIL_H_
