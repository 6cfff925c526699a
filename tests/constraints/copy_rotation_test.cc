// CopyRotationConstraint: results proven by FK (validity_test.cc holds the validity matrix).
// Masks and add act on the world Euler angles of R = Rz Ry Rx (Blender's XYZ), computed here
// independently.
#include "core/constraints/copy_rotation.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace copy_rotation_test {
namespace {

using constraints::CopyRotationConstraint;
using constraints::Mix;

Eigen::Matrix3d FromEulerXYZ(const Eigen::Vector3d& e) {
  return (Eigen::AngleAxisd(e.z(), Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(e.y(), Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(e.x(), Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

using CopyRotation = CopyTest;

TEST_P(CopyRotation, ReplaceAddMasksInfluence) {
  const CopyCase& k = GetParam();
  const auto [before, got] = RunCopy<CopyRotationConstraint>(0.7);
  const Eigen::Matrix3d own = before.world[kProp].linear();
  const Eigen::Vector3d e_own = EulerXYZ(own);
  const Eigen::Vector3d e_goal = EulerXYZ(before.world[kHand].linear());
  Eigen::Vector3d e = e_own;
  for (int a = 0; a < 3; ++a) {
    if ((k.axes >> a & 1) != 0) e[a] = k.mix == Mix::kAdd ? e_own[a] + e_goal[a] : e_goal[a];
  }
  const Eigen::Matrix3d full = FromEulerXYZ(e);
  if (k.influence == 1.0) {
    EXPECT_LT(AngleBetween(got.linear(), full), kTol);
  } else {
    ExpectHalfway(got.linear(), own, full);
  }
  EXPECT_LT((got.translation() - before.world[kProp].translation()).norm(), kTol);
}

INSTANTIATE_TEST_SUITE_P(EveryMixMaskAndInfluence, CopyRotation,
                         ::testing::ValuesIn(AllCopyCases()));

}  // namespace
}  // namespace copy_rotation_test
}  // namespace rigel::constraints_test
