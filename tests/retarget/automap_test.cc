// The automatic map from tokens and topology (issue 15 item 1), by joint name: name tokens and
// side markers in every form, and the fingers of the corpus's conventions (found, mapped where both
// rigs have them, retargeted). The conventions the corpus lacks: automap_conventions_test.cc.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/retarget.h"
#include "humanoid_checks.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

TEST(SplitJointName, SeparatorsCamelCaseAndDigits) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitJointName("CC_Base_L_ThighTwist01"),
            (V{"cc", "base", "l", "thigh", "twist", "01"}));
  EXPECT_EQ(SplitJointName("LHipJoint"), (V{"l", "hip", "joint"}));
  EXPECT_EQ(SplitJointName("mixamorig:LeftUpLeg"), (V{"mixamorig", "left", "up", "leg"}));
  EXPECT_EQ(SplitJointName("Bip01 L Toe0Nub"), (V{"bip", "01", "l", "toe", "0", "nub"}));
  EXPECT_EQ(SplitJointName("upper_arm.L"), (V{"upper", "arm", "l"}));
  EXPECT_EQ(SplitJointName("toe1-1.R"), (V{"toe", "1", "1", "r"}));
  EXPECT_EQ(SplitJointName("lShldrBend"), (V{"l", "shldr", "bend"}));
  EXPECT_TRUE(SplitJointName("__").empty());
}

TEST(NormaliseJointName, SideMarkersInEveryForm) {
  struct Case {
    const char* name;
    Side side;
    const char* word;
    bool extra;
  };
  const Case cases[] = {
      {"CC_Base_L_Thigh", Side::kLeft, "thigh", false},
      {"CC_Base_R_Calf", Side::kRight, "calf", false},
      {"CC_Base_L_ThighTwist01", Side::kLeft, "thightwist01", true},
      {"CC_Base_R_KneeShareBone", Side::kRight, "kneesharebone", true},
      {"thigh_l", Side::kLeft, "thigh", false},
      {"calf_twist_01_r", Side::kRight, "calftwist01", true},
      {"ik_foot_l", Side::kLeft, "ikfoot", true},
      {"thigh.L", Side::kLeft, "thigh", false},
      {"upper_arm.R", Side::kRight, "upperarm", false},
      {"lThighBend", Side::kLeft, "thighbend", false},
      {"rShldrTwist", Side::kRight, "shldrtwist", true},
      {"lhip", Side::kLeft, "hip", false},
      {"rknee", Side::kRight, "knee", false},
      {"Bip01 L Thigh", Side::kLeft, "thigh", false},
      {"Bip001 R UpperArm", Side::kRight, "upperarm", false},
      {"Bip01 L Toe0Nub", Side::kLeft, "toe0nub", true},
      {"UpperLeg_L", Side::kLeft, "upperleg", false},
      {"HandRight", Side::kRight, "hand", false},
      {"Hand Left", Side::kLeft, "hand", false},
      {"mixamorig:LeftUpLeg", Side::kLeft, "upleg", false},
      {"mixamorig7:RightToe_End", Side::kRight, "toeend", true},
      {"LeftHand_End", Side::kLeft, "handend", true},
      {"L5", Side::kCenter, "l5", false},
      {"T12", Side::kCenter, "t12", false},
      {"ring_01_r", Side::kRight, "ring01", false},
      {"root", Side::kCenter, "root", false},
      {"ribs", Side::kCenter, "ribs", false},
  };
  for (const Case& c : cases) {
    const NormalisedName n = NormaliseJointName(c.name);
    EXPECT_EQ(n.side, c.side) << c.name;
    EXPECT_EQ(n.word, c.word) << c.name;
    EXPECT_EQ(n.extra, c.extra) << c.name;
  }
}

// Fingers in the corpus: by finger word (walk1 "Index2_L", CMU "LThumb"), by number (MakeHuman
// "finger2-1.L", 1 = thumb), metacarpals where present (MakeHuman "metacarpal1.L"), helpers
// ("__Index1_L") never a phalanx.
TEST(AutoMapFingers, RealConventions) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    int side, finger;
    std::array<const char*, 4> joints;
  };
  const Case cases[] = {
      {"cmu_cgspeed/01_01.bvh", 0, 0, {"-", "LThumb", "-", "-"}},
      // CMU lumps the four fingers into one "LFingers": not a finger of its own.
      {"cmu_cgspeed/01_01.bvh", 0, 1, {"-", "-", "-", "-"}},
      {"cmu_cgspeed/01_01.bvh", 1, 2, {"-", "-", "-", "-"}},
      {"makehuman/tpose.bvh", 0, 0, {"-", "finger1-1.L", "finger1-2.L", "finger1-3.L"}},
      {"makehuman/tpose.bvh", 0, 1, {"metacarpal1.L", "finger2-1.L", "finger2-2.L", "finger2-3.L"}},
      {"makehuman/tpose.bvh", 1, 4, {"metacarpal4.R", "finger5-1.R", "finger5-2.R", "finger5-3.R"}},
      {"makehuman/walk1.bvh", 0, 0, {"-", "Thumb1_L", "Thumb2_L", "Thumb3_L"}},
      {"makehuman/walk1.bvh", 1, 3, {"-", "Ring1_R", "Ring2_R", "Ring3_R"}},
      {"makehuman/walk1.bvh", 1, 2, {"-", "Middle1_R", "Middle2_R", "Middle3_R"}},
  };
  for (const Case& c : cases) {
    const Scene scene = testing::LoadShared(c.file);
    const HumanoidJoints h = ClassifyHumanoid(*scene.skeleton);
    const auto& chain = h.fingers[static_cast<size_t>(c.side * 5 + c.finger)];
    for (size_t slot = 0; slot < 4; ++slot) {
      EXPECT_EQ(testing::JointName(*scene.skeleton, chain[slot]), c.joints[slot])
          << c.file << " " << FingerJointName(c.side, c.finger, static_cast<int>(slot));
    }
  }
}

