// The automatic map onto the conventions the corpus lacks (issue 15 item 1): targets in Reallusion
// CC, Daz, Poser, Unreal, 3ds Max Biped, Unity, Xsens, Rokoko, Blender, Mixamo and `UpperLeg_L`
// conventions generated from the CMU skeleton by renaming it and adding twist, end and IK bones:
// every role is found, names that contradict the hierarchy are reported, and `--pin-feet` runs
// onto each with no map file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/retarget.h"
#include "core/skeleton_builder.h"
#include "exporters/save_scene.h"
#include "humanoid_checks.h"
#include "importers/bone_map.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

// ---- Targets generated from the CMU skeleton -------------------------------------------------

// What each CMU joint is, as the test reads the CMU skeleton (not from rigel's tables).
struct Part {
  char side;  // 'L', 'R' or 0
  std::string part;
};
const std::map<std::string, Part>& CmuParts() {
  static const std::map<std::string, Part> parts = [] {
    std::map<std::string, Part> p = {
        {"Hips", {0, "hips"}},    {"LowerBack", {0, "spine0"}}, {"Spine", {0, "spine1"}},
        {"Spine1", {0, "chest"}}, {"Neck", {0, "neck"}},        {"Neck1", {0, "neck1"}},
        {"Head", {0, "head"}},
    };
    for (const auto& [side, word] : {std::pair<char, std::string>{'L', "Left"}, {'R', "Right"}}) {
      p[std::string(1, side) + "HipJoint"] = {side, "hipjoint"};
      p[word + "UpLeg"] = {side, "upleg"};
      p[word + "Leg"] = {side, "leg"};
      p[word + "Foot"] = {side, "foot"};
      p[word + "ToeBase"] = {side, "toe"};
      p[word + "Shoulder"] = {side, "clavicle"};
      p[word + "Arm"] = {side, "arm"};
      p[word + "ForeArm"] = {side, "forearm"};
      p[word + "Hand"] = {side, "hand"};
      p[word + "FingerBase"] = {side, "fingers"};
      p[std::string(1, side) + "Fingers"] = {side, "index"};
      p[std::string(1, side) + "Thumb"] = {side, "thumb"};
    }
    return p;
  }();
  return parts;
}

// The role of each CMU part (the test's own table).
const std::map<std::string, std::pair<Role, Role>>& PartRoles() {
  static const std::map<std::string, std::pair<Role, Role>> roles = {
      {"hips", {Role::kHips, Role::kHips}},
      {"chest", {Role::kChest, Role::kChest}},
      {"neck", {Role::kNeck, Role::kNeck}},
      {"head", {Role::kHead, Role::kHead}},
      {"clavicle", {Role::kLeftShoulder, Role::kRightShoulder}},
      {"arm", {Role::kLeftUpperArm, Role::kRightUpperArm}},
      {"forearm", {Role::kLeftLowerArm, Role::kRightLowerArm}},
      {"hand", {Role::kLeftHand, Role::kRightHand}},
      {"upleg", {Role::kLeftUpperLeg, Role::kRightUpperLeg}},
      {"leg", {Role::kLeftLowerLeg, Role::kRightLowerLeg}},
      {"foot", {Role::kLeftFoot, Role::kRightFoot}},
      {"toe", {Role::kLeftToes, Role::kRightToes}},
  };
  return roles;
}

// An added bone: below the joint renamed from CMU part `parent` (side-matched), either a leaf
// (twist, share, end, IK) or inserted between that joint and its child on the chain.
struct Extra {
  std::string parent;  // CMU part
  std::string name;    // "{s}" = side marker of the convention
  bool inline_twist = false;
};

// A naming convention: the name of each CMU part ("" drops the joint, its offset moves to its
// children), the side markers, a root above the hips, extra bones.
struct Convention {
  std::string label;
  std::map<std::string, std::string> names;  // part -> name pattern, "{s}" = side marker
  std::string left, right;
  std::string root;  // a new root above the hips (no channels), "" for none
  std::vector<Extra> extras;
  bool six_channels = false;  // position channels on every joint (the `UpperLeg_L` rig)
};

std::string Fill(std::string pattern, const std::string& side) {
  for (size_t p = pattern.find("{s}"); p != std::string::npos; p = pattern.find("{s}")) {
    pattern.replace(p, 3, side);
  }
  return pattern;
}

