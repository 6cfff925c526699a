// Retarget rotation-transfer pass (TransferRotations): root-motion policies, bone directions.
#include "core/retarget/transfer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/alignment.h"
#include "core/retarget/retarget.h"
#include "retarget/humanoids.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

TEST(TransferRotations, RootMotionPolicies) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(1.0, false, {}, false, 0.5);  // shorter legs
  const Clip clip = Walk(*source, 31, 2.0);
  auto hips_at = [&](RootMotion policy, int f) {
    RetargetOptions options;
    options.root_motion = policy;
    options.source_unit_metres = options.target_unit_metres = 0.01;
    const RetargetResult r = Retarget(source, clip, target, {}, options);
    Pose p(*target);
    p.SetFromRow(*target, r.clip.frame(f));
    return std::make_pair(Eigen::Vector3d(p.world[0].translation()), r.metrics.hip_height_ratio);
  };
  const auto [scaled, ratio] = hips_at(RootMotion::kScale, 30);
  EXPECT_NEAR(ratio, (8 + 41.0) / (8 + 82.0), 1e-9);  // hip joints above the soles
  EXPECT_NEAR(scaled.z(), ratio * 60.0, 1e-9);
  const auto keep = hips_at(RootMotion::kKeep, 30).first;
  EXPECT_NEAR(keep.z(), 60.0, 1e-9);
  const auto in_place = hips_at(RootMotion::kInPlace, 30).first;
  EXPECT_NEAR(in_place.z(), 0.0, 1e-9);
  // Vertical motion is scaled in every policy.
  EXPECT_NEAR(keep.y(), scaled.y(), 1e-9);
  EXPECT_NEAR(in_place.y(), scaled.y(), 1e-9);
}

TEST(TransferRotations, RoundTripReturnsBoneDirections) {
  const auto a = Humanoid(1.0, false, {}, false);
  const auto b = Humanoid(0.01, true, kCmuNames, true, 0.8);
  const Clip clip = Walk(*a, 40, 1.0);
  const RetargetResult ab = Retarget(a, clip, b);
  const RetargetResult ba = Retarget(b, ab.clip, a);
  Pose p0(*a);
  Pose p1(*a);
  double worst = 0.0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    p0.SetFromRow(*a, clip.frame(f));
    p1.SetFromRow(*a, ba.clip.frame(f));
    for (int j = 1; j < a->num_joints(); ++j) {
      const int p = a->parent(j);
      const Eigen::Vector3d d0 = p0.world[j].translation() - p0.world[p].translation();
      const Eigen::Vector3d d1 = p1.world[j].translation() - p1.world[p].translation();
      worst = std::max(worst, std::atan2(d0.cross(d1).norm(), d0.dot(d1)) * kDegPerRad);
    }
  }
  EXPECT_LT(worst, 1e-6);
}

// Onto its own skeleton with root motion kept, the transfer reproduces every joint's world
// position, and keeps the source positions and the hips it placed.
TEST(TransferRotations, OntoItselfReproducesTheClip) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 20, 1.0);
  Alignment a;
  std::vector<std::string> warnings;
  ASSERT_EQ(Align(*s, *s, AutoMap(*s, *s), {}, nullptr, nullptr, &a, &warnings), "");
  const TransferredMotion m = TransferRotations(*s, *s, a, RootMotion::kKeep, clip);
  ASSERT_EQ(m.clip.num_frames(), 20);
  EXPECT_EQ(m.clip.frame_time(), clip.frame_time());
  Pose ps(*s);
  Pose pt(*s);
  for (int f = 0; f < clip.num_frames(); ++f) {
    ps.SetFromRow(*s, clip.frame(f));
    pt.SetFromRow(*s, m.clip.frame(f));
    for (int j = 0; j < s->num_joints(); ++j) {
      EXPECT_VEC3_NEAR(pt.world[j].translation(), ps.world[j].translation(), 1e-9) << j;
      EXPECT_VEC3_NEAR(m.source_position(f, j), ps.world[j].translation(), 0.0) << j;
    }
    EXPECT_VEC3_NEAR(m.hips_goal[f], ps.world[0].translation(), 1e-9) << f;
  }
}

}  // namespace
}  // namespace rigel::retarget
