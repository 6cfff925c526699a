// TwistConstraint (core/constraints/twist.h): the swing-twist decomposition, then results proven
// by forward kinematics: after a Run each twist joint's twist about the bone axis, relative to the
// reference joint and to the rest pose, is its weight times the driver's, both measured here from
// world transforms by an independent swing-twist (the smallest rotation taking the axis where the
// rotation takes it, by Rodrigues' formula); swings and the driver's world rotation are kept.
//
//   root (Xpos Ypos Zpos Zrot Xrot Yrot)
//    |-- upperarm (ZXY) --1.0 X-- forearm (ZXY, rest orientation 20 deg about Z)
//    |      |-- fa_twist1 (ZXY), 0.33 along X          twist bones beside the hand
//    |      |-- fa_twist2 (XYZ, rest orientation 10 deg about (1,1,0)), 0.66 along X
//    |      `-- hand (YZX, rest orientation 15 deg about (0,1,1)), 1.0 along X
//    `-- thigh (ZXY) --0.3 -Y-- leg_twist1 (ZXY) --0.3 -Y-- leg_twist2 (XYZ, rest 10 deg about Y)
//           --0.4 -Y-- foot (ZXY)                      twist bones between thigh and foot
#include "core/constraints/twist.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/constraints/stack.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "support/test_skeletons.h"

