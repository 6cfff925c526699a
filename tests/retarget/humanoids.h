// Test fixtures of the retarget passes: a small humanoid skeleton (any unit, T- or A-pose, Y- or
// Z-up, renamed), a walk-like clip on it, and the passes before clean-up run on them.
#ifndef RIGEL_TESTS_RETARGET_HUMANOIDS_H_
#define RIGEL_TESTS_RETARGET_HUMANOIDS_H_

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/euler.h"
#include "core/retarget/alignment.h"
#include "core/retarget/contacts.h"
#include "core/retarget/transfer.h"
#include "core/skeleton_builder.h"

namespace rigel::retarget {

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
inline std::shared_ptr<const Skeleton> Humanoid(double unit, bool a_pose, const Names& names,
                                                bool to_z_up, double leg_scale = 1.0) {
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
inline Clip Walk(const Skeleton& s, int frames, double speed_cm_per_frame) {
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

inline const Names kCmuNames = {{"LeftCollar", "LeftShoulder"},   {"LeftUpArm", "LeftArm"},
                                {"LeftLowArm", "LeftForeArm"},    {"LeftLowLeg", "LeftLeg"},
                                {"RightCollar", "RightShoulder"}, {"RightUpArm", "RightArm"},
                                {"RightLowArm", "RightForeArm"},  {"RightLowLeg", "RightLeg"}};

// What the passes before clean-up produce.
struct Passes {
  Alignment a;
  TransferredMotion motion;
  std::vector<FootContact> contacts;
  std::vector<std::string> warnings;
};

// The passes before clean-up (alignment with the automatic map, transfer, foot contacts).
inline Passes Before(const Skeleton& source, const Skeleton& target, const Clip& clip,
                     const RetargetOptions& options) {
  Passes p;
  EXPECT_EQ(
      Align(source, target, AutoMap(source, target), options, nullptr, nullptr, &p.a, &p.warnings),
      "");
  p.motion = TransferRotations(source, target, p.a, options.root_motion, clip);
  p.contacts = FindFootContacts(p.a, p.motion, options);
  return p;
}

}  // namespace rigel::retarget

#endif  // RIGEL_TESTS_RETARGET_HUMANOIDS_H_
