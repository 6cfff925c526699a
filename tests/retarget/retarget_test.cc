// Retargeter on small synthetic skeletons: set-up validity, rest-pose alignment (T-pose onto an
// A-pose, Y-up onto Z-up, other units and names), root-motion policies, IK pinning.
#include "core/retarget/retarget.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

using J = RawSkeleton::Joint;
using Names = std::map<std::string, std::string>;

// A humanoid, Y-up, facing +Z, in `unit` per centimetre; `a_pose` drops the arms 45 degrees;
// `names` renames joints; `to_z_up` turns it to Z-up (facing -Y).
//   Hips
//   ├─ Spine ─ Chest ─┬─ Neck ─ Head
//   │                 ├─ LeftCollar ─ LeftUpArm ─ LeftLowArm ─ LeftHand
//   │                 └─ RightCollar ─ RightUpArm ─ RightLowArm ─ RightHand
//   ├─ LeftUpLeg ─ LeftLowLeg ─ LeftFoot
//   └─ RightUpLeg ─ RightLowLeg ─ RightFoot
std::shared_ptr<const Skeleton> Humanoid(double unit, bool a_pose, const Names& names, bool to_z_up,
                                         double leg_scale = 1.0) {
  auto name = [&](const std::string& n) {
    const auto it = names.find(n);
    return it == names.end() ? n : it->second;
  };
  auto v = [&](double x, double y, double z) {
    Eigen::Vector3d p(x, y, z);
    if (to_z_up) p = Eigen::Vector3d(x, -z, y);
    return Eigen::Vector3d(p * unit);
  };
  auto joint = [&](const std::string& n, Eigen::Vector3d offset, std::vector<J> children = {}) {
    J j;
    j.name = name(n);
    j.rest_translation = offset;
    j.channels = {ChannelType::kZrotation, ChannelType::kXrotation, ChannelType::kYrotation};
    j.children = std::move(children);
    return j;
  };
  const double c = a_pose ? std::sqrt(0.5) : 1.0;
  const double s = a_pose ? -std::sqrt(0.5) : 0.0;
  auto arm = [&](const std::string& side, double sx) {
    return joint(side + "Collar", v(sx * 3, 12, 0),
                 {joint(side + "UpArm", v(sx * 12, 0, 0),
                        {joint(side + "LowArm", v(sx * 28 * c, 28 * s, 0),
                               {joint(side + "Hand", v(sx * 25 * c, 25 * s, 0))})})});
  };
  auto leg = [&](const std::string& side, double sx) {
    return joint(side + "UpLeg", v(sx * 9, -6, 0),
                 {joint(side + "LowLeg", v(0, -42 * leg_scale, 0),
                        {joint(side + "Foot", v(0, -40 * leg_scale, 0))})});
  };
  RawSkeleton raw;
  J hips = joint("Hips", v(0, 0, 0),
                 {joint("Spine", v(0, 10, 0),
                        {joint("Chest", v(0, 25, 0),
                               {joint("Neck", v(0, 14, 0), {joint("Head", v(0, 10, 0))}),
                                arm("Left", 1), arm("Right", -1)})}),
                  leg("Left", 1), leg("Right", -1)});
  hips.channels.insert(hips.channels.begin(),
                       {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition});
  // End sites under the feet so the ground is at the soles.
  raw.roots.push_back(hips);
  std::function<void(J&)> add_end = [&](J& j) {
    if (j.children.empty()) j.end_sites.push_back(v(0, -8, 0));
    for (J& child : j.children) add_end(child);
  };
  add_end(raw.roots[0]);
  std::string error;
  std::unique_ptr<Skeleton> sk = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(sk) << error;
  return std::shared_ptr<const Skeleton>(std::move(sk));
}

