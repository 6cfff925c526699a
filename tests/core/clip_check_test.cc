// CheckClip / FindNonFinite / DescribeClipFault (core/clip_check.h): the one clip validator of the
// writers and the bake. Skeleton (root has position + rotation channels):
//
//   hips (Xposition Yposition Zposition Zrotation Xrotation Yrotation)
//    |
//   knee (Xrotation)
#include "core/clip_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <tuple>

#include "core/skeleton_builder.h"
#include "root_and_child.h"

namespace rigel {
namespace {

std::unique_ptr<Skeleton> HipAndKnee() {
  return RootAndChild("hips", "knee", Eigen::Vector3d(0, -1, 0), ChannelType::kXrotation);
}

TEST(FindNonFinite, NoneInAFiniteClip) {
  const auto skeleton = HipAndKnee();
  Clip clip(3, 7, 0.1);
  for (int f = 0; f < 3; ++f) {
    for (int c = 0; c < 7; ++c) clip.at(f, c) = f * 10.0 + c - 1e300 * (c % 2);
  }
  EXPECT_FALSE(FindNonFinite(*skeleton, clip).has_value());
  EXPECT_FALSE(CheckClip(*skeleton, clip).has_value());
}

TEST(FindNonFinite, FirstInFrameOrderWithJointAndChannel) {
  const auto skeleton = HipAndKnee();
  Clip clip(4, 7, 0.1);
  clip.at(3, 0) = NAN;                                       // later frame
  clip.at(2, 6) = -std::numeric_limits<double>::infinity();  // knee Xrotation, frame 2
  clip.at(2, 4) = std::numeric_limits<double>::infinity();   // hips Xrotation, frame 2: first
  const auto at = FindNonFinite(*skeleton, clip);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->frame, 2);
  EXPECT_EQ(at->channel, 4);
  EXPECT_EQ(at->joint, 0);
  EXPECT_TRUE(std::isinf(at->value) && at->value > 0);
  clip.at(2, 4) = 0;
  const auto knee = FindNonFinite(*skeleton, clip);
  ASSERT_TRUE(knee.has_value());
  EXPECT_EQ(knee->frame, 2);
  EXPECT_EQ(knee->channel, 6);
  EXPECT_EQ(knee->joint, skeleton->FindJoint("knee"));
  const ClipFault fault = *CheckClip(*skeleton, clip);
  EXPECT_EQ(fault.kind, ClipFault::Kind::kNonFiniteValue);
  EXPECT_EQ(DescribeClipFault(fault, *skeleton, clip),
            "frame 2, joint 'knee', channel Xrotation: value is -inf");
  clip.at(2, 6) = 0;
  EXPECT_EQ(DescribeClipFault(*CheckClip(*skeleton, clip), *skeleton, clip),
            "frame 3, joint 'hips', channel Xposition: value is nan");
}

// One block per fault, in the order CheckClip reports them.
TEST(CheckClip, EachFaultNamed) {
  const auto skeleton = HipAndKnee();
  {  // Row width.
    Clip clip(2, 6, 0.1);
    const auto fault = CheckClip(*skeleton, clip);
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, ClipFault::Kind::kChannelCount);
    EXPECT_EQ(DescribeClipFault(*fault, *skeleton, clip),
              "clip has 6 channels per frame, the skeleton 7");
  }
  {  // No frame (a NaN frame time is not reported first).
    Clip clip(0, 7, NAN);
    const auto fault = CheckClip(*skeleton, clip);
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, ClipFault::Kind::kNoFrame);
    EXPECT_EQ(DescribeClipFault(*fault, *skeleton, clip), "clip has no frame");
  }
  for (const double bad : {0.0, -0.5, double(NAN), double(INFINITY)}) {  // Frame time.
    Clip clip(1, 7, bad);
    clip.at(0, 1) = NAN;
    const auto fault = CheckClip(*skeleton, clip);
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->kind, ClipFault::Kind::kFrameTime) << bad;
    EXPECT_NE(DescribeClipFault(*fault, *skeleton, clip).find("is not a finite number > 0"),
              std::string::npos);
  }
  {
    Clip clip(1, 7, -0.5);
    EXPECT_EQ(DescribeClipFault(*CheckClip(*skeleton, clip), *skeleton, clip),
              "frame time -0.5 is not a finite number > 0");
  }
  // Frame times that are finite and > 0 but give Inf key times (1e308) or keys at one time
  // (1e-320, or a tiny step on a long clip in the writers' float key times): refused (issue 25).
  for (const auto& [frame_time, frames, why] :
       {std::tuple{1e308, 2, "is above 86400 s"}, std::tuple{1e-320, 2, "is below 1e-06 s"},
        std::tuple{1e-6, 50000000, "keys would share a time"}}) {
    EXPECT_NE(FrameTimeProblem(frame_time, frames), nullptr) << frame_time;
    if (frames == 2) {
      Clip two(2, 7, frame_time);
      const auto fault = CheckClip(*skeleton, two);
      ASSERT_TRUE(fault.has_value()) << frame_time;
      EXPECT_EQ(fault->kind, ClipFault::Kind::kFrameTime);
      EXPECT_NE(DescribeClipFault(*fault, *skeleton, two).find(why), std::string::npos);
    } else {
      EXPECT_NE(std::string(FrameTimeProblem(frame_time, frames)).find(why), std::string::npos);
    }
  }
  EXPECT_EQ(FrameTimeProblem(1.0 / 120, 100000), nullptr);  // 120 fps, 14 minutes
  EXPECT_EQ(FrameTimeProblem(1e-6, 1000), nullptr);
}

}  // namespace
}  // namespace rigel
