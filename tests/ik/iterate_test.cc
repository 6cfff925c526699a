// The general iteration: the null-space control term, limits at every iteration, locked and
// relaxed channels, strength, the task types, priorities, unreachable targets, restarts, success
// rates on random reachable targets.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "arm_rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

#ifndef PRIORITY_METHOD
#define PRIORITY_METHOD Method::kSvd
#endif

namespace rigel::ik {
namespace iterate_test {
namespace {

using C = ChannelType;

// ---- Null-space control term ----

TEST(NullSpace, LeavesTheTaskAloneWhileJointsMoveToPreferred) {
  // Redundant planar chain (4 hinges, 2 constrained axes): once the goal is reached, only the
  // null-space term acts.
  const auto skeleton =
      rigel::testing::Chain({{C::kZrotation}, {C::kZrotation}, {C::kZrotation}, {C::kZrotation}},
                            {Eigen::Vector3d::Zero(), Eigen::Vector3d(1, 0, 0),
                             Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0)});
  Rig rig(skeleton);
  Task t;
  t.joint = 3;
  t.offset = Eigen::Vector3d(1, 0, 0);
  t.position_axes = 0b011;
  rig.AddTask(t);
  Stage stage;
  stage.method = Method::kPseudoInverse;
  stage.settings.max_iterations = 1;
  stage.settings.position_tolerance = 0;  // Keep iterating: each call is one step.
  stage.settings.max_step = 0;
  rig.stages.push_back(stage);
  Pose pose(*skeleton);
  pose.channels = {0.3, 0.4, 0.5, 0.6};
  pose.UpdateWorld(*skeleton);
  std::vector<Target> targets(1);
  targets[0].position = pose.world[3] * t.offset;  // Already reached.
  const std::vector<double> preferred = {0.0, 0.9, 0.0, 0.9};
  for (int c = 0; c < 4; ++c) rig.SetPreferred(c, preferred[c], 0.05);
  auto h = [&] {
    double sum = 0;
    for (int c = 0; c < 4; ++c) sum += 0.05 * std::pow(pose.channels[c] - preferred[c], 2);
    return sum;
  };
  Workspace ws;
  SolveReport report;
  double h_prev = h();
  const double h_start = h_prev;
  for (int step = 0; step < 50; ++step) {
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    // Task error unchanged to first order: the finite bias step drifts by its square (~1e-3),
    // which the next step takes back.
    EXPECT_LE(report.position_error[0], 1e-3) << step;
    const double h_now = h();
    EXPECT_LE(h_now, h_prev + 1e-12) << step;
    h_prev = h_now;
  }
  // H falls towards its minimum on the task's solution manifold (not zero: 2-D null space).
  EXPECT_LT(h_prev, 0.6 * h_start);
  // With the task re-enforced, the pose ends on the goal and nearer the preferred angles.
  rig.stages[0].settings.max_iterations = 100;
  rig.stages[0].settings.position_tolerance = 1e-10;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_LE(report.position_error[0], 1e-10);
}

TEST(NullSpace, StepIsInTheJacobianNullSpace) {
  // One exact pseudo-inverse step towards a nearby goal, with and without the bias: the bias
  // part lies in J's null space, so the two effector positions differ only to second order in
  // the bias step while the joints differ to first order.
  Rig rig = ArmRig(TaskType::kPosition, Method::kSvd);
  Unlimit(rig);
  rig.stages[0].settings.max_iterations = 1;
  rig.stages[0].settings.max_step = 0;
  Pose start(rig.skeleton());
  start.channels = {0.2, 0.3, -0.1, 1.0, 0.2, 0.1, -0.2};
  start.UpdateWorld(rig.skeleton());
  std::vector<Target> targets(1);
  targets[0].position = start.world[2] * kTip + Eigen::Vector3d(1e-3, -2e-3, 1e-3);
  Pose plain = start;
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, plain, ws, &report));
  for (const double gain : {1e-2, 1e-3}) {
    for (int c = 0; c < 7; ++c) rig.SetPreferred(c, 0.0, gain);
    Pose biased = start;
    ASSERT_TRUE(Solve(rig, targets, biased, ws, &report));
    double moved = 0;
    for (int c = 0; c < 7; ++c) {
      moved = std::max(moved, std::abs(biased.channels[c] - plain.channels[c]));
    }
    EXPECT_GT(moved, 0.1 * gain);
    const double apart = (biased.world[2] * kTip - plain.world[2] * kTip).norm();
    EXPECT_LE(apart, 2 * moved * moved) << gain;
  }
}

// ---- Limits inside the iteration ----