namespace rigel::constraints_test {
namespace twist_test {
namespace {

using C = ChannelType;
using constraints::State;
using constraints::TwistConstraint;

enum Joint {
  kRoot,
  kUpperArm,
  kForearm,
  kFaTwist1,
  kFaTwist2,
  kHand,
  kThigh,
  kLegTwist1,
  kLegTwist2,
  kFoot
};

RawSkeleton::Joint& AddChild(RawSkeleton::Joint& parent, const char* name,
                             const Eigen::Vector3d& offset, std::vector<C> channels,
                             const Eigen::Quaterniond& rest = Eigen::Quaterniond::Identity()) {
  RawSkeleton::Joint& child = parent.children.emplace_back();
  child.name = name;
  child.rest_translation = offset;
  child.channels = std::move(channels);
  child.rest_orientation = rest;
  return child;
}

Eigen::Quaterniond AxisAngle(double degrees, const Eigen::Vector3d& axis) {
  return Eigen::Quaterniond(Eigen::AngleAxisd(degrees * M_PI / 180, axis.normalized()));
}

std::shared_ptr<const Skeleton> Tree() {
  const std::vector<C> zxy = {C::kZrotation, C::kXrotation, C::kYrotation};
  const std::vector<C> xyz = {C::kXrotation, C::kYrotation, C::kZrotation};
  RawSkeleton raw;
  RawSkeleton::Joint& root = raw.roots.emplace_back();
  root.name = "root";
  root.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint& upper = AddChild(root, "upperarm", Eigen::Vector3d(0, 1, 0), zxy);
  RawSkeleton::Joint& forearm = AddChild(upper, "forearm", Eigen::Vector3d(1, 0, 0), zxy,
                                         AxisAngle(20, Eigen::Vector3d::UnitZ()));
  AddChild(forearm, "fa_twist1", Eigen::Vector3d(0.33, 0, 0), zxy);
  AddChild(forearm, "fa_twist2", Eigen::Vector3d(0.66, 0, 0), xyz,
           AxisAngle(10, Eigen::Vector3d(1, 1, 0)));
  AddChild(forearm, "hand", Eigen::Vector3d(1, 0, 0), {C::kYrotation, C::kZrotation, C::kXrotation},
           AxisAngle(15, Eigen::Vector3d(0, 1, 1)));
  RawSkeleton::Joint& thigh = AddChild(root, "thigh", Eigen::Vector3d(0, -0.2, 0), zxy);
  RawSkeleton::Joint& t1 = AddChild(thigh, "leg_twist1", Eigen::Vector3d(0, -0.3, 0), zxy);
  RawSkeleton::Joint& t2 = AddChild(t1, "leg_twist2", Eigen::Vector3d(0, -0.3, 0), xyz,
                                    AxisAngle(10, Eigen::Vector3d::UnitY()));
  AddChild(t2, "foot", Eigen::Vector3d(0, -0.4, 0), zxy);
  return testing::BuildOrDie(raw);
}

// A pose away from rest (every channel distinct, seeded by k), world transforms updated.
Pose Posed(const Skeleton& s, double k = 1.0) {
  Pose pose(s);
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    pose.channels[c] =
        0.13 * k * (static_cast<double>(c % 5) - 1.7) + 0.03 * static_cast<double>(c);
  }
  pose.UpdateWorld(s);
  return pose;
}

// The rest pose (every channel 0).
Pose Rest(const Skeleton& s) {
  Pose pose(s);
  pose.UpdateWorld(s);
  return pose;
}

Pose Fk(const Skeleton& s, const Pose& pose) {
  Pose fresh(s);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(s);
  return fresh;
}

// Independent swing-twist: the twist angle of rotation `r` about unit `a`. The swing is the
// smallest rotation taking a to r a (Rodrigues), the twist what remains, measured on a vector
// perpendicular to a.
double IndependentTwist(const Eigen::Matrix3d& r, const Eigen::Vector3d& a) {
  const Eigen::Vector3d b = r * a;
  const Eigen::Vector3d v = a.cross(b);
  const double c = a.dot(b);
  Eigen::Matrix3d vx;
  vx << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  const Eigen::Matrix3d swing = Eigen::Matrix3d::Identity() + vx + vx * vx / (1 + c);
  const Eigen::Matrix3d twist = swing.transpose() * r;
  const Eigen::Vector3d p = a.unitOrthogonal();
  const Eigen::Vector3d q = twist * p;
  return std::atan2(a.dot(p.cross(q)), p.dot(q));
}
// The swing of that decomposition.
Eigen::Matrix3d IndependentSwing(const Eigen::Matrix3d& r, const Eigen::Vector3d& a) {
  const Eigen::Vector3d v = a.cross(r * a);
  const double c = a.dot(r * a);
  Eigen::Matrix3d vx;
  vx << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return Eigen::Matrix3d::Identity() + vx + vx * vx / (1 + c);
}

// What the tests measure of joint j against reference `ref` with the twist axis `a` (reference
// space): the rotation relative to the reference after its rest value, and the axis in that
// rotation's frame.
struct Relative {
  Eigen::Matrix3d rotation;
  Eigen::Vector3d axis;
};
Relative RelativeTo(const Skeleton& s, const Pose& pose, int ref, int j, const Eigen::Vector3d& a) {
  const Pose rest = Rest(s);
  const Eigen::Matrix3d rest_rel = rest.world[ref].linear().transpose() * rest.world[j].linear();
  const Eigen::Matrix3d rel = pose.world[ref].linear().transpose() * pose.world[j].linear();
  return {rest_rel.transpose() * rel, rest_rel.transpose() * a};
}
double TwistOf(const Skeleton& s, const Pose& pose, int ref, int j, const Eigen::Vector3d& a) {
  const Relative r = RelativeTo(s, pose, ref, j, a);
  return IndependentTwist(r.rotation, r.axis);
}
Eigen::Matrix3d SwingOf(const Skeleton& s, const Pose& pose, int ref, int j,
                        const Eigen::Vector3d& a) {
  const Relative r = RelativeTo(s, pose, ref, j, a);
  return IndependentSwing(r.rotation, r.axis);
}

// The bone axis of `driver` in the space of `ref`, from the rest pose's world transforms.
Eigen::Vector3d BoneAxis(const Skeleton& s, int ref, int driver) {
  const Pose rest = Rest(s);
  return (rest.world[ref].inverse() * rest.world[driver].translation()).normalized();
}

double Angle(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

constexpr double kTol = 1e-9;

class Twist : public ::testing::Test {
 protected:
  // Runs `c` on `pose` (fresh state unless given); the pose after it, by FK from its channels.
  Pose RunFk(const TwistConstraint& c, Pose pose, State* state = nullptr) {
    State own;
    EXPECT_TRUE(c.Run(*s_, pose, 0, state != nullptr ? *state : own, &error_)) << error_;
    // The job keeps world transforms up to date.
    const Pose fk = Fk(*s_, pose);
    for (int j = 0; j < s_->num_joints(); ++j) {
      EXPECT_TRUE(pose.world[j].isApprox(fk.world[j], 1e-12)) << s_->name(j);
    }
    return fk;
  }

  // Checks that each twist joint of `c` takes weight x the driver's twist (measured on `before`)
  // about `a`, relative to `ref`, and keeps its swing.
  void ExpectDistributed(const TwistConstraint& c, const Pose& before, const Pose& after, int ref,
                         const Eigen::Vector3d& a) {
    const double driver_twist = TwistOf(*s_, before, ref, c.driver, a);
    EXPECT_GT(std::abs(driver_twist), 0.05) << "the pose twists the driver";
    for (size_t i = 0; i < c.joints.size(); ++i) {
      const int j = c.joints[i];
      EXPECT_NEAR(TwistOf(*s_, after, ref, j, a), c.weights[i] * driver_twist, kTol) << s_->name(j);
      EXPECT_LT(Angle(SwingOf(*s_, after, ref, j, a), SwingOf(*s_, before, ref, j, a)), kTol)
          << s_->name(j) << " keeps its swing";
    }
  }

  TwistConstraint Forearm() const {
    TwistConstraint c;
    c.driver = kHand;
    c.joints = {kFaTwist1, kFaTwist2};
    c.weights = {0.33, 0.66};
    return c;
  }
  TwistConstraint Leg() const {
    TwistConstraint c;
    c.driver = kFoot;
    c.joints = {kLegTwist2, kLegTwist1};  // any order: set parents first
    c.weights = {0.75, 0.25};
    return c;
  }

  std::shared_ptr<const Skeleton> s_ = Tree();
  std::string error_;
};

TEST(SwingTwist, RecomposesAndMatchesTheIndependentDecomposition) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 200; ++i) {
    const Eigen::Quaterniond q = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Eigen::Vector3d a = Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized();
    Eigen::Quaterniond swing, twist;
    constraints::SwingTwist(q, a, &swing, &twist);
    EXPECT_LT(q.angularDistance(swing * twist), 1e-12);
    EXPECT_NEAR(std::abs(twist.vec().normalized().dot(a)), 1.0, 1e-9) << "twist about a";
    EXPECT_NEAR(swing.vec().dot(a), 0.0, 1e-12) << "swing about an axis perpendicular to a";
    EXPECT_NEAR(constraints::TwistAngle(q, a), IndependentTwist(q.toRotationMatrix(), a), 1e-9);
  }
  // A pure twist of 170 degrees about Z, and of -170.
  for (const double deg : {170.0, -170.0, 30.0}) {
    EXPECT_NEAR(
        constraints::TwistAngle(AxisAngle(deg, Eigen::Vector3d::UnitZ()), Eigen::Vector3d::UnitZ()),
        deg * M_PI / 180, 1e-12);
  }
}

TEST_F(Twist, ForearmTwistBonesBesideTheHandShareItsTwist) {
  const TwistConstraint c = Forearm();
  EXPECT_EQ(c.ReferenceJoint(*s_), kForearm);
  const Eigen::Vector3d a = BoneAxis(*s_, kForearm, kHand);
  EXPECT_LT((c.Axis(*s_, kForearm) - a).norm(), 1e-12);
  const Pose before = Posed(*s_);
  const Pose after = RunFk(c, before);
  ExpectDistributed(c, before, after, kForearm, a);
  // Nothing else moved: the hand and every joint off the twist bones keep their channels.
  for (int j = 0; j < s_->num_joints(); ++j) {
    if (j == kFaTwist1 || j == kFaTwist2) continue;
    for (int k = 0; k < s_->channel_count(j); ++k) {
      const int ch = s_->channel_begin(j) + k;
      EXPECT_EQ(after.channels[ch], before.channels[ch]) << s_->name(j);
    }
  }
}

TEST_F(Twist, TwistBonesAboveTheDriverLeaveItsWorldRotation) {
  const TwistConstraint c = Leg();
  EXPECT_EQ(c.ReferenceJoint(*s_), kThigh);
  const Eigen::Vector3d a = BoneAxis(*s_, kThigh, kFoot);
  const Pose before = Posed(*s_, -1.3);
  const Pose after = RunFk(c, before);
  ExpectDistributed(c, before, after, kThigh, a);
  EXPECT_LT(Angle(after.world[kFoot].linear(), before.world[kFoot].linear()), kTol)
      << "the foot keeps its world rotation";
  EXPECT_NEAR(TwistOf(*s_, after, kThigh, kFoot, a), TwistOf(*s_, before, kThigh, kFoot, a), kTol);
}

TEST_F(Twist, GivenAxisAndReference) {
  TwistConstraint c = Forearm();
  c.reference = kUpperArm;
  c.axis = Eigen::Vector3d(0.2, 1, 0.3);
  const Eigen::Vector3d a = c.axis.normalized();
  const Pose before = Posed(*s_, 0.7);
  const Pose after = RunFk(c, before);
  ExpectDistributed(c, before, after, kUpperArm, a);
}

TEST_F(Twist, InfluenceHalfIsHalfwayToTheDistributedRotation) {
  const Pose before = Posed(*s_);
  const Pose full = RunFk(Forearm(), before);
  TwistConstraint c = Forearm();
  c.influence = 0.5;
  const Pose half = RunFk(c, before);
  for (const int j : {kFaTwist1, kFaTwist2}) {
    const Eigen::Matrix3d own = before.world[j].linear(), goal = full.world[j].linear(),
                          got = half.world[j].linear();
    EXPECT_NEAR(Angle(got, own), Angle(got, goal), kTol) << s_->name(j);
    EXPECT_NEAR(Angle(got, own) + Angle(got, goal), Angle(own, goal), kTol) << s_->name(j);
  }
}

TEST_F(Twist, TheDriversTwistUnwrapsFromFrameToFrame) {
  // The hand twisted about the bone axis by 0, 120, 170 and 200 degrees on successive frames:
  // at 200 the twist bone (weight 0.5) takes 100 degrees, not -80.
  TwistConstraint c = Forearm();
  c.joints = {kFaTwist1};
  c.weights = {0.5};
  const Eigen::Vector3d a = BoneAxis(*s_, kForearm, kHand);
  State state;
  for (const double deg : {0.0, 120.0, 170.0, 200.0}) {
    Pose pose = Rest(*s_);
    // hand world = forearm world * rest(hand) * twist about the hand's own copy of the axis.
    const Eigen::Quaterniond rest = s_->rest_orientation(kHand);
    const Eigen::Quaterniond turn = rest * AxisAngle(deg, rest.conjugate() * a);
    Eigen::Isometry3d world = pose.world[kHand];
    world.linear() = (Eigen::Quaterniond(pose.world[kForearm].linear()) * turn).toRotationMatrix();
    ASSERT_TRUE(constraints::ApplyWorldRotation(*s_, pose, kHand, world.linear(), 1.0, &error_));
    const Pose after = RunFk(c, pose, &state);
    const double expected = 0.5 * deg * M_PI / 180;
    EXPECT_NEAR(TwistOf(*s_, after, kForearm, kFaTwist1, a), expected, kTol) << deg;
  }
}

TEST_F(Twist, ThroughTheStack) {
  constraints::Stack stack;
  stack.entries.push_back({Forearm(), -1});
  stack.entries.push_back({Leg(), 0});
  ASSERT_TRUE(stack.Validate(*s_, &error_)) << error_;
  EXPECT_EQ(constraints::KindName(stack.entries[0].constraint), "twist");
  EXPECT_EQ(constraints::ConstrainedJoint(stack.entries[1].constraint), kLegTwist2);
  const Pose before = Posed(*s_, 0.4);
  Pose pose = before;
  constraints::StackState state;
  ASSERT_TRUE(stack.Evaluate(*s_, pose, 0, -1, 1 << 30, state, &error_)) << error_;
  const Pose after = Fk(*s_, pose);
  ExpectDistributed(Forearm(), before, after, kForearm, BoneAxis(*s_, kForearm, kHand));
  ExpectDistributed(Leg(), before, after, kThigh, BoneAxis(*s_, kThigh, kFoot));
}

}  // namespace
}  // namespace twist_test
}  // namespace rigel::constraints_test
