// AimConstraint: results proven by FK (constraint_test_util.h's tree; validity_test.cc holds the
// validity matrix): `other` aims at the hand with each up type.
#include "core/constraints/aim.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace aim_test {
namespace {

using constraints::AimConstraint;
using constraints::UpType;

class Aim : public ConstraintTest {
 protected:
  // Checks that the aim axis points at the target and, unless `up_world` is null, that the up
  // axis lies in the half-plane spanned by the aim direction and `up_world` (towards it).
  void ExpectAimed(const Pose& pose, const AimConstraint& c, const Eigen::Vector3d* up_world) {
    const Eigen::Isometry3d w = Fk(*s_, pose, c.joint);
    const Eigen::Vector3d dir =
        (Fk(*s_, pose, c.target).translation() - w.translation()).normalized();
    EXPECT_LT((w.linear() * c.aim_axis - dir).norm(), kTol);
    if (up_world == nullptr) return;
    const Eigen::Vector3d up_perp = (*up_world - up_world->dot(dir) * dir).normalized();
    const Eigen::Vector3d up_local =
        (c.up_axis - c.up_axis.dot(c.aim_axis) * c.aim_axis).normalized();
    EXPECT_LT((w.linear() * up_local - up_perp).norm(), kTol);
  }
};

TEST_F(Aim, UpTypes) {
  {
    const AimConstraint c = ValidAim();
    Pose pose = Posed(*s_);
    const Eigen::Vector3d position = pose.world[kOther].translation();
    ASSERT_TRUE(Run(c, pose)) << error_;
    ExpectAimed(pose, c, &c.up);
    EXPECT_LT((Fk(*s_, pose, kOther).translation() - position).norm(), kTol);
  }
  {
    AimConstraint c = ValidAim();
    c.up_type = UpType::kObject;
    c.up_target = kProp;
    Pose pose = Posed(*s_, 2);
    const Eigen::Vector3d up = pose.world[kProp].translation() - pose.world[kOther].translation();
    ASSERT_TRUE(Run(c, pose)) << error_;
    ExpectAimed(pose, c, &up);
  }
  {
    AimConstraint c = ValidAim();
    c.up_type = UpType::kObjectRotation;
    c.up_target = kProp;
    c.up = Eigen::Vector3d(0, 1, 0);
    Pose pose = Posed(*s_, -1);
    const Eigen::Vector3d up = pose.world[kProp].linear() * c.up;
    ASSERT_TRUE(Run(c, pose)) << error_;
    ExpectAimed(pose, c, &up);
  }
}

TEST_F(Aim, UpAlongTheAimStillAims) {
  AimConstraint c = ValidAim();
  Pose pose = Posed(*s_);
  c.up = pose.world[kHand].translation() - pose.world[kOther].translation();  // no roll defined
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectAimed(pose, c, nullptr);
}

TEST_F(Aim, InfluenceHalfIsHalfway) {
  AimConstraint c = ValidAim();
  Pose full = Posed(*s_);
  ASSERT_TRUE(Run(c, full)) << error_;
  const Eigen::Matrix3d goal = Fk(*s_, full, kOther).linear();
  c.influence = 0.5;
  Pose pose = Posed(*s_);
  const Eigen::Matrix3d own = pose.world[kOther].linear();
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectHalfway(Fk(*s_, pose, kOther).linear(), own, goal);
}

}  // namespace
}  // namespace aim_test
}  // namespace rigel::constraints_test
