// --root-motion extract (issue 15 item 3): the ground travel and heading of the hips move onto a
// root bone. Checked against the `scale` result by forward kinematics of the output clips, in the
// test: the root's world path is the hips' ground projection frame by frame, every other joint's
// world transform is unchanged, the root's heading follows the hips' yaw.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/euler.h"
#include "core/pose.h"
#include "core/retarget/retarget.h"
#include "core/skeleton_builder.h"
#include "humanoids.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel::retarget {
namespace {

// `s` under a new root joint `name` at the origin with position and ZXY rotation channels, built
// here (not with the code under test).
std::shared_ptr<const Skeleton> UnderRoot(const Skeleton& s, const std::string& name) {
  RawSkeleton raw = ToRawSkeleton(s);
  RawSkeleton::Joint root;
  root.name = name;
  root.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition,
                   ChannelType::kZrotation, ChannelType::kXrotation, ChannelType::kYrotation};
  root.children.push_back(raw.roots[0]);
  raw.roots[0] = root;
  std::string error;
  std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(built) << error;
  return std::shared_ptr<const Skeleton>(std::move(built));
}

// Yaw (radians, about `up`, counter-clockwise seen from above) of world vector `v`, measured from
// the horizontal axis `zero`.
double Yaw(const Eigen::Vector3d& v, const Eigen::Vector3d& zero, int up) {
  Eigen::Vector3d h = v;
  h[up] = 0.0;
  return std::atan2(Eigen::Vector3d::Unit(up).dot(zero.cross(h)), zero.dot(h));
}

double Wrap(double a) { return std::remainder(a, 2.0 * kPi); }

struct Figures {
  double path = 0.0;            // the scale result's hips path on the ground, target units
  double heading_change = 0.0;  // the root's net yaw, radians
  double max_hips_error = 0.0;  // worst world position difference of a non-root joint
  double max_yaw_error = 0.0;   // worst |root yaw - hips yaw|, radians
};

// Compares `extract` (a clip of `out`, root bone `root`) with `scale` (a clip of `tgt`; `shift`
// = 1 when `out` is `tgt` plus a root added as joint 0, else 0). `hips` and `lateral`
// (a hips-space axis, horizontal in the rest pose) are in `tgt`.
Figures Compare(const Skeleton& tgt, const Clip& scale, const Skeleton& out, const Clip& extract,
                int root, int shift, int hips, const Eigen::Vector3d& lateral, int up,
                double unit) {
  Figures fig;
  std::vector<Eigen::Isometry3d> ws(tgt.num_joints()), we(out.num_joints()), w0(tgt.num_joints());
  const std::vector<double> rest(tgt.num_channels(), 0.0);
  ForwardKinematics(tgt, rest, w0);
  const Eigen::Vector3d zero = w0[hips].linear() * lateral;
  std::vector<Eigen::Isometry3d> out_rest(out.num_joints());
  ForwardKinematics(out, std::vector<double>(out.num_channels(), 0.0), out_rest);
  const double root_rest_up = out_rest[root].translation()[up];
  double prev_root_yaw = 0.0, first_root_yaw = 0.0;
  Eigen::Vector3d prev_ground = Eigen::Vector3d::Zero();
  EXPECT_EQ(scale.num_frames(), extract.num_frames());
  for (int f = 0; f < scale.num_frames(); ++f) {
    for (const double v : extract.frame(f)) EXPECT_TRUE(std::isfinite(v)) << "frame " << f;
    ForwardKinematics(tgt, scale.frame(f), ws);
    ForwardKinematics(out, extract.frame(f), we);
    // The root's path is the scale result's hips projected on the ground.
    Eigen::Vector3d ground = ws[hips].translation();
    ground[up] = root_rest_up;
    EXPECT_LT((we[root].translation() - ground).norm(), 1e-9 * unit) << "frame " << f;
    if (f > 0) fig.path += (ground - prev_ground).norm();
    prev_ground = ground;
    // Every joint of the target is where the scale result put it.
    for (int j = 0; j < tgt.num_joints(); ++j) {
      if (shift == 0 && j == root) continue;
      const double e = (we[j + shift].translation() - ws[j].translation()).norm();
      fig.max_hips_error = std::max(fig.max_hips_error, e);
      EXPECT_LT((we[j + shift].linear() - ws[j].linear()).norm(), 1e-9);
    }
    // The root turns about the up axis only, by the hips' yaw.
    EXPECT_NEAR(we[root].linear().col(up).dot(Eigen::Vector3d::Unit(up)), 1.0, 1e-9);
    const double root_yaw = Yaw(we[root].linear() * Eigen::Vector3d::Unit(up == 0 ? 1 : 0),
                                Eigen::Vector3d::Unit(up == 0 ? 1 : 0), up);
    const double hips_yaw = Yaw(ws[hips].linear() * lateral, zero, up);
    fig.max_yaw_error = std::max(fig.max_yaw_error, std::abs(Wrap(root_yaw - hips_yaw)));
    const double unwrapped = f == 0 ? root_yaw : prev_root_yaw + Wrap(root_yaw - prev_root_yaw);
    if (f == 0) first_root_yaw = unwrapped;
    prev_root_yaw = unwrapped;
  }
  fig.heading_change = prev_root_yaw - first_root_yaw;
  return fig;
}

