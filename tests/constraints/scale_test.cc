// CopyScaleConstraint and LimitScaleConstraint: results proven by FK on a skeleton with scale
// channels (validity_test.cc holds their default rows).
#include <gtest/gtest.h>

#include "core/constraints/copy_scale.h"
#include "core/constraints/limit_scale.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"

namespace rigel {
namespace scale_test {
namespace {

using C = ChannelType;
using constraints::CopyScaleConstraint;
using constraints::LimitScaleConstraint;
using constraints::Mix;

// root -> arm (0, 1, 0) -> hand (0, 1, 0); root -> prop (1, 0, 0). arm and prop have scale
// channels; hand does not.
std::unique_ptr<Skeleton> Rig() {
  RawSkeleton raw;
  RawSkeleton::Joint root, arm, hand, prop;
  root.name = "root";
  root.channels = {C::kZrotation};
  arm.name = "arm";
  arm.rest_translation = {0, 1, 0};
  arm.channels = {C::kZrotation, C::kXscale, C::kYscale, C::kZscale};
  hand.name = "hand";
  hand.rest_translation = {0, 1, 0};
  hand.channels = {C::kZrotation};
  prop.name = "prop";
  prop.rest_translation = {1, 0, 0};
  prop.channels = {C::kXscale, C::kYscale, C::kZscale};
  arm.children.push_back(hand);
  root.children.push_back(arm);
  root.children.push_back(prop);
  raw.roots.push_back(root);
  std::string error;
  auto s = SkeletonBuilder().Build(raw, &error);
  EXPECT_TRUE(s) << error;
  return s;
}

Eigen::Vector3d WorldScale(const Pose& pose, int j) {
  return {pose.linear[j].col(0).norm(), pose.linear[j].col(1).norm(), pose.linear[j].col(2).norm()};
}

TEST(CopyScale, ReplaceAddAxesInfluence) {
  const auto s = Rig();
  const int arm = 1, hand = 2, prop = 3;
  Pose pose(*s);
  pose.channels[2] = 1.0;   // arm X scale 2
  pose.channels[3] = 0.5;   // arm Y scale 1.5
  pose.channels[6] = -0.5;  // prop X scale 0.5
  pose.UpdateWorld(*s);
  CopyScaleConstraint c;
  c.joint = prop;
  c.target = hand;
  std::string error;
  constraints::State state;
  Pose p = pose;
  ASSERT_TRUE(c.Run(*s, p, 0, state, &error)) << error;
  EXPECT_TRUE(WorldScale(p, prop).isApprox(Eigen::Vector3d(2, 1.5, 1), 1e-12));
  EXPECT_TRUE(WorldScale(p, prop).isApprox(WorldScale(pose, hand), 1e-12));
  // Add (multiply), x only, half influence.
  c.mix = Mix::kAdd;
  c.axes = 1;
  c.influence = 0.5;
  p = pose;
  ASSERT_TRUE(c.Run(*s, p, 0, state, &error)) << error;
  EXPECT_NEAR(LocalScale(*s, prop, p.channels).x(), 0.5 + 0.5 * (0.5 * 2 - 0.5), 1e-12);
  EXPECT_NEAR(LocalScale(*s, prop, p.channels).y(), 1, 1e-12);
  // A joint whose parent is scaled: what it inherits is divided out.
  CopyScaleConstraint onto_arm_child;
  onto_arm_child.joint = arm;
  onto_arm_child.target = prop;
  p = pose;
  ASSERT_TRUE(onto_arm_child.Run(*s, p, 0, state, &error)) << error;
  EXPECT_TRUE(WorldScale(p, arm).isApprox(Eigen::Vector3d(0.5, 1, 1), 1e-12));
  // Validity: the joint needs the scale channels of the copied axes.
  CopyScaleConstraint bad;
  bad.joint = hand;
  bad.target = prop;
  EXPECT_FALSE(bad.Validate(*s, &error));
  EXPECT_NE(error.find("copy_scale: joint 'hand' has no Xscale channel"), std::string::npos)
      << error;
}

TEST(LimitScale, ClampsInsideUntouchedInfluence) {
  const auto s = Rig();
  const int arm = 1;
  Pose pose(*s);
  pose.channels[2] = 1.0;  // arm X scale 2
  pose.channels[3] = 0.2;  // arm Y scale 1.2
  pose.UpdateWorld(*s);
  LimitScaleConstraint c;
  c.joint = arm;
  c.max = Eigen::Vector3d(1.5, 1.5, 1.5);
  std::string error;
  constraints::State state;
  Pose p = pose;
  ASSERT_TRUE(c.Run(*s, p, 0, state, &error)) << error;
  EXPECT_NEAR(LocalScale(*s, arm, p.channels).x(), 1.5, 1e-12);
  EXPECT_EQ(p.channels[3], 0.2);  // inside: bit for bit
  // The hand follows the clamped arm.
  EXPECT_NEAR((p.world[2].translation() - p.world[1].translation()).norm(), 1.2, 1e-12);
  c.influence = 0.5;
  p = pose;
  ASSERT_TRUE(c.Run(*s, p, 0, state, &error)) << error;
  EXPECT_NEAR(LocalScale(*s, arm, p.channels).x(), 1.75, 1e-12);
  LimitScaleConstraint bad = c;
  bad.min = Eigen::Vector3d(-1, 0.5, 0.5);
  EXPECT_FALSE(bad.Validate(*s, &error));
  EXPECT_NE(error.find("not positive"), std::string::npos) << error;
  bad = LimitScaleConstraint();
  bad.joint = 2;
  bad.max = Eigen::Vector3d(2, 2, 2);
  EXPECT_FALSE(bad.Validate(*s, &error));
  EXPECT_NE(error.find("has no Xscale channel"), std::string::npos) << error;
}

}  // namespace
}  // namespace scale_test
}  // namespace rigel
