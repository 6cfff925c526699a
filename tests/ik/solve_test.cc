// ik::Solve and the stage jobs: frame and job validity, determinism and warm start, no
// allocation once prepared, several effectors on the humanoid.
#include "core/ik/solve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "arm_rig.h"
#include "core/pose.h"
#include "support/counting_new.h"

namespace rigel::ik {
namespace {

// ---- Validity matrix ----

TEST(Solve, InvalidInputs) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Pose pose(rig.skeleton());
  std::vector<Target> targets(1);
  SolveReport report;
  {  // Valid.
    Workspace ws;
    EXPECT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
  }
  {  // Wrong target count.
    Workspace ws;
    std::vector<Target> none;
    EXPECT_FALSE(Solve(rig, none, pose, ws, &report));
    EXPECT_EQ(report.status, Status::kInvalidInput);
    EXPECT_NE(report.message.find("expected 1"), std::string::npos) << report.message;
  }
  {  // Non-finite target.
    Workspace ws;
    std::vector<Target> bad(1);
    bad[0].position.x() = NAN;
    const std::vector<double> before = pose.channels;
    EXPECT_FALSE(Solve(rig, bad, pose, ws, &report));
    EXPECT_EQ(pose.channels, before);
  }
  {  // Pose of another skeleton.
    Workspace ws;
    Pose other;
    EXPECT_FALSE(Solve(rig, targets, other, ws, &report));
  }
  {  // Non-finite channel.
    Workspace ws;
    Pose p = pose;
    p.channels[1] = INFINITY;
    EXPECT_FALSE(Solve(rig, targets, p, ws, &report));
  }
  {  // Job-level validation.
    Workspace ws;
    IterativeJob job;
    EXPECT_FALSE(job.Validate());
    EXPECT_FALSE(job.Run());
    job.rig = &rig;
    job.pose = &pose;
    job.workspace = &ws;
    job.targets = targets;
    std::string error;
    EXPECT_FALSE(job.Validate(&error));  // Workspace not prepared.
    ASSERT_TRUE(ws.Prepare(rig));
    EXPECT_TRUE(job.Validate(&error)) << error;
    EXPECT_TRUE(job.Run());
    job.stage = 1;
    EXPECT_FALSE(job.Validate());
  }
}

// ---- Determinism, warm start, allocation ----

TEST(Determinism, BitIdenticalAndWarmStartHelps) {
  Rig rig = ArmRig(TaskType::kPose, Method::kDlsAdaptive);
  std::mt19937_64 rng(12);
  std::vector<double> q = RandomInside(rig, rng);
  std::vector<Pose> runs;
  for (int run = 0; run < 2; ++run) {
    Pose pose(rig.skeleton());
    Workspace ws;
    SolveReport report;
    std::vector<double> qf = q;
    for (int f = 0; f < 50; ++f) {
      for (double& v : qf) v += 0.002;
      std::vector<Target> targets = {FrameTarget(rig.skeleton(), qf, 2, kTip)};
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    }
    runs.push_back(pose);
  }
  for (int c = 0; c < 7; ++c) {
    EXPECT_EQ(std::memcmp(&runs[0].channels[c], &runs[1].channels[c], sizeof(double)), 0);
  }
  // Warm start: a small move from a solved pose needs few iterations.
  Pose pose = runs[0];
  std::vector<double> qf = q;
  for (double& v : qf) v += 0.002 * 51;
  std::vector<Target> targets = {FrameTarget(rig.skeleton(), qf, 2, kTip)};
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(report.status, Status::kConverged);
  EXPECT_LE(report.iterations, 6);
}

// Single priority level (with the preferred-angle bias).
// A workspace reused frame after frame skips the first forward kinematics when the pose's
// channels are exactly those of its last solve (warm start). The answers must not depend on it:
// the same frames solved with a fresh workspace each time (no frames to reuse) give the same
// bits, also when the pose is nudged by one ulp between frames, and on the multi-effector path.
TEST(Determinism, ReusedWorkspaceMatchesAFreshOne) {
  for (const bool multi : {false, true}) {
    Rig rig = ArmRig(TaskType::kPose, Method::kDlsAdaptive);
    if (multi) {
      Task elbow;
      elbow.type = TaskType::kPosition;
      elbow.joint = 1;
      elbow.weight = 0.5;
      rig.AddTask(elbow);
    }
    std::mt19937_64 rng(31);
    const std::vector<double> q = RandomInside(rig, rng);
    Pose reused(rig.skeleton()), fresh(rig.skeleton());
    Workspace ws;
    SolveReport r1, r2;
    std::vector<double> qf = q;
    for (int f = 0; f < 60; ++f) {
      for (double& v : qf) v += 0.003;
      std::vector<Target> targets = {FrameTarget(rig.skeleton(), qf, 2, kTip)};
      if (multi) targets.push_back(FrameTarget(rig.skeleton(), qf, 1, Eigen::Vector3d::Zero()));
      if (f % 7 == 3) {
        // Nudge one stage channel by an ulp: the reused frames no longer apply.
        reused.channels[f % 7] = std::nextafter(reused.channels[f % 7], 10.0);
        fresh.channels = reused.channels;
      }
      Workspace ws_fresh;
      ASSERT_TRUE(Solve(rig, targets, reused, ws, &r1));
      ASSERT_TRUE(Solve(rig, targets, fresh, ws_fresh, &r2));
      ASSERT_EQ(r1.iterations, r2.iterations) << "frame " << f;
      for (int c = 0; c < 7; ++c) {
        ASSERT_EQ(std::memcmp(&reused.channels[c], &fresh.channels[c], sizeof(double)), 0)
            << "frame " << f << " channel " << c;
      }
      for (int j = 0; j < rig.skeleton().num_joints(); ++j) {
        ASSERT_TRUE(reused.world[j].isApprox(fresh.world[j], 0.0)) << "frame " << f;
      }
    }
  }
}

TEST(Allocation, NoneOncePreparedOneLevel) {
  for (const Method m : {Method::kTranspose, Method::kPseudoInverse, Method::kSvd, Method::kQr,
                         Method::kDls, Method::kDlsAdaptive, Method::kCcd, Method::kFabrik}) {
    Rig rig = ArmRig(TaskType::kPose, m);
    Pose pose(rig.skeleton());
    std::vector<Target> targets(1);
    targets[0].position = Eigen::Vector3d(0.2, 0.3, 0.1);
    for (int c = 0; c < 7; ++c) rig.SetPreferred(c, 0.1, 0.01);
    Workspace ws;
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    const long before = rigel::testing::AllocationCount();
    targets[0].position = Eigen::Vector3d(0.1, 0.4, 0.0);
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    EXPECT_EQ(rigel::testing::AllocationCount() - before, 0) << MethodName(m);
  }
}

// KNOWN FAILURE (issue 4 note): the multi-level path still allocates once per solve for some
// methods. Disabled until fixed; see /work/notes/issue-4.md.
TEST(Allocation, NoneOncePreparedTwoLevels) {
  for (const Method m : {Method::kTranspose, Method::kPseudoInverse, Method::kSvd, Method::kQr,
                         Method::kDls, Method::kDlsAdaptive, Method::kCcd}) {
    Rig rig = ArmRig(TaskType::kPose, m);
    Task second;
    second.type = TaskType::kAim;
    second.joint = 1;
    second.priority = 1;
    rig.AddTask(second);
    Pose pose(rig.skeleton());
    std::vector<Target> targets(2);
    targets[0].position = Eigen::Vector3d(0.2, 0.3, 0.1);
    targets[1].position = Eigen::Vector3d(1, 1, 1);
    for (int c = 0; c < 7; ++c) rig.SetPreferred(c, 0.1, 0.01);
    Workspace ws;
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));  // Prepares, grows the report.
    const long before = rigel::testing::AllocationCount();
    targets[0].position = Eigen::Vector3d(0.1, 0.4, 0.0);
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    EXPECT_EQ(rigel::testing::AllocationCount() - before, 0) << MethodName(m);
  }
}