// The walk fixture turning: the hips yaw ramps up to about 140 degrees while walking on an arc.
Clip TurningWalk(const Skeleton& s, int frames) {
  Clip clip = Walk(s, frames, 1.5);
  const int hips = s.FindJoint("Hips");
  for (int f = 0; f < frames; ++f) {
    const double yaw = 2.4 * f / frames;
    for (const int ch : s.rotation_channels(hips)) {
      if (ChannelAxis(s.channels()[ch]) == 1) clip.at(f, ch) += yaw;
    }
    clip.at(f, s.translation_channel(hips, 0)) = 60.0 * (1.0 - std::cos(yaw));
    clip.at(f, s.translation_channel(hips, 2)) = 60.0 * std::sin(yaw);
  }
  return clip;
}

TEST(RootMotion, ParsesExtract) {
  EXPECT_EQ(ParseRootMotion("extract"), RootMotion::kExtract);
  EXPECT_EQ(RootMotionName(RootMotion::kExtract), "extract");
}

// Onto a target whose own root is a 'Root' joint above the hips (Z-up, other proportions).
TEST(RootMotion, ExtractOntoTargetRoot) {
  auto src = Humanoid(1.0, false, {}, false);
  auto bare = Humanoid(0.01, true, kCmuNames, true, 1.2);
  auto tgt = UnderRoot(*bare, "Root");
  const Clip clip = TurningWalk(*src, 120);
  RetargetOptions options;
  options.pin_feet = true;
  const RetargetResult scaled = Retarget(src, clip, tgt, {}, options);
  options.root_motion = RootMotion::kExtract;
  const RetargetResult extracted = Retarget(src, clip, tgt, {}, options);
  EXPECT_EQ(extracted.clip.num_channels(), tgt->num_channels());
  const int hips = tgt->FindJoint("Hips");
  const Figures fig = Compare(*tgt, scaled.clip, *tgt, extracted.clip, 0, 0, hips,
                              Eigen::Vector3d::UnitX(), 2, 0.01);
  EXPECT_LT(fig.max_hips_error, 1e-9 * 100 * 0.01);  // 1e-9 of the ~1 m hip height
  EXPECT_LT(fig.max_yaw_error, 1e-6);
  // The source turns 2.4 rad (plus the sway): so does the root.
  EXPECT_NEAR(std::abs(fig.heading_change), 2.4, 0.3);
  const RetargetMetrics& q = extracted.metrics;
  EXPECT_EQ(q.root_bone, "Root");
  EXPECT_FALSE(q.root_bone_added);
  EXPECT_NEAR(q.root_path_length_m, fig.path * q.target_unit_metres, 1e-9);
  EXPECT_GT(q.root_path_length_m, 0.5);
  EXPECT_NEAR(q.root_heading_change_deg, fig.heading_change * kDegPerRad, 1e-6);
  EXPECT_GE(q.root_heading_turned_deg, std::abs(q.root_heading_change_deg) - 1e-9);
  // The rest of the report is the scale result's.
  EXPECT_NEAR(q.bone_direction_mean_deg, scaled.metrics.bone_direction_mean_deg, 1e-9);
  EXPECT_NEAR(q.foot_slide_mean_mm, scaled.metrics.foot_slide_mean_mm, 1e-6);
  EXPECT_EQ(q.ik_unreached, scaled.metrics.ik_unreached);
  // `in-place`, `scale` and `keep` leave the Root joint alone (at the origin).
  for (const RootMotion policy : {RootMotion::kScale, RootMotion::kKeep, RootMotion::kInPlace}) {
    options.root_motion = policy;
    const RetargetResult r = Retarget(src, clip, tgt, {}, options);
    for (int ch = 0; ch < tgt->channel_count(0); ++ch) {
      for (int f = 0; f < r.clip.num_frames(); ++f) ASSERT_EQ(r.clip.at(f, ch), 0.0);
    }
    EXPECT_TRUE(r.metrics.root_bone.empty());
  }
}

