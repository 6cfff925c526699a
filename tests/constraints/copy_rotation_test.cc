// CopyRotationConstraint: validity matrix, then results proven by FK. Masks and add act on the
// world Euler angles of R = Rz Ry Rx (Blender's XYZ), computed here independently.
#include "core/constraints/copy_rotation.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::CopyRotationConstraint;
using constraints::Mix;
using constraints::State;

Eigen::Matrix3d FromEulerXYZ(const Eigen::Vector3d& e) {
  return (Eigen::AngleAxisd(e.z(), Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(e.y(), Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(e.x(), Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

TEST(CopyRotationConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(CopyRotationConstraint().Validate(*s, &error));
  CopyRotationConstraint c;
  c.joint = kProp;
  c.target = kHand;
  EXPECT_TRUE(c.Validate(*s, &error)) << error;
  c.axes = 0;
  EXPECT_FALSE(c.Validate(*s, &error));
  c.axes = 0b111;
  c.joint = kStub;
  EXPECT_FALSE(c.Validate(*s, &error));
}

TEST(CopyRotationConstraint, ReplaceAddMasksInfluence) {
  const auto s = Tree();
  std::string error;
  State state;
  struct Case {
    Mix mix;
    std::uint8_t axes;
    double influence;
  };
  for (const Case& k : {Case{Mix::kReplace, 0b111, 1.0}, Case{Mix::kReplace, 0b010, 1.0},
                        Case{Mix::kAdd, 0b111, 1.0}, Case{Mix::kAdd, 0b100, 1.0},
                        Case{Mix::kReplace, 0b111, 0.5}, Case{Mix::kAdd, 0b011, 0.5}}) {
    CopyRotationConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.mix = k.mix;
    c.axes = k.axes;
    c.influence = k.influence;
    Pose pose = Posed(*s, 0.7);
    const Eigen::Matrix3d own = pose.world[kProp].linear();
    const Eigen::Vector3d e_own = EulerXYZ(own);
    const Eigen::Vector3d e_goal = EulerXYZ(pose.world[kHand].linear());
    const Eigen::Vector3d position = pose.world[kProp].translation();
    Eigen::Vector3d e = e_own;
    for (int a = 0; a < 3; ++a) {
      if ((k.axes >> a & 1) != 0) e[a] = k.mix == Mix::kAdd ? e_own[a] + e_goal[a] : e_goal[a];
    }
    const Eigen::Matrix3d full = FromEulerXYZ(e);
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Isometry3d got = Fk(*s, pose, kProp);
    if (k.influence == 1.0) {
      EXPECT_LT(AngleBetween(got.linear(), full), kTol);
    } else {
      EXPECT_NEAR(AngleBetween(got.linear(), own), AngleBetween(got.linear(), full), kTol);
      EXPECT_NEAR(AngleBetween(got.linear(), own) + AngleBetween(got.linear(), full),
                  AngleBetween(own, full), kTol);
    }
    EXPECT_LT((got.translation() - position).norm(), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
