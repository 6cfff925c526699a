// Skeleton editing (core/skeleton_edit.h), checked by forward kinematics: every joint that exists
// before and after an edit has the same world transform on every frame.
#include "core/skeleton_edit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/pose.h"
#include "core/skeleton_builder.h"

namespace rigel {
namespace {

using C = ChannelType;
using J = RawSkeleton::Joint;

J Make(std::string name, Eigen::Vector3d offset, std::vector<C> channels,
       std::vector<J> children = {}) {
  J j;
  j.name = std::move(name);
  j.rest_translation = offset;
  j.channels = std::move(channels);
  j.children = std::move(children);
  return j;
}

const std::vector<C> kSix = {C::kXposition, C::kYposition, C::kZposition,
                             C::kZrotation, C::kXrotation, C::kYrotation};
const std::vector<C> kZxy = {C::kZrotation, C::kXrotation, C::kYrotation};
const std::vector<C> kYxz = {C::kYrotation, C::kXrotation, C::kZrotation};

//        Hips (6 ch)
//       /     \.
//   Spine      LeftUpLeg (YXZ, rest orientation)
//     |            |
//    Arm (Z only)  LeftLeg (ZXY) -- end site
//     |
//    Hand (ZXY)
std::shared_ptr<const Skeleton> TestSkeleton(bool scaled = false) {
  RawSkeleton raw;
  J hand = Make("Hand", {0, -2, 0}, kZxy);
  hand.end_sites.push_back({0, -0.5, 0});
  std::vector<C> arm_channels = {C::kZrotation};
  if (scaled) arm_channels.push_back(C::kXscale);
  J arm = Make("Arm", {1.5, 0, 0}, arm_channels, {hand});
  J spine = Make("Spine", {0, 3, 0}, kZxy, {arm});
  J leg = Make("LeftLeg", {0, -4, 0.2}, kZxy);
  leg.end_sites.push_back({0, -4, 0});
  J upleg = Make("LeftUpLeg", {1, -0.5, 0}, kYxz, {leg});
  upleg.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized()));
  raw.roots.push_back(Make("Hips", {0, 9, 0}, kSix, {spine, upleg}));
  std::string error;
  std::unique_ptr<Skeleton> s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return std::shared_ptr<const Skeleton>(std::move(s));
}

// A clip with every channel moving (smooth, different per channel).
Clip Moving(const Skeleton& s, int frames = 24) {
  Clip clip(frames, s.num_channels(), 1.0 / 30);
  for (int f = 0; f < frames; ++f) {
    for (int c = 0; c < s.num_channels(); ++c) {
      const double v = std::sin(0.3 * f + 1.7 * c) * (IsScale(s.channels()[c]) ? 0.3 : 0.8);
      clip.at(f, c) = IsTranslation(s.channels()[c]) ? 3 * v : v;
    }
  }
  return clip;
}

std::vector<Eigen::Affine3d> WorldOf(const Skeleton& s, const Clip& clip, int f) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  std::vector<Eigen::Matrix3d> linear(s.num_joints());
  ForwardKinematicsScaled(s, clip.frame(f), world, linear);
  std::vector<Eigen::Affine3d> out(s.num_joints());
  for (int j = 0; j < s.num_joints(); ++j) {
    out[j].matrix().setIdentity();
    out[j].linear() = linear[j];
    out[j].translation() = world[j].translation();
  }
  return out;
}

// Every joint named in both skeletons has the same world transform (with scale) on every frame.
double WorstWorldError(const Skeleton& a, const Clip& ca, const Skeleton& b, const Clip& cb,
                       int* compared) {
  double worst = 0;
  *compared = 0;
  for (int f = 0; f < ca.num_frames(); ++f) {
    const auto wa = WorldOf(a, ca, f);
    const auto wb = WorldOf(b, cb, f);
    for (int j = 0; j < a.num_joints(); ++j) {
      const int k = b.FindJoint(a.name(j));
      if (k < 0) continue;
      ++*compared;
      worst = std::max(worst, (wa[j].matrix() - wb[k].matrix()).cwiseAbs().maxCoeff());
    }
  }
  return worst;
}