// Onto a target whose root is its hips: --root-motion-bone adds the root above the hips.
TEST(RootMotion, ExtractOntoAddedRoot) {
  auto src = Humanoid(1.0, false, {}, false);
  auto tgt = Humanoid(1.0, true, kCmuNames, false, 0.8);
  const Clip clip = TurningWalk(*src, 90);
  RetargetOptions options;
  const RetargetResult scaled = Retarget(src, clip, tgt, {}, options);
  options.root_motion = RootMotion::kExtract;
  std::string error;
  EXPECT_FALSE(Retargeter::Create(src, tgt, {}, options, &error, &clip));
  EXPECT_NE(error.find("the target's root is its hips 'Hips': name a root bone to add with "
                       "--root-motion-bone NAME"),
            std::string::npos)
      << error;
  options.root_motion_bone = "Spine";  // exists, but below the hips
  EXPECT_FALSE(Retargeter::Create(src, tgt, {}, options, &error, &clip));
  EXPECT_NE(error.find("not above the hips"), std::string::npos) << error;
  options.root_motion_bone = "root";
  auto r = Retargeter::Create(src, tgt, {}, options, &error, &clip);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(r->added_root());
  const Skeleton& out = r->target();
  ASSERT_EQ(out.num_joints(), tgt->num_joints() + 1);
  EXPECT_EQ(out.name(0), "root");
  EXPECT_EQ(out.parent(out.FindJoint("Hips")), 0);
  for (int j = 0; j < tgt->num_joints(); ++j) EXPECT_EQ(out.name(j + 1), tgt->name(j));
  bool said = false;
  for (const std::string& w : r->setup_warnings()) {
    said |= w.find("adds the root bone 'root' above the hips 'Hips'") != std::string::npos;
  }
  EXPECT_TRUE(said);
  const RetargetResult extracted = r->Run(clip);
  EXPECT_EQ(extracted.clip.num_channels(), out.num_channels());
  const Figures fig =
      Compare(*tgt, scaled.clip, out, extracted.clip, 0, 1, 0, Eigen::Vector3d::UnitX(), 1, 1.0);
  EXPECT_LT(fig.max_hips_error, 1e-9 * 100);
  EXPECT_LT(fig.max_yaw_error, 1e-6);
  EXPECT_TRUE(extracted.metrics.root_bone_added);
  EXPECT_NEAR(extracted.metrics.root_path_length_m, fig.path * extracted.metrics.target_unit_metres,
              1e-9);
}

