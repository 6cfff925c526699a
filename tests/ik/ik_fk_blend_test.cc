// IK/FK blend (core/ik/ik_fk_blend.h): the validity matrix of IkFkBlendJob, then results proven
// by forward kinematics: at weight w every blended joint's channel rotation is the slerp from the
// FK one to the IK one (computed here from world transforms, by axis-angle), its translation the
// lerp; 0 gives the FK pose and 1 the solve bit for bit, through ik::Solve and ik::BakeJob.
//
//   root (Xpos Ypos Zpos Zrot Xrot Yrot)
//    |-- upper (ZXY, rest orientation 30 deg about (1,1,0)) --1.0-- lower (Xpos, XYZ)
//    |      --1.0-- hand (YZX) --0.5-- finger (Zrot) --0.3-- (effector)
//    `-- other (ZXY) --1.0-- other_hand (XYZ) --0.4-- (effector)
#include "core/ik/ik_fk_blend.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/ik/bake.h"
#include "core/ik/solve.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "support/test_skeletons.h"

namespace rigel::ik {
namespace ik_fk_blend_test {
namespace {

using C = ChannelType;
enum Joint { kRoot, kUpper, kLower, kHand, kFinger, kOther, kOtherHand };

using testing::AddChild;

std::shared_ptr<const Skeleton> Tree() {
  RawSkeleton raw;
  RawSkeleton::Joint& root = raw.roots.emplace_back();
  root.name = "root";
  root.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint& upper = AddChild(root, "upper", Eigen::Vector3d(0.1, 0.2, 0),
                                       {C::kZrotation, C::kXrotation, C::kYrotation});
  upper.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.5236, Eigen::Vector3d(1, 1, 0).normalized()));
  RawSkeleton::Joint& lower =
      AddChild(upper, "lower", Eigen::Vector3d(1, 0, 0),
               {C::kXposition, C::kXrotation, C::kYrotation, C::kZrotation});
  RawSkeleton::Joint& hand = AddChild(lower, "hand", Eigen::Vector3d(1, 0, 0),
                                      {C::kYrotation, C::kZrotation, C::kXrotation});
  AddChild(hand, "finger", Eigen::Vector3d(0.5, 0, 0), {C::kZrotation});
  RawSkeleton::Joint& other = AddChild(root, "other", Eigen::Vector3d(-0.1, 0.2, 0),
                                       {C::kZrotation, C::kXrotation, C::kYrotation});
  AddChild(other, "other_hand", Eigen::Vector3d(-1, 0, 0),
           {C::kXrotation, C::kYrotation, C::kZrotation});
  return testing::BuildOrDie(raw);
}

const Eigen::Vector3d kFingerTip(0.3, 0, 0);
const Eigen::Vector3d kOtherTip(-0.4, 0, 0);

// A pose away from rest (every channel distinct, seeded by k), world transforms updated.
Pose Posed(const Skeleton& s, double k = 1.0) {
  Pose pose(s);
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    pose.channels[c] = 0.1 * k * (static_cast<double>(c % 5) - 1.7) + 0.04 * static_cast<double>(c);
  }
  pose.UpdateWorld(s);
  return pose;
}

// The pose of `channels` by forward kinematics.
Pose Fk(const Skeleton& s, const std::vector<double>& channels) {
  Pose pose(s);
  pose.channels = channels;
  pose.UpdateWorld(s);
  return pose;
}

// A joint's channel rotation (after its rest orientation) and parent-space translation, read off
// the world transforms of `pose`.
Eigen::Quaterniond ChannelRotation(const Skeleton& s, const Pose& pose, int j) {
  const int p = s.parent(j);
  const Eigen::Isometry3d local =
      p < 0 ? pose.world[j] : Eigen::Isometry3d(pose.world[p].inverse() * pose.world[j]);
  return Eigen::Quaterniond(s.rest_orientation(j).toRotationMatrix().transpose() * local.linear());
}
Eigen::Vector3d LocalTranslation(const Skeleton& s, const Pose& pose, int j) {
  const int p = s.parent(j);
  return p < 0 ? Eigen::Vector3d(pose.world[j].translation())
               : Eigen::Vector3d(pose.world[p].inverse() * pose.world[j].translation());
}

// slerp(a, b, w) by axis-angle (shortest arc), independently of Eigen's slerp.
Eigen::Quaterniond SlerpByAxisAngle(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b,
                                    double w) {
  Eigen::Quaterniond d = a.conjugate() * b;
  if (d.w() < 0) d.coeffs() = -d.coeffs();
  const Eigen::AngleAxisd aa(d);
  return a * Eigen::Quaterniond(Eigen::AngleAxisd(w * aa.angle(), aa.axis()));
}

