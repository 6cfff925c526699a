// Retargeting real mocap (../shared/data) onto other skeletons: names, proportions, rest poses,
// up axes and units all differ. Figures are printed so the closing note can quote them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "assimp/world_compare.h"
#include "core/pose.h"
#include "core/retarget/retarget.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

std::string Data(const std::string& rel) { return testing::SharedData() + "/" + rel; }

void Print(const std::string& label, const RetargetMetrics& q) {
  std::printf(
      "[%s] frames %d mapped %d bones %d ratio %.4f units %.4g%s->%.4g%s up %d->%d | dir mean "
      "%.4f max %.4f deg (%s) | contacts %d frames %d slide mean %.3f max %.3f mm | feet "
      "mean %.2f max %.2f mm hands %.1f/%.1f mm | limits %d (knee %d) | unreached %d\n",
      label.c_str(), q.frames, q.mapped_joints, q.bones, q.hip_height_ratio, q.source_unit_metres,
      q.source_unit_estimated ? "(est)" : "", q.target_unit_metres,
      q.target_unit_estimated ? "(est)" : "", q.source_up_axis, q.target_up_axis,
      q.bone_direction_mean_deg, q.bone_direction_max_deg, q.bone_direction_worst.c_str(),
      q.contacts, q.contact_frames, q.foot_slide_mean_mm, q.foot_slide_max_mm, q.foot_error_mean_mm,
      q.foot_error_max_mm, q.hand_error_mean_mm, q.hand_error_max_mm, q.joint_limit_violations,
      q.knee_hyperextension_frames, q.ik_unreached);
  std::printf("  branches mean %.3f max %.3f deg\n", q.branch_direction_mean_deg,
              q.branch_direction_max_deg);
  if (std::getenv("RIGEL_RETARGET_VERBOSE")) {
    for (const auto& s : q.segments) {
      std::printf("  %-40s %s mean %7.3f max %7.3f\n", s.name.c_str(),
                  s.branch ? "branch" : "bone  ", s.mean_deg, s.max_deg);
    }
  }
}

struct Case {
  const char* name;
  const char* target;
};

class RealData : public ::testing::TestWithParam<Case> {};

TEST_P(RealData, Cmu0101OntoTarget) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene source = LoadScene(Data("cmu_cgspeed/01_01.bvh"));
  const Scene target = LoadScene(Data(GetParam().target));
  for (const bool pin : {false, true}) {
    RetargetOptions options;
    options.pin_feet = pin;
    std::string error;
    auto r =
        Retargeter::Create(source.skeleton, target.skeleton, {}, options, &error, &source.clips[0]);
    ASSERT_TRUE(r) << error;
    const RetargetResult result = r->Run(source.clips[0]);
    for (const auto& w : result.warnings) std::printf("warning: %s\n", w.c_str());
    Print(std::string(GetParam().name) + (pin ? " +IK" : ""), result.metrics);
    EXPECT_EQ(result.clip.num_frames(), source.clips[0].num_frames());
    EXPECT_LT(result.metrics.bone_direction_mean_deg, 2.0);
    if (pin) {
      EXPECT_GT(result.metrics.contacts, 0);
      EXPECT_LT(result.metrics.foot_slide_mean_mm, 5.0);
      EXPECT_LT(result.metrics.foot_slide_max_mm, 5.0);
    }
  }
}

// The MakeHuman T-pose frame as the target's reference pose and CMU frame 0 as the source's.
TEST(RealDataReference, FramesAsReferencePoses) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene source = LoadScene(Data("cmu_cgspeed/01_01.bvh"));
  const Scene target = LoadScene(Data("makehuman/tpose.bvh"));
  RetargetOptions options;
  options.source_reference_frame = 0;
  options.target_reference_frame = 0;
  options.pin_feet = true;
  const RetargetResult r =
      Retarget(source.skeleton, source.clips[0], target.skeleton, {}, options, &target.clips[0]);
  Print("MakeHuman ref frames +IK", r.metrics);
  EXPECT_LT(r.metrics.bone_direction_mean_deg, 2.0);
  EXPECT_LT(r.metrics.foot_slide_max_mm, 5.0);
  options.target_reference_frame = 1;
  EXPECT_THROW(
      Retarget(source.skeleton, source.clips[0], target.skeleton, {}, options, &target.clips[0]),
      std::invalid_argument);
}

// A -> B -> A: CMU 01_01 onto each rig and back returns the CMU bone directions (segments between
// joints the map drives, each to its nearest driven ancestor) within 1 degree.
TEST_P(RealData, RoundTripWithinOneDegree) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene a = LoadScene(Data("cmu_cgspeed/01_01.bvh"));
  const Scene b = LoadScene(Data(GetParam().target));
  const RetargetResult ab = Retarget(a.skeleton, a.clips[0], b.skeleton);
  const RetargetResult ba = Retarget(b.skeleton, ab.clip, a.skeleton);
  const Skeleton& s = *a.skeleton;
  std::vector<bool> driven(s.num_joints(), false);
  for (const BoneMapEntry& e : AutoMap(s, *b.skeleton).entries)
    driven[s.FindJoint(e.source)] = true;
  std::vector<std::pair<int, int>> segments;
  for (int j = 0; j < s.num_joints(); ++j) {
    if (!driven[j]) continue;
    for (int p = s.parent(j); p >= 0; p = s.parent(p)) {
      if (driven[p]) {
        segments.emplace_back(p, j);
        break;
      }
    }
  }
  ASSERT_GT(segments.size(), 12u);
  Pose p0(s);
  Pose p1(s);
  double worst = 0.0;
  double sum = 0.0;
  long count = 0;
  std::string worst_segment;
  for (int f = 0; f < a.clips[0].num_frames(); ++f) {
    p0.SetFromRow(s, a.clips[0].frame(f));
    p1.SetFromRow(s, ba.clip.frame(f));
    for (const auto& [p, j] : segments) {
      const Eigen::Vector3d d0 = p0.world[j].translation() - p0.world[p].translation();
      const Eigen::Vector3d d1 = p1.world[j].translation() - p1.world[p].translation();
      if (d0.norm() < 1e-9) continue;
      const double e = std::atan2(d0.cross(d1).norm(), d0.dot(d1)) * kDegPerRad;
      if (e > worst) worst_segment = s.name(p) + " -> " + s.name(j);
      worst = std::max(worst, e);
      sum += e;
      ++count;
    }
  }
  std::printf("[%s round trip] %zu segments, mean %.6f max %.6f deg (%s)\n", GetParam().name,
              segments.size(), sum / static_cast<double>(count), worst, worst_segment.c_str());
  EXPECT_LT(worst, 1.0);
}