// A real walk (CMU 01_01) onto real targets, with a Root joint above their hips and with one added.
TEST(RootMotion, RealWalk) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string data = testing::SharedData();
  const Scene source = LoadScene(data + "/cmu_cgspeed/01_01.bvh");
  for (const char* file : {"mocapbank/test_mocapbank.bvh", "makehuman/walk1.bvh"}) {
    SCOPED_TRACE(file);
    const Scene target = LoadScene(data + "/" + file);
    RetargetOptions options;
    options.pin_feet = true;
    options.source_unit_metres = MetresPerUnit(source);
    options.target_unit_metres = MetresPerUnit(target);
    const RetargetResult scaled =
        Retarget(source.skeleton, source.clips[0], target.skeleton, {}, options);
    options.root_motion = RootMotion::kExtract;
    options.root_motion_bone = "RootMotion";
    std::string error;
    auto r =
        Retargeter::Create(source.skeleton, target.skeleton, {}, options, &error, &source.clips[0]);
    ASSERT_TRUE(r) << error;
    const RetargetResult extracted = r->Run(source.clips[0]);
    const Skeleton& tgt = *target.skeleton;
    const int hips = r->alignment().target_hips - 1;
    ASSERT_EQ(hips, 0);
    // Lateral axis of the hips: from the right thigh to the left one at rest.
    std::vector<Eigen::Isometry3d> w(tgt.num_joints());
    ForwardKinematics(tgt, std::vector<double>(tgt.num_channels(), 0.0), w);
    const int up = r->alignment().target_up;
    const int left = r->alignment().left_upper_leg - 1, right = r->alignment().right_upper_leg - 1;
    Eigen::Vector3d lateral = w[left].translation() - w[right].translation();
    lateral[up] = 0.0;
    lateral = w[hips].linear().transpose() * lateral.normalized();
    const double hip_height = r->alignment().target_hips_up;
    const Figures fig =
        Compare(tgt, scaled.clip, r->target(), extracted.clip, 0, 1, hips, lateral, up, hip_height);
    EXPECT_LT(fig.max_hips_error, 1e-9 * hip_height);
    EXPECT_LT(fig.max_yaw_error, 1e-6);
    const RetargetMetrics& q = extracted.metrics;
    EXPECT_NEAR(q.root_path_length_m, fig.path * q.target_unit_metres, 1e-6);
    EXPECT_NEAR(q.root_heading_change_deg, fig.heading_change * kDegPerRad, 1e-6);
    // 01_01 walks a few metres.
    EXPECT_GT(q.root_path_length_m, 1.0);
    std::printf(
        "[root motion %s] path %.3f m, heading change %.1f deg (turned %.1f), hips error "
        "%.2g, yaw error %.2g rad\n",
        file, q.root_path_length_m, q.root_heading_change_deg, q.root_heading_turned_deg,
        fig.max_hips_error, fig.max_yaw_error);
    // The same target under a root joint of its own at the origin: compared with its own scale
    // result.
    auto rooted = UnderRoot(tgt, "GameRoot");
    options.root_motion_bone.clear();
    options.root_motion = RootMotion::kScale;
    const RetargetResult own_scaled =
        Retarget(source.skeleton, source.clips[0], rooted, {}, options);
    options.root_motion = RootMotion::kExtract;
    const RetargetResult own = Retarget(source.skeleton, source.clips[0], rooted, {}, options);
    EXPECT_EQ(own.metrics.root_bone, "GameRoot");
    EXPECT_FALSE(own.metrics.root_bone_added);
    const Figures own_fig =
        Compare(*rooted, own_scaled.clip, *rooted, own.clip, 0, 0, 1, lateral, up, hip_height);
    EXPECT_LT(own_fig.max_hips_error, 1e-9 * hip_height);
    EXPECT_LT(own_fig.max_yaw_error, 1e-6);
    EXPECT_NEAR(own.metrics.root_path_length_m, own_fig.path * q.target_unit_metres, 1e-6);
  }
}

}  // namespace
}  // namespace rigel::retarget