double AngleBetween(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b) {
  return a.angularDistance(b);
}

constexpr double kTol = 1e-10;

// Checks that joint j of `got` sits at fraction w between `fk` and `ik`: its channel rotation is
// the slerp and its translation the lerp, read off the world transforms.
void ExpectBetween(const Skeleton& s, const Pose& fk, const Pose& ik, const Pose& got, int j,
                   double w) {
  const Eigen::Quaterniond expected =
      SlerpByAxisAngle(ChannelRotation(s, fk, j), ChannelRotation(s, ik, j), w);
  EXPECT_LT(AngleBetween(ChannelRotation(s, got, j), expected), kTol) << s.name(j) << " w " << w;
  const Eigen::Vector3d t =
      LocalTranslation(s, fk, j) + w * (LocalTranslation(s, ik, j) - LocalTranslation(s, fk, j));
  EXPECT_LT((LocalTranslation(s, got, j) - t).norm(), kTol) << s.name(j) << " w " << w;
}

bool BitEqual(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  }
  return true;
}

class IkFkBlend : public ::testing::Test {
 protected:
  // Runs the job from fk_ to ik_ with `weights`; returns the blended channels.
  std::vector<double> Blend(const std::vector<double>& weights) {
    std::vector<double> out(fk_.channels.size());
    IkFkBlendJob job{.skeleton = s_.get(),
                     .fk = fk_.channels,
                     .ik = ik_.channels,
                     .weights = weights,
                     .output = out};
    EXPECT_TRUE(job.Run());
    return out;
  }

  // A rig on the tree: a position effector on the finger's tip solved by stage 0 (upper and
  // below), and one on the other hand's tip solved by stage 1 (other and below).
  Rig TwoArms() const {
    Rig rig(s_);
    Task finger;
    finger.joint = kFinger;
    finger.offset = kFingerTip;
    rig.AddTask(finger);
    Task other;
    other.joint = kOtherHand;
    other.offset = kOtherTip;
    rig.AddTask(other);
    for (int i = 0; i < 2; ++i) {
      Stage st;
      st.tasks = {i};
      st.chain_root = i == 0 ? kUpper : kOther;
      st.settings.max_iterations = 200;
      rig.stages.push_back(st);
    }
    return rig;
  }

  // Targets the two effectors can reach: their tips moved by (0.2, -0.3, 0.25) and (0.1, 0.2,
  // -0.3) from the FK pose.
  std::vector<Target> Reachable() const {
    std::vector<Target> targets(2);
    targets[0].position = fk_.world[kFinger] * kFingerTip + Eigen::Vector3d(0.2, -0.3, 0.25);
    targets[1].position = fk_.world[kOtherHand] * kOtherTip + Eigen::Vector3d(0.1, 0.2, -0.3);
    return targets;
  }

  // Solves `rig` from the FK pose with a fresh workspace; returns the pose.
  Pose SolveFromFk(const Rig& rig, const std::vector<Target>& targets) const {
    Pose pose = fk_;
    Workspace ws;
    SolveReport report;
    EXPECT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    return pose;
  }

  std::shared_ptr<const Skeleton> s_ = Tree();
  Pose fk_ = Posed(*s_, 1.0);
  Pose ik_ = Posed(*s_, -2.5);
};

// --- Validity matrix.

TEST_F(IkFkBlend, ValidityMatrix) {
  std::vector<double> weights(s_->num_joints(), 0.5), out(s_->num_channels());
  const IkFkBlendJob valid{.skeleton = s_.get(),
                           .fk = fk_.channels,
                           .ik = ik_.channels,
                           .weights = weights,
                           .output = out};
  std::string error;
  EXPECT_TRUE(valid.Validate(&error)) << error;
  {
    IkFkBlendJob job;  // default: no skeleton
    EXPECT_FALSE(job.Validate(&error));
    EXPECT_FALSE(job.Run());
  }
  {
    IkFkBlendJob job = valid;
    job.fk = std::span<const double>(fk_.channels).first(3);
    EXPECT_FALSE(job.Validate(&error));
    EXPECT_NE(error.find("channel"), std::string::npos) << error;
  }
  {
    IkFkBlendJob job = valid;
    job.ik = {};
    EXPECT_FALSE(job.Run());
  }
  {
    IkFkBlendJob job = valid;
    job.output = std::span<double>(out).first(out.size() - 1);
    EXPECT_FALSE(job.Run());
  }
  {
    IkFkBlendJob job = valid;
    job.weights = std::span<const double>(weights).first(2);
    EXPECT_FALSE(job.Validate(&error));
    EXPECT_NE(error.find("joint"), std::string::npos) << error;
  }
  for (const double bad : {-0.1, 1.5, std::nan("")}) {
    std::vector<double> w = weights;
    w[kHand] = bad;
    IkFkBlendJob job = valid;
    job.weights = w;
    EXPECT_FALSE(job.Validate(&error)) << bad;
    EXPECT_NE(error.find("[0, 1]"), std::string::npos) << error;
  }
}