TEST(SkeletonEdit, ValidityMatrix) {
  const auto s = TestSkeleton();
  const Clip clip = Moving(*s);
  EditedClip out;
  std::string error;
  NewJoint prop;
  prop.name = "Spine";
  prop.parent = "Hand";
  EXPECT_FALSE(AddJoint(s, clip, prop, &out, &error));
  EXPECT_EQ(error, "a joint named 'Spine' already exists");
  prop.name = "";
  EXPECT_FALSE(AddJoint(s, clip, prop, &out, &error));
  EXPECT_EQ(error, "a new joint needs a name");
  prop.name = "Prop";
  prop.parent = "Hnad";
  EXPECT_FALSE(AddJoint(s, clip, prop, &out, &error));
  EXPECT_EQ(error, "no joint 'Hnad'");
  prop.parent = "Hand";
  prop.channels = {C::kXrotation, C::kXrotation};
  EXPECT_FALSE(AddJoint(s, clip, prop, &out, &error));
  EXPECT_NE(error.find("channel Xrotation listed twice"), std::string::npos) << error;
  EXPECT_FALSE(AddJoint(s, Clip(3, 2, 0.1),
                        NewJoint{"P", "Hand", {0, 0, 0}, Eigen::Quaterniond::Identity(), {}, {}},
                        &out, &error));
  EXPECT_EQ(error, "the clip has 2 channels, the skeleton 19");
  EXPECT_FALSE(RenameJoint(s, clip, "Arm", "Hand", &out, &error));
  EXPECT_EQ(error, "a joint named 'Hand' already exists");
  EXPECT_FALSE(RenameJoint(s, clip, "Arm", "", &out, &error));
  EXPECT_FALSE(ReparentJoint(s, clip, "Spine", "Hand", &out, &error));
  EXPECT_EQ(error, "cannot parent 'Spine' under 'Hand': a cycle (one of its descendants)");
  EXPECT_FALSE(ReparentJoint(s, clip, "Spine", "Spine", &out, &error));
  EXPECT_EQ(error, "cannot parent 'Spine' under 'Spine': a cycle (the joint itself)");
  EXPECT_FALSE(RemoveJoint(s, clip, "Nope", &out, &error));
  EXPECT_EQ(error, "no joint 'Nope'");
  EXPECT_TRUE(out.skeleton == nullptr) << "a failed edit leaves the output untouched";
}