TEST(Limits, NeverViolatedAtAnyIteration) {
  // Solving with max_iterations = k gives the k-th iterate (deterministic), so every iterate of
  // every method is checked.
  std::mt19937_64 rng(5);
  for (const Method m : {Method::kTranspose, Method::kPseudoInverse, Method::kSvd, Method::kQr,
                         Method::kDls, Method::kDlsAdaptive, Method::kCcd}) {
    Rig rig = ArmRig(TaskType::kPosition, m);
    for (int c = 0; c < 7; ++c) rig.SetLimits(c, -0.4, 0.4);  // Tight: targets often outside.
    rig.SetLimits(3, 0.0, 0.5);
    std::uniform_real_distribution<double> u(-0.6, 0.6);
    int on_limit_reports = 0;
    for (int trial = 0; trial < 10; ++trial) {
      std::vector<Target> targets(1);
      targets[0].position = Eigen::Vector3d(0.3 + u(rng), u(rng), u(rng));
      for (int k = 1; k <= 30; ++k) {
        rig.stages[0].settings.max_iterations = k;
        Pose pose(rig.skeleton());
        Workspace ws;
        SolveReport report;
        ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
        for (int c = 0; c < 7; ++c) {
          EXPECT_GE(pose.channels[c], rig.min[c]) << MethodName(m) << " it " << k;
          EXPECT_LE(pose.channels[c], rig.max[c]) << MethodName(m) << " it " << k;
          EXPECT_TRUE(std::isfinite(pose.channels[c]));
        }
        on_limit_reports += !report.channels_on_limit.empty();
      }
    }
    EXPECT_GT(on_limit_reports, 0) << MethodName(m);
  }
}

TEST(Limits, ReachesTargetsThatNeedAChannelOnItsLimit) {
  // The active set lets the free channels finish the job when one is pinned (a clamp after the
  // step would stall instead).
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  for (int c = 4; c < 7; ++c) rig.Lock(c);
  rig.SetLimits(3, 0.0, 0.6);
  std::vector<double> q = {0.3, 0.2, 0.0, 0.6, 0, 0, 0};  // Elbow on its max.
  const Target t = FrameTarget(rig.skeleton(), q, 2, kTip);
  Pose pose(rig.skeleton());
  pose.channels = {-0.3, 0.0, 0.2, 0.1, 0, 0, 0};
  std::vector<Target> targets = {t};
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(report.status, Status::kConverged);
  EXPECT_LE(report.position_error[0], 1e-6);
  EXPECT_LE(pose.channels[3], 0.6);
}

TEST(Channels, LockedAndRelaxedNeverMove) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  rig.Lock(1);
  rig.SetStrength(2, 0.0);  // Wrist relaxed: its three channels drop out.
  Pose pose(rig.skeleton());
  pose.channels = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.2};
  const std::vector<double> start = pose.channels;
  std::vector<Target> targets(1);
  targets[0].position = Eigen::Vector3d(0.2, 0.4, 0.1);
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(pose.channels[1], start[1]);
  for (int c = 4; c < 7; ++c) EXPECT_EQ(pose.channels[c], start[c]);
  EXPECT_NE(pose.channels[0], start[0]);
}

TEST(Channels, StrengthShiftsTheMotion) {
  // Two equivalent hinges: the stronger takes more of the step.
  const auto skeleton = rigel::testing::Chain({{C::kZrotation}, {C::kZrotation}},
                                              {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()});
  Rig rig(skeleton);
  Task t;
  t.type = TaskType::kOrientation;
  t.joint = 1;
  rig.AddTask(t);
  rig.SetStrength(0, 3.0);
  Pose pose(*skeleton);
  std::vector<Target> targets(1);
  targets[0].orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.5, Eigen::Vector3d::UnitZ()));
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(report.status, Status::kConverged);
  EXPECT_NEAR(pose.channels[0] + pose.channels[1], 0.5, 1e-6);
  EXPECT_NEAR(pose.channels[0] / pose.channels[1], 9.0, 1e-3);  // strength^2 ratio.
}

// ---- Tasks ----

TEST(Tasks, OrientationAimPoleAndOffsets) {
  std::mt19937_64 rng(9);
  Rig base = ArmRig(TaskType::kPose, Method::kDlsAdaptive);
  for (int trial = 0; trial < 20; ++trial) {
    const Target goal = ReachableTarget(base, rng);
    {  // 6D pose.
      Rig rig = base;
      Pose pose(rig.skeleton());
      std::vector<Target> targets = {goal};
      Workspace ws;
      SolveReport report;
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      if (report.status == Status::kConverged) {
        EXPECT_LE(report.position_error[0], 1e-6);
        EXPECT_LE(report.angle_error[0], 1e-6);
      }
    }
    {  // Aim: the wrist's +X axis looks at a point.
      Rig rig = base;
      rig.tasks[0].type = TaskType::kAim;
      rig.tasks[0].offset.setZero();
      rig.tasks[0].aim_axis = Eigen::Vector3d::UnitX();
      Unlimit(rig);
      Pose pose(rig.skeleton());
      std::vector<Target> targets = {goal};
      targets[0].position = Eigen::Vector3d(1.0, 0.5, -0.3) + goal.position;
      Workspace ws;
      SolveReport report;
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      EXPECT_EQ(report.status, Status::kConverged);
      EXPECT_LE(report.angle_error[0], 1e-6);
      const Eigen::Vector3d axis = pose.world[2].linear() * Eigen::Vector3d::UnitX();
      const Eigen::Vector3d to = (targets[0].position - pose.world[2].translation()).normalized();
      EXPECT_LE((axis - to).norm(), 1e-5);
    }
  }
}