// --- The job on two given poses.

TEST_F(IkFkBlend, ZeroIsFkAndOneIsIkBitForBit) {
  EXPECT_TRUE(BitEqual(Blend(std::vector<double>(s_->num_joints(), 0.0)), fk_.channels));
  EXPECT_TRUE(BitEqual(Blend(std::vector<double>(s_->num_joints(), 1.0)), ik_.channels));
}

TEST_F(IkFkBlend, EveryJointIsTheSlerpAndLerpBetweenFkAndIk) {
  for (const double w : {0.5, 0.25, 0.9}) {
    const Pose got = Fk(*s_, Blend(std::vector<double>(s_->num_joints(), w)));
    for (int j = 0; j < s_->num_joints(); ++j) ExpectBetween(*s_, fk_, ik_, got, j, w);
  }
}

TEST_F(IkFkBlend, PerJointWeights) {
  std::vector<double> weights = {0.0, 0.5, 0.25, 1.0, 0.75, 0.0, 0.5};
  const std::vector<double> out = Blend(weights);
  const Pose got = Fk(*s_, out);
  for (int j = 0; j < s_->num_joints(); ++j) ExpectBetween(*s_, fk_, ik_, got, j, weights[j]);
  // The root (0) and `other` (0) keep their FK channels and the hand (1) its IK ones, exactly.
  for (const auto& [joint, from] : {std::pair{kRoot, &fk_}, {kOther, &fk_}, {kHand, &ik_}}) {
    for (int c = s_->channel_begin(joint); c < s_->channel_begin(joint) + s_->channel_count(joint);
         ++c) {
      EXPECT_EQ(out[c], from->channels[c]) << s_->name(joint);
    }
  }
}

TEST_F(IkFkBlend, OutputMayBeTheIkChannels) {
  const std::vector<double> weights(s_->num_joints(), 0.5);
  const std::vector<double> expected = Blend(weights);
  std::vector<double> in_place = ik_.channels;
  int first = -1;
  IkFkBlendJob job{.skeleton = s_.get(),
                   .fk = fk_.channels,
                   .ik = in_place,
                   .weights = weights,
                   .output = in_place,
                   .first_changed = &first};
  ASSERT_TRUE(job.Run());
  EXPECT_TRUE(BitEqual(in_place, expected));
  EXPECT_EQ(first, 0);
}

TEST_F(IkFkBlend, EulerChannelsStayNearTheFkValues) {
  // IK values a whole turn (plus 0.2 rad) away on the hand's first Euler channel (Y, in YZX
  // order): the rotation differs by 0.2 rad about that axis, so the halfway rotation is the FK
  // triple with 0.1 added there, not a turn away.
  Pose ik = fk_;
  const int c = s_->channel_begin(kHand);  // Yrotation
  ik.channels[c] = fk_.channels[c] + 2 * M_PI + 0.2;
  ik_ = Fk(*s_, ik.channels);
  const std::vector<double> out = Blend(std::vector<double>(s_->num_joints(), 0.5));
  EXPECT_NEAR(out[c], fk_.channels[c] + 0.1, 1e-12);
  EXPECT_NEAR(out[c + 1], fk_.channels[c + 1], 1e-12);
  EXPECT_NEAR(out[c + 2], fk_.channels[c + 2], 1e-12);
  ExpectBetween(*s_, fk_, ik_, Fk(*s_, out), kHand, 0.5);
}

// --- Through ik::Solve.

