// LimitLocationConstraint: results proven by FK on the tree of constraint_test_util.h (the prop,
// six channels under the rotated root, with a rest orientation); validity_test.cc holds the
// validity matrix.
#include "core/constraints/limit_location.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"
#include "core/constraints/stack.h"

namespace rigel::constraints_test {
namespace limit_location_test {
namespace {

using constraints::LimitLocationConstraint;
using constraints::Space;

class LimitLocation : public ConstraintTest {
 protected:
  // Checks that every joint but the prop kept its world transform, and the prop its rotation.
  void ExpectOnlyThePropMoved(const Pose& before, const Pose& after) {
    for (int j = 0; j < s_->num_joints(); ++j) {
      if (j == kProp) continue;
      EXPECT_TRUE(after.world[j].isApprox(before.world[j], 1e-12)) << s_->name(j);
    }
    EXPECT_LT(AngleBetween(after.world[kProp].linear(), before.world[kProp].linear()), kTol);
  }

  LimitLocationConstraint Job(Space space) const {
    LimitLocationConstraint c;
    c.joint = kProp;
    c.space = space;
    return c;
  }
};

TEST_F(LimitLocation, WorldClampsEachBoundedAxis) {
  const Pose before = Posed(*s_);
  const Eigen::Vector3d p = before.world[kProp].translation();
  LimitLocationConstraint c = Job(Space::kWorld);
  c.max.y() = p.y() - 0.1;  // a ceiling below the prop
  c.min.x() = p.x() + 0.05;
  c.min.z() = p.z() - 1.0;  // bounded, but satisfied
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  const Pose after = [&] {
    Pose fresh(*s_);
    fresh.channels = pose.channels;
    fresh.UpdateWorld(*s_);
    return fresh;
  }();
  EXPECT_LT(
      (after.world[kProp].translation() - Eigen::Vector3d(p.x() + 0.05, p.y() - 0.1, p.z())).norm(),
      kTol);
  ExpectOnlyThePropMoved(before, after);
}

TEST_F(LimitLocation, InsideTheBoundsNothingChanges) {
  for (const Space space : {Space::kWorld, Space::kLocal}) {
    const Pose before = Posed(*s_);
    LimitLocationConstraint c = Job(space);
    c.min = Eigen::Vector3d::Constant(-100);
    c.max = Eigen::Vector3d::Constant(100);
    Pose pose = before;
    ASSERT_TRUE(Run(c, pose)) << error_;
    for (size_t k = 0; k < pose.channels.size(); ++k) {
      EXPECT_EQ(pose.channels[k], before.channels[k]) << k;
    }
  }
}

TEST_F(LimitLocation, WorldInfluenceHalfIsHalfway) {
  const Pose before = Posed(*s_);
  const Eigen::Vector3d p = before.world[kProp].translation();
  LimitLocationConstraint c = Job(Space::kWorld);
  c.min.y() = p.y() + 0.4;
  c.influence = 0.5;
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  EXPECT_LT((Fk(*s_, pose, kProp).translation() - (p + Eigen::Vector3d(0, 0.2, 0))).norm(), kTol);
}

TEST_F(LimitLocation, LocalClampsThePositionChannels) {
  // Local bounds act on the offset from the rest position in the parent's (the root's) space:
  // the prop ends at root * (rest offset + clamped channels).
  for (const double influence : {1.0, 0.5}) {
    const Pose before = Posed(*s_);
    Eigen::Vector3d offset;
    for (int a = 0; a < 3; ++a) offset[a] = before.channels[s_->translation_channel(kProp, a)];
    LimitLocationConstraint c = Job(Space::kLocal);
    c.influence = influence;
    c.max.x() = offset.x() - 0.3;
    c.min.z() = offset.z() + 0.2;
    Pose pose = before;
    ASSERT_TRUE(Run(c, pose)) << error_;
    const Eigen::Vector3d limited(offset.x() - 0.3 * influence, offset.y(),
                                  offset.z() + 0.2 * influence);
    const Eigen::Vector3d expected = before.world[kRoot] * (s_->rest_translation(kProp) + limited);
    EXPECT_LT((Fk(*s_, pose, kProp).translation() - expected).norm(), kTol) << influence;
    EXPECT_LT((pose.world[kProp].translation() - expected).norm(), kTol) << "world kept up to date";
  }
}

TEST_F(LimitLocation, ThroughTheStack) {
  constraints::Stack stack;
  LimitLocationConstraint c = Job(Space::kWorld);
  c.max.y() = -5;
  stack.entries.push_back({c, -1});
  EXPECT_EQ(constraints::KindName(stack.entries[0].constraint), "limit_location");
  EXPECT_EQ(constraints::ConstrainedJoint(stack.entries[0].constraint), kProp);
  Pose pose = Posed(*s_);
  constraints::StackState state;
  ASSERT_TRUE(stack.Evaluate(*s_, pose, 0, -1, -1, state, &error_)) << error_;
  EXPECT_NEAR(Fk(*s_, pose, kProp).translation().y(), -5, kTol);
}

}  // namespace
}  // namespace limit_location_test
}  // namespace rigel::constraints_test