// The reported angle error is the exact angle between the effector's and the target's rotations,
// from a millionth of a degree to nearly a half turn: across the near-convergence series of the
// rotation error and its atan2 branch, on the serial path and the general one.
TEST(Tasks, AngleErrorIsTheExactAngle) {
  for (const bool serial : {true, false}) {
    Rig rig = ArmRig(TaskType::kPose, Method::kDlsAdaptive);
    rig.stages[0].settings.position_tolerance = 100.0;  // Converged at once: nothing moves.
    rig.stages[0].settings.angle_tolerance = 10.0;
    Workspace ws;
    ws.SetFastPaths(serial);
    SolveReport report;
    const Pose pose0(rig.skeleton());
    const Eigen::Matrix3d r_e = pose0.world[2].linear();
    const Eigen::Vector3d axis = Eigen::Vector3d(0.3, -0.5, 0.8).normalized();
    for (const double angle : {1e-8, 1e-5, 0.0099, 0.0101, 0.3, 2.0, 3.1, kPi - 1e-7}) {
      std::vector<Target> targets(1);
      targets[0].position = pose0.world[2] * kTip;
      targets[0].orientation = Eigen::Quaterniond(Eigen::AngleAxisd(angle, axis) * r_e);
      Pose pose = pose0;
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      EXPECT_EQ(report.iterations, 0);
      EXPECT_NEAR(report.angle_error[0], angle, 4e-16 * angle + 1e-15)
          << "angle " << angle << (serial ? " (serial)" : " (general)");
    }
  }
}

TEST(Tasks, PoleTurnsTheElbowPlane) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  for (int c = 4; c < 7; ++c) rig.Lock(c);
  rig.AddTask(LimbPoleTask());
  Pose pose(rig.skeleton());
  pose.channels[3] = 1.0;
  std::vector<Target> targets(2);
  targets[0].position = Eigen::Vector3d(0.4, 0.1, 0.0);
  targets[1].position = Eigen::Vector3d(0.2, 0.0, 0.5);  // Elbow up towards +Z.
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_EQ(report.status, Status::kConverged) << report.message;
  EXPECT_LE(report.angle_error[1], 1e-6);
  EXPECT_GT(pose.world[1].translation().z(), 0.05);
}

// KNOWN FAILURE (issue 4 note): the higher level stalls at ~1e-4 instead of 1e-6 while a
// conflicting lower level pulls; disabled until the stall rule handles priorities.
TEST(Tasks, PrioritiesKeepTheHigherLevelExact) {
  // Level 0: reach a point. Level 1: an orientation that conflicts. The point is kept exactly.
  Rig rig = ArmRig(TaskType::kPosition, PRIORITY_METHOD);
  rig.stages[0].settings.lambda = 1e-4;
  rig.stages[0].settings.max_iterations = 300;
  Unlimit(rig);
  Task ori;
  ori.type = TaskType::kOrientation;
  ori.joint = 1;  // The forearm's orientation: fights the position.
  ori.priority = 1;
  rig.AddTask(ori);
  Pose pose(rig.skeleton());
  pose.channels[3] = 0.5;
  std::vector<Target> targets(2);
  targets[0].position = Eigen::Vector3d(0.3, 0.3, 0.1);
  targets[1].orientation = Eigen::Quaterniond(Eigen::AngleAxisd(-2.0, Eigen::Vector3d::UnitZ()));
  Workspace ws;
  SolveReport report;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_LE(report.position_error[0], 1e-6);
  EXPECT_GT(report.angle_error[1], 1e-3);  // The lower level gives way.
  // Swapped priorities: now the orientation wins.
  rig.tasks[0].priority = 2;
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_LE(report.angle_error[1], 1e-6);
}

// ---- Unreachable, singular, never NaN ----

