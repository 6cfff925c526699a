// Retarget set-up pass (Align): map validity, reference frames, up axes, scale, units, IK chains.
#include "core/retarget/alignment.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/retarget/retarget.h"
#include "core/retarget/transfer.h"
#include "core/skeleton_builder.h"
#include "retarget/humanoids.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

TEST(Align, SetupValidity) {
  const auto a = Humanoid(1.0, false, {}, false);
  const auto b = Humanoid(1.0, true, kCmuNames, false);
  std::string error;
  auto create = [&](const BoneMap& map, const RetargetOptions& options = {},
                    const Clip* source_clip = nullptr) {
    error.clear();
    return Retargeter::Create(a, b, map, options, &error, source_clip);
  };
  // Null skeleton.
  EXPECT_FALSE(Retargeter::Create(nullptr, b, {}, {}, &error));
  EXPECT_EQ(error, "retarget: source or target skeleton missing");
  // Unknown source joint, with the map file and line.
  BoneMap map;
  map.origin = "m.xml";
  map.entries.push_back({"Hips", "Hips", Eigen::Quaterniond::Identity(), std::nullopt, 3, ""});
  map.entries.push_back(
      {"LeftArmm", "LeftArm", Eigen::Quaterniond::Identity(), std::nullopt, 4, ""});
  EXPECT_FALSE(create(map));
  EXPECT_EQ(error, "m.xml:4: source joint 'LeftArmm' not found in the source skeleton");
  map.entries[1] = {"LeftUpArm", "LeftUpArm", Eigen::Quaterniond::Identity(), std::nullopt, 4, ""};
  EXPECT_FALSE(create(map));
  EXPECT_EQ(error, "m.xml:4: target joint 'LeftUpArm' not found in the target skeleton");
  map.entries[1] = {"Spine", "Hips", Eigen::Quaterniond::Identity(), std::nullopt, 5, ""};
  EXPECT_FALSE(create(map));
  EXPECT_EQ(error, "m.xml:5: target joint 'Hips' is mapped twice");
  // Reference frames.
  RetargetOptions ref;
  ref.source_reference_frame = 3;
  EXPECT_FALSE(create({}, ref));
  EXPECT_EQ(error, "retarget: source reference frame 3 asked for but no source clip was given");
  const Clip clip = Walk(*a, 2, 1.0);
  EXPECT_FALSE(create({}, ref, &clip));
  EXPECT_EQ(error, "retarget: source reference frame 3 out of range (the clip has 2 frames)");
  // Pinning feet needs mapped legs.
  map.entries.resize(1);
  RetargetOptions pin;
  pin.pin_feet = true;
  EXPECT_FALSE(create(map, pin));
  EXPECT_EQ(error,
            "m.xml: --pin-feet needs the target's left leg (LeftUpperLeg, LeftLowerLeg, "
            "LeftFoot) mapped");
  // The minimal valid set-up: the hips alone.
  EXPECT_TRUE(create(map)) << error;
  EXPECT_TRUE(create({}, pin)) << error;
}

// Align directly: a Y-up T-pose in cm onto a Z-up A-pose in m, renamed; units estimated.
TEST(Align, UpAxesScaleUnitsAndChains) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(0.01, true, kCmuNames, true);
  RetargetOptions options;
  options.pin_feet = true;
  options.pin_hands = true;
  Alignment a;
  std::vector<std::string> warnings;
  ASSERT_EQ(
      Align(*source, *target, AutoMap(*source, *target), options, nullptr, nullptr, &a, &warnings),
      "");
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(a.source_up, 1);
  EXPECT_EQ(a.target_up, 2);
  EXPECT_VEC3_NEAR(Eigen::Vector3d(a.up_from_source * Eigen::Vector3d::UnitY()),
                   Eigen::Vector3d::UnitZ(), 1e-15);
  // Hip joints 90 cm above the soles in both: 90 units, then 0.9 units.
  EXPECT_NEAR(a.target_hip_height, 0.9, 1e-12);
  EXPECT_NEAR(a.scale, 0.01, 1e-12);
  // 155 cm tall: estimated as centimetres and metres.
  EXPECT_TRUE(a.source_unit_estimated && a.target_unit_estimated);
  EXPECT_EQ(a.source_unit, 0.01);
  EXPECT_EQ(a.target_unit, 1.0);
  EXPECT_EQ(a.unit_ratio, 0.01);
  EXPECT_EQ(a.target_hips, target->FindJoint("Hips"));
  EXPECT_EQ(a.translation_joint, a.target_hips);
  // Chains: feet first, then hands, each following the source joint of the same role.
  ASSERT_EQ(a.limbs.size(), 4u);
  const char* ends[][2] = {{"LeftFoot", "LeftFoot"},
                           {"RightFoot", "RightFoot"},
                           {"LeftHand", "LeftHand"},
                           {"RightHand", "RightHand"}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.limbs[i].foot, i < 2);
    EXPECT_EQ(a.limbs[i].end, target->FindJoint(ends[i][1]));
    EXPECT_EQ(a.limbs[i].source_end, source->FindJoint(ends[i][0]));
  }
  int bones = 0;
  for (const Bone& b : a.bones) bones += b.branch ? 0 : 1;
  EXPECT_EQ(bones, 12);
  // Aligned, the target's reference pose has the source's bone directions: each mapped joint's
  // alignment turns the source's world rotation into the target's.
  Pose ps(*source);
  Pose pt(*target);
  for (const Bone& b : a.bones) {
    if (b.branch) continue;
    const Eigen::Vector3d ds = a.up_from_source * (ps.world[b.source_b].translation() -
                                                   ps.world[b.source_a].translation());
    const Eigen::Matrix3d world =
        a.up_from_source * ps.world[b.source_a].linear() * a.alignment[b.target_a];
    const Eigen::Vector3d dt = world * a.child_segment[b.target_a];
    EXPECT_LT(std::atan2(ds.cross(dt).norm(), ds.dot(dt)), 1e-9)
        << target->name(b.target_a) << " -> " << target->name(b.target_b);
  }
}

