// Cyclic coordinate descent stages (core/ik/ccd.cc): job validity, reaching position goals
// inside the limits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "arm_rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {
namespace ccd_test {
namespace {

TEST(Ccd, JobValidity) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Pose pose(rig.skeleton());
  std::vector<Target> targets(1);
  {  // CCD job on a stage that is not CCD.
    Workspace ws;
    ASSERT_TRUE(ws.Prepare(rig));
    CcdJob ccd;
    ccd.rig = &rig;
    ccd.pose = &pose;
    ccd.workspace = &ws;
    ccd.targets = targets;
    EXPECT_FALSE(ccd.Validate());  // Stage 0 is not CCD.
  }
}

// Reachable targets made by FK from random channels inside the limits: CCD (position goals
// only) converges on three quarters of them, never leaves the limits, and its reported error is the
// one FK measures.
TEST(Ccd, ReachesRandomTargetsInsideTheLimits) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kCcd);
  rig.stages[0].settings.max_iterations = 500;
  rig.stages[0].settings.position_tolerance = 1e-5;
  std::mt19937_64 rng(5);
  Workspace ws;
  int converged = 0;
  constexpr int kTrials = 100;
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Target> targets = {ReachableTarget(rig, rng)};
    Pose pose(rig.skeleton());
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    for (int c = 0; c < rig.skeleton().num_channels(); ++c) {
      EXPECT_GE(pose.channels[c], rig.min[c]) << trial;
      EXPECT_LE(pose.channels[c], rig.max[c]) << trial;
    }
    std::vector<Eigen::Isometry3d> world(rig.skeleton().num_joints());
    ForwardKinematics(rig.skeleton(), pose.channels, world);
    const double error = (world[2] * kTip - targets[0].position).norm();
    EXPECT_NEAR(report.position_error[0], error, 1e-12) << trial;
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-5) << trial;
      ++converged;
    }
  }
  // 76 of 100 at this seed when written (CCD stalls near the limits on the rest).
  EXPECT_GE(converged, 75) << converged << " of " << kTrials;
}

}  // namespace
}  // namespace ccd_test
}  // namespace rigel::ik
