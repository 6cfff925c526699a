// The contact detector (DetectContacts) on tracks whose contacts are known by construction, on a
// clip, and on real CMU mocap; the retarget foot-contact pass (FindFootContacts).
#include "core/retarget/contacts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/alignment.h"
#include "core/retarget/transfer.h"
#include "importers/load_scene.h"
#include "retarget/humanoids.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

bool operator==(const ContactWindow& a, const ContactWindow& b) {
  return a.track == b.track && a.first == b.first && a.last == b.last;
}

// 30 frames at 0.1 s, Y-up, hip height 10: thresholds 0.6 units high, 3.5 units/s.
//   track 0: planted at z 0 (frames 0-9), lifted straight up at frame 10, swings forward at
//            height 5 (frames 11-18), down at z 40 at frame 19, planted at z 40 (frames 20-29):
//            contacts 0-9 and 20-29 (the swing's first and last frames move only vertically).
//   track 1: never moves; 0.3 high in frames 5-24 and 27-28, 0.7 high otherwise: contacts 5-24
//            (27-28 is 2 frames, shorter than min_frames 3).
//   track 2: on the ground, sliding 1 unit/s (frames 0-14) then 8 units/s: contact 0-13 (frame
//            14's central difference is (0.1 + 0.8) / 0.2 = 4.5 units/s).
std::vector<Eigen::Vector3d> Tracks() {
  std::vector<Eigen::Vector3d> p(30 * 3);
  double z2 = 0.0;
  for (int f = 0; f < 30; ++f) {
    Eigen::Vector3d a(0, 0, f < 10 ? 0 : 40);
    if (f >= 10 && f <= 19)
      a = Eigen::Vector3d(0, 5, f == 10 ? 0.0 : (f >= 18 ? 40.0 : 5.0 * (f - 10)));
    p[f * 3 + 0] = a;
    const bool low = (f >= 5 && f <= 24) || f == 27 || f == 28;
    p[f * 3 + 1] = Eigen::Vector3d(10, low ? 0.3 : 0.7, 20);
    p[f * 3 + 2] = Eigen::Vector3d(-10, 0, z2);
    z2 += f < 14 ? 0.1 : 0.8;
  }
  return p;
}

ContactOptions Thresholds() {
  ContactOptions o;
  o.up_axis = 1;
  o.scale = 10.0;
  return o;
}

TEST(DetectContacts, WindowsKnownByConstruction) {
  const std::vector<Eigen::Vector3d> p = Tracks();
  double ground = -1.0;
  const std::vector<ContactWindow> w = DetectContacts(p, 3, 0.1, Thresholds(), &ground);
  const std::vector<ContactWindow> expected = {{0, 0, 9}, {0, 20, 29}, {1, 5, 24}, {2, 0, 13}};
  ASSERT_EQ(w.size(), expected.size());
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_TRUE(w[i] == expected[i])
        << i << ": " << w[i].track << " " << w[i].first << "-" << w[i].last;
  }
  EXPECT_EQ(ground, 0.0);
}

TEST(DetectContacts, ThresholdsAndMinFrames) {
  const std::vector<Eigen::Vector3d> p = Tracks();
  ContactOptions o = Thresholds();
  o.min_frames = 2;  // track 1's 2-frame dip counts now
  std::vector<ContactWindow> w = DetectContacts(p, 3, 0.1, o);
  ASSERT_EQ(w.size(), 5u);
  EXPECT_TRUE(w[3] == (ContactWindow{1, 27, 28}));
  o = Thresholds();
  o.height = 0.08;  // 0.8 units: track 1 is always low enough
  w = DetectContacts(p, 3, 0.1, o);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_TRUE(w[2] == (ContactWindow{1, 0, 29}));
  o = Thresholds();
  o.speed = 0.05;  // 0.5 units/s: track 2 slides too fast everywhere
  w = DetectContacts(p, 3, 0.1, o);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w.back().track, 1);
  // Up axis Z: the same tracks with Y and Z swapped give the same windows.
  std::vector<Eigen::Vector3d> q = p;
  for (Eigen::Vector3d& v : q) v = Eigen::Vector3d(v.x(), v.z(), v.y());
  o = Thresholds();
  o.up_axis = 2;
  w = DetectContacts(q, 3, 0.1, o);
  EXPECT_EQ(w.size(), 4u);
  // One frame: speed 0; track 1 is 0.7 high there.
  o.min_frames = 1;
  w = DetectContacts(std::span<const Eigen::Vector3d>(q.data(), 3), 3, 0.1, o);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0] == (ContactWindow{0, 0, 0}));
  EXPECT_TRUE(w[1] == (ContactWindow{2, 0, 0}));
  EXPECT_TRUE(DetectContacts({}, 0, 0.1, o).empty());
}

// On a clip: the same as on the joints' world positions computed by FK here.
TEST(DetectContacts, OnAClipEqualsOnItsJointPositions) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 60, 1.0);
  const std::vector<int> feet = {s->FindJoint("LeftFoot"), s->FindJoint("RightFoot")};
  std::vector<Eigen::Vector3d> p;
  Pose pose(*s);
  for (int f = 0; f < clip.num_frames(); ++f) {
    pose.SetFromRow(*s, clip.frame(f));
    for (const int j : feet) p.push_back(pose.world[j].translation());
  }
  ContactOptions o;
  o.scale = 90.0;
  const auto a = DetectContacts(*s, clip, feet, o);
  const auto b = DetectContacts(p, 2, clip.frame_time(), o);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i] == b[i]);
}