TEST(SkeletonEdit, AddJointKeepsEveryOtherValue) {
  const auto s = TestSkeleton();
  const Clip clip = Moving(*s);
  NewJoint prop;
  prop.name = "Prop";
  prop.parent = "Hand";
  prop.offset = {0.1, -0.7, 0.2};
  prop.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.5, Eigen::Vector3d::UnitZ()));
  prop.channels = kYxz;
  EditedClip out;
  std::string error;
  ASSERT_TRUE(AddJoint(s, clip, prop, &out, &error)) << error;
  const Skeleton& e = *out.skeleton;
  ASSERT_EQ(e.num_joints(), s->num_joints() + 1);
  const int p = e.FindJoint("Prop");
  EXPECT_EQ(e.name(e.parent(p)), "Hand");
  EXPECT_EQ(e.rotation_order(p), EulerOrder::kYXZ);
  EXPECT_EQ(SourceJoint(out.skeleton, *s, p), -1);
  EXPECT_EQ(SourceJoint(out.skeleton, *s, e.FindJoint("Hand")), s->FindJoint("Hand"));
  EXPECT_TRUE(EditedFrom(out.skeleton, *s));
  EXPECT_FALSE(EditedFrom(s, e));
  EXPECT_EQ(EditOf(s), nullptr);
  int compared = 0;
  EXPECT_EQ(WorstWorldError(*s, clip, e, out.clip, &compared), 0.0);
  EXPECT_EQ(compared, s->num_joints() * clip.num_frames());
  // The prop sits at its offset in the hand's frame, rotated by its rest orientation.
  for (int f = 0; f < clip.num_frames(); ++f) {
    const auto w = WorldOf(e, out.clip, f);
    const Eigen::Affine3d hand = w[e.FindJoint("Hand")];
    EXPECT_LT((w[p].translation() - hand * prop.offset).norm(), 1e-12);
    EXPECT_LT((w[p].linear() - hand.linear() * prop.rest_orientation.toRotationMatrix())
                  .cwiseAbs()
                  .maxCoeff(),
              1e-12);
  }
  // A root locator (no end site) is its own tree.
  NewJoint target{"Target",
                  "",
                  {1, 2, 3},
                  Eigen::Quaterniond::Identity(),
                  {C::kXposition, C::kYposition, C::kZposition},
                  {}};
  EditedClip two;
  ASSERT_TRUE(AddJoint(out.skeleton, out.clip, target, &two, &error)) << error;
  EXPECT_EQ(two.skeleton->parent(two.skeleton->FindJoint("Target")), Skeleton::kNoParent);
  // Two edits on: the source's joints are still found through the chain.
  EXPECT_TRUE(EditedFrom(two.skeleton, *s));
  EXPECT_EQ(SourceJoint(two.skeleton, *s, two.skeleton->FindJoint("Spine")), s->FindJoint("Spine"));
}

TEST(SkeletonEdit, RenameKeepsMotion) {
  const auto s = TestSkeleton();
  const Clip clip = Moving(*s);
  EditedClip out;
  std::string error;
  ASSERT_TRUE(RenameJoint(s, clip, "Arm", "LeftArm", &out, &error)) << error;
  EXPECT_EQ(out.skeleton->FindJoint("Arm"), -1);
  const int j = out.skeleton->FindJoint("LeftArm");
  ASSERT_GE(j, 0);
  EXPECT_EQ(SourceJoint(out.skeleton, *s, j), s->FindJoint("Arm"));
  EXPECT_EQ(std::vector<double>(out.clip.values().begin(), out.clip.values().end()),
            std::vector<double>(clip.values().begin(), clip.values().end()));
}

// Reparent every joint under every joint that is not its descendant: each keeps its world motion,
// and so does every other joint.
TEST(SkeletonEdit, ReparentKeepsWorldMotionEverywhere) {
  for (const bool scaled : {false, true}) {
    const auto s = TestSkeleton(scaled);
    const Clip clip = Moving(*s);
    int tried = 0;
    for (int j = 0; j < s->num_joints(); ++j) {
      for (int p = -1; p < s->num_joints(); ++p) {
        bool cycle = false;
        for (int q = p; q >= 0; q = s->parent(q)) cycle = cycle || q == j;
        if (cycle || p == s->parent(j)) continue;
        EditedClip out;
        std::string error;
        const std::string parent = p < 0 ? "" : s->name(p);
        const bool ok = ReparentJoint(s, clip, s->name(j), parent, &out, &error);
        if (!ok && error.find("shear") != std::string::npos) continue;  // scaled Arm above
        ASSERT_TRUE(ok) << s->name(j) << " under " << parent << ": " << error;
        ++tried;
        const int k = out.skeleton->FindJoint(s->name(j));
        EXPECT_EQ(out.skeleton->parent(k), p < 0 ? -1 : out.skeleton->FindJoint(parent));
        int compared = 0;
        EXPECT_LT(WorstWorldError(*s, clip, *out.skeleton, out.clip, &compared), 1e-9)
            << s->name(j) << " under " << parent << (scaled ? " (scaled)" : "");
        EXPECT_EQ(compared, s->num_joints() * clip.num_frames());
      }
    }
    // Unscaled: all 21 moves; scaled: those that do not put the Arm's non-uniform scale above a
    // joint that turns under it (a shear no joint can hold: refused, as the skips above check).
    EXPECT_GE(tried, scaled ? 12 : 21);
  }
}