std::vector<Convention> Conventions() {
  std::vector<Convention> c;
  c.push_back({"Reallusion CC",
               {{"hips", "CC_Base_Hip"},
                {"spine0", "CC_Base_Waist"},
                {"spine1", "CC_Base_Spine01"},
                {"chest", "CC_Base_Spine02"},
                {"neck", "CC_Base_NeckTwist01"},
                {"neck1", "CC_Base_NeckTwist02"},
                {"head", "CC_Base_Head"},
                {"hipjoint", ""},
                {"upleg", "CC_Base_{s}_Thigh"},
                {"leg", "CC_Base_{s}_Calf"},
                {"foot", "CC_Base_{s}_Foot"},
                {"toe", "CC_Base_{s}_ToeBase"},
                {"clavicle", "CC_Base_{s}_Clavicle"},
                {"arm", "CC_Base_{s}_Upperarm"},
                {"forearm", "CC_Base_{s}_Forearm"},
                {"hand", "CC_Base_{s}_Hand"},
                {"fingers", "CC_Base_{s}_Mid1"},
                {"index", "CC_Base_{s}_Index1"},
                {"thumb", "CC_Base_{s}_Thumb1"}},
               "L",
               "R",
               "CC_Base_BoneRoot",
               {{"upleg", "CC_Base_{s}_ThighTwist01"},
                {"leg", "CC_Base_{s}_CalfTwist01"},
                {"leg", "CC_Base_{s}_KneeShareBone"},
                {"arm", "CC_Base_{s}_UpperarmTwist01"},
                {"forearm", "CC_Base_{s}_ForearmTwist01"},
                {"forearm", "CC_Base_{s}_ElbowShareBone"},
                {"toe", "CC_Base_{s}_BigToe1"}}});
  c.push_back({"Daz Genesis",
               {{"hips", "hip"},
                {"spine0", "abdomenLower"},
                {"spine1", "abdomenUpper"},
                {"chest", "chestUpper"},
                {"neck", "neckLower"},
                {"neck1", "neckUpper"},
                {"head", "head"},
                {"hipjoint", ""},
                {"upleg", "{s}ThighBend"},
                {"leg", "{s}Shin"},
                {"foot", "{s}Foot"},
                {"toe", "{s}Toe"},
                {"clavicle", "{s}Collar"},
                {"arm", "{s}ShldrBend"},
                {"forearm", "{s}ForearmBend"},
                {"hand", "{s}Hand"},
                {"fingers", "{s}Carpal3"},
                {"index", "{s}Index1"},
                {"thumb", "{s}Thumb1"}},
               "l",
               "r",
               "",
               {{"upleg", "{s}ThighTwist", true},
                {"arm", "{s}ShldrTwist", true},
                {"forearm", "{s}ForearmTwist", true},
                {"foot", "{s}Metatarsals"}}});
  c.push_back({"Poser lhip/lknee",
               {{"hips", "hip"},
                {"spine0", "abdomen"},
                {"spine1", "chest"},
                {"chest", "chest2"},
                {"neck", "neck"},
                {"neck1", "neck2"},
                {"head", "head"},
                {"hipjoint", ""},
                {"upleg", "{s}hip"},
                {"leg", "{s}knee"},
                {"foot", "{s}ankle"},
                {"toe", "{s}toe"},
                {"clavicle", "{s}collar"},
                {"arm", "{s}shoulder"},
                {"forearm", "{s}elbow"},
                {"hand", "{s}wrist"},
                {"fingers", "{s}fingers"},
                {"index", "{s}index1"},
                {"thumb", "{s}thumb1"}},
               "l",
               "r",
               "",
               {}});
  c.push_back({"Unreal Mannequin",
               {{"hips", "pelvis"},
                {"spine0", "spine_01"},
                {"spine1", "spine_02"},
                {"chest", "spine_03"},
                {"neck", "neck_01"},
                {"neck1", "neck_02"},
                {"head", "head"},
                {"hipjoint", ""},
                {"upleg", "thigh_{s}"},
                {"leg", "calf_{s}"},
                {"foot", "foot_{s}"},
                {"toe", "ball_{s}"},
                {"clavicle", "clavicle_{s}"},
                {"arm", "upperarm_{s}"},
                {"forearm", "lowerarm_{s}"},
                {"hand", "hand_{s}"},
                {"fingers", "middle_metacarpal_{s}"},
                {"index", "index_01_{s}"},
                {"thumb", "thumb_01_{s}"}},
               "l",
               "r",
               "root",
               {{"upleg", "thigh_twist_01_{s}"},
                {"leg", "calf_twist_01_{s}"},
                {"arm", "upperarm_twist_01_{s}"},
                {"forearm", "lowerarm_twist_01_{s}"},
                {"root", "ik_foot_{s}"},
                {"root", "ik_hand_{s}"}}});
  c.push_back({"3ds Max Biped",
               {{"hips", "Bip01 Pelvis"},
                {"spine0", "Bip01 Spine"},
                {"spine1", "Bip01 Spine1"},
                {"chest", "Bip01 Spine2"},
                {"neck", "Bip01 Neck"},
                {"neck1", "Bip01 Neck1"},
                {"head", "Bip01 Head"},
                {"hipjoint", ""},
                {"upleg", "Bip01 {s} Thigh"},
                {"leg", "Bip01 {s} Calf"},
                {"foot", "Bip01 {s} Foot"},
                {"toe", "Bip01 {s} Toe0"},
                {"clavicle", "Bip01 {s} Clavicle"},
                {"arm", "Bip01 {s} UpperArm"},
                {"forearm", "Bip01 {s} Forearm"},
                {"hand", "Bip01 {s} Hand"},
                {"fingers", "Bip01 {s} Finger2"},
                {"index", "Bip01 {s} Finger1"},
                {"thumb", "Bip01 {s} Finger0"}},
               "L",
               "R",
               "Bip01",
               {{"toe", "Bip01 {s} Toe0Nub"},
                {"head", "Bip01 HeadNub"},
                {"forearm", "Bip01 {s} ForeTwist"},
                {"root", "Bip01 Footsteps"}}});
  c.push_back({"UpperLeg_L, 6 channels",
               {{"hips", "Hips"},
                {"spine0", "Spine"},
                {"spine1", "Spine1"},
                {"chest", "Chest"},
                {"neck", "Neck"},
                {"neck1", "Neck2"},
                {"head", "Head"},
                {"hipjoint", ""},
                {"upleg", "UpperLeg_{s}"},
                {"leg", "LowerLeg_{s}"},
                {"foot", "Foot_{s}"},
                {"toe", "Toes_{s}"},
                {"clavicle", "Shoulder_{s}"},
                {"arm", "UpperArm_{s}"},
                {"forearm", "LowerArm_{s}"},
                {"hand", "Hand_{s}"},
                {"fingers", "Middle1_{s}"},
                {"index", "Index1_{s}"},
                {"thumb", "Thumb1_{s}"}},
               "L",
               "R",
               "",
               {{"upleg", "UpperLegTwist_{s}"}},
               true});
  c.push_back({"Blender",
               {{"hips", "hips"},
                {"spine0", "spine"},
                {"spine1", "spine.001"},
                {"chest", "chest"},
                {"neck", "neck"},
                {"neck1", "neck.001"},
                {"head", "head"},
                {"hipjoint", ""},
                {"upleg", "thigh.{s}"},
                {"leg", "shin.{s}"},
                {"foot", "foot.{s}"},
                {"toe", "toe.{s}"},
                {"clavicle", "shoulder.{s}"},
                {"arm", "upper_arm.{s}"},
                {"forearm", "forearm.{s}"},
                {"hand", "hand.{s}"},
                {"fingers", "palm.02.{s}"},
                {"index", "f_index.01.{s}"},
                {"thumb", "thumb.01.{s}"}},
               "L",
               "R",
               "",
               {{"foot", "heel.02.{s}"}}});
  c.push_back({"Mixamo (other prefix)",
               {{"hips", "mixamorig12:Hips"},
                {"spine0", "mixamorig12:Spine"},
                {"spine1", "mixamorig12:Spine1"},
                {"chest", "mixamorig12:Spine2"},
                {"neck", "mixamorig12:Neck"},
                {"neck1", "mixamorig12:Neck1"},
                {"head", "mixamorig12:Head"},
                {"hipjoint", ""},
                {"upleg", "mixamorig12:{s}UpLeg"},
                {"leg", "mixamorig12:{s}Leg"},
                {"foot", "mixamorig12:{s}Foot"},
                {"toe", "mixamorig12:{s}ToeBase"},
                {"clavicle", "mixamorig12:{s}Shoulder"},
                {"arm", "mixamorig12:{s}Arm"},
                {"forearm", "mixamorig12:{s}ForeArm"},
                {"hand", "mixamorig12:{s}Hand"},
                {"fingers", "mixamorig12:{s}HandMiddle1"},
                {"index", "mixamorig12:{s}HandIndex1"},
                {"thumb", "mixamorig12:{s}HandThumb1"}},
               "Left",
               "Right",
               "",
               {{"toe", "mixamorig12:{s}Toe_End"}, {"head", "mixamorig12:HeadTop_End"}}});
  c.push_back({"Unity humanoid",
               {{"hips", "Hips"},
                {"spine0", "Spine"},
                {"spine1", "Chest"},
                {"chest", "UpperChest"},
                {"neck", "Neck"},
                {"neck1", "NeckUpper"},
                {"head", "Head"},
                {"hipjoint", ""},
                {"upleg", "{s}UpperLeg"},
                {"leg", "{s}LowerLeg"},
                {"foot", "{s}Foot"},
                {"toe", "{s}Toes"},
                {"clavicle", "{s}Shoulder"},
                {"arm", "{s}UpperArm"},
                {"forearm", "{s}LowerArm"},
                {"hand", "{s}Hand"},
                {"fingers", "{s}MiddleProximal"},
                {"index", "{s}IndexProximal"},
                {"thumb", "{s}ThumbProximal"}},
               "Left",
               "Right",
               "",
               {}});
  c.push_back({"Xsens MVN",
               {{"hips", "Pelvis"},
                {"spine0", "L5"},
                {"spine1", "L3"},
                {"chest", "T8"},
                {"neck", "Neck"},
                {"neck1", "Neck2"},
                {"head", "Head"},
                {"hipjoint", ""},
                {"upleg", "{s}UpperLeg"},
                {"leg", "{s}LowerLeg"},
                {"foot", "{s}Foot"},
                {"toe", "{s}Toe"},
                {"clavicle", "{s}Shoulder"},
                {"arm", "{s}UpperArm"},
                {"forearm", "{s}ForeArm"},
                {"hand", "{s}Hand"},
                {"fingers", "{s}Carpus"},
                {"index", "{s}FirstFinger"},
                {"thumb", "{s}Thumb"}},
               "Left",
               "Right",
               "",
               {}});
  c.push_back({"Rokoko",
               {{"hips", "Hips"},
                {"spine0", "Spine1"},
                {"spine1", "Spine2"},
                {"chest", "Spine4"},
                {"neck", "Neck"},
                {"neck1", "Neck2"},
                {"head", "Head"},
                {"hipjoint", ""},
                {"upleg", "{s}Thigh"},
                {"leg", "{s}Shin"},
                {"foot", "{s}Foot"},
                {"toe", "{s}Toe"},
                {"clavicle", "{s}Shoulder"},
                {"arm", "{s}Arm"},
                {"forearm", "{s}ForeArm"},
                {"hand", "{s}Hand"},
                {"fingers", "{s}FingerBase"},
                {"index", "{s}IndexFinger1"},
                {"thumb", "{s}ThumbFinger1"}},
               "Left",
               "Right",
               "",
               {}});
  return c;
}

