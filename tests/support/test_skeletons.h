// Skeletons and limits shared by the IK tests and the IK benchmark (bench/ik uses them from here).
#ifndef RIGEL_TESTS_SUPPORT_TEST_SKELETONS_H_
#define RIGEL_TESTS_SUPPORT_TEST_SKELETONS_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/euler.h"
#include "core/ik/rig.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"

namespace rigel::testing {

using C = ChannelType;
inline const std::vector<C> kZXY = {C::kZrotation, C::kXrotation, C::kYrotation};

// Appends to `parent` a child joint `name` at `offset` with `channels`; returns it.
inline RawSkeleton::Joint& AddChild(RawSkeleton::Joint& parent, const char* name,
                                    const Eigen::Vector3d& offset, std::vector<C> channels) {
  RawSkeleton::Joint& child = parent.children.emplace_back();
  child.name = name;
  child.rest_translation = offset;
  child.channels = std::move(channels);
  return child;
}

inline std::shared_ptr<const Skeleton> BuildOrDie(const RawSkeleton& raw) {
  std::string error;
  std::unique_ptr<Skeleton> s = SkeletonBuilder().Build(raw, &error);
  if (!s) {
    std::fprintf(stderr, "skeleton: %s\n", error.c_str());
    std::abort();
  }
  return std::shared_ptr<const Skeleton>(std::move(s));
}

// A serial chain; joint i has channels layouts[i] and offset offsets[i] from its parent.
inline std::shared_ptr<const Skeleton> Chain(const std::vector<std::vector<C>>& layouts,
                                             const std::vector<Eigen::Vector3d>& offsets) {
  RawSkeleton raw;
  raw.roots.emplace_back();
  RawSkeleton::Joint* j = &raw.roots.back();
  for (size_t i = 0; i < layouts.size(); ++i) {
    j->name = "j" + std::to_string(i);
    j->channels = layouts[i];
    j->rest_translation = offsets[i];
    if (i + 1 < layouts.size()) {
      j->children.emplace_back();
      j = &j->children.back();
    }
  }
  return BuildOrDie(raw);
}

// 7-DOF arm: shoulder ZXY, elbow Y, wrist ZXY; links 0.3, 0.25, 0.08 m along X (the last is the
// effector offset on the wrist).
inline std::shared_ptr<const Skeleton> Arm() {
  return Chain({kZXY, {C::kYrotation}, kZXY},
               {Eigen::Vector3d::Zero(), Eigen::Vector3d(0.3, 0, 0), Eigen::Vector3d(0.25, 0, 0)});
}
inline const Eigen::Vector3d kArmTip(0.08, 0, 0);

inline void ArmLimits(std::vector<double>& lo, std::vector<double>& hi) {
  const double d = kPi / 180;
  lo = {-170 * d, -100 * d, -90 * d, 0 * d, -170 * d, -80 * d, -60 * d};
  hi = {170 * d, 100 * d, 90 * d, 150 * d, 170 * d, 80 * d, 60 * d};
}

// 30-DOF chain: 10 spherical joints (ZXY), 0.1 m links, effector 0.1 m past the last joint.
inline std::shared_ptr<const Skeleton> Chain30() {
  std::vector<std::vector<C>> layouts(10, kZXY);
  std::vector<Eigen::Vector3d> offsets(10, Eigen::Vector3d(0.1, 0, 0));
  offsets[0].setZero();
  return Chain(layouts, offsets);
}
inline const Eigen::Vector3d kChainTip(0.1, 0, 0);

inline void Chain30Limits(std::vector<double>& lo, std::vector<double>& hi) {
  lo.assign(30, -kPi / 2);
  hi.assign(30, kPi / 2);
}

// A 60-joint, 99-channel humanoid (metres, Y up): 6-DOF root (hips), 3 spine joints, neck, head,
// clavicle/shoulder/elbow/wrist per arm (3 channels each), 5 fingers of 3 joints per hand (1
// channel each; the thumb's base has 3), upleg/leg/foot (3) and toe (1) per leg, and 8 end
// joints without channels (head top, jaw, eyes, hand tips, toe tips).
struct Humanoid {
  std::shared_ptr<const Skeleton> skeleton;
  int hands[2] = {-1, -1};
  int feet[2] = {-1, -1};
  std::vector<double> lo, hi;  // Per channel.
};

inline Humanoid MakeHumanoid() {
  using J = RawSkeleton::Joint;
  auto joint = [](std::string name, Eigen::Vector3d offset, std::vector<C> ch) {
    J j;
    j.name = std::move(name);
    j.rest_translation = offset;
    j.channels = std::move(ch);
    return j;
  };
  RawSkeleton raw;
  J hips = joint(
      "Hips", {0, 1.0, 0},
      {C::kXposition, C::kYposition, C::kZposition, C::kZrotation, C::kXrotation, C::kYrotation});
  J spine = joint("Spine", {0, 0.1, 0}, kZXY);
  J spine1 = joint("Spine1", {0, 0.15, 0}, kZXY);
  J spine2 = joint("Spine2", {0, 0.15, 0}, kZXY);
  J neck = joint("Neck", {0, 0.12, 0}, kZXY);
  J head = joint("Head", {0, 0.1, 0}, kZXY);
  head.children.push_back(joint("HeadTop", {0, 0.18, 0}, {}));
  head.children.push_back(joint("Jaw", {0, -0.03, 0.08}, {}));
  head.children.push_back(joint("LeftEye", {0.03, 0.06, 0.08}, {}));
  head.children.push_back(joint("RightEye", {-0.03, 0.06, 0.08}, {}));
  neck.children.push_back(std::move(head));
  spine2.children.push_back(std::move(neck));
  for (int side = 0; side < 2; ++side) {
    const double s = side == 0 ? 1.0 : -1.0;
    const std::string p = side == 0 ? "Left" : "Right";
    J clav = joint(p + "Shoulder", {s * 0.05, 0.1, 0}, kZXY);
    J arm = joint(p + "Arm", {s * 0.12, 0, 0}, kZXY);
    J fore = joint(p + "ForeArm", {s * 0.28, 0, 0}, kZXY);
    J hand = joint(p + "Hand", {s * 0.25, 0, 0}, kZXY);
    hand.children.push_back(joint(p + "HandTip", {s * 0.1, 0, 0}, {}));
    const char* fingers[5] = {"Thumb", "Index", "Middle", "Ring", "Pinky"};
    for (int f = 0; f < 5; ++f) {
      J f1 = joint(p + fingers[f] + "1", {s * 0.08, 0, 0.04 - 0.02 * f},
                   f == 0 ? kZXY : std::vector<C>{C::kZrotation});
      J f2 = joint(p + fingers[f] + "2", {s * 0.03, 0, 0}, {C::kZrotation});
      J f3 = joint(p + fingers[f] + "3", {s * 0.025, 0, 0}, {C::kZrotation});
      f2.children.push_back(std::move(f3));
      f1.children.push_back(std::move(f2));
      hand.children.push_back(std::move(f1));
    }
    fore.children.push_back(std::move(hand));
    arm.children.push_back(std::move(fore));
    clav.children.push_back(std::move(arm));
    spine2.children.push_back(std::move(clav));
  }
  spine1.children.push_back(std::move(spine2));
  spine.children.push_back(std::move(spine1));
  hips.children.push_back(std::move(spine));
  for (int side = 0; side < 2; ++side) {
    const double s = side == 0 ? 1.0 : -1.0;
    const std::string p = side == 0 ? "Left" : "Right";
    J up = joint(p + "UpLeg", {s * 0.1, -0.05, 0}, kZXY);
    J leg = joint(p + "Leg", {0, -0.45, 0}, kZXY);
    J foot = joint(p + "Foot", {0, -0.42, 0}, kZXY);
    J toe = joint(p + "ToeBase", {0, -0.05, 0.12}, {C::kXrotation});
    toe.children.push_back(joint(p + "ToeTip", {0, 0, 0.06}, {}));
    foot.children.push_back(std::move(toe));
    leg.children.push_back(std::move(foot));
    up.children.push_back(std::move(leg));
    hips.children.push_back(std::move(up));
  }
  raw.roots.push_back(std::move(hips));
  Humanoid h;
  h.skeleton = BuildOrDie(raw);
  const Skeleton& sk = *h.skeleton;
  h.hands[0] = sk.FindJoint("LeftHand");
  h.hands[1] = sk.FindJoint("RightHand");
  h.feet[0] = sk.FindJoint("LeftFoot");
  h.feet[1] = sk.FindJoint("RightFoot");
  const double d = kPi / 180;
  h.lo.assign(sk.num_channels(), -90 * d);
  h.hi.assign(sk.num_channels(), 90 * d);
  for (int c = 0; c < 3; ++c) {
    h.lo[c] = -10;
    h.hi[c] = 10;
  }
  return h;
}

// The full-body rig on the humanoid: its limits and a 6-D (kPose) task on each hand and foot, in
// the order left hand, right hand, left foot, right foot; no stage.
inline ik::Rig HandsAndFeetRig(const Humanoid& h) {
  ik::Rig rig(h.skeleton);
  for (size_t c = 0; c < h.lo.size(); ++c) rig.SetLimits(static_cast<int>(c), h.lo[c], h.hi[c]);
  for (const int j : {h.hands[0], h.hands[1], h.feet[0], h.feet[1]}) {
    ik::Task t;
    t.type = ik::TaskType::kPose;
    t.joint = j;
    rig.AddTask(t);
  }
  return rig;
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SUPPORT_TEST_SKELETONS_H_
