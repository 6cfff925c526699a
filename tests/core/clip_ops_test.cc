#include "core/clip_ops.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/euler.h"
#include "core/skeleton_builder.h"
#include "root_and_child.h"

namespace rigel {
namespace {

using C = ChannelType;

// A root with position and ZXY rotation channels and a child elbow with one rotation channel.
std::unique_ptr<Skeleton> TwoJoints() {
  return RootAndChild("root", "elbow", Eigen::Vector3d(1, 0, 0), C::kYrotation);
}

TEST(ClipOps, SliceCopiesTheFramesAndKeepsTheFrameTime) {
  Clip clip(5, 7, 1.0 / 30);
  clip.set_name("walk");
  for (int f = 0; f < 5; ++f) {
    for (int c = 0; c < 7; ++c) clip.frame(f)[c] = 10.0 * f + c;
  }
  const Clip s = SliceClip(clip, 1, 3);
  ASSERT_EQ(s.num_frames(), 3);
  EXPECT_EQ(s.num_channels(), 7);
  EXPECT_DOUBLE_EQ(s.frame_time(), 1.0 / 30);
  EXPECT_EQ(s.name(), "walk");
  for (int f = 0; f < 3; ++f) {
    for (int c = 0; c < 7; ++c) EXPECT_EQ(s.frame(f)[c], 10.0 * (f + 1) + c);
  }
}

// 30 -> 120 frames/s over the same duration: source frames reappear exactly, positions and the
// one-channel joint interpolate linearly, the three-channel rotation follows the slerp between
// the two source rotations and keeps to the angles nearest the linear ones (a Z rotation going
// from 170 to -170 degrees the short way, through 180, ends near 190 and not near -10).
TEST(ClipOps, ResampleInterpolatesPositionsLinearlyAndRotationsBySlerp) {
  const std::unique_ptr<Skeleton> s = TwoJoints();
  const double d = kPi / 180;
  Clip clip(2, s->num_channels(), 1.0 / 30);
  const double a[] = {0, 1, 2, 170 * d, 10 * d, 0, 20 * d};
  const double b[] = {3, 1, 2, 190 * d, 10 * d, 0, 60 * d};
  for (int c = 0; c < 7; ++c) {
    clip.frame(0)[c] = a[c];
    clip.frame(1)[c] = b[c];
  }
  const Clip r = ResampleClip(*s, clip, 120.0);
  ASSERT_EQ(r.num_frames(), 5);
  EXPECT_DOUBLE_EQ(r.frame_time(), 1.0 / 120);
  for (int c = 0; c < 7; ++c) {
    EXPECT_EQ(r.frame(0)[c], a[c]);
    EXPECT_NEAR(r.frame(4)[c], b[c], 1e-12);
  }
  const Eigen::Quaterniond qa = EulerToQuaternion(EulerOrder::kZXY, {10 * d, 0, 170 * d});
  const Eigen::Quaterniond qb = EulerToQuaternion(EulerOrder::kZXY, {10 * d, 0, 190 * d});
  for (int f = 1; f < 4; ++f) {
    const double t = f / 4.0;
    EXPECT_NEAR(r.frame(f)[0], 3 * t, 1e-12);
    EXPECT_NEAR(r.frame(f)[6], (20 + 40 * t) * d, 1e-12);
    const Eigen::Vector3d xyz(r.frame(f)[4], r.frame(f)[5], r.frame(f)[3]);
    EXPECT_TRUE(EulerToQuaternion(EulerOrder::kZXY, xyz).isApprox(qa.slerp(t, qb), 1e-12));
    EXPECT_NEAR(r.frame(f)[3], (170 + 20 * t) * d, 1e-9) << "no jump through -180";
  }
}

}  // namespace
}  // namespace rigel