// The CMU skeleton renamed into `conv`, with its extra bones. `origin` receives, per new joint
// name, the CMU joint it was renamed from ("" for added bones).
std::shared_ptr<const Skeleton> Generate(const Skeleton& cmu, const Convention& conv,
                                         std::map<std::string, std::string>* origin) {
  const RawSkeleton raw = ToRawSkeleton(cmu);
  auto side_of = [&](char s) { return s == 'L' ? conv.left : s == 'R' ? conv.right : ""; };
  auto extras_of = [&](const std::string& part, char side) {
    std::vector<Extra> out;
    for (const Extra& e : conv.extras) {
      if (e.parent == part) out.push_back({e.parent, Fill(e.name, side_of(side)), e.inline_twist});
    }
    return out;
  };
  auto make_leaf = [&](const std::string& name, Eigen::Vector3d offset) {
    RawSkeleton::Joint j;
    j.name = name;
    j.rest_translation = offset;
    j.channels = {ChannelType::kZrotation, ChannelType::kYrotation, ChannelType::kXrotation};
    return j;
  };
  // Renames `in` (and below) into `out`; returns false when the joint is dropped (its children
  // are then appended to `dropped` with the offset added).
  std::function<void(const RawSkeleton::Joint&, std::vector<RawSkeleton::Joint>*, Eigen::Vector3d)>
      convert = [&](const RawSkeleton::Joint& in, std::vector<RawSkeleton::Joint>* siblings,
                    Eigen::Vector3d carried) {
        const Part& part = CmuParts().at(in.name);
        const std::string pattern = conv.names.at(part.part);
        if (pattern.empty()) {
          for (const auto& child : in.children) {
            convert(child, siblings, carried + in.rest_translation);
          }
          return;
        }
        RawSkeleton::Joint j = in;
        j.name = Fill(pattern, side_of(part.side));
        j.rest_translation = in.rest_translation + carried;
        j.children.clear();
        if (conv.six_channels && j.channels.size() == 3) {
          j.channels.insert(j.channels.begin(), {ChannelType::kXposition, ChannelType::kYposition,
                                                 ChannelType::kZposition});
        }
        (*origin)[j.name] = in.name;
        for (const auto& child : in.children) convert(child, &j.children, Eigen::Vector3d::Zero());
        // The chain child (the largest subtree) carries inline twists; leaves hang off the joint.
        for (const Extra& e : extras_of(part.part, part.side)) {
          Eigen::Vector3d along = Eigen::Vector3d(0, -1, 0);
          if (!j.children.empty()) along = j.children.front().rest_translation;
          if (e.inline_twist && !j.children.empty()) {
            RawSkeleton::Joint twist = make_leaf(e.name, 0.5 * along);
            RawSkeleton::Joint child = j.children.front();
            child.rest_translation = 0.5 * along;
            twist.children.push_back(child);
            j.children.front() = twist;
          } else {
            j.children.push_back(make_leaf(e.name, 0.3 * along));
          }
          (*origin)[e.name] = "";
        }
        siblings->push_back(std::move(j));
      };
  RawSkeleton out;
  for (const auto& r : raw.roots) convert(r, &out.roots, Eigen::Vector3d::Zero());
  if (!conv.root.empty()) {
    RawSkeleton::Joint root;
    root.name = conv.root;
    root.channels = {ChannelType::kZrotation, ChannelType::kYrotation, ChannelType::kXrotation};
    root.children = out.roots;
    for (const Extra& e : extras_of("root", 0)) {
      for (const std::string& side : {conv.left, conv.right}) {
        const std::string name = Fill(e.name, side);
        if (origin->count(name)) continue;
        root.children.push_back(make_leaf(name, Eigen::Vector3d(0, 1, 0)));
        (*origin)[name] = "";
      }
    }
    out.roots = {root};
    (*origin)[conv.root] = "";
  }
  std::string error;
  std::shared_ptr<const Skeleton> s = SkeletonBuilder().Build(out, &error);
  EXPECT_TRUE(s) << conv.label << ": " << error;
  return s;
}