// ---- Several effectors (block-sparse normal equations, chord steps) ----

TEST(MultiEffector, HumanoidFourPoseTasksWarmStart) {
  const rigel::testing::Humanoid h = rigel::testing::MakeHumanoid();
  const Skeleton& s = *h.skeleton;
  Rig rig = rigel::testing::HandsAndFeetRig(h);
  rig.stages.push_back(Stage{});
  const int nc = s.num_channels();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> mid(nc), amp(nc), phase(nc);
  for (int c = 0; c < nc; ++c) {
    mid[c] = 0.5 * (std::max(h.lo[c], -1.0) + std::min(h.hi[c], 1.0));
    amp[c] = 0.3 * u(rng);
    phase[c] = 6.28 * u(rng);
  }
  std::vector<std::vector<double>> runs;
  for (int run = 0; run < 2; ++run) {
    Pose pose(s);
    Workspace ws;
    SolveReport report;
    std::vector<double> q(nc);
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    std::vector<Target> targets(4);
    long allocations = 0;
    for (int f = 0; f < 120; ++f) {
      for (int c = 0; c < nc; ++c) q[c] = mid[c] + amp[c] * std::sin(0.02 * f + phase[c]);
      ForwardKinematics(s, q, world);
      for (int k = 0; k < 4; ++k) {
        targets[k].position = world[rig.tasks[k].joint].translation();
        targets[k].orientation = Eigen::Quaterniond(world[rig.tasks[k].joint].linear());
      }
      const long before = rigel::testing::AllocationCount();
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      if (f > 0) allocations += rigel::testing::AllocationCount() - before;
      EXPECT_EQ(report.status, Status::kConverged) << f;
      for (int k = 0; k < 4; ++k) EXPECT_LE(report.position_error[k], 1e-6) << f;
      for (int c = 0; c < nc; ++c) {
        ASSERT_GE(pose.channels[c], rig.min[c]);
        ASSERT_LE(pose.channels[c], rig.max[c]);
      }
      // pose.world matches forward kinematics of the answer.
      std::vector<Eigen::Isometry3d> check(s.num_joints());
      ForwardKinematics(s, pose.channels, check);
      for (int j = 0; j < s.num_joints(); ++j) {
        EXPECT_LE((check[j].matrix() - pose.world[j].matrix()).cwiseAbs().maxCoeff(), 1e-12);
      }
    }
    EXPECT_EQ(allocations, 0);
    runs.push_back(pose.channels);
  }
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(double)), 0);
}
}  // namespace
}  // namespace rigel::ik
