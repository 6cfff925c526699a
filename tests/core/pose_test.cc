#include "core/pose.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>

#include "core/fast_math.h"
#include "core/skeleton_builder.h"
#include "test_util.h"

namespace rigel {
namespace {

using C = ChannelType;

// The tiny skeleton of the golden tests, rest pose, Y up (world positions in brackets):
//
//   head [1, 3, 0]         offset (0, 2, 0), no channels
//    |
//   spine [1, 1, 0]        offset (0, 1, 0), channels Yrot Xrot
//    |
//   hip [1, 0, 0]          root, offset (1, 0, 0), channels Xpos Ypos Zpos Zrot Xrot Yrot
//    |
//   knee [1, -2, 0]        offset (0, -2, 0), channels Xrot
//    |
//   End Site [1, -3, 0]    offset (0, -1, 0)
std::unique_ptr<Skeleton> Tiny() {
  RawSkeleton raw;
  RawSkeleton::Joint hip;
  hip.name = "hip";
  hip.rest_translation = {1, 0, 0};
  hip.channels = {C::kXposition, C::kYposition, C::kZposition,
                  C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint knee;
  knee.name = "knee";
  knee.rest_translation = {0, -2, 0};
  knee.channels = {C::kXrotation};
  knee.end_sites.push_back({0, -1, 0});
  RawSkeleton::Joint spine;
  spine.name = "spine";
  spine.rest_translation = {0, 1, 0};
  spine.channels = {C::kYrotation, C::kXrotation};
  RawSkeleton::Joint head;
  head.name = "head";
  head.rest_translation = {0, 2, 0};
  spine.children.push_back(head);
  hip.children = {knee, spine};
  raw.roots.push_back(hip);
  return SkeletonBuilder().Build(raw);
}

// FK's sin/cos (core/fast_math.h) against libm: within about one ulp of the result, plus the
// reduction's absolute error (about 1e-26 per quarter turn, visible only in the relative error
// next to the zeros of sin and cos), on joint angles of a few turns and a few large arguments.
TEST(SinCos, AgreesWithLibm) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> angle(-20.0, 20.0);
  double worst_ulp = 0.0;
  auto check = [&](double x) {
    double s = 0, c = 0;
    internal::SinCos(x, &s, &c);
    for (const auto& [got, want] : {std::pair{s, std::sin(x)}, std::pair{c, std::cos(x)}}) {
      const double ulp = std::nextafter(std::abs(want), INFINITY) - std::abs(want);
      const double allowed = 1.0 * ulp + 1e-24;
      ASSERT_LE(std::abs(got - want), allowed) << "x = " << x;
      if (std::abs(want) > 1e-3) worst_ulp = std::max(worst_ulp, std::abs(got - want) / ulp);
    }
  };
  for (int i = 0; i < 1000000; ++i) check(angle(rng));
  for (const double x : {0.0, -0.0, 1e-300, kPi, -kPi, kPi / 2, 1e4 + 0.5, -99999.0, 1e6, 1e300}) {
    check(x);
  }
  double s = 0, c = 0;
  internal::SinCos(NAN, &s, &c);
  EXPECT_TRUE(std::isnan(s) && std::isnan(c));
  std::printf("[ sincos  ] worst error %.2f ulp (|value| > 1e-3)\n", worst_ulp);
}

// The vectorized batch (ChainFk's) gives exactly SinCos's bits, in every quadrant, at the
// quadrant boundaries, for signed zeros and for the arguments sent to libm (large, inf, NaN),
// at every position of a batch (vector body and scalar tail).
TEST(SinCos, BatchIsBitForBitSinCos) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(-20.0, 20.0), large(-3e5, 3e5);
  std::vector<double> x;
  for (int i = 0; i < 200001; ++i) x.push_back(i % 997 == 0 ? large(rng) : angle(rng));
  for (int q = -400; q <= 400; ++q) {
    const double b = q * (kPi / 4);
    for (const double v : {b, std::nextafter(b, -INFINITY), std::nextafter(b, INFINITY)}) {
      x.push_back(v);
    }
  }
  for (const double v : {0.0, -0.0, 1e-300, 99999.999, -1e5, 1e5, 1e300, -HUGE_VAL, HUGE_VAL}) {
    x.push_back(v);
  }
  x.push_back(NAN);
  std::vector<double> s(x.size()), c(x.size());
  internal::SinCosBatch(x.data(), static_cast<int>(x.size()), s.data(), c.data());
  for (size_t i = 0; i < x.size(); ++i) {
    double s1 = 0, c1 = 0;
    internal::SinCos(x[i], &s1, &c1);
    ASSERT_EQ(std::bit_cast<std::uint64_t>(s[i]), std::bit_cast<std::uint64_t>(s1)) << x[i];
    ASSERT_EQ(std::bit_cast<std::uint64_t>(c[i]), std::bit_cast<std::uint64_t>(c1)) << x[i];
  }
}

TEST(Pose, RestPoseGolden) {
  auto s = Tiny();
  ASSERT_NE(s, nullptr);
  Pose pose(*s);
  ASSERT_TRUE(pose.matches(*s));
  EXPECT_VEC3_NEAR(pose.world[0].translation(), Eigen::Vector3d(1, 0, 0), 1e-15);
  EXPECT_VEC3_NEAR(pose.world[1].translation(), Eigen::Vector3d(1, -2, 0), 1e-15);
  EXPECT_VEC3_NEAR(pose.world[2].translation(), Eigen::Vector3d(1, 1, 0), 1e-15);
  EXPECT_VEC3_NEAR(pose.world[3].translation(), Eigen::Vector3d(1, 3, 0), 1e-15);
  EXPECT_VEC3_NEAR(EndSitePosition(*s, pose.world, 0), Eigen::Vector3d(1, -3, 0), 1e-15);
}

TEST(Pose, PosedGolden) {
  auto s = Tiny();
  Pose pose(*s);
  std::vector<double> row(s->num_channels(), 0.0);
  // Root moves by (0, 5, 0) (added to its offset) and turns 90 degrees about Z: local +Y
  // becomes world -X.
  row[1] = 5;
  row[3] = kPi / 2;
  // Knee bends 90 degrees about X: its child offset (0,-1,0) becomes (0,0,-1) in hip space.
  row[6] = kPi / 2;
  pose.SetFromRow(*s, row);
  EXPECT_VEC3_NEAR(pose.world[0].translation(), Eigen::Vector3d(1, 5, 0), 1e-12);
  // knee: hip + Rz(90) (0,-2,0) = (1,5,0) + (2,0,0)
  EXPECT_VEC3_NEAR(pose.world[1].translation(), Eigen::Vector3d(3, 5, 0), 1e-12);
  // End site: knee + Rz(90) Rx(90) (0,-1,0) = knee + Rz(90) (0,0,-1) = (3,5,-1)
  EXPECT_VEC3_NEAR(EndSitePosition(*s, pose.world, 0), Eigen::Vector3d(3, 5, -1), 1e-12);
  // spine: hip + Rz(90) (0,1,0) = (0,5,0); head: + Rz(90) (0,2,0) = (-2,5,0)
  EXPECT_VEC3_NEAR(pose.world[2].translation(), Eigen::Vector3d(0, 5, 0), 1e-12);
  EXPECT_VEC3_NEAR(pose.world[3].translation(), Eigen::Vector3d(-2, 5, 0), 1e-12);
  // Rotation channel order: hip's ZXY with z = 90, x = 90: R = Rz(90) Rx(90).
  row.assign(row.size(), 0.0);
  row[3] = kPi / 2;
  row[4] = kPi / 2;
  pose.SetFromRow(*s, row);
  const Eigen::Matrix3d expected = (Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitZ()) *
                                    Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitX()))
                                       .toRotationMatrix();
  EXPECT_TRUE(pose.world[0].linear().isApprox(expected, 1e-12));
  EXPECT_TRUE(LocalRotation(*s, 0, row).isApprox(expected, 1e-12));
}