// The expected joint (new name) of each role, from the test's own tables.
std::map<Role, std::string> ExpectedRoles(const std::map<std::string, std::string>& origin) {
  std::map<Role, std::string> expected;
  for (const auto& [name, cmu] : origin) {
    if (cmu.empty()) continue;
    const Part& part = CmuParts().at(cmu);
    const auto it = PartRoles().find(part.part);
    if (it == PartRoles().end()) continue;
    expected[part.side == 'R' ? it->second.second : it->second.first] = name;
  }
  return expected;
}

TEST(AutoMapConventions, EveryRoleOfEveryGeneratedConvention) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  for (const Convention& conv : Conventions()) {
    std::map<std::string, std::string> origin;
    const auto target = Generate(*cmu.skeleton, conv, &origin);
    ASSERT_TRUE(target);
    const std::map<Role, std::string> expected = ExpectedRoles(origin);
    ASSERT_EQ(expected.size(), static_cast<size_t>(kRoleCount)) << conv.label;
    const HumanoidJoints h = ClassifyHumanoid(*target);
    int found = 0;
    for (const auto& [role, name] : expected) {
      const std::string got = testing::JointName(*target, h[role]);
      EXPECT_EQ(got, name) << conv.label << " " << RoleName(role);
      if (got == name) ++found;
      EXPECT_GT(h.confidence[static_cast<int>(role)], 0.0) << conv.label << " " << RoleName(role);
      EXPECT_FALSE(h.why[static_cast<int>(role)].empty()) << conv.label << " " << RoleName(role);
    }
    EXPECT_TRUE(h.warnings.empty()) << conv.label << ": " << h.warnings.front();
    // Added bones (twists, ends, IK, roots) never take a role, nor sit in the spine or neck.
    std::set<int> taken(h.joint.begin(), h.joint.end());
    taken.insert(h.spine.begin(), h.spine.end());
    for (const auto& [name, cmu_name] : origin) {
      if (!cmu_name.empty() || name == conv.root) continue;
      EXPECT_EQ(taken.count(target->FindJoint(name)), 0u) << conv.label << ": " << name;
    }
    std::printf("automap %-26s roles %d/%d\n", conv.label.c_str(), found, kRoleCount);
  }
}

