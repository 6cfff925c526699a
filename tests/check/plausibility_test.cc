// The plausibility checks (core/check/plausibility.h) catch what they are for: each planted
// failure (issue 27 item 2) is named by its check, and the unbroken outputs pass.
#include "core/check/plausibility.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/check/rules.h"
#include "core/pose.h"
#include "core/retarget/evidence.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/retarget.h"
#include "core/scene.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::check {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A CMU-skeleton walk (40 frames, Y-up, rest pose hips at the origin) and a walk whose rest pose
// stands on its floor (cm, 48 frames), the retargets' source and target.
const std::string kCmuWalk = RIGEL_SOURCE_DIR "/samples/cmu_walk/walk.bvh";
const std::string kBasicWalk = RIGEL_SOURCE_DIR "/samples/basics/walk.bvh";

CheckSide SideOf(const Scene& scene, const Clip& clip) {
  return CheckSideOf(scene, *scene.skeleton, clip);
}

// The findings in words, for failure messages.
std::string Describe(const CheckReport& r) {
  std::string text;
  for (const Finding& f : r.findings) text += "  " + DescribeFinding(f) + "\n";
  return text.empty() ? "  (no finding)\n" : text;
}

// Whether the report names `check`; prints the findings (the planted failures' evidence).
bool Names(const CheckReport& r, const std::string& check) {
  std::printf("%s", Describe(r).c_str());
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [&](const Finding& f) { return f.check == check; });
}

CheckReport ConvertCheck(const Scene& in, const Scene& out, const Clip& clip, double scale = 1) {
  PlausibilityJob job;
  job.kind = OutputKind::kConvert;
  job.source = SideOf(in, in.clips.front());
  job.output = SideOf(out, clip);
  job.scale = scale;
  return job.Run();
}

struct Retargeted {
  Scene source, target;
  retarget::RetargetResult result;
};

Retargeted RetargetWalk(const retarget::RetargetOptions& options, bool swap_sides = false) {
  Retargeted r{LoadScene(kBasicWalk), LoadScene(kBasicWalk), {}};
  retarget::BoneMap map = retarget::AutoMap(*r.source.skeleton, *r.target.skeleton);
  if (swap_sides) {
    for (retarget::BoneMapEntry& e : map.entries) {
      std::string& t = e.target;
      if (t.rfind("Left", 0) == 0) {
        t = "Right" + t.substr(4);
      } else if (t.rfind("Right", 0) == 0) {
        t = "Left" + t.substr(5);
      }
    }
  }
  r.result = retarget::Retarget(r.source.skeleton, r.source.clips.front(), r.target.skeleton, map,
                                options);
  return r;
}

CheckReport RetargetCheck(const Retargeted& r, TravelRule travel = TravelRule::kScaled) {
  PlausibilityJob job;
  job.kind = OutputKind::kRetarget;
  job.source = SideOf(r.source, r.source.clips.front());
  job.output = SideOf(r.target, r.result.clip);
  job.travel = travel;
  return job.Run();
}

TEST(Plausibility, ValidityMatrix) {
  const Scene s = LoadScene(kCmuWalk);
  PlausibilityJob job;
  EXPECT_EQ(job.Validate(), "check: the source skeleton or clip is missing");
  EXPECT_THROW(job.Run(), std::invalid_argument);
  job.source = SideOf(s, s.clips.front());
  EXPECT_EQ(job.Validate(), "check: the output skeleton or clip is missing");
  job.output = job.source;
  EXPECT_EQ(job.Validate(), "");
  job.scale = 0;
  EXPECT_EQ(job.Validate(), "check: scale must be finite and > 0");
  job.scale = 1;
  job.output.up.sign = 0;
  EXPECT_EQ(job.Validate(), "check: the output up axis is not X, Y or Z with sign +1 or -1");
  job.output.up.sign = 1;
  const Clip narrow(2, 3, 1.0 / 30);
  job.output.clip = &narrow;
  EXPECT_EQ(job.Validate(), "check: the output clip has 3 channels, its skeleton 96");
  job.output.clip = job.source.clip;
  job.travel = TravelRule::kKept;
  job.output.metres_per_unit = 0;
  EXPECT_EQ(job.Validate(), "check: travel kept in metres needs the output unit");
}

