// The kTwoBone stage with a pose task (the end joint takes the target orientation), a position
// task weighted off for a frame, the per-limb `reached` report, and BakeJob::on_frame_done (the
// hook the retarget clean-up counts unreached limbs with). Positions and rotations are checked
// by forward kinematics computed here, not read from the solver's report.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "arm_rig.h"
#include "core/clip.h"
#include "core/ik/bake.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {
namespace two_bone_pose_test {
namespace {

using rigel::testing::Arm;

// The arm with a two-bone stage: task 0 (`type`) on the wrist with the tip offset, task 1 a pole
// on the elbow plane.
Rig TwoBoneArm(TaskType type) {
  Rig rig(Arm());
  rig.AddTask(EndTask(type, kTip));
  rig.AddTask(LimbPoleTask());
  Stage stage;
  stage.method = Method::kTwoBone;
  rig.stages.push_back(stage);
  return rig;
}

double AngleBetween(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

TEST(TwoBonePose, EndJointTakesTheTargetOrientationAndTheTipReachesThePosition) {
  const Rig rig = TwoBoneArm(TaskType::kPose);
  const Skeleton& s = rig.skeleton();
  Rig limits(rig.skeleton_ptr());
  SetArmLimits(limits);  // the poses the targets come from lie inside the arm's limits
  std::mt19937_64 rng(11);
  Workspace workspace;
  SolveReport report;
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // A reachable frame: the target is the tip frame of a random pose, the pole its elbow.
    const std::vector<double> q = RandomInside(limits, rng);
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    ForwardKinematics(s, q, world);
    std::vector<Target> targets(2);
    targets[0] = FrameTarget(s, q, 2, kTip);
    targets[1].position =
        world[1].translation() +
        0.2 * (world[1].translation() - 0.5 * (world[0].translation() + world[2].translation()));
    Pose pose(s);
    pose.channels = RandomInside(limits, rng);
    pose.UpdateWorld(s);
    ASSERT_TRUE(Solve(rig, targets, pose, workspace, &report)) << report.message;
    // Independent FK of the solved channels.
    ForwardKinematics(s, pose.channels, world);
    const Eigen::Vector3d tip = world[2] * kTip;
    EXPECT_LT((tip - targets[0].position).norm(), 1e-9) << "trial " << trial;
    EXPECT_LT(AngleBetween(world[2].linear(), targets[0].orientation.toRotationMatrix()), 1e-9)
        << "trial " << trial;
    EXPECT_EQ(report.status, Status::kConverged);
    ASSERT_EQ(report.limbs.size(), 1u);
    EXPECT_TRUE(report.limbs[0].reached);
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

TEST(TwoBonePose, PositionTaskLeavesTheEndJointAlone) {
  // Without an orientation the wrist's channels are not written (the earlier behaviour).
  const Rig rig = TwoBoneArm(TaskType::kPosition);
  const Skeleton& s = rig.skeleton();
  Pose pose(s);
  for (double& v : pose.channels) v = 0.3;
  pose.UpdateWorld(s);
  const std::vector<double> before = pose.channels;
  std::vector<Target> targets(2);
  targets[0].position = Eigen::Vector3d(0.25, 0.2, 0.1);
  targets[1].position = Eigen::Vector3d(0.2, 0.3, -0.2);
  Workspace workspace;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, workspace, &report)) << report.message;
  for (const int c : s.rotation_channels(2)) EXPECT_EQ(pose.channels[c], before[c]);
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, pose.channels, world);
  EXPECT_LT((world[2] * kTip - targets[0].position).norm(), 1e-9);
}

TEST(TwoBonePose, WeightedOffLimbDoesNotMove) {
  const Rig rig = TwoBoneArm(TaskType::kPose);
  const Skeleton& s = rig.skeleton();
  Pose pose(s);
  for (double& v : pose.channels) v = -0.2;
  pose.UpdateWorld(s);
  const std::vector<double> before = pose.channels;
  std::vector<Target> targets(2);
  targets[0].position = Eigen::Vector3d(0.1, 0.4, 0.0);
  targets[0].weight = 0.0;
  targets[1].position = Eigen::Vector3d(0.2, 0.3, -0.2);
  Workspace workspace;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, workspace, &report)) << report.message;
  EXPECT_EQ(pose.channels, before);
  ASSERT_EQ(report.limbs.size(), 1u);
  EXPECT_TRUE(report.limbs[0].reached);
  EXPECT_EQ(report.limbs[0].jump, 0.0);
}