TEST(SkeletonEdit, ReparentAddsTheChannelsTheMotionNeeds) {
  const auto s = TestSkeleton();
  const Clip clip = Moving(*s);
  EditedClip out;
  std::string error;
  // Hand under Hips: its offset from the hips changes (spine and arm move), so it needs position
  // channels; it keeps its own ZXY rotation channels.
  ASSERT_TRUE(ReparentJoint(s, clip, "Hand", "Hips", &out, &error)) << error;
  const Skeleton& e = *out.skeleton;
  const int h = e.FindJoint("Hand");
  EXPECT_EQ(e.channel_count(h), 6);
  EXPECT_GE(e.translation_channel(h, 0), 0);
  EXPECT_EQ(e.rotation_order(h), EulerOrder::kZXY);
  // Arm (one Z channel) under Hips: its rotation from the hips is not about Z only any more.
  ASSERT_TRUE(ReparentJoint(s, clip, "Arm", "Hips", &out, &error)) << error;
  EXPECT_EQ(out.skeleton->rotation_channels(out.skeleton->FindJoint("Arm")).size(), 3u);
  // A static clip: the hand under the hips needs no position channel.
  const Clip still(5, s->num_channels(), 1.0 / 30);
  ASSERT_TRUE(ReparentJoint(s, still, "Hand", "Hips", &out, &error)) << error;
  EXPECT_EQ(out.skeleton->channel_count(out.skeleton->FindJoint("Hand")), 3);
}

TEST(SkeletonEdit, RemoveKeepsChildrenWorldMotion) {
  for (const bool scaled : {false, true}) {
    const auto s = TestSkeleton(scaled);
    const Clip clip = Moving(*s);
    for (int j = 0; j < s->num_joints(); ++j) {
      EditedClip out;
      std::string error;
      const bool ok = RemoveJoint(s, clip, s->name(j), &out, &error);
      if (scaled && s->name(j) == "Arm") {
        // The hand turning under the arm's non-uniform scale: a shear, refused by name.
        EXPECT_FALSE(ok);
        EXPECT_NE(error.find("joint 'Hand': under its new parent its motion would need a shear"),
                  std::string::npos)
            << error;
        continue;
      }
      ASSERT_TRUE(ok) << s->name(j) << ": " << error;
      EXPECT_EQ(out.skeleton->num_joints(), s->num_joints() - 1);
      EXPECT_EQ(out.skeleton->FindJoint(s->name(j)), -1);
      for (const int c : s->children(j)) {
        const int k = out.skeleton->FindJoint(s->name(c));
        EXPECT_EQ(out.skeleton->parent(k),
                  s->parent(j) < 0 ? -1 : out.skeleton->FindJoint(s->name(s->parent(j))));
      }
      int compared = 0;
      EXPECT_LT(WorstWorldError(*s, clip, *out.skeleton, out.clip, &compared), 1e-9)
          << "remove " << s->name(j) << (scaled ? " (scaled)" : "");
      EXPECT_EQ(compared, (s->num_joints() - 1) * clip.num_frames());
    }
  }
}

// The check itself can fail: a clip whose moved joint keeps its old values moves elsewhere.
TEST(SkeletonEdit, WorldErrorDetectsAWrongEdit) {
  const auto s = TestSkeleton();
  const Clip clip = Moving(*s);
  EditedClip out;
  std::string error;
  ASSERT_TRUE(ReparentJoint(s, clip, "Hand", "Spine", &out, &error)) << error;
  Clip wrong = out.clip;
  const int h = out.skeleton->FindJoint("Hand");
  for (int f = 0; f < wrong.num_frames(); ++f) wrong.at(f, out.skeleton->channel_begin(h)) += 0.1;
  int compared = 0;
  EXPECT_GT(WorstWorldError(*s, clip, *out.skeleton, wrong, &compared), 1e-3);
}

}  // namespace
}  // namespace rigel