TEST(Plausibility, UnchangedOutputPasses) {
  const Scene s = LoadScene(kCmuWalk);
  const CheckReport r = ConvertCheck(s, s, s.clips.front());
  EXPECT_FALSE(r.suspect()) << Describe(r);
  EXPECT_TRUE(r.humanoid);
  EXPECT_EQ(r.frames, 40);
  for (const std::string_view name : CheckNames()) {
    EXPECT_NE(std::find(r.ran.begin(), r.ran.end(), name), r.ran.end()) << name << " did not run";
  }
}

TEST(Plausibility, CorrectRetargetPasses) {
  const Retargeted r = RetargetWalk({});
  const CheckReport report = RetargetCheck(r);
  EXPECT_FALSE(report.suspect()) << Describe(report);
  EXPECT_DOUBLE_EQ(report.scale, 1.0);
}

TEST(Plausibility, WrongUpAxisOfTheOutputIsNamed) {
  // The output file states Z up for a clip that stands along Y (a writer's wrong axes).
  const Scene s = LoadScene(kCmuWalk);
  Scene lying = s;
  lying.axes.up.value = {2, 1};
  const CheckReport r = ConvertCheck(s, lying, s.clips.front());
  EXPECT_TRUE(Names(r, "height")) << Describe(r);
}

TEST(Plausibility, RetargetOntoAForcedWrongUpAxisIsNamed) {
  retarget::RetargetOptions options;
  options.target_up_axis = 2;  // the target is Y-up
  const CheckReport r = RetargetCheck(RetargetWalk(options));
  EXPECT_TRUE(Names(r, "height")) << Describe(r);
}

TEST(Plausibility, WrongUnitIsNamed) {
  const Scene s = LoadScene(kCmuWalk);
  for (const double factor : {10.0, 0.01}) {
    Scene scaled = s;
    ASSERT_TRUE(ScaleSceneLengths(scaled, factor));
    // Told the lengths are unchanged (scale 1): the output is 10 or 0.01 times too big.
    const CheckReport r = ConvertCheck(s, scaled, scaled.clips.front());
    EXPECT_TRUE(Names(r, "height")) << "x" << factor << "\n" << Describe(r);
    EXPECT_TRUE(Names(r, "travel")) << "x" << factor << "\n" << Describe(r);
    // Told the truth, the same output passes.
    EXPECT_FALSE(ConvertCheck(s, scaled, scaled.clips.front(), factor).suspect())
        << "x" << factor << "\n"
        << Describe(ConvertCheck(s, scaled, scaled.clips.front(), factor));
  }
}

TEST(Plausibility, LeftAndRightSwappedInTheMapAreNamed) {
  const CheckReport r = RetargetCheck(RetargetWalk({}, /*swap_sides=*/true));
  EXPECT_TRUE(Names(r, "limb_direction")) << Describe(r);
}

TEST(Plausibility, FootRotated80DegreesIsNamed) {
  const Scene s = LoadScene(kCmuWalk);
  Clip clip = s.clips.front();
  const Skeleton& sk = *s.skeleton;
  const int foot = sk.FindJoint("LeftFoot");
  ASSERT_GE(foot, 0);
  const int x = sk.rotation_channels(foot).back();  // Xrotation (ZYX order): pitch
  for (int f = 0; f < clip.num_frames(); ++f) clip.at(f, x) += 80 * kPi / 180;
  const CheckReport r = ConvertCheck(s, s, clip);
  EXPECT_TRUE(Names(r, "orientation")) << Describe(r);
  for (const Finding& f : r.findings) {
    if (f.check == "orientation") {
      EXPECT_NE(f.reason.find("left foot"), std::string::npos);
    }
  }
}