// A rig with fewer fingers maps what it has and lists what it left out.
TEST(AutoMapFingers, MapsWhatBothHaveAndListsTheRest) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  const Scene mh = testing::LoadShared("makehuman/tpose.bvh");
  std::vector<std::string> notes, left_out;
  const BoneMap map = AutoMap(*cmu.skeleton, *mh.skeleton, &notes, &left_out);
  auto target_of = [&](const std::string& source) { return testing::MappedTarget(map, source); };
  EXPECT_EQ(target_of("LThumb"), "finger1-1.L");
  EXPECT_EQ(target_of("RThumb"), "finger1-1.R");
  EXPECT_EQ(target_of("LFingers"), "-");
  EXPECT_EQ(target_of("LeftFingerBase"), "-");
  ASSERT_EQ(left_out.size(), 2u);
  EXPECT_NE(left_out[0].find("left hand: only the target has LeftThumb2, LeftThumb3, LeftIndex0, "
                             "LeftIndex1, LeftIndex2"),
            std::string::npos)
      << left_out[0];
  EXPECT_NE(left_out[0].find("LeftPinky3"), std::string::npos) << left_out[0];
  EXPECT_EQ(notes.size(), 2u);  // the toes, as before
}

// Fingers are retargeted with the rest-pose alignment: MakeHuman legacy walk -> MakeHuman default
// rig (both Z-up decimetres), each phalanx segment of the output points along the source's,
// measured here from forward kinematics of both clips.
TEST(AutoMapFingers, RetargetedPhalangesFollowTheSource) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene src = testing::LoadShared("makehuman/walk1.bvh");
  const Scene tgt = testing::LoadShared("makehuman/tpose.bvh");
  // The same map without its finger entries: the fingers then keep the target's reference pose.
  BoneMap no_fingers = AutoMap(*src.skeleton, *tgt.skeleton);
  std::erase_if(no_fingers.entries, [](const BoneMapEntry& e) {
    return !e.role && (e.comment.starts_with("Left") || e.comment.starts_with("Right"));
  });
  auto worst_of = [&](const BoneMap& map) {
    const RetargetResult r = Retarget(src.skeleton, src.clips[0], tgt.skeleton, map);
    const std::pair<const char*, const char*> pairs[][2] = {
        {{"Index1_L", "Index2_L"}, {"finger2-1.L", "finger2-2.L"}},
        {{"Thumb2_R", "Thumb3_R"}, {"finger1-2.R", "finger1-3.R"}},
        {{"Pinky1_L", "Pinky2_L"}, {"finger5-1.L", "finger5-2.L"}},
    };
    std::vector<Eigen::Isometry3d> ws(src.skeleton->num_joints()), wt(tgt.skeleton->num_joints());
    double worst = 0.0;
    for (int f = 0; f < src.clips[0].num_frames(); ++f) {
      ForwardKinematics(*src.skeleton, src.clips[0].frame(f), ws);
      ForwardKinematics(*tgt.skeleton, r.clip.frame(f), wt);
      for (const auto& p : pairs) {
        const Eigen::Vector3d a = ws[src.skeleton->FindJoint(p[0].second)].translation() -
                                  ws[src.skeleton->FindJoint(p[0].first)].translation();
        const Eigen::Vector3d b = wt[tgt.skeleton->FindJoint(p[1].second)].translation() -
                                  wt[tgt.skeleton->FindJoint(p[1].first)].translation();
        EXPECT_GT(a.norm(), 0.0);
        EXPECT_GT(b.norm(), 0.0);
        worst = std::max(worst, std::atan2(a.cross(b).norm(), a.dot(b)) * 180.0 / M_PI);
      }
    }
    return worst;
  };
  const double worst = worst_of({});
  const double unmapped = worst_of(no_fingers);
  std::printf("fingers walk1 -> tpose: worst phalanx direction %.4f deg (%.2f without them)\n",
              worst, unmapped);
  EXPECT_LT(worst, 1.0);
  EXPECT_GT(unmapped, 5.0);
}

}  // namespace
}  // namespace rigel::retarget
