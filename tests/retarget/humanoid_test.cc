// Name normalisation and humanoid roles across the common naming conventions.
#include "core/retarget/humanoid.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/skeleton_builder.h"
#include "humanoid_checks.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

TEST(NormaliseJointName, SidesPrefixesAndSeparators) {
  struct Case {
    const char* name;
    Side side;
    const char* word;
  };
  const Case cases[] = {
      {"mixamorig:LeftUpLeg", Side::kLeft, "upleg"}, {"LeftUpLeg", Side::kLeft, "upleg"},
      {"upperleg01.L", Side::kLeft, "upperleg01"},   {"UpLeg_R", Side::kRight, "upleg"},
      {"LHipJoint", Side::kLeft, "hipjoint"},        {"RThumb", Side::kRight, "thumb"},
      {"LowerBack", Side::kCenter, "lowerback"},     {"L5", Side::kCenter, "l5"},
      {"Bip01 L Thigh", Side::kLeft, "thigh"},       {"thigh_l", Side::kLeft, "thigh"},
      {"RightShoulder", Side::kRight, "shoulder"},   {"Hips", Side::kCenter, "hips"},
      {"Armature|Hips", Side::kCenter, "hips"},      {"__UpLeg_L", Side::kLeft, "upleg"},
  };
  for (const Case& c : cases) {
    const NormalisedName n = NormaliseJointName(c.name);
    EXPECT_EQ(n.side, c.side) << c.name;
    EXPECT_EQ(n.word, c.word) << c.name;
  }
  EXPECT_TRUE(NormaliseJointName("__UpLeg_L").helper);
  EXPECT_FALSE(NormaliseJointName("UpLeg_L").helper);
}

TEST(Role, NamesRoundTrip) {
  for (int r = 0; r < kRoleCount; ++r) {
    const Role role = static_cast<Role>(r);
    EXPECT_EQ(ParseRole(RoleName(role)), role);
  }
  EXPECT_EQ(ParseRole("lefthand"), Role::kLeftHand);
  EXPECT_FALSE(ParseRole("LeftPinky"));
}

// A Motion Analysis style skeleton:
//   Hips
//   ├─ Ab ─ Chest ─┬─ Neck ─ Head
//   │              ├─ LeftCollar ─ LeftShoulder ─ LeftElbow ─ LeftWrist
//   │              └─ RightCollar ─ RightShoulder ─ RightElbow ─ RightWrist
//   ├─ LeftHip ─ LeftKnee ─ LeftAnkle
//   └─ RightHip ─ RightKnee ─ RightAnkle
std::unique_ptr<Skeleton> MotionAnalysis() {
  using J = RawSkeleton::Joint;
  using testing::ZxyJoint;
  auto arm = [&](const char* side, double s) {
    const std::string p = side;
    return ZxyJoint((p + "Collar").c_str(), {s * 2, 10, 0},
                    {ZxyJoint((p + "Shoulder").c_str(), {s * 10, 0, 0},
                              {ZxyJoint((p + "Elbow").c_str(), {s * 25, 0, 0},
                                        {ZxyJoint((p + "Wrist").c_str(), {s * 25, 0, 0})})})});
  };
  auto leg = [&](const char* side, double s) {
    const std::string p = side;
    return ZxyJoint((p + "Hip").c_str(), {s * 10, -5, 0},
                    {ZxyJoint((p + "Knee").c_str(), {0, -40, 0},
                              {ZxyJoint((p + "Ankle").c_str(), {0, -40, 0})})});
  };
  RawSkeleton raw;
  J hips =
      ZxyJoint("Hips", {0, 90, 0},
               {ZxyJoint("Ab", {0, 10, 0},
                         {ZxyJoint("Chest", {0, 20, 0},
                                   {ZxyJoint("Neck", {0, 15, 0}, {ZxyJoint("Head", {0, 10, 0})}),
                                    arm("Left", 1), arm("Right", -1)})}),
                leg("Left", 1), leg("Right", -1)});
  hips.channels.insert(hips.channels.begin(),
                       {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition});
  raw.roots.push_back(hips);
  std::string error;
  auto s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return s;
}

