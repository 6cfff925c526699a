// The analytic two-bone job and the kTwoBone stage: job validity, agreement with the iterative
// solvers, the reach condition, unreachable reports.
#include "core/ik/two_bone.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "arm_rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {
namespace two_bone_test {
namespace {

using rigel::testing::Arm;

TEST(TwoBone, JobValidity) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Pose pose(rig.skeleton());
  {  // Two-bone job validity.
    EXPECT_FALSE(TwoBoneJob{}.Validate());
    TwoBoneJob job = LimbJob(rig.skeleton(), pose, kTip);
    EXPECT_TRUE(job.Validate());
    job.upper = 1;
    job.lower = 0;
    EXPECT_FALSE(job.Validate());
    job.upper = 0;
    job.lower = 1;
    job.target.x() = NAN;
    EXPECT_FALSE(job.Validate());
  }
}

// ---- Two-bone: analytic vs iterative ----

TEST(TwoBone, AnalyticAgreesWithIterative) {
  const auto skeleton = Arm();
  const Skeleton& s = *skeleton;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // A reachable target and a pole off the upper->target line.
    std::vector<double> q(7);
    for (double& v : q) v = u(rng);
    q[3] = 0.3 + std::abs(u(rng)) * 2.0;   // Bent elbow.
    for (int c = 4; c < 7; ++c) q[c] = 0;  // Wrist straight: the effector is on the forearm line.
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    ForwardKinematics(s, q, world);
    const Eigen::Vector3d target = world[2] * kTip;
    const Eigen::Vector3d pole =
        world[1].translation() + Eigen::Vector3d(u(rng), u(rng), u(rng)) * 0.2;

    Pose analytic(s);
    TwoBoneJob job = LimbJob(s, analytic, kTip);
    job.target = target;
    job.pole = pole;
    job.use_pole = true;
    bool reached = false;
    job.reached = &reached;
    ASSERT_TRUE(job.Run());
    EXPECT_TRUE(reached);
    analytic.UpdateWorld(s);
    EXPECT_LE((analytic.world[2] * kTip - target).norm(), 1e-9) << trial;

    // Iterative: position + pole, wrist locked, warm-started from the analytic bend.
    Rig rig(skeleton);
    for (int c = 4; c < 7; ++c) rig.Lock(c);
    rig.AddTask(EndTask(TaskType::kPosition, kTip));
    rig.AddTask(LimbPoleTask());
    rig.stages.push_back(Stage{});
    rig.stages[0].settings.max_iterations = 500;
    rig.stages[0].settings.position_tolerance = 1e-9;
    rig.stages[0].settings.angle_tolerance = 1e-9;
    // The weighted least-squares objective of position + pole has local minima (the pole
    // satisfied with the hand short of the target): deterministic restarts leave them.
    rig.stages[0].settings.restarts = 10;
    Pose iterative(s);
    iterative.channels[3] = analytic.channels[3] > 0 ? 0.5 : -0.5;
    std::vector<Target> targets(2);
    targets[0].position = target;
    targets[1].position = pole;
    Workspace ws;
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, iterative, ws, &report));
    if (report.status != Status::kConverged) {
      continue;  // A local minimum of the iterative solve (see docs/ik.md, pole rows).
    }
    ++compared;
    EXPECT_LE((iterative.world[2] * kTip - target).norm(), 1e-8);
    // Same elbow position (the chain's plane contains the pole in both).
    EXPECT_LE((iterative.world[1].translation() - analytic.world[1].translation()).norm(), 1e-6)
        << trial;
  }
  std::printf("[ two-bone ] iterative position+pole converged in %d of 200 trials; all agree\n",
              compared);
  EXPECT_GE(compared, 195);
}

TEST(TwoBone, ReachCondition) {
  const auto skeleton = Arm();
  const Skeleton& s = *skeleton;
  Pose pose(s);
  TwoBoneJob job = LimbJob(s, pose, kTip);
  bool reached = true;
  job.reached = &reached;
  job.target = Eigen::Vector3d(5, 1, 0);  // Beyond L1 + L2 = 0.63.
  ASSERT_TRUE(job.Run());
  EXPECT_FALSE(reached);
  pose.UpdateWorld(s);
  // Fully stretched towards the target.
  const Eigen::Vector3d e = pose.world[2] * kTip;
  EXPECT_NEAR(e.norm(), 0.63, 1e-9);
  EXPECT_LE((e.normalized() - job.target.normalized()).norm(), 1e-9);
  for (const double v : pose.channels) EXPECT_TRUE(std::isfinite(v));
  job.target = Eigen::Vector3d(0.01, 0, 0);  // Inside |L1 - L2| = 0.03 (folded).
  pose.UpdateWorld(s);
  ASSERT_TRUE(job.Run());
  EXPECT_FALSE(reached);
}

TEST(TwoBone, RigStageReportsUnreachable) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kTwoBone);
  Pose pose(rig.skeleton());
  std::vector<Target> targets(1);
  targets[0].position = Eigen::Vector3d(0.2, 0.3, 0.1);
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
  EXPECT_EQ(report.status, Status::kConverged);
  EXPECT_LE(report.position_error[0], 1e-9);
  targets[0].position = Eigen::Vector3d(2, 0, 0);
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(report.status, Status::kUnreachable);
}
}  // namespace
}  // namespace two_bone_test
}  // namespace rigel::ik