// Names that contradict the hierarchy are reported: arms named left on the right leg's side.
TEST(AutoMapConventions, WarnsWhenSidesContradictTheRestPose) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  Convention conv = Conventions()[3];  // Unreal
  conv.extras.clear();
  std::map<std::string, std::string> origin;
  RawSkeleton raw = ToRawSkeleton(*Generate(*cmu.skeleton, conv, &origin));
  // The arms' side markers swapped ("upperarm_l" on the right), the legs' kept.
  const std::set<std::string> arm_parts = {"clavicle", "arm",   "forearm", "hand",
                                           "fingers",  "index", "thumb"};
  std::function<void(RawSkeleton::Joint&)> swap = [&](RawSkeleton::Joint& j) {
    const auto it = origin.find(j.name);
    if (it != origin.end() && !it->second.empty() &&
        arm_parts.count(CmuParts().at(it->second).part)) {
      j.name.back() = j.name.back() == 'l' ? 'r' : 'l';
    }
    for (auto& c : j.children) swap(c);
  };
  for (auto& r : raw.roots) swap(r);
  std::string error;
  const auto s = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(s) << error;
  const HumanoidJoints h = ClassifyHumanoid(*s);
  ASSERT_FALSE(h.warnings.empty());
  EXPECT_NE(h.warnings.front().find("left arm 'upperarm_l' is on the side of the right leg"),
            std::string::npos)
      << h.warnings.front();
}

