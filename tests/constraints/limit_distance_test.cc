// LimitDistanceConstraint: the three modes proven by FK (validity_test.cc holds the validity
// matrix).
#include "core/constraints/limit_distance.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace limit_distance_test {
namespace {

using constraints::DistanceMode;
using constraints::LimitDistanceConstraint;

// The prop about the hand, in the pose every case starts from.
class LimitDistance : public ConstraintTest {
 protected:
  void SetUp() override { ASSERT_GT(d, 0.1); }

  const Pose rest = Posed(*s_);
  const Eigen::Vector3d center = rest.world[kHand].translation();
  const Eigen::Vector3d v = rest.world[kProp].translation() - center;
  const double d = v.norm();
};

TEST_F(LimitDistance, Modes) {
  struct Case {
    DistanceMode mode;
    double radius;
    double expected;  // distance after
  };
  for (const Case& k :
       {Case{DistanceMode::kInside, 0.5 * d, 0.5 * d}, Case{DistanceMode::kInside, 2 * d, d},
        Case{DistanceMode::kOutside, 2 * d, 2 * d}, Case{DistanceMode::kOutside, 0.5 * d, d},
        Case{DistanceMode::kSurface, 1.5 * d, 1.5 * d}}) {
    auto c = Make<LimitDistanceConstraint>(kProp, kHand);
    c.mode = k.mode;
    c.distance = k.radius;
    Pose pose = rest;
    State state;
    ASSERT_TRUE(Run(c, pose, 0, state)) << error_;
    const Eigen::Vector3d got = Fk(*s_, pose, kProp).translation() - center;
    EXPECT_NEAR(got.norm(), k.expected, kTol);
    EXPECT_LT((got.normalized() - v.normalized()).norm(), kTol);  // along the same direction
  }
}

TEST_F(LimitDistance, CapturedRadiusThenInfluence) {
  // Captured radius, then influence 0.5 on a pose that moved away.
  auto c = Make<LimitDistanceConstraint>(kProp, kHand);
  c.influence = 0.5;
  Pose first = rest;
  ASSERT_TRUE(Run(c, first, 0)) << error_;
  EXPECT_NEAR(state_.distance, d, kTol);
  Pose second = rest;
  const int x = s_->translation_channel(kProp, 0);
  second.channels[x] += 3.0;
  second.UpdateWorld(*s_);
  const Eigen::Vector3d own = second.world[kProp].translation();
  const Eigen::Vector3d w = own - center;
  const Eigen::Vector3d full = center + w * (d / w.norm());
  ASSERT_TRUE(Run(c, second, 1)) << error_;
  EXPECT_LT((Fk(*s_, second, kProp).translation() - 0.5 * (own + full)).norm(), kTol);
}

}  // namespace
}  // namespace limit_distance_test
}  // namespace rigel::constraints_test
