// AimConstraint: validity matrix, then results proven by FK (constraint_test_util.h's tree):
// `other` aims at the hand with each up type.
#include "core/constraints/aim.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::AimConstraint;
using constraints::State;
using constraints::UpType;

AimConstraint Valid() {
  AimConstraint c;
  c.joint = kOther;
  c.target = kHand;
  c.aim_axis = Eigen::Vector3d(1, 1, 0).normalized();
  c.up_axis = Eigen::Vector3d(0, 0, 1);
  c.up = Eigen::Vector3d(0.2, 1, 0.1);
  return c;
}

TEST(AimConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(AimConstraint().Validate(*s, &error));
  EXPECT_TRUE(Valid().Validate(*s, &error)) << error;
  {
    AimConstraint c = Valid();
    c.aim_axis = Eigen::Vector3d(2, 0, 0);
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    AimConstraint c = Valid();
    c.up_axis = c.aim_axis;
    EXPECT_FALSE(c.Validate(*s, &error));
    EXPECT_NE(error.find("parallel"), std::string::npos) << error;
  }
  {
    AimConstraint c = Valid();
    c.up_type = UpType::kObject;  // no up_target
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    AimConstraint c = Valid();
    c.up = Eigen::Vector3d::Zero();
    EXPECT_FALSE(c.Validate(*s, &error));
  }
  {
    AimConstraint c = Valid();
    c.joint = kStub;
    EXPECT_FALSE(c.Validate(*s, &error));
  }
}

// Checks that the aim axis points at the target and the up axis lies in the half-plane spanned
// by the aim direction and `up_world` (towards up_world).
void ExpectAimed(const Skeleton& s, const Pose& pose, const AimConstraint& c,
                 const Eigen::Vector3d& up_world) {
  const Eigen::Isometry3d w = Fk(s, pose, c.joint);
  const Eigen::Vector3d dir = (Fk(s, pose, c.target).translation() - w.translation()).normalized();
  EXPECT_LT((w.linear() * c.aim_axis - dir).norm(), kTol);
  const Eigen::Vector3d up_perp = (up_world - up_world.dot(dir) * dir).normalized();
  const Eigen::Vector3d up_local =
      (c.up_axis - c.up_axis.dot(c.aim_axis) * c.aim_axis).normalized();
  EXPECT_LT((w.linear() * up_local - up_perp).norm(), kTol);
}

TEST(AimConstraint, UpTypes) {
  const auto s = Tree();
  std::string error;
  State state;
  {
    const AimConstraint c = Valid();
    Pose pose = Posed(*s);
    const Eigen::Vector3d position = pose.world[kOther].translation();
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    ExpectAimed(*s, pose, c, c.up);
    EXPECT_LT((Fk(*s, pose, kOther).translation() - position).norm(), kTol);
  }
  {
    AimConstraint c = Valid();
    c.up_type = UpType::kObject;
    c.up_target = kProp;
    Pose pose = Posed(*s, 2);
    const Eigen::Vector3d up = pose.world[kProp].translation() - pose.world[kOther].translation();
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    ExpectAimed(*s, pose, c, up);
  }
  {
    AimConstraint c = Valid();
    c.up_type = UpType::kObjectRotation;
    c.up_target = kProp;
    c.up = Eigen::Vector3d(0, 1, 0);
    Pose pose = Posed(*s, -1);
    const Eigen::Vector3d up = pose.world[kProp].linear() * c.up;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    ExpectAimed(*s, pose, c, up);
  }
}

TEST(AimConstraint, UpAlongTheAimStillAimsAndInfluenceHalves) {
  const auto s = Tree();
  std::string error;
  State state;
  {
    AimConstraint c = Valid();
    Pose pose = Posed(*s);
    c.up = pose.world[kHand].translation() - pose.world[kOther].translation();  // no roll defined
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Isometry3d w = Fk(*s, pose, kOther);
    const Eigen::Vector3d dir = (Fk(*s, pose, kHand).translation() - w.translation()).normalized();
    EXPECT_LT((w.linear() * c.aim_axis - dir).norm(), kTol);
  }
  {
    AimConstraint c = Valid();
    Pose full = Posed(*s);
    ASSERT_TRUE(c.Run(*s, full, 0, state, &error)) << error;
    const Eigen::Matrix3d goal = Fk(*s, full, kOther).linear();
    c.influence = 0.5;
    Pose pose = Posed(*s);
    const Eigen::Matrix3d own = pose.world[kOther].linear();
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Matrix3d got = Fk(*s, pose, kOther).linear();
    EXPECT_NEAR(AngleBetween(got, own), AngleBetween(got, goal), kTol);
    EXPECT_NEAR(AngleBetween(got, own) + AngleBetween(got, goal), AngleBetween(own, goal), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