TEST(ClassifyHumanoid, MotionAnalysisShoulderIsTheUpperArm) {
  const auto s = MotionAnalysis();
  const HumanoidJoints h = ClassifyHumanoid(*s);
  auto name = [&](Role r) { return testing::JointName(*s, h[r]); };
  EXPECT_EQ(name(Role::kHips), "Hips");
  EXPECT_EQ(name(Role::kChest), "Chest");
  EXPECT_EQ(name(Role::kNeck), "Neck");
  EXPECT_EQ(name(Role::kHead), "Head");
  EXPECT_EQ(name(Role::kLeftShoulder), "LeftCollar");
  EXPECT_EQ(name(Role::kLeftUpperArm), "LeftShoulder");
  EXPECT_EQ(name(Role::kLeftLowerArm), "LeftElbow");
  EXPECT_EQ(name(Role::kRightHand), "RightWrist");
  EXPECT_EQ(name(Role::kRightUpperLeg), "RightHip");
  EXPECT_EQ(name(Role::kRightLowerLeg), "RightKnee");
  EXPECT_EQ(name(Role::kLeftFoot), "LeftAnkle");
  EXPECT_EQ(name(Role::kLeftToes), "-");
  ASSERT_EQ(h.spine.size(), 2u);
  EXPECT_EQ(s->name(h.spine[0]), "Ab");
}

// Roles found in every real convention of the shared corpus.
TEST(ClassifyHumanoid, RealConventions) {
  RIGEL_REQUIRE_SHARED_DATA();
  struct Case {
    const char* file;
    std::vector<std::pair<Role, const char*>> expect;
  };
  const std::vector<Case> cases = {
      {"cmu_cgspeed/01_01.bvh",
       {{Role::kHips, "Hips"},
        {Role::kChest, "Spine1"},
        {Role::kLeftShoulder, "LeftShoulder"},
        {Role::kLeftUpperArm, "LeftArm"},
        {Role::kLeftLowerLeg, "LeftLeg"},
        {Role::kRightToes, "RightToeBase"},
        {Role::kNeck, "Neck"}}},
      {"makehuman/tpose.bvh",
       {{Role::kHips, "root"},
        {Role::kLeftShoulder, "clavicle.L"},
        {Role::kLeftUpperArm, "upperarm01.L"},
        {Role::kLeftLowerArm, "lowerarm01.L"},
        {Role::kLeftHand, "wrist.L"},
        {Role::kRightUpperLeg, "upperleg01.R"},
        {Role::kRightFoot, "foot.R"},
        {Role::kNeck, "neck01"},
        {Role::kHead, "head"}}},
      {"makehuman/walk1.bvh",
       {{Role::kHips, "Root"},
        {Role::kLeftUpperLeg, "UpLeg_L"},
        {Role::kLeftUpperArm, "UpArm_L"},
        {Role::kRightLowerArm, "LoArm_R"},
        {Role::kRightToes, "Toe_R"}}},
      {"assimp_misc/Boxing_Toes.bvh",
       {{Role::kHips, "Hips"},
        {Role::kLeftUpperArm, "LeftShoulder"},
        {Role::kLeftShoulder, "LeftCollar"},
        {Role::kRightUpperLeg, "RightHip"},
        {Role::kRightToes, "RightToes"}}},
      {"pybvh/bvh_test1.bvh",
       {{Role::kChest, "Spine3"},
        {Role::kRightShoulder, "RightShoulder"},
        {Role::kRightUpperArm, "RightArm"},
        {Role::kNeck, "Neck"}}},
      {"pybvh/bvh_test2.bvh",
       {{Role::kChest, "Chest4"},
        {Role::kRightUpperArm, "RightShoulder"},
        {Role::kRightHand, "RightWrist"},
        {Role::kLeftToes, "LeftToe"}}},
      {"pymo_emotion/AV_8Walk_Meredith_HVHA_Rep1.bvh",
       {{Role::kLeftUpperArm, "LeftArm"},
        {Role::kLeftShoulder, "LeftShoulder"},
        {Role::kLeftHand, "LeftHand"}}},
  };
  for (const Case& c : cases) {
    const Scene scene = testing::LoadShared(c.file);
    const HumanoidJoints h = ClassifyHumanoid(*scene.skeleton);
    testing::ExpectRoles(*scene.skeleton, h, c.expect, c.file);
  }
}

TEST(AutoMap, SpineChainsMatchedEndToEnd) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  const Scene mh = testing::LoadShared("makehuman/tpose.bvh");
  std::vector<std::string> notes;
  const BoneMap map = AutoMap(*cmu.skeleton, *mh.skeleton, &notes);
  auto target_of = [&](const std::string& source) { return testing::MappedTarget(map, source); };
  EXPECT_EQ(target_of("Hips"), "root");
  EXPECT_EQ(target_of("LowerBack"), "spine05");
  EXPECT_EQ(target_of("Spine1"), "spine01");
  EXPECT_EQ(target_of("LeftShoulder"), "clavicle.L");
  EXPECT_EQ(target_of("LHipJoint"), "-");
  EXPECT_EQ(notes.size(), 2u);  // toes: MakeHuman has a toe per digit only
}

}  // namespace
}  // namespace rigel::retarget