// The hip height of the fixture humanoid: upper-leg joints 90 cm above the soles (8 cm end sites
// below the feet), in any unit and up axis.
TEST(FigureHipHeight, HumanoidFixture) {
  for (const bool z_up : {false, true}) {
    const auto s = Humanoid(0.01, false, {}, z_up);
    Pose pose(*s);
    EXPECT_NEAR(FigureHipHeight(*s, pose.world, z_up ? 2 : 1), 0.9, 1e-12);
  }
}

// The retarget pass: contacts of the scaled source feet, pins at the mean source goal.
TEST(FindFootContacts, PinsAreTheMeanGoals) {
  const auto s = Humanoid(1.0, false, {}, false);
  const Clip clip = Walk(*s, 90, 1.0);
  RetargetOptions options;
  options.pin_feet = true;
  // The fixture walk swings its legs fast: looser thresholds find its stance phases.
  options.contact_height = 0.15;
  options.contact_speed = 1.5;
  const Passes p0 = Before(*s, *s, clip, options);
  const Alignment& a = p0.a;
  const TransferredMotion& m = p0.motion;
  const std::vector<FootContact>& contacts = p0.contacts;
  ASSERT_FALSE(contacts.empty());
  // Independently: the detector on the feet's scaled positions (scale 1 here).
  std::vector<Eigen::Vector3d> p;
  for (int f = 0; f < clip.num_frames(); ++f) {
    p.push_back(m.source_position(f, s->FindJoint("LeftFoot")));
    p.push_back(m.source_position(f, s->FindJoint("RightFoot")));
  }
  ContactOptions o;
  o.scale = a.target_hip_height;
  o.height = options.contact_height;
  o.speed = options.contact_speed;
  const auto windows = DetectContacts(p, 2, clip.frame_time(), o);
  ASSERT_EQ(contacts.size(), windows.size());
  for (size_t i = 0; i < contacts.size(); ++i) {
    EXPECT_EQ(contacts[i].limb, windows[i].track);
    EXPECT_EQ(contacts[i].first, windows[i].first);
    EXPECT_EQ(contacts[i].last, windows[i].last);
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int f = contacts[i].first; f <= contacts[i].last; ++f) {
      mean += SourceGoal(a, m, f, a.limbs[contacts[i].limb].source_end);
    }
    EXPECT_VEC3_NEAR(contacts[i].pin, mean / (contacts[i].last - contacts[i].first + 1), 1e-9);
  }
}

// Real CMU mocap (01_01, subject 1; the corpus has no plain CMU walk): every contact frame obeys
// the rule, recomputed here, and the frames just outside a window break it.
TEST(DetectContacts, RealCmuClip) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene scene = LoadScene(testing::SharedData() + "/cmu_cgspeed/01_01.bvh");
  const Skeleton& s = *scene.skeleton;
  const Clip& clip = scene.clips[0];
  const std::vector<int> feet = {s.FindJoint("LeftFoot"), s.FindJoint("RightFoot")};
  Pose pose(s);
  pose.SetFromRow(s, clip.frame(0));
  ContactOptions o;
  o.scale = FigureHipHeight(s, pose.world, 1);
  EXPECT_GT(o.scale, 12.0);  // ~0.9 m at 0.0564 m per unit is ~16 units
  EXPECT_LT(o.scale, 20.0);
  double ground = 0.0;
  const auto windows = DetectContacts(s, clip, feet, o, &ground);
  const int n = clip.num_frames();
  std::vector<std::vector<Eigen::Vector3d>> p(2, std::vector<Eigen::Vector3d>(n));
  for (int f = 0; f < n; ++f) {
    pose.SetFromRow(s, clip.frame(f));
    for (int t = 0; t < 2; ++t) p[t][f] = pose.world[feet[t]].translation();
  }
  auto in = [&](int t, int f) {
    const int f0 = std::max(f - 1, 0);
    const int f1 = std::min(f + 1, n - 1);
    Eigen::Vector3d d = p[t][f1] - p[t][f0];
    d.y() = 0;
    return p[t][f].y() - ground < 0.06 * o.scale &&
           d.norm() / ((f1 - f0) * clip.frame_time()) < 0.35 * o.scale;
  };
  int per_foot[2] = {0, 0};
  for (const ContactWindow& w : windows) {
    ++per_foot[w.track];
    EXPECT_GE(w.last - w.first + 1, 3);
    for (int f = w.first; f <= w.last; ++f) EXPECT_TRUE(in(w.track, f)) << f;
    if (w.first > 0) {
      EXPECT_FALSE(in(w.track, w.first - 1));
    }
    if (w.last < n - 1) {
      EXPECT_FALSE(in(w.track, w.last + 1));
    }
  }
  std::printf("CMU 01_01: hip height %.3f, %d left and %d right contacts\n", o.scale, per_foot[0],
              per_foot[1]);
  EXPECT_GT(per_foot[0], 0);
  EXPECT_GT(per_foot[1], 0);
}

}  // namespace
}  // namespace rigel::retarget