TEST(Pose, PartialUpdateMatchesFull) {
  auto s = Tiny();
  Pose a(*s), b(*s);
  std::vector<double> row = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  a.SetFromRow(*s, row);
  b.SetFromRow(*s, row);
  b.channels[7] = -0.3;  // spine
  b.UpdateWorld(*s, 2);
  a.channels[7] = -0.3;
  a.UpdateWorld(*s);
  for (int j = 0; j < s->num_joints(); ++j) EXPECT_TRANSFORM_NEAR(a.world[j], b.world[j], 0.0);
}

TEST(Pose, RestOrientationAppliesBeforeChannels) {
  RawSkeleton raw;
  RawSkeleton::Joint root;
  root.name = "root";
  root.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitY()));
  root.channels = {C::kXrotation};
  RawSkeleton::Joint child;
  child.name = "child";
  child.rest_translation = {0, 0, 1};
  root.children.push_back(child);
  raw.roots.push_back(root);
  auto s = SkeletonBuilder().Build(raw);
  ASSERT_NE(s, nullptr);
  Pose pose(*s);
  // Ry(90) (0,0,1) = (1,0,0)
  EXPECT_VEC3_NEAR(pose.world[1].translation(), Eigen::Vector3d(1, 0, 0), 1e-12);
  pose.channels[0] = kPi / 2;  // Ry(90) Rx(90) (0,0,1) = Ry(90) (0,-1,0) = (0,-1,0)
  pose.UpdateWorld(*s);
  EXPECT_VEC3_NEAR(pose.world[1].translation(), Eigen::Vector3d(0, -1, 0), 1e-12);
}

}  // namespace
}  // namespace rigel
