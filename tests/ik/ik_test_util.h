// Skeletons and helpers shared by the IK tests.
#ifndef RIGEL_TESTS_IK_IK_TEST_UTIL_H_
#define RIGEL_TESTS_IK_IK_TEST_UTIL_H_

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/ik/bench_skeletons.h"
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

// The benchmark's builders (bench/ik/bench_skeletons.h): a serial chain, joint i with channels
// `layouts[i]` and rest offset `offsets[i]` from its parent; the 7-DOF arm (shoulder ZXY, elbow
// Y, wrist ZXY; links 0.3, 0.25 m along X, effector 0.08 m past the wrist).
using rigel::bench::Arm;
using rigel::bench::Chain;

// The arm's limits (radians, per channel in layout order), as in the benchmark.
inline void ArmLimits(ik::Rig& rig) {
  std::vector<double> lo, hi;
  rigel::bench::ArmLimits(lo, hi);
  for (int c = 0; c < 7; ++c) rig.SetLimits(c, lo[c], hi[c]);
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_IK_IK_TEST_UTIL_H_
