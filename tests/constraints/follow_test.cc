// Point and orient (Maya's constraints on the position and on the rotation of a joint), and what
// they share with parent, proven by FK on constraint_test_util.h's tree. With every axis and no
// offset, the part of the joint a kind writes (position, rotation or both) lands on the target's
// and the other part stays where it was; with a mask, the masked components (of the world
// position, or of the world Euler angles) come from the target and the others stay. Then point's
// and orient's offsets and influence.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <variant>

#include "constraint_test_util.h"
#include "core/constraints/stack.h"

namespace rigel::constraints_test {
namespace follow_test {
namespace {

using constraints::Constraint;
using constraints::OrientConstraint;
using constraints::PointConstraint;

// The joint a job constrains and its target.
int JointOf(const Constraint& job) { return constraints::ConstrainedJoint(job); }
int TargetOf(const Constraint& job) {
  return std::visit(
      [](const auto& c) {
        if constexpr (requires { c.target; }) {
          return c.target;
        } else {
          return -1;  // limit rotation: no target
        }
      },
      job);
}

struct OnTargetCase {
  std::string name;
  Constraint job;
  bool writes_position;
  bool writes_rotation;
};

void PrintTo(const OnTargetCase& k, std::ostream* os) { *os << k.name; }

constraints::ParentConstraint ParentWithoutOffset() {
  auto c = Make<constraints::ParentConstraint>(kProp, kHand);
  c.maintain_offset = false;
  return c;
}

class OnTarget : public ConstraintTest, public ::testing::WithParamInterface<OnTargetCase> {};

TEST_P(OnTarget, WrittenPartsTakeTheTargetsAndTheOthersStay) {
  const OnTargetCase& k = GetParam();
  Pose pose = Posed(*s_);
  const Eigen::Isometry3d before = pose.world[JointOf(k.job)];
  ASSERT_TRUE(std::visit([&](const auto& c) { return Run(c, pose); }, k.job)) << error_;
  const Eigen::Isometry3d got = Fk(*s_, pose, JointOf(k.job));
  const Eigen::Isometry3d target = Fk(*s_, pose, TargetOf(k.job));
  const Eigen::Isometry3d& position = k.writes_position ? target : before;
  const Eigen::Isometry3d& rotation = k.writes_rotation ? target : before;
  EXPECT_LT((got.translation() - position.translation()).norm(), kTol);
  EXPECT_LT(AngleBetween(got.linear(), rotation.linear()), kTol);
}

INSTANTIATE_TEST_SUITE_P(
    FollowingKinds, OnTarget,
    ::testing::Values(OnTargetCase{"parent", ParentWithoutOffset(), true, true},
                      OnTargetCase{"point", Make<PointConstraint>(kProp, kHand), true, false},
                      OnTargetCase{"orient", Make<OrientConstraint>(kOther, kHand), false, true}),
    NameOf());

// The components of a world transform a mask selects: the position, or the world Euler angles of
// the rotation.
using Components = Eigen::Vector3d (*)(const Eigen::Isometry3d&);
Eigen::Vector3d Position(const Eigen::Isometry3d& world) { return world.translation(); }
Eigen::Vector3d Angles(const Eigen::Isometry3d& world) { return EulerXYZ(world.linear()); }

struct MaskCase {
  std::string name;
  Constraint job;  // masked to x and z
  Components components;
};

void PrintTo(const MaskCase& k, std::ostream* os) { *os << k.name; }

// The job `Job` on `joint` towards `target`, masked to x and z.
template <class Job>
Job MaskedXz(int joint, int target) {
  Job c = Make<Job>(joint, target);
  c.axes = 0b101;
  return c;
}

class Masked : public ConstraintTest, public ::testing::WithParamInterface<MaskCase> {};

TEST_P(Masked, XzFromTheTargetYItsOwn) {
  const MaskCase& k = GetParam();
  Pose pose = Posed(*s_);
  const Eigen::Vector3d own = k.components(pose.world[JointOf(k.job)]);
  const Eigen::Vector3d goal = k.components(pose.world[TargetOf(k.job)]);
  ASSERT_TRUE(std::visit([&](const auto& c) { return Run(c, pose); }, k.job)) << error_;
  const Eigen::Vector3d got = k.components(Fk(*s_, pose, JointOf(k.job)));
  EXPECT_NEAR(got.x(), goal.x(), kTol);
  EXPECT_NEAR(got.y(), own.y(), kTol);
  EXPECT_NEAR(got.z(), goal.z(), kTol);
  EXPECT_GT(std::abs(own.y() - goal.y()), 0.01);  // the mask is visible
}

INSTANTIATE_TEST_SUITE_P(
    FollowingKinds, Masked,
    ::testing::Values(MaskCase{"point", MaskedXz<PointConstraint>(kProp, kHand), Position},
                      MaskCase{"orient", MaskedXz<OrientConstraint>(kOther, kHand), Angles}),
    NameOf());

using Point = ConstraintTest;
using Orient = ConstraintTest;

TEST_F(Point, MaintainOffsetThenInfluence) {
  auto c = Make<PointConstraint>(kProp, kHand);
  c.maintain_offset = true;
  Pose first = Posed(*s_, 1);
  const Eigen::Vector3d offset =
      first.world[kProp].translation() - first.world[kHand].translation();
  ASSERT_TRUE(Run(c, first, 0)) << error_;
  Pose second = Posed(*s_, 3);
  ASSERT_TRUE(Run(c, second, 1)) << error_;
  EXPECT_LT(
      (Fk(*s_, second, kProp).translation() - Fk(*s_, second, kHand).translation() - offset).norm(),
      kTol);
  c.influence = 0.5;
  Pose third = Posed(*s_, -1);
  const Eigen::Vector3d own = third.world[kProp].translation();
  const Eigen::Vector3d goal = third.world[kHand].translation() + offset;
  ASSERT_TRUE(Run(c, third, 2)) << error_;
  EXPECT_LT((Fk(*s_, third, kProp).translation() - 0.5 * (own + goal)).norm(), kTol);
}

TEST_F(Orient, MaintainOffsetAcrossPoses) {
  auto c = Make<OrientConstraint>(kOther, kHand);
  c.maintain_offset = true;
  Pose first = Posed(*s_, 1);
  const Eigen::Matrix3d offset =
      first.world[kHand].linear().transpose() * first.world[kOther].linear();
  ASSERT_TRUE(Run(c, first, 0)) << error_;
  Pose second = Posed(*s_, 2.5);
  ASSERT_TRUE(Run(c, second, 1)) << error_;
  EXPECT_LT(
      AngleBetween(Fk(*s_, second, kOther).linear(), Fk(*s_, second, kHand).linear() * offset),
      kTol);
}

TEST_F(Orient, InfluenceHalfIsHalfway) {
  auto c = Make<OrientConstraint>(kOther, kHand);
  c.influence = 0.5;
  Pose pose = Posed(*s_);
  const Eigen::Matrix3d own = pose.world[kOther].linear();
  const Eigen::Matrix3d goal = pose.world[kHand].linear();
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectHalfway(Fk(*s_, pose, kOther).linear(), own, goal);
}

}  // namespace
}  // namespace follow_test
}  // namespace rigel::constraints_test
