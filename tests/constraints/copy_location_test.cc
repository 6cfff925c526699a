// CopyLocationConstraint: validity matrix, then results proven by FK.
#include "core/constraints/copy_location.h"

#include <gtest/gtest.h>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace {

using constraints::CopyLocationConstraint;
using constraints::Mix;
using constraints::State;

TEST(CopyLocationConstraint, Validity) {
  const auto s = Tree();
  std::string error;
  EXPECT_FALSE(CopyLocationConstraint().Validate(*s, &error));
  CopyLocationConstraint c;
  c.joint = kProp;
  c.target = kHand;
  EXPECT_TRUE(c.Validate(*s, &error)) << error;
  c.axes = 0;
  EXPECT_FALSE(c.Validate(*s, &error));
  c.axes = 0b010;
  c.joint = kOther;
  EXPECT_FALSE(c.Validate(*s, &error));
  EXPECT_NE(error.find("Yposition"), std::string::npos) << error;
}

TEST(CopyLocationConstraint, ReplaceAddMasksInfluence) {
  const auto s = Tree();
  std::string error;
  State state;
  struct Case {
    Mix mix;
    std::uint8_t axes;
    double influence;
  };
  for (const Case& k : {Case{Mix::kReplace, 0b111, 1.0}, Case{Mix::kReplace, 0b110, 1.0},
                        Case{Mix::kAdd, 0b111, 1.0}, Case{Mix::kAdd, 0b011, 1.0},
                        Case{Mix::kReplace, 0b111, 0.5}, Case{Mix::kAdd, 0b101, 0.5}}) {
    CopyLocationConstraint c;
    c.joint = kProp;
    c.target = kHand;
    c.mix = k.mix;
    c.axes = k.axes;
    c.influence = k.influence;
    Pose pose = Posed(*s, 1.3);
    const Eigen::Vector3d own = pose.world[kProp].translation();
    const Eigen::Vector3d goal = pose.world[kHand].translation();
    const Eigen::Matrix3d rotation = pose.world[kProp].linear();
    ASSERT_TRUE(c.Run(*s, pose, 0, state, &error)) << error;
    const Eigen::Isometry3d got = Fk(*s, pose, kProp);
    for (int a = 0; a < 3; ++a) {
      double expected = own[a];
      if ((k.axes >> a & 1) != 0) {
        const double full = k.mix == Mix::kAdd ? own[a] + goal[a] : goal[a];
        expected = own[a] + k.influence * (full - own[a]);
      }
      EXPECT_NEAR(got.translation()[a], expected, kTol) << "axis " << a;
    }
    EXPECT_LT(AngleBetween(got.linear(), rotation), kTol);
  }
}

}  // namespace
}  // namespace rigel::constraints_test
