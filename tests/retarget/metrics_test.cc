// Retarget metrics pass (MeasureRetarget): figures recomputed here from the target's FK.
#include "core/retarget/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/alignment.h"
#include "core/retarget/contacts.h"
#include "core/retarget/transfer.h"
#include "retarget/humanoids.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

TEST(MeasureRetarget, FootSlideDirectionsAndErrors) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 90, 1.0);
  RetargetOptions options;
  options.source_unit_metres = options.target_unit_metres = 0.01;
  // The fixture walk swings its legs fast: looser thresholds find its stance phases.
  options.contact_height = 0.15;
  options.contact_speed = 1.5;
  Passes p0 = Before(*s, *s, clip, options);
  const Alignment& a = p0.a;
  const TransferredMotion& m = p0.motion;
  const std::vector<FootContact>& contacts = p0.contacts;
  std::vector<std::string>& warnings = p0.warnings;
  ASSERT_FALSE(contacts.empty());
  const RetargetMetrics q = MeasureRetarget(*s, a, options, m, contacts, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(q.frames, 90);
  EXPECT_EQ(q.mapped_joints, 19);
  EXPECT_EQ(q.bones, 12);
  EXPECT_LT(q.bone_direction_max_deg, 1e-6);
  EXPECT_LT(q.foot_error_max_mm, 1e-6);
  EXPECT_EQ(q.contacts, static_cast<int>(contacts.size()));
  // Slide: horizontal distance (mm, 10 per cm) of the foot from its mean over each contact.
  Pose pose(*s);
  double sum = 0.0;
  double worst = 0.0;
  int frames = 0;
  for (const FootContact& k : contacts) {
    const int foot = a.limbs[k.limb].end;
    std::vector<Eigen::Vector3d> p;
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int f = k.first; f <= k.last; ++f) {
      pose.SetFromRow(*s, m.clip.frame(f));
      p.push_back(pose.world[foot].translation());
      mean += p.back();
    }
    mean /= static_cast<double>(p.size());
    for (const Eigen::Vector3d& v : p) {
      const double d = std::hypot(v.x() - mean.x(), v.z() - mean.z()) * 10.0;
      sum += d;
      worst = std::max(worst, d);
      ++frames;
    }
  }
  EXPECT_EQ(q.contact_frames, frames);
  EXPECT_GT(worst, 1.0);  // the walk's planted feet do slide before clean-up
  EXPECT_NEAR(q.foot_slide_max_mm, worst, 1e-9);
  EXPECT_NEAR(q.foot_slide_mean_mm, sum / frames, 1e-9);
}

TEST(MeasureRetarget, LimitViolationsAndTheirWarning) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 20, 1.0);
  RetargetOptions options;
  options.limit_min.assign(s->num_channels(), -0.3);
  options.limit_max.assign(s->num_channels(), 0.3);
  Alignment a;
  std::vector<std::string> warnings;
  ASSERT_EQ(Align(*s, *s, AutoMap(*s, *s), options, nullptr, nullptr, &a, &warnings), "");
  const TransferredMotion m = TransferRotations(*s, *s, a, RootMotion::kScale, clip);
  const RetargetMetrics q = MeasureRetarget(*s, a, options, m, {}, &warnings);
  int outside = 0;
  for (const double v : m.clip.values()) outside += (v < -0.3 || v > 0.3) ? 1 : 0;
  EXPECT_GT(outside, 0);
  EXPECT_EQ(q.joint_limit_violations - q.knee_hyperextension_frames, outside);
  EXPECT_TRUE(warnings.empty());
  options.limit_min.pop_back();
  MeasureRetarget(*s, a, options, m, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "channel limits ignored: expected " + std::to_string(s->num_channels()) + " entries");
}

}  // namespace
}  // namespace rigel::retarget
