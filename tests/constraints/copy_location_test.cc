// CopyLocationConstraint: results proven by FK (validity_test.cc holds the validity matrix).
#include "core/constraints/copy_location.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace copy_location_test {
namespace {

using constraints::CopyLocationConstraint;
using constraints::Mix;

using CopyLocation = CopyTest;

TEST_P(CopyLocation, ReplaceAddMasksInfluence) {
  const CopyCase& k = GetParam();
  const auto [before, got] = RunCopy<CopyLocationConstraint>(1.3);
  const Eigen::Vector3d own = before.world[kProp].translation();
  const Eigen::Vector3d goal = before.world[kHand].translation();
  for (int a = 0; a < 3; ++a) {
    double expected = own[a];
    if ((k.axes >> a & 1) != 0) {
      const double full = k.mix == Mix::kAdd ? own[a] + goal[a] : goal[a];
      expected = own[a] + k.influence * (full - own[a]);
    }
    EXPECT_NEAR(got.translation()[a], expected, kTol) << "axis " << a;
  }
  EXPECT_LT(AngleBetween(got.linear(), before.world[kProp].linear()), kTol);
}

INSTANTIATE_TEST_SUITE_P(EveryMixMaskAndInfluence, CopyLocation,
                         ::testing::ValuesIn(AllCopyCases()));

}  // namespace
}  // namespace copy_location_test
}  // namespace rigel::constraints_test
