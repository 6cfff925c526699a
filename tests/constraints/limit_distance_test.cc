// LimitDistanceConstraint: validity matrix, then the three modes proven by FK.
#include "core/constraints/limit_distance.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::DistanceMode;
using constraints::LimitDistanceConstraint;
using constraints::State;

TEST(LimitDistanceConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(LimitDistanceConstraint().Validate(*s, &error));
  LimitDistanceConstraint c;
  c.joint = kProp;
  c.target = kHand;
  EXPECT_TRUE(c.Validate(*s, &error)) << error;
  c.distance = std::nan("");
  EXPECT_FALSE(c.Validate(*s, &error));
  c.distance = 1;
  c.joint = kOther;
  EXPECT_FALSE(c.Validate(*s, &error));
}

TEST(LimitDistanceConstraint, Modes) {
  const auto s = Tree();
  std::string error;
  Pose rest = Posed(*s);
  const Eigen::Vector3d center = rest.world[kHand].translation();
  const Eigen::Vector3d v = rest.world[kProp].translation() - center;
  const double d = v.norm();
  ASSERT_GT(d, 0.1);
  struct Case {
    DistanceMode mode;
    double radius;
    double expected;  // distance after
  };
  for (const Case& k :
       {Case{DistanceMode::kInside, 0.5 * d, 0.5 * d}, Case{DistanceMode::kInside, 2 * d, d},
        Case{DistanceMode::kOutside, 2 * d, 2 * d}, Case{DistanceMode::kOutside, 0.5 * d, d},
        Case{DistanceMode::kSurface, 1.5 * d, 1.5 * d}}) {
    LimitDistanceConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.mode = k.mode;
    c.distance = k.radius;
    Pose pose = rest;
    State state;
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Vector3d got = Fk(*s, pose, kProp).translation() - center;
    EXPECT_NEAR(got.norm(), k.expected, kTol);
    EXPECT_LT((got.normalized() - v.normalized()).norm(), kTol);  // along the same direction
  }
  {  // Captured radius, then influence 0.5 on a pose that moved away.
    LimitDistanceConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.influence = 0.5;
    State state;
    Pose first = rest;
    ASSERT_TRUE(c.Run(*s, first, 0, state, &error)) << error;
    EXPECT_NEAR(state.distance, d, kTol);
    Pose second = rest;
    const int x = s->translation_channel(kProp, 0);
    second.channels[x] += 3.0;
    second.UpdateWorld(*s);
    const Eigen::Vector3d own = second.world[kProp].translation();
    const Eigen::Vector3d w = own - center;
    const Eigen::Vector3d full = center + w * (d / w.norm());
    ASSERT_TRUE(c.Run(*s, second, 1, state, &error)) << error;
    EXPECT_LT((Fk(*s, second, kProp).translation() - 0.5 * (own + full)).norm(), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
