// Retarget IK clean-up pass (IkCleanUp): feet pinned during contacts, nothing done when off.
#include "core/retarget/cleanup.h"

#include <gtest/gtest.h>

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

// Onto legs 1.2 times as long, feet sit on their pins (their mean position over the contact
// before the clean-up), or, where the hips have travelled too far for the leg (the fixture's right
// knee never bends), the straight leg points at the pin.
TEST(IkCleanUp, FeetOnTheirPinsDuringContacts) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(1.0, false, {}, false, 1.2);
  const Clip clip = Walk(*source, 90, 1.0);
  RetargetOptions options;
  options.pin_feet = true;
  // The fixture walk swings its legs fast: looser thresholds find its stance phases.
  options.contact_height = 0.15;
  options.contact_speed = 1.5;
  Passes p = Before(*source, *target, clip, options);
  ASSERT_FALSE(p.contacts.empty());
  const Clip before = p.motion.clip;
  const CleanUpReport report = IkCleanUp(*target, p.a, options, p.contacts, &p.motion, &p.warnings);
  EXPECT_TRUE(report.applied);
  EXPECT_TRUE(p.warnings.empty());
  Pose pose(*target);
  int frames = 0;
  int beyond = 0;
  for (const FootContact& k : p.contacts) {
    const Limb& l = p.a.limbs[k.limb];
    // The pin: the foot's mean position over the contact before the clean-up (by FK here).
    Eigen::Vector3d pin = Eigen::Vector3d::Zero();
    for (int f = k.first; f <= k.last; ++f) {
      pose.SetFromRow(*target, before.frame(f));
      pin += pose.world[l.end].translation();
    }
    pin /= k.last - k.first + 1;
    EXPECT_VEC3_NEAR(ContactPin(*target, l, before, k), pin, 1e-9);
    for (int f = k.first; f <= k.last; ++f) {
      pose.SetFromRow(*target, p.motion.clip.frame(f));
      const Eigen::Vector3d hip = pose.world[l.upper].translation();
      const double reach =
          (pose.world[l.lower].translation() - hip).norm() +
          (pose.world[l.end].translation() - pose.world[l.lower].translation()).norm();
      // A pin beyond the leg's reach (the hips have travelled on): the straight leg points at it.
      Eigen::Vector3d want = pin;
      if ((pin - hip).norm() > reach) {
        want = hip + (pin - hip) * (reach / (pin - hip).norm());
        ++beyond;
      }
      ++frames;
      const Eigen::Vector3d foot = pose.world[l.end].translation();
      EXPECT_NEAR(foot.x(), want.x(), 1e-6) << l.name << " frame " << f;
      EXPECT_NEAR(foot.z(), want.z(), 1e-6) << l.name << " frame " << f;
      EXPECT_NEAR(foot.y(), want.y(), 1e-6) << l.name << " frame " << f;
    }
  }
  // The fixture's straight right leg cannot hold a pin while the hips travel: both cases occur.
  EXPECT_GT(frames - beyond, frames / 3) << beyond << " of " << frames << " beyond reach";
  // The arms are not touched without pin_hands.
  for (const char* joint : {"LeftUpArm", "LeftLowArm", "RightUpArm", "RightLowArm"}) {
    const int j = target->FindJoint(joint);
    for (int f = 0; f < clip.num_frames(); ++f) {
      for (const int c : target->rotation_channels(j)) {
        EXPECT_EQ(p.motion.clip.at(f, c), before.at(f, c)) << joint;
      }
    }
  }
}

TEST(IkCleanUp, OffLeavesTheClipAndInPlaceWarns) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 30, 1.0);
  RetargetOptions options;
  Passes p = Before(*s, *s, clip, options);
  const Clip before = p.motion.clip;
  const CleanUpReport report = IkCleanUp(*s, p.a, options, p.contacts, &p.motion, &p.warnings);
  EXPECT_FALSE(report.applied);
  EXPECT_EQ(report.unreached, 0);
  EXPECT_TRUE(
      std::equal(before.values().begin(), before.values().end(), p.motion.clip.values().begin()));
  options.pin_feet = true;
  options.root_motion = RootMotion::kInPlace;
  p = Before(*s, *s, clip, options);
  IkCleanUp(*s, p.a, options, p.contacts, &p.motion, &p.warnings);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].rfind("feet pinned with in-place root motion", 0), 0u);
}

}  // namespace
}  // namespace rigel::retarget