TEST(TwoBonePose, OutOfReachIsReportedPerLimb) {
  const Rig rig = TwoBoneArm(TaskType::kPose);
  const Skeleton& s = rig.skeleton();
  Pose pose(s);
  std::vector<Target> targets(2);
  targets[0].position = Eigen::Vector3d(2.0, 0.5, 0.0);  // the arm is 0.63 long
  targets[1].position = Eigen::Vector3d(0.2, 0.3, -0.2);
  Workspace workspace;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, workspace, &report)) << report.message;
  EXPECT_EQ(report.status, Status::kUnreachable);
  ASSERT_EQ(report.limbs.size(), 1u);
  EXPECT_FALSE(report.limbs[0].reached);
  // Even out of reach, the hand keeps the orientation asked of it.
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, pose.channels, world);
  EXPECT_LT(AngleBetween(world[2].linear(), targets[0].orientation.toRotationMatrix()), 1e-9);
}

TEST(TwoBonePose, EndJointWithoutRotationChannelsIsAPlanError) {
  // A pose task on a joint that cannot rotate: the plan names the stage.
  Rig rig(rigel::testing::Chain(
      {rigel::testing::kZXY, {ChannelType::kYrotation}, {}},
      {Eigen::Vector3d::Zero(), Eigen::Vector3d(0.3, 0, 0), Eigen::Vector3d(0.25, 0, 0)}));
  rig.AddTask(EndTask(TaskType::kPose, Eigen::Vector3d::Zero()));
  Stage stage;
  stage.method = Method::kTwoBone;
  rig.stages.push_back(stage);
  Workspace workspace;
  std::string error;
  EXPECT_FALSE(workspace.Prepare(rig, &error));
  EXPECT_NE(error.find("no rotation channels"), std::string::npos) << error;
}

TEST(BakeFrameDone, CalledOncePerFrameWithTheBakedRow) {
  const Rig rig = TwoBoneArm(TaskType::kPosition);
  const Skeleton& s = rig.skeleton();
  const int frames = 12;
  Clip clip(frames, s.num_channels(), 1.0 / 30);
  for (int f = 0; f < frames; ++f) {
    for (int c = 0; c < s.num_channels(); ++c) clip.frame(f)[c] = 0.01 * (f + c);
  }
  std::vector<Target> targets(2);
  targets[1].position = Eigen::Vector3d(0.2, 0.3, -0.2);
  Clip out;
  Workspace workspace;
  BakeJob job;
  job.rig = &rig;
  job.targets = &targets;
  job.clip = &clip;
  job.output = &out;
  job.workspace = &workspace;
  job.on_frame = [&](int f, Pose&, std::string*) {
    // Odd frames are skipped; even frames reach for a point that moves along x, out of reach
    // from frame 8 on.
    targets[0].position = Eigen::Vector3d(0.3 + 0.05 * f, 0.2, 0.0);
    return f % 2 ? FrameAction::kSkip : FrameAction::kSolve;
  };
  std::vector<int> seen;
  int solved = 0, unreached = 0;
  job.on_frame_done = [&](int f, const Pose& pose, const SolveReport* report) {
    seen.push_back(f);
    EXPECT_EQ(report != nullptr, f % 2 == 0) << "frame " << f;
    // The pose is the row just written, with its world transforms up to date.
    for (int c = 0; c < s.num_channels(); ++c) EXPECT_EQ(pose.channels[c], out.frame(f)[c]);
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    ForwardKinematics(s, pose.channels, world);
    EXPECT_TRUE(world[2].isApprox(pose.world[2], 1e-12)) << "frame " << f;
    if (report) {
      ++solved;
      ASSERT_EQ(report->limbs.size(), 1u);
      // Reach measured here: the arm's length against the distance from the shoulder.
      const double reach = 0.3 + 0.25 + kTip.norm();
      const bool within = (targets[0].position - world[0].translation()).norm() < reach;
      EXPECT_EQ(report->limbs[0].reached, within) << "frame " << f;
      unreached += report->limbs[0].reached ? 0 : 1;
    }
  };
  BakeSummary summary;
  job.summary = &summary;
  ASSERT_TRUE(job.Run()) << job.error;
  ASSERT_EQ(static_cast<int>(seen.size()), frames);
  for (int f = 0; f < frames; ++f) EXPECT_EQ(seen[f], f);
  EXPECT_EQ(solved, summary.solved());
  EXPECT_EQ(summary.skipped, frames / 2);
  EXPECT_EQ(unreached, summary.unreachable);
  EXPECT_GT(unreached, 0);
}

}  // namespace
}  // namespace two_bone_pose_test
}  // namespace rigel::ik