// A named limb joint off its chain: the chain takes the hierarchy's joint and says so.
TEST(AutoMapConventions, HierarchyDecidesAndWarnsForAJointOffItsChain) {
  using testing::ZxyJoint;
  // Left leg: thigh_l -> knee_joint_l (no limb word the tables know as such, via "knee": lower
  // leg) -> ankle_l; a stray "calf_l" prop hangs off the spine.
  RawSkeleton raw;
  raw.roots.push_back(ZxyJoint(
      "pelvis", {0, 90, 0},
      {ZxyJoint(
           "spine", {0, 20, 0},
           {ZxyJoint("head", {0, 40, 0}), ZxyJoint("calf_l", {10, 0, 0}),
            ZxyJoint("upperarm_l", {15, 10, 0},
                     {ZxyJoint("lowerarm_l", {25, 0, 0}, {ZxyJoint("hand_l", {25, 0, 0})})}),
            ZxyJoint("upperarm_r", {-15, 10, 0},
                     {ZxyJoint("lowerarm_r", {-25, 0, 0}, {ZxyJoint("hand_r", {-25, 0, 0})})})}),
       ZxyJoint("thigh_l", {10, -5, 0},
                {ZxyJoint("segment2_l", {0, -40, 0}, {ZxyJoint("segment3_l", {0, -40, 0})})}),
       ZxyJoint("thigh_r", {-10, -5, 0},
                {ZxyJoint("calf_r", {0, -40, 0}, {ZxyJoint("foot_r", {0, -40, 0})})})}));
  std::string error;
  const auto s = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(s) << error;
  const HumanoidJoints h = ClassifyHumanoid(*s);
  testing::ExpectRoles(*s, h,
                       {{Role::kHips, "pelvis"},
                        {Role::kLeftLowerLeg, "segment2_l"},
                        {Role::kLeftFoot, "segment3_l"},
                        {Role::kRightFoot, "foot_r"}});
  EXPECT_LT(h.confidence[static_cast<int>(Role::kLeftLowerLeg)], 1.0);
  EXPECT_DOUBLE_EQ(h.confidence[static_cast<int>(Role::kRightLowerLeg)], 1.0);
  bool warned = false;
  for (const std::string& w : h.warnings) {
    warned = warned || w.find("'calf_l' is named like it but is not below the upper leg") !=
                           std::string::npos;
  }
  EXPECT_TRUE(warned);
}