// At a branching joint of the spine the direction to the head is kept, whatever the branches'
// angles: clavicles hanging from the chest's top in the source and rising from it in the target
// (as ProAnimationBank's hang from its neck while Biovision's rise from its chest: a best fit over
// all three segments turned the chest upside down, tests/retarget/matrix_test.cc).
TEST(Align, SpineDirectionKeptAtBranches) {
  RawSkeleton raw = ToRawSkeleton(*Humanoid(1.0, false, {}, false));
  std::function<RawSkeleton::Joint*(RawSkeleton::Joint&, const std::string&)> find =
      [&](RawSkeleton::Joint& j, const std::string& name) -> RawSkeleton::Joint* {
    if (j.name == name) return &j;
    for (auto& c : j.children) {
      if (auto* r = find(c, name)) return r;
    }
    return nullptr;
  };
  // The source's arms hang from 'UpperChest', 28 above the chest: its collars 8 below it (the
  // target's rise 12 above its chest), its neck 6 above it.
  RawSkeleton::Joint* chest = find(raw.roots[0], "Chest");
  ASSERT_NE(chest, nullptr);
  RawSkeleton::Joint upper;
  upper.name = "UpperChest";
  upper.rest_translation = Eigen::Vector3d(0, 28, 0);
  upper.channels = chest->channels;
  upper.children = std::move(chest->children);
  chest->children = {upper};
  for (RawSkeleton::Joint& c : chest->children[0].children) {
    if (c.name == "Neck") c.rest_translation = Eigen::Vector3d(0, 6, 0);
    if (c.name == "LeftCollar") c.rest_translation = Eigen::Vector3d(3, -8, 0);
    if (c.name == "RightCollar") c.rest_translation = Eigen::Vector3d(-3, -8, 0);
  }
  std::shared_ptr<const Skeleton> source = SkeletonBuilder().Build(raw);
  ASSERT_TRUE(source);
  const auto target = Humanoid(1.0, false, kCmuNames, false);
  const Clip clip = Walk(*source, 30, 1.0);
  BoneMap map = AutoMap(*source, *target);
  bool chest_to_chest = false;
  for (const BoneMapEntry& e : map.entries)
    chest_to_chest |= e.source == "UpperChest" && e.target == "Chest";
  ASSERT_TRUE(chest_to_chest) << "the arms' branch drives the target's chest";
  const RetargetResult r = Retarget(source, clip, target, map);
  std::vector<Eigen::Isometry3d> ws(source->num_joints()), wt(target->num_joints());
  double worst = 0.0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematics(*source, clip.frame(f), ws);
    ForwardKinematics(*target, r.clip.frame(f), wt);
    const Eigen::Vector3d a = ws[source->FindJoint("Neck")].translation() -
                              ws[source->FindJoint("UpperChest")].translation();
    const Eigen::Vector3d b =
        wt[target->FindJoint("Neck")].translation() - wt[target->FindJoint("Chest")].translation();
    worst = std::max(worst, std::atan2(a.cross(b).norm(), a.dot(b)) * kDegPerRad);
  }
  EXPECT_LT(worst, 1e-6);  // 180 degrees with a best fit over the three segments
}

}  // namespace
}  // namespace rigel::retarget