TEST_F(IkFkBlend, SolveAtHalfPutsTheLimbHalfwayBetweenAnimationAndSolve) {
  Rig rig = TwoArms();
  std::vector<Target> targets = Reachable();
  const Pose ik = SolveFromFk(rig, targets);
  // The solve moved both chains and reached both targets.
  EXPECT_LT((ik.world[kFinger] * kFingerTip - targets[0].position).norm(), 1e-6);
  EXPECT_LT((ik.world[kOtherHand] * kOtherTip - targets[1].position).norm(), 1e-6);
  targets[0].ik_blend = 0.5;
  const Pose half = SolveFromFk(rig, targets);
  for (const int j : {kUpper, kLower, kHand, kFinger}) ExpectBetween(*s_, fk_, ik, half, j, 0.5);
  // The other limb, at full IK, is the solve's exactly; the root never moved.
  for (int c = s_->channel_begin(kOther); c < s_->num_channels(); ++c) {
    EXPECT_EQ(half.channels[c], ik.channels[c]);
  }
  for (int c = 0; c < 6; ++c) EXPECT_EQ(half.channels[c], fk_.channels[c]);
  // The finger tip lies off the target, between the animation's and the solve's.
  const Eigen::Vector3d tip = half.world[kFinger] * kFingerTip;
  EXPECT_GT((tip - targets[0].position).norm(), 0.05);
  EXPECT_GT((tip - fk_.world[kFinger] * kFingerTip).norm(), 0.05);
}

TEST_F(IkFkBlend, SolveAtZeroIsTheAnimationAndAtOneTheSolveBitForBit) {
  Rig rig = TwoArms();
  std::vector<Target> targets = Reachable();
  const Pose ik = SolveFromFk(rig, targets);
  targets[0].ik_blend = 0;
  targets[1].ik_blend = 0;
  const Pose zero = SolveFromFk(rig, targets);
  EXPECT_TRUE(BitEqual(zero.channels, fk_.channels));
  // World transforms follow the blended channels.
  const Pose zero_fk = Fk(*s_, zero.channels);
  for (int j = 0; j < s_->num_joints(); ++j) {
    EXPECT_TRUE(zero.world[j].isApprox(zero_fk.world[j], 1e-12)) << j;
  }
  targets[0].ik_blend = 1;
  targets[1].ik_blend = 1;
  EXPECT_TRUE(BitEqual(SolveFromFk(rig, targets).channels, ik.channels));
}

TEST_F(IkFkBlend, StageBlendMultipliesTheEffectorBlend) {
  Rig rig = TwoArms();
  std::vector<Target> targets = Reachable();
  const Pose ik = SolveFromFk(rig, targets);
  rig.stages[1].ik_blend = 0.5;
  targets[1].ik_blend = 0.5;
  targets[0].ik_blend = 0.8;
  const Pose got = SolveFromFk(rig, targets);
  for (const int j : {kOther, kOtherHand}) ExpectBetween(*s_, fk_, ik, got, j, 0.25);
  for (const int j : {kUpper, kLower, kHand, kFinger}) ExpectBetween(*s_, fk_, ik, got, j, 0.8);
}

TEST_F(IkFkBlend, SharedJointsTakeTheLargerBlend) {
  // One stage moving everything from the root: both chains share the root, which follows the
  // effector at full IK; each arm follows its own blend.
  Rig rig = TwoArms();
  rig.stages.resize(1);
  rig.stages[0].tasks.clear();
  rig.stages[0].chain_root = -1;
  std::vector<Target> targets = Reachable();
  const Pose ik = SolveFromFk(rig, targets);
  targets[0].ik_blend = 0.3;
  const Pose got = SolveFromFk(rig, targets);
  ExpectBetween(*s_, fk_, ik, got, kRoot, 1.0);
  for (const int j : {kOther, kOtherHand}) ExpectBetween(*s_, fk_, ik, got, j, 1.0);
  for (const int j : {kUpper, kLower, kHand, kFinger}) ExpectBetween(*s_, fk_, ik, got, j, 0.3);
}

TEST_F(IkFkBlend, TwoBoneStageBlendsItsThreeJoints) {
  Rig rig(s_);
  Task hand;
  hand.joint = kHand;
  rig.AddTask(hand);
  Stage st;
  st.method = Method::kTwoBone;
  st.upper = kUpper;
  st.lower = kLower;
  rig.stages.push_back(st);
  std::vector<Target> targets(1);
  targets[0].position = fk_.world[kHand].translation() + Eigen::Vector3d(-0.2, 0.1, 0.15);
  const Pose ik = SolveFromFk(rig, targets);
  EXPECT_LT((ik.world[kHand].translation() - targets[0].position).norm(), 1e-9);
  rig.stages[0].ik_blend = 0.5;
  const Pose half = SolveFromFk(rig, targets);
  for (const int j : {kUpper, kLower, kHand}) ExpectBetween(*s_, fk_, ik, half, j, 0.5);
  EXPECT_TRUE(BitEqual(std::vector<double>(half.channels.begin(), half.channels.begin() + 6),
                       std::vector<double>(fk_.channels.begin(), fk_.channels.begin() + 6)));
}

