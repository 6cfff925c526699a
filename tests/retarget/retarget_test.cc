// Retargeter end to end on small synthetic skeletons: rest-pose alignment (T-pose onto an A-pose,
// Y-up onto Z-up, other units and names) and Run as the passes in order. Each pass has its own
// test file (alignment_test, transfer_test, contacts_test, cleanup_test, metrics_test).
#include "core/retarget/retarget.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/alignment.h"
#include "core/retarget/cleanup.h"
#include "core/retarget/contacts.h"
#include "core/retarget/metrics.h"
#include "core/retarget/transfer.h"
#include "core/skeleton_builder.h"
#include "retarget/humanoids.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

// Bone direction error between two poses of skeletons whose joints share names via `map`.
double MaxDirectionError(const RetargetResult& r) { return r.metrics.bone_direction_max_deg; }

// T-pose source, A-pose target renamed CMU-style, Z-up, in metres: bone directions reproduced.
TEST(Retargeter, RestPoseAlignmentUpAxisAndUnits) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(0.01, true, kCmuNames, true);
  const Clip clip = Walk(*source, 60, 1.5);
  RetargetOptions options;
  options.source_unit_metres = 0.01;
  options.target_unit_metres = 1.0;
  std::string error;
  auto r = Retargeter::Create(source, target, {}, options, &error, &clip);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->map().entries.size(), 19u);
  const RetargetResult result = r->Run(clip);
  EXPECT_EQ(result.metrics.source_up_axis, 1);
  EXPECT_EQ(result.metrics.target_up_axis, 2);
  EXPECT_NEAR(result.metrics.hip_height_ratio, 0.01, 1e-12);
  EXPECT_LT(MaxDirectionError(result), 1e-6);
  // Single-child segments: Spine->Chest, Neck->Head, 3 per arm, 2 per leg.
  EXPECT_EQ(result.metrics.bones, 12);
  // Each figure stands on its floor. The source's rest pose hangs from the hips at the origin, a
  // hip height below the floor its walk stands on (the walk's lowest point); the target has no
  // clip, so its floor is its rest pose's lowest point. Scale policy, same proportions: relative
  // to those floors the joints land on the source's, turned Z-up and in metres.
  Pose ps(*source);
  Pose pt(*target);
  auto lowest = [](const Skeleton& s, const Pose& p, int up) {
    double low = INFINITY;
    for (int j = 0; j < s.num_joints(); ++j) low = std::min(low, p.world[j].translation()[up]);
    for (int e = 0; e < static_cast<int>(s.end_sites().size()); ++e) {
      low = std::min(low, EndSitePosition(s, p.world, e)[up]);
    }
    return low;
  };
  double source_floor = INFINITY;
  for (int f = 0; f < clip.num_frames(); ++f) {
    ps.SetFromRow(*source, clip.frame(f));
    source_floor = std::min(source_floor, lowest(*source, ps, 1));
  }
  const double target_floor = lowest(*target, pt, 2);  // the rest pose
  ps.SetFromRow(*source, clip.frame(0));
  ASSERT_GT(source_floor - lowest(*source, Pose(*source), 1), 80.0) << "the source's rest hangs";
  for (int f : {0, 30, 59}) {
    ps.SetFromRow(*source, clip.frame(f));
    pt.SetFromRow(*target, result.clip.frame(f));
    for (int j = 0; j < source->num_joints(); ++j) {
      const int t = target->FindJoint(
          kCmuNames.count(source->name(j)) ? kCmuNames.at(source->name(j)) : source->name(j));
      Eigen::Vector3d p = ps.world[j].translation();
      p.y() -= source_floor;
      Eigen::Vector3d q = pt.world[t].translation();
      q.z() -= target_floor;
      EXPECT_VEC3_NEAR(q, Eigen::Vector3d(p.x(), -p.z(), p.y()) * 0.01, 1e-9)
          << source->name(j) << " frame " << f;
    }
  }
  EXPECT_NEAR(result.metrics.foot_error_max_mm, 0.0, 1e-6);
}

TEST(Retargeter, RunRejectsAClipOfAnotherSkeleton) {
  const auto a = Humanoid(1.0, false, {}, false);
  auto r = Retargeter::Create(a, a, {}, {}, nullptr);
  ASSERT_TRUE(r);
  EXPECT_THROW(r->Run(Clip(2, 5, 0.1)), std::invalid_argument);
}

// Run is the passes in order: alignment (Create), transfer, contacts, clean-up, metrics.
TEST(Retargeter, RunIsThePassesInOrder) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(0.01, true, kCmuNames, true, 0.8);
  const Clip clip = Walk(*source, 60, 1.5);
  RetargetOptions options;
  options.pin_feet = true;
  options.pin_hands = true;
  // The fixture walk swings its legs fast: looser thresholds find its stance phases.
  options.contact_height = 0.15;
  options.contact_speed = 1.5;
  auto r = Retargeter::Create(source, target, {}, options, nullptr, &clip);
  ASSERT_TRUE(r);
  const RetargetResult result = r->Run(clip);
  Alignment a;
  std::vector<std::string> warnings;
  ASSERT_EQ(Align(*source, *target, r->map(), options, &clip, nullptr, &a, &warnings), "");
  TransferredMotion m = TransferRotations(*source, *target, a, options.root_motion, clip);
  const std::vector<FootContact> contacts = FindFootContacts(a, m, options);
  const CleanUpReport cleanup = IkCleanUp(*target, a, options, contacts, &m, &warnings);
  const RetargetMetrics q = MeasureRetarget(*target, a, options, m, contacts, &warnings);
  EXPECT_TRUE(std::equal(m.clip.values().begin(), m.clip.values().end(),
                         result.clip.values().begin(), result.clip.values().end()));
  EXPECT_EQ(result.warnings, warnings);
  EXPECT_EQ(result.metrics.contacts, q.contacts);
  EXPECT_GT(q.contacts, 0);
  EXPECT_EQ(result.metrics.foot_slide_max_mm, q.foot_slide_max_mm);
  EXPECT_EQ(result.metrics.bone_direction_mean_deg, q.bone_direction_mean_deg);
  EXPECT_EQ(result.metrics.ik_applied, cleanup.applied);
  EXPECT_EQ(result.metrics.ik_unreached, cleanup.unreached);
}

}  // namespace
}  // namespace rigel::retarget