// A walk-like clip: hips travel along +Z and bob, legs and arms swing, spine twists.
Clip Walk(const Skeleton& s, int frames, double speed_cm_per_frame) {
  Clip clip(frames, s.num_channels(), 1.0 / 30.0);
  for (int f = 0; f < frames; ++f) {
    const double t = f / 30.0;
    auto set = [&](const std::string& joint, int axis, double value) {
      const int j = s.FindJoint(joint);
      for (const int ch : s.rotation_channels(j)) {
        if (ChannelAxis(s.channels()[ch]) == axis) clip.at(f, ch) = value;
      }
    };
    clip.at(f, s.translation_channel(0, 2)) = speed_cm_per_frame * f;
    clip.at(f, s.translation_channel(0, 1)) = 90 + 2 * std::sin(4 * kPi * t);
    set("Hips", 1, 0.2 * std::sin(2 * kPi * t));
    set("Spine", 1, -0.15 * std::sin(2 * kPi * t));
    set("LeftUpLeg", 0, 0.5 * std::sin(2 * kPi * t));
    set("RightUpLeg", 0, -0.5 * std::sin(2 * kPi * t));
    set("LeftLowLeg", 0, 0.4 + 0.4 * std::sin(2 * kPi * t + 1));
    set("LeftUpArm", 2, -1.2 + 0.3 * std::sin(2 * kPi * t));
    set("RightUpArm", 2, 1.2 + 0.3 * std::sin(2 * kPi * t));
    set("LeftLowArm", 1, 0.6);
    set("Neck", 0, 0.1 * std::sin(6 * kPi * t));
  }
  return clip;
}

const Names kCmuNames = {{"LeftCollar", "LeftShoulder"},   {"LeftUpArm", "LeftArm"},
                         {"LeftLowArm", "LeftForeArm"},    {"LeftLowLeg", "LeftLeg"},
                         {"RightCollar", "RightShoulder"}, {"RightUpArm", "RightArm"},
                         {"RightLowArm", "RightForeArm"},  {"RightLowLeg", "RightLeg"}};

// Bone direction error between two poses of skeletons whose joints share names via `map`.
double MaxDirectionError(const RetargetResult& r) { return r.metrics.bone_direction_max_deg; }

TEST(Retargeter, SetupValidity) {
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
  map.entries.push_back({"Hips", "Hips", Eigen::Quaterniond::Identity(), std::nullopt, 3});
  map.entries.push_back({"LeftArmm", "LeftArm", Eigen::Quaterniond::Identity(), std::nullopt, 4});
  EXPECT_FALSE(create(map));
  EXPECT_EQ(error, "m.xml:4: source joint 'LeftArmm' not found in the source skeleton");
  map.entries[1] = {"LeftUpArm", "LeftUpArm", Eigen::Quaterniond::Identity(), std::nullopt, 4};
  EXPECT_FALSE(create(map));
  EXPECT_EQ(error, "m.xml:4: target joint 'LeftUpArm' not found in the target skeleton");
  map.entries[1] = {"Spine", "Hips", Eigen::Quaterniond::Identity(), std::nullopt, 5};
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

// T-pose source, A-pose target renamed CMU-style, Z-up, in metres: bone directions reproduced.
TEST(Retargeter, RestPoseAlignmentUpAxisAndUnits) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(0.01, true, kCmuNames, true);
  const Clip clip = Walk(*source, 60, 1.5);
  RetargetOptions options;
  options.source_unit_metres = 0.01;
  options.target_unit_metres = 1.0;
  std::string error;
  auto r = Retargeter::Create(source, target, {}, options, &error, &clip);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->map().entries.size(), 19u);
  const RetargetResult result = r->Run(clip);
  EXPECT_EQ(result.metrics.source_up_axis, 1);
  EXPECT_EQ(result.metrics.target_up_axis, 2);
  EXPECT_NEAR(result.metrics.hip_height_ratio, 0.01, 1e-12);
  EXPECT_LT(MaxDirectionError(result), 1e-6);
  // Single-child segments: Spine->Chest, Neck->Head, 3 per arm, 2 per leg.
  EXPECT_EQ(result.metrics.bones, 12);
  // Scale policy: same proportions, so joints land on the source's, turned Z-up and in metres.
  Pose ps(*source);
  Pose pt(*target);
  for (int f : {0, 30, 59}) {
    ps.SetFromRow(*source, clip.frame(f));
    pt.SetFromRow(*target, result.clip.frame(f));
    for (int j = 0; j < source->num_joints(); ++j) {
      const int t = target->FindJoint(
          kCmuNames.count(source->name(j)) ? kCmuNames.at(source->name(j)) : source->name(j));
      const Eigen::Vector3d p = ps.world[j].translation();
      EXPECT_VEC3_NEAR(pt.world[t].translation(), Eigen::Vector3d(p.x(), -p.z(), p.y()) * 0.01,
                       1e-9)
          << source->name(j) << " frame " << f;
    }
  }
  EXPECT_NEAR(result.metrics.foot_error_max_mm, 0.0, 1e-6);
}