TEST(Plausibility, RootPathScaledBy10IsNamed) {
  const Scene s = LoadScene(kCmuWalk);
  Clip clip = s.clips.front();
  const Skeleton& sk = *s.skeleton;
  for (const int axis : {0, 2}) {  // horizontal (Y-up)
    const int c = sk.translation_channel(0, axis);
    const double start = clip.at(0, c);
    for (int f = 0; f < clip.num_frames(); ++f)
      clip.at(f, c) = start + 10 * (clip.at(f, c) - start);
  }
  const CheckReport r = ConvertCheck(s, s, clip);
  EXPECT_TRUE(Names(r, "travel")) << Describe(r);
}

TEST(Plausibility, FloatingHipsAreNamed) {
  // The whole figure lifted by its hip height (what a retarget that takes its source's rest pose
  // for the floor does to a source whose rest pose hangs from the hips at the origin).
  const Scene s = LoadScene(kBasicWalk);
  Clip clip = s.clips.front();
  const int y = s.skeleton->translation_channel(0, 1);
  for (int f = 0; f < clip.num_frames(); ++f) clip.at(f, y) += 95;
  const CheckReport r = ConvertCheck(s, s, clip);
  EXPECT_TRUE(Names(r, "hips_height")) << Describe(r);
}

TEST(Plausibility, PoleFlipIsNamed) {
  // From frame 20 on, the left arm turns 180 degrees about its shoulder-hand line: the hand stays,
  // the elbow flips to the other side (what a pole task solved at the hand's priority did).
  const Scene s = LoadScene(kCmuWalk);
  const Skeleton& sk = *s.skeleton;
  Clip clip = s.clips.front();
  const int upper = sk.FindJoint("LeftArm"), hand = sk.FindJoint("LeftHand");
  ASSERT_GE(upper, 0);
  Pose pose(sk);
  for (int f = 20; f < clip.num_frames(); ++f) {
    pose.SetFromRow(sk, clip.frame(f));
    const Eigen::Vector3d axis =
        (pose.world[hand].translation() - pose.world[upper].translation()).normalized();
    const Eigen::Matrix3d world = Eigen::AngleAxisd(kPi, axis) * pose.world[upper].linear();
    const Eigen::Matrix3d parent = pose.world[sk.parent(upper)].linear();
    const Eigen::Matrix3d channels =
        sk.rest_orientation(upper).toRotationMatrix().transpose() * parent.transpose() * world;
    SetRotationChannels(sk, upper, channels, clip.frame(f), clip.frame(f));
  }
  const CheckReport r = ConvertCheck(s, s, clip);
  EXPECT_TRUE(Names(r, "pole_flip")) << Describe(r);
}

TEST(Plausibility, PopsSkippedOnlyWhereNoneIsPossible) {
  // The channel bound never hides a pop: every frame MeasurePops scores 1 or more is scored the
  // same, and every frame scored at all has MeasurePops' score (on the walk, and on the walk
  // with a one-frame snap of the left arm planted).
  const Scene s = LoadScene(kCmuWalk);
  const Skeleton& sk = *s.skeleton;
  Clip snapped = s.clips.front();
  const int arm = sk.FindJoint("LeftArm");
  snapped.at(17, sk.rotation_channels(arm)[0]) += 0.6;
  std::vector<int> joints;
  for (int j = 0; j < sk.num_joints(); ++j) joints.push_back(j);
  for (const Clip* clip : {&s.clips.front(), static_cast<const Clip*>(&snapped)}) {
    std::vector<double> all, some;
    std::vector<int> all_joint, some_joint;
    retarget::MeasurePops(sk, *clip, &all, &all_joint);
    internal::PopScoresWherePossible(sk, *clip, joints, clip->num_frames(), &some, &some_joint);
    for (int f = 0; f < clip->num_frames(); ++f) {
      if (all[f] >= 1.0 || some[f] > 0.0) {
        EXPECT_DOUBLE_EQ(some[f], all[f]) << "frame " << f;
      }
    }
  }
  std::vector<double> pop;
  std::vector<int> joint;
  internal::PopScoresWherePossible(sk, snapped, joints, snapped.num_frames(), &pop, &joint);
  EXPECT_GE(pop[17], 1.0);
  EXPECT_EQ(joint[17], arm);
}

}  // namespace
}  // namespace rigel::check