TEST_F(IkFkBlend, TheWeightFactorIsNotABlend) {
  // Target::weight (rig:frame_weight / rig:blend in Lua) is a least-squares weight: a lone
  // effector at 0.5 still goes the full distance to its target.
  Rig rig = TwoArms();
  rig.stages.resize(1);
  rig.tasks.resize(1);
  std::vector<Target> targets = Reachable();
  targets.resize(1);
  const Eigen::Vector3d start = fk_.world[kFinger] * kFingerTip;
  targets[0].weight = 0.5;
  const Pose weighted = SolveFromFk(rig, targets);
  const Eigen::Vector3d tip = weighted.world[kFinger] * kFingerTip;
  EXPECT_NEAR((tip - start).norm(), (targets[0].position - start).norm(), 1e-6);
  targets[0].weight = 1;
  targets[0].ik_blend = 0.5;
  const Pose blended = SolveFromFk(rig, targets);
  EXPECT_LT((blended.world[kFinger] * kFingerTip - start).norm(),
            0.9 * (targets[0].position - start).norm());
}

TEST_F(IkFkBlend, OutOfRangeBlendsAreInvalidInput) {
  Rig rig = TwoArms();
  std::vector<Target> targets = Reachable();
  Pose pose = fk_;
  Workspace ws;
  SolveReport report;
  targets[0].ik_blend = 1.5;
  EXPECT_FALSE(Solve(rig, targets, pose, ws, &report));
  EXPECT_NE(report.message.find("ik_blend"), std::string::npos) << report.message;
  targets[0].ik_blend = 1;
  rig.stages[1].ik_blend = -0.5;
  EXPECT_FALSE(Solve(rig, targets, pose, ws, &report));
  EXPECT_NE(report.message.find("ik_blend"), std::string::npos) << report.message;
  EXPECT_TRUE(BitEqual(pose.channels, fk_.channels));
}

// --- Through ik::BakeJob: the blend keyed per frame.

TEST_F(IkFkBlend, BakeKeysTheBlendPerFrame) {
  Rig rig = TwoArms();
  constexpr int kFrames = 5;
  Clip clip(kFrames, s_->num_channels(), 1.0 / 30);
  for (int f = 0; f < kFrames; ++f) {
    const Pose p = Posed(*s_, 1.0 + 0.1 * f);
    std::copy(p.channels.begin(), p.channels.end(), clip.frame(f).begin());
  }
  std::vector<Target> targets = Reachable();
  Clip baked;
  Workspace ws;
  BakeJob job;
  job.rig = &rig;
  job.targets = &targets;
  job.clip = &clip;
  job.output = &baked;
  job.workspace = &ws;
  job.warm_start = false;
  job.on_frame = [&](int frame, Pose&, std::string*) {
    targets[0].ik_blend = 0.25 * frame;  // 0, 0.25, ..., 1
    return FrameAction::kSolve;
  };
  ASSERT_TRUE(job.Run()) << job.error;
  for (int f = 0; f < kFrames; ++f) {
    const std::span<const double> row = clip.frame(f);
    const Pose animated = Fk(*s_, std::vector<double>(row.begin(), row.end()));
    std::vector<Target> full = targets;
    full[0].ik_blend = 1;
    Pose ik = animated;
    Workspace fresh;
    ASSERT_TRUE(Solve(rig, full, ik, fresh));
    const std::span<const double> out = baked.frame(f);
    const std::vector<double> got(out.begin(), out.end());
    if (f == 0) {
      // The finger's chain is the animation's, bit for bit; the other arm the solve's.
      for (int c = s_->channel_begin(kUpper); c < s_->channel_begin(kOther); ++c) {
        EXPECT_EQ(got[c], row[c]);
      }
    }
    if (f == kFrames - 1) {
      EXPECT_TRUE(BitEqual(got, ik.channels));
    }
    const Pose blended = Fk(*s_, got);
    for (const int j : {kUpper, kLower, kHand, kFinger}) {
      ExpectBetween(*s_, animated, ik, blended, j, 0.25 * f);
    }
  }
}

}  // namespace
}  // namespace ik_fk_blend_test
}  // namespace rigel::ik
