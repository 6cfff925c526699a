// IK on a skeleton with scale channels: the solve works on the scaled bone lengths (a parent's
// uniform scale moves its children) and leaves the scale channels as they are.
#include <gtest/gtest.h>

#include "arm_rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"

namespace rigel::ik {
namespace scale_test {
namespace {

using C = ChannelType;

TEST(IkScale, SolvesOnScaledBoneLengthsAndKeepsScale) {
  RawSkeleton raw;
  RawSkeleton::Joint root, mid, tip;
  root.name = "root";
  root.channels = {C::kZrotation, C::kXrotation, C::kXscale, C::kYscale, C::kZscale};
  mid.name = "mid";
  mid.rest_translation = {0, 1, 0};
  mid.channels = {C::kZrotation, C::kXrotation};
  tip.name = "tip";
  tip.rest_translation = {0, 1, 0};
  tip.channels = {C::kZrotation};
  mid.children.push_back(tip);
  root.children.push_back(mid);
  raw.roots.push_back(root);
  std::string error;
  std::shared_ptr<const Skeleton> s = SkeletonBuilder().Build(raw, &error);
  ASSERT_TRUE(s) << error;
  for (const Method method : {Method::kDlsAdaptive, Method::kCcd}) {
    Rig rig(s);
    rig.AddTask(EndTask(TaskType::kPosition, Eigen::Vector3d::Zero()));
    AddStage(rig, method, 500);
    Pose pose(*s);
    pose.channels[2] = pose.channels[3] = pose.channels[4] = 1.0;  // root scale 2: bones 2 long
    pose.channels[0] = 0.1;
    pose.UpdateWorld(*s);
    // Reachable only with the scaled lengths: 3.2 from the root (unscaled reach is 2).
    const Eigen::Vector3d goal(1.6, 2.6, 0.8);
    std::vector<Target> targets(1);
    targets[0].position = goal;
    Workspace ws;
    SolveReport report;
    Solve(rig, targets, pose, ws, &report);
    std::vector<Eigen::Isometry3d> world(3);
    ForwardKinematics(*s, pose.channels, world);
    EXPECT_LT((world[2].translation() - goal).norm(), 1e-5)
        << MethodName(method) << ": " << report.message;
    EXPECT_EQ(pose.world[2].matrix(), world[2].matrix()) << "pose.world refreshed with scale";
    EXPECT_EQ(pose.channels[2], 1.0);
    EXPECT_EQ(pose.channels[3], 1.0);
    EXPECT_EQ(pose.channels[4], 1.0);
  }
}

}  // namespace
}  // namespace scale_test
}  // namespace rigel::ik
