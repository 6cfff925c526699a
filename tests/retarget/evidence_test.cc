// MeasureClipEvidence: pop scores and per-frame foot slide, on clips whose pops and slides are
// planted here, so the expected values are known without rigel's own measures.
#include "core/retarget/evidence.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/clip.h"
#include "support/test_skeletons.h"

namespace rigel::retarget {
namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

TEST(Evidence, PlantedSnapIsThePop) {
  const testing::Humanoid h = testing::MakeHumanoid();
  const Skeleton& s = *h.skeleton;
  const int frames = 100;
  Clip clip(frames, s.num_channels(), 1.0 / 30);
  const int elbow = s.FindJoint("LeftForeArm");
  const int channel = s.rotation_channels(elbow)[1];
  // A smooth swing of 1 degree per frame (constant angular velocity: no change at all), and one
  // frame snapped 40 degrees away about the same axis.
  for (int f = 0; f < frames; ++f) clip.at(f, channel) = f * kDeg;
  clip.at(50, channel) += 40 * kDeg;
  const ClipEvidence e = MeasureClipEvidence(s, clip);
  ASSERT_EQ(static_cast<int>(e.pop.size()), frames);
  // Velocities around the snap: +41, -39 degrees per frame against 1 elsewhere: changes of 40
  // (frame 49), 80 (frame 50) and 40 (frame 51) degrees.
  EXPECT_NEAR(e.pop[49], 40.0 / kPopDegrees, 1e-9);
  EXPECT_NEAR(e.pop[50], 80.0 / kPopDegrees, 1e-9);
  EXPECT_NEAR(e.pop[51], 40.0 / kPopDegrees, 1e-9);
  EXPECT_EQ(e.pop_joint[50], elbow);
  for (int f = 0; f < frames; ++f) {
    if (f >= 49 && f <= 51) continue;
    EXPECT_LT(e.pop[f], 1e-9) << "frame " << f;
  }
}

TEST(Evidence, FootSlideIsMeasuredOnThePlantedFeet) {
  const testing::Humanoid h = testing::MakeHumanoid();
  const Skeleton& s = *h.skeleton;
  const int frames = 60;
  Clip clip(frames, s.num_channels(), 1.0 / 30);
  // The whole figure glides 2 mm a frame along X (6 cm/s: slow enough to count as contact); the
  // feet stay on the ground, so they slide exactly 2 mm a frame.
  for (int f = 0; f < frames; ++f) clip.at(f, 0) = 0.002 * f;
  const ClipEvidence e = MeasureClipEvidence(s, clip);
  ASSERT_EQ(e.feet.size(), 2u);
  EXPECT_EQ(e.up_axis, 1);
  ASSERT_EQ(e.contacts.size(), 2u);  // one window per foot, the whole clip
  EXPECT_LT(e.foot_slide[0], 0.0);   // no previous frame
  for (int f = 1; f < frames; ++f) EXPECT_NEAR(e.foot_slide[f], 0.002, 1e-12) << "frame " << f;
}

TEST(Evidence, NoFeetNoSlide) {
  // A chain that is not a humanoid: pops still measured, foot slide absent everywhere.
  const auto chain = testing::Arm();
  Clip clip(10, chain->num_channels(), 1.0 / 30);
  const ClipEvidence e = MeasureClipEvidence(*chain, clip);
  EXPECT_TRUE(e.feet.empty());
  for (const double v : e.foot_slide) EXPECT_LT(v, 0.0);
  for (const double v : e.pop) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace rigel::retarget