TEST(Robustness, UnreachableTargetsAreApproachedWithoutNaN) {
  for (const Method m : {Method::kTranspose, Method::kPseudoInverse, Method::kSvd, Method::kQr,
                         Method::kDls, Method::kDlsAdaptive, Method::kCcd}) {
    Rig rig = ArmRig(TaskType::kPose, m);
    Unlimit(rig);
    Pose pose(rig.skeleton());  // Stretched straight: singular.
    std::vector<Target> targets(1);
    targets[0].position = Eigen::Vector3d(3, 0, 0);  // Straight ahead, out of reach.
    Workspace ws;
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    for (const double v : pose.channels) EXPECT_TRUE(std::isfinite(v)) << MethodName(m);
    EXPECT_NE(report.status, Status::kConverged);
    EXPECT_NEAR(report.position_error[0], 3 - 0.63, 1e-6) << MethodName(m);
    // Out of reach sideways: DLS ends pointing at it, without undulating.
    targets[0].position = Eigen::Vector3d(0, 2, 0);
    targets[0].orientation =
        Eigen::Quaterniond(Eigen::AngleAxisd(kPi / 2, Eigen::Vector3d::UnitZ()));
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    for (const double v : pose.channels) EXPECT_TRUE(std::isfinite(v)) << MethodName(m);
    if (m == Method::kDlsAdaptive) {
      EXPECT_EQ(report.status, Status::kUnreachable) << MethodName(m);
      EXPECT_NEAR(report.position_error[0], 2 - 0.63, 1e-4) << MethodName(m);
    }
    if (m != Method::kCcd) {
      EXPECT_NE(report.status, Status::kConverged);
    }
  }
}

TEST(Robustness, DlsApproachesAnUnreachableGoalMonotonically) {
  // Seed 002: "bizarre undulations" without damping. With DLS, the distance to an unreachable goal
  // never grows from one iterate to the next.
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Unlimit(rig);
  std::vector<Target> targets(1);
  targets[0].position = Eigen::Vector3d(-0.5, 0.9, 0.2);
  double previous = INFINITY;
  for (int k = 1; k <= 40; ++k) {
    rig.stages[0].settings.max_iterations = k;
    Pose pose(rig.skeleton());
    pose.channels[3] = 0.3;
    Workspace ws;
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    EXPECT_LE(report.position_error[0], previous + 1e-12) << k;
    previous = report.position_error[0];
  }
}

// ---- Restarts ----

TEST(Restarts, ReportedDeterministicAndInsideLimits) {
  Rig rig = ArmRig(TaskType::kPose, Method::kDlsAdaptive);
  std::mt19937_64 rng(21);
  std::vector<Target> targets;
  Workspace ws;
  SolveReport report;
  bool found = false;
  for (int i = 0; i < 200 && !found; ++i) {
    targets = {ReachableTarget(rig, rng)};
    Pose pose = MidPose(rig);
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    found = report.status != Status::kConverged;
    EXPECT_EQ(report.restarts, 0);
  }
  ASSERT_TRUE(found) << "no target that fails without restarts";
  rig.stages[0].settings.restarts = 10;
  std::vector<Pose> runs;
  for (int run = 0; run < 2; ++run) {
    Pose pose = MidPose(rig);
    Workspace fresh;
    ASSERT_TRUE(Solve(rig, targets, pose, fresh, &report));
    EXPECT_EQ(report.status, Status::kConverged) << report.message;
    EXPECT_GE(report.restarts, 1);
    EXPECT_LE(report.restarts, 10);
    for (int c = 0; c < 7; ++c) {
      EXPECT_GE(pose.channels[c], rig.min[c]);
      EXPECT_LE(pose.channels[c], rig.max[c]);
    }
    runs.push_back(pose);
  }
  for (int c = 0; c < 7; ++c) {
    EXPECT_EQ(std::memcmp(&runs[0].channels[c], &runs[1].channels[c], sizeof(double)), 0);
  }
}

TEST(SuccessRate, RandomReachableTargetsOnTheArm) {
  for (const TaskType type : {TaskType::kPosition, TaskType::kPose}) {
    Rig rig = ArmRig(type, Method::kDlsAdaptive);
    rig.stages[0].settings.restarts = 10;
    std::mt19937_64 rng(21);
    Workspace ws;
    SolveReport report;
    int ok = 0;
    const int n = 500;
    for (int i = 0; i < n; ++i) {
      const std::vector<Target> targets = {ReachableTarget(rig, rng)};
      Pose pose = MidPose(rig);
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      bool inside = true;
      for (int c = 0; c < 7; ++c)
        inside = inside && pose.channels[c] >= rig.min[c] && pose.channels[c] <= rig.max[c];
      ok += report.status == Status::kConverged && inside;
    }
    const double rate = 100.0 * ok / n;
    std::printf("[ success ] arm %s: %.1f %% of %d random reachable targets\n",
                std::string(TaskTypeName(type)).c_str(), rate, n);
    EXPECT_GE(rate, 99.0);
  }
}

}  // namespace
}  // namespace iterate_test
}  // namespace rigel::ik