TEST(Retargeter, RootMotionPolicies) {
  const auto source = Humanoid(1.0, false, {}, false);
  const auto target = Humanoid(1.0, false, {}, false, 0.5);  // shorter legs
  const Clip clip = Walk(*source, 31, 2.0);
  auto hips_at = [&](RootMotion policy, int f) {
    RetargetOptions options;
    options.root_motion = policy;
    options.source_unit_metres = options.target_unit_metres = 0.01;
    const RetargetResult r = Retarget(source, clip, target, {}, options);
    Pose p(*target);
    p.SetFromRow(*target, r.clip.frame(f));
    return std::make_pair(Eigen::Vector3d(p.world[0].translation()), r.metrics.hip_height_ratio);
  };
  const auto [scaled, ratio] = hips_at(RootMotion::kScale, 30);
  EXPECT_NEAR(ratio, (8 + 41.0) / (8 + 82.0), 1e-9);  // hip joints above the soles
  EXPECT_NEAR(scaled.z(), ratio * 60.0, 1e-9);
  const auto keep = hips_at(RootMotion::kKeep, 30).first;
  EXPECT_NEAR(keep.z(), 60.0, 1e-9);
  const auto in_place = hips_at(RootMotion::kInPlace, 30).first;
  EXPECT_NEAR(in_place.z(), 0.0, 1e-9);
  // Vertical motion is scaled in every policy.
  EXPECT_NEAR(keep.y(), scaled.y(), 1e-9);
  EXPECT_NEAR(in_place.y(), scaled.y(), 1e-9);
}

TEST(Retargeter, RoundTripReturnsBoneDirections) {
  const auto a = Humanoid(1.0, false, {}, false);
  const auto b = Humanoid(0.01, true, kCmuNames, true, 0.8);
  const Clip clip = Walk(*a, 40, 1.0);
  const RetargetResult ab = Retarget(a, clip, b);
  const RetargetResult ba = Retarget(b, ab.clip, a);
  Pose p0(*a);
  Pose p1(*a);
  double worst = 0.0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    p0.SetFromRow(*a, clip.frame(f));
    p1.SetFromRow(*a, ba.clip.frame(f));
    for (int j = 1; j < a->num_joints(); ++j) {
      const int p = a->parent(j);
      const Eigen::Vector3d d0 = p0.world[j].translation() - p0.world[p].translation();
      const Eigen::Vector3d d1 = p1.world[j].translation() - p1.world[p].translation();
      worst = std::max(worst, std::atan2(d0.cross(d1).norm(), d0.dot(d1)) * kDegPerRad);
    }
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(Retargeter, RunRejectsAClipOfAnotherSkeleton) {
  const auto a = Humanoid(1.0, false, {}, false);
  auto r = Retargeter::Create(a, a, {}, {}, nullptr);
  ASSERT_TRUE(r);
  EXPECT_THROW(r->Run(Clip(2, 5, 0.1)), std::invalid_argument);
}

}  // namespace
}  // namespace rigel::retarget