INSTANTIATE_TEST_SUITE_P(
    Targets, RealData,
    ::testing::Values(Case{"MakeHuman", "makehuman/tpose.bvh"},
                      Case{"MakeHumanLegacy", "makehuman/walk1.bvh"},
                      Case{"MotionAnalysis", "assimp_misc/Boxing_Toes.bvh"},
                      Case{"PybvhTest1", "pybvh/bvh_test1.bvh"},
                      Case{"PybvhTest2", "pybvh/bvh_test2.bvh"},
                      // Skeleton-only FBX characters (no animation, no
                      // skin): a Maya HumanIK definition and the 100STYLE
                      // retarget character (issue 26).
                      Case{"HumanIkSkeletonOnly", "ufbx/maya_human_ik_7400_binary.fbx"},
                      Case{"Style100SkeletonOnly",
                           "wild/orangeduck_100style-retarget/"
                           "100style_character.fbx"}),
    [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

// Issue 27 item 4: skeletons that are not humanoids. With the automatic map, two skeletons with
// the same names and hierarchy take the identity map (a fox onto itself keeps its tail, ears and
// toes: every joint where the source has it, each take); a humanoid onto the fox is refused with
// a message that names what is missing and points to --map.
TEST(NotHumanoid, SameSkeletonTakesTheIdentityMapOtherwiseRefusedPointingToAMap) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene fox = LoadScene(Data("wild/bevyengine_bevy/Fox.glb"));
  ASSERT_GE(fox.clips.size(), 3u);
  for (const Clip& take : fox.clips) {
    SCOPED_TRACE(take.name());
    // As the CLI does: the target file's first clip tells the floor it stands on.
    const RetargetResult r = Retarget(fox.skeleton, take, fox.skeleton, {}, {}, &fox.clips.front());
    ASSERT_EQ(r.clip.num_frames(), take.num_frames());
    EXPECT_EQ(r.clip.name(), take.name());
    const double height = testing::Height(*fox.skeleton, take);
    double worst = 0;
    for (int f = 0; f < take.num_frames(); ++f) {
      const auto want = testing::WorldPositions(*fox.skeleton, take, f);
      const auto got = testing::WorldPositions(*fox.skeleton, r.clip, f);
      for (size_t j = 0; j < want.size(); ++j) worst = std::max(worst, (got[j] - want[j]).norm());
    }
    EXPECT_LT(worst, 1e-4 * height) << "height " << height;
  }
  const Scene human = LoadScene(Data("cmu_cgspeed/01_01.bvh"));
  std::string error;
  EXPECT_EQ(Retargeter::Create(human.skeleton, fox.skeleton, {}, {}, &error, &human.clips[0]),
            nullptr);
  EXPECT_NE(error.find("the target skeleton (root 'root') is not a humanoid: no LeftUpperLeg"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--map"), std::string::npos) << error;
}

// Issue 27: a target whose rest pose hangs from the hips at the origin (CMU: root channels place
// the hips, a hip height above the floor its clips walk on) is stood on the floor of its own clip,
// not on its rest pose's lowest point: a retarget onto it walked a hip height under the floor
// (lowest point -17.1 units against the CMU clip's +0.7). Measured on the output's joints here.
TEST(RealDataFloor, OntoACmuSkeletonTheOutputStandsOnItsFloor) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene source = LoadScene(Data("fbx/ozz_pab/walk.fbx"));
  const Scene target = LoadScene(Data("cmu_cgspeed/01_01.bvh"));
  auto lowest = [](const Skeleton& s, const Clip& c) {
    double low = INFINITY;
    for (int f = 0; f < c.num_frames(); ++f) {
      for (const Eigen::Vector3d& p : testing::WorldPositions(s, c, f)) low = std::min(low, p.y());
    }
    return low;
  };
  const double floor = lowest(*target.skeleton, target.clips[0]);
  const Pose rest(*target.skeleton);
  double rest_low = INFINITY;
  for (const auto& w : rest.world) rest_low = std::min(rest_low, w.translation().y());
  ASSERT_LT(rest_low, floor - 10.0) << "the premise: CMU's rest pose hangs below its floor";
  const RetargetResult r =
      Retarget(source.skeleton, source.clips[0], target.skeleton, {}, {}, &target.clips[0]);
  const double hip_height = 17.0;  // CMU units: 0.96 m
  EXPECT_NEAR(lowest(*target.skeleton, r.clip), floor, 0.1 * hip_height);
}

}  // namespace
}  // namespace rigel::retarget