// The world position of joint `j` relative to joint `hips`, in the hips' frame, for every frame.
std::vector<Eigen::Vector3d> Relative(const Skeleton& s, const Clip& clip, int j, int hips) {
  std::vector<Eigen::Vector3d> out;
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematics(s, clip.frame(f), world);
    out.push_back(world[hips].inverse() * world[j].translation());
  }
  return out;
}

// `rigel retarget --pin-feet` onto each generated convention, from a file, with no map: the set-up
// succeeds, the feet are pinned, and (the target being the source renamed) the hands and head
// follow the source exactly relative to the hips.
TEST(AutoMapConventions, PinFeetOntoEveryGeneratedConventionWithoutAMap) {
  RIGEL_REQUIRE_SHARED_DATA();
  Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  Clip clip = cmu.clips[0];
  clip.Resize(600);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rigel_automap_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const Convention& conv : Conventions()) {
    std::map<std::string, std::string> origin;
    const auto generated = Generate(*cmu.skeleton, conv, &origin);
    ASSERT_TRUE(generated);
    std::string file = conv.label;
    for (char& ch : file) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    const std::string path = (dir / (file + ".bvh")).string();
    SaveClip(*generated, Clip(1, generated->num_channels(), clip.frame_time()), path);
    const Scene target = LoadScene(path);
    RetargetOptions options;
    options.pin_feet = true;
    std::string error;
    const auto r = Retargeter::Create(cmu.skeleton, target.skeleton, {}, options, &error, &clip);
    ASSERT_TRUE(r) << conv.label << ": " << error;
    const RetargetResult result = r->Run(clip);
    EXPECT_TRUE(result.metrics.ik_applied) << conv.label;
    EXPECT_GT(result.metrics.contacts, 0) << conv.label;
    // Independent check: hands and head relative to the hips, source vs output.
    const int hips_s = cmu.skeleton->FindJoint("Hips");
    const int hips_t = target.skeleton->FindJoint(Fill(conv.names.at("hips"), ""));
    double worst = 0.0;
    for (const char* cmu_joint : {"LeftHand", "RightHand", "Head", "LeftForeArm"}) {
      std::string renamed;
      for (const auto& [name, o] : origin) {
        if (o == cmu_joint) renamed = name;
      }
      const auto a = Relative(*cmu.skeleton, clip, cmu.skeleton->FindJoint(cmu_joint), hips_s);
      const auto b =
          Relative(*target.skeleton, result.clip, target.skeleton->FindJoint(renamed), hips_t);
      for (size_t f = 0; f < a.size(); ++f) worst = std::max(worst, (a[f] - b[f]).norm());
    }
    // CMU is ~25 units tall: 1e-3 units is well under a millimetre.
    EXPECT_LT(worst, 1e-3) << conv.label;
    std::printf("automap %-26s pin-feet ok: %d contacts, foot slide max %.2f mm, upper body %.1e\n",
                conv.label.c_str(), result.metrics.contacts, result.metrics.foot_slide_max_mm,
                worst);
  }
  std::filesystem::remove_all(dir);
}

// `--suggest-map` output: every role line carries its confidence and reason on both sides.
TEST(AutoMapConventions, SuggestedMapSaysWhy) {
  RIGEL_REQUIRE_SHARED_DATA();
  const Scene cmu = testing::LoadShared("cmu_cgspeed/01_01.bvh");
  std::map<std::string, std::string> origin;
  const auto ue = Generate(*cmu.skeleton, Conventions()[3], &origin);
  std::vector<std::string> notes;
  const BoneMap map = AutoMap(*cmu.skeleton, *ue, &notes);
  const std::string xml = FormatBoneMap(map, notes);
  EXPECT_NE(xml.find("<bone source=\"LeftUpLeg\" target=\"thigh_l\" role=\"LeftUpperLeg\"/>  "
                     "<!-- source 1.00 named 'LeftUpLeg'"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("target 1.00 named 'thigh_l'"), std::string::npos) << xml;
  // The map still reads back.
  const BoneMap back = ParseBoneMap(xml, "suggested.xml");
  EXPECT_EQ(back.entries.size(), map.entries.size());
}

}  // namespace
}  // namespace rigel::retarget
