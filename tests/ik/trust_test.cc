// Trusting the solve (issue 13): no iterative method oscillates on unreachable targets, poles keep
// the swivel continuous from frame to frame, and the per-frame record.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arm_rig.h"
#include "core/ik/frame_record.h"
#include "core/ik/solve.h"
#include "core/ik/two_bone.h"
#include "core/pose.h"

namespace rigel::ik {
namespace trust_test {
namespace {

using C = ChannelType;
using rigel::testing::Chain;
using rigel::testing::kZXY;

constexpr double kDeg = 180 / kPi;

// A leg: hip ZXY at the origin, knee hinge (X) 0.45 below, ankle 0.45 below the knee.
std::shared_ptr<const Skeleton> Leg() {
  return Chain({kZXY, {C::kXrotation}, {}}, {Eigen::Vector3d::Zero(), Eigen::Vector3d(0, -0.45, 0),
                                             Eigen::Vector3d(0, -0.45, 0)});
}

// Angle (radians) between the thigh and the shin at channels q, by FK.
double KneeBend(const Skeleton& s, std::span<const double> q) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, q, world);
  const Eigen::Vector3d thigh = world[1].translation() - world[0].translation();
  const Eigen::Vector3d shin = world[2].translation() - world[1].translation();
  return std::atan2(thigh.cross(shin).norm(), thigh.dot(shin));
}

// Angle (radians) between the hip -> ankle line and the hip -> target line.
double AimError(const Skeleton& s, std::span<const double> q, const Eigen::Vector3d& target) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, q, world);
  const Eigen::Vector3d a = world[2].translation() - world[0].translation();
  const Eigen::Vector3d b = target - world[0].translation();
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

double PositionError(const Skeleton& s, std::span<const double> q, const Eigen::Vector3d& target) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, q, world);
  return (world[2].translation() - target).norm();
}

// Fixed-lambda DLS, pseudo-inverse, SVD and QR (and the others) on unreachable targets in several
// directions: the leg ends straight, pointing at the target, and the task error (by FK) never
// rises from one iteration to the next (measured by re-running with max_iterations = 1..N).
TEST(Trust, UnreachableTargetsDoNotOscillate) {
  const auto skeleton = Leg();
  const Skeleton& s = *skeleton;
  const Method methods[] = {Method::kDls, Method::kPseudoInverse, Method::kSvd,
                            Method::kQr,  Method::kDlsAdaptive,   Method::kTranspose};
  const Eigen::Vector3d dirs[] = {{0, -1, 0},   {0.3, -1, 0.2},   {1, -0.2, 0.1},
                                  {0, -0.5, 1}, {-0.7, -1, -0.4}, {0.2, 0.3, -1}};
  for (const Method method : methods) {
    double worst_bend = 0, worst_aim = 0;
    for (const Eigen::Vector3d& dir : dirs) {
      const Eigen::Vector3d target = 1.5 * dir.normalized();
      Rig rig(skeleton);
      rig.AddTask(EndTask(TaskType::kPosition, Eigen::Vector3d::Zero()));
      Stage stage;
      stage.method = method;
      rig.stages.push_back(stage);
      std::vector<Target> targets(1);
      targets[0].position = target;
      std::vector<double> start(s.num_channels(), 0.0);
      start[0] = 0.2;
      start[1] = -0.3;
      start[3] = 0.5;  // Knee bent ~29 degrees.
      const int n = 60;
      double previous = PositionError(s, start, target);
      Pose pose(s);
      for (int k = 1; k <= n; ++k) {
        rig.stages[0].settings.max_iterations = k;
        rig.stages[0].settings.stall_iterations = 1000;
        Workspace ws;
        std::copy(start.begin(), start.end(), pose.channels.begin());
        ASSERT_TRUE(Solve(rig, targets, pose, ws));
        const double e = PositionError(s, pose.channels, target);
        EXPECT_LE(e, previous * (1 + 1e-12) + 1e-15)
            << MethodName(method) << " iteration " << k << " dir " << dir.transpose();
        previous = e;
      }
      rig.stages[0].settings.max_iterations = 200;
      rig.stages[0].settings.stall_iterations = 8;
      Workspace ws;
      std::copy(start.begin(), start.end(), pose.channels.begin());
      SolveReport report;
      ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
      EXPECT_NE(report.status, Status::kConverged) << MethodName(method);
      const double bend = KneeBend(s, pose.channels), aim = AimError(s, pose.channels, target);
      worst_bend = std::max(worst_bend, bend);
      worst_aim = std::max(worst_aim, aim);
      EXPECT_LT(bend * kDeg, 1.0) << MethodName(method) << " dir " << dir.transpose();
      EXPECT_LT(aim * kDeg, 1.0) << MethodName(method) << " dir " << dir.transpose();
    }
    std::printf("%-13s worst knee bend %.3f deg, worst aim error %.3f deg\n",
                std::string(MethodName(method)).c_str(), worst_bend * kDeg, worst_aim * kDeg);
  }
}

// An arm with 5-unit upper and lower arms (shoulder ZXY, elbow hinge Y, wrist end) at the origin.
std::shared_ptr<const Skeleton> LongArm() {
  return Chain({kZXY, {C::kYrotation}, {}},
               {Eigen::Vector3d::Zero(), Eigen::Vector3d(5, 0, 0), Eigen::Vector3d(5, 0, 0)});
}

// The elbow path of a target moving 0.1 units a frame across the line from the shoulder to the
// pole (issue 13), solved by the kTwoBone stage frame by frame with warm start, one workspace.
// Returns the largest elbow step (FK on the output channels) and the largest reported jump.
struct FlipRun {
  double largest_elbow_step = 0;
  double largest_target_step = 0;
  double largest_jump = 0;
  double elbow_at_end_to_pole = 0;  // Angle (rad) between the last elbow direction and the pole's.
};

// With `method`, the limb is solved by Solve instead: a position task on the wrist and the pole
// task one priority below it, one stage of `method`, one workspace (ResetContinuity before every
// frame when !continuity).
FlipRun RunFlipPath(bool continuity, std::optional<Method> method = std::nullopt,
                    int pole_priority = 1) {
  const auto skeleton = LongArm();
  const Skeleton& s = *skeleton;
  const Eigen::Vector3d pole(0, 0, 10);
  Pose pose(s);
  pose.channels[1] = 0.3;
  pose.channels[3] = 0.8;
  pose.UpdateWorld(s);
  FlipRun run;
  Swivel swivel;
  Rig rig(skeleton);
  rig.AddTask(EndTask(TaskType::kPosition, Eigen::Vector3d::Zero()));
  Task pole_task = LimbPoleTask();
  pole_task.priority = pole_priority;
  rig.AddTask(pole_task);
  if (method) AddStage(rig, *method, 100);
  std::vector<Target> targets(2);
  Workspace ws;
  SolveReport report;
  Eigen::Vector3d elbow_prev = Eigen::Vector3d::Zero(), target_prev = Eigen::Vector3d::Zero();
  for (int f = 0; f <= 70; ++f) {
    const Eigen::Vector3d target(-3.05 + 0.1 * f, 0.0, 6.0);
    double jump = 0.0;
    if (method) {
      targets[0].position = target;
      targets[1].position = pole;
      if (!continuity) ws.ResetContinuity();
      EXPECT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
      if (!report.limbs.empty()) jump = report.limbs[0].jump;
    } else {
      TwoBoneJob job = LimbJob(s, pose, Eigen::Vector3d::Zero());
      job.target = target;
      job.pole = pole;
      job.use_pole = true;
      if (continuity) job.swivel = &swivel;
      EXPECT_TRUE(job.Run());
      jump = swivel.jump;
    }
    pose.UpdateWorld(s);
    // Analytic: exact; iterative: within the stage's position tolerance (1e-6).
    EXPECT_LT((pose.world[2].translation() - target).norm(), method ? 1e-6 : 1e-9) << f;
    const Eigen::Vector3d elbow = pose.world[1].translation();
    if (f > 0) {
      run.largest_elbow_step = std::max(run.largest_elbow_step, (elbow - elbow_prev).norm());
      run.largest_target_step = std::max(run.largest_target_step, (target - target_prev).norm());
      if (continuity) run.largest_jump = std::max(run.largest_jump, jump);
    }
    elbow_prev = elbow;
    target_prev = target;
  }
  const Eigen::Vector3d axis = target_prev.normalized();
  Eigen::Vector3d e = elbow_prev - axis * axis.dot(elbow_prev);
  Eigen::Vector3d q = pole - axis * axis.dot(pole);
  run.elbow_at_end_to_pole = std::atan2(e.cross(q).norm(), e.dot(q));
  return run;
}

// The bound of the blend rule (core/ik/two_bone.h): per frame the swivel turns by at most
// pi dt + kPoleFollow pi / 4, dt the growth of the pole's weight t = smoothstep of the pole's
// sine w against the limb axis; the elbow lies within l1 = 5 of the axis, and the target's
// own motion moves the elbow by about its step at a fixed swivel (allow twice). dt is taken
// from the path's geometry here.
double SwivelStepBound() {
  double max_dt = 0, t_prev = -1;
  for (int f = 0; f <= 70; ++f) {
    const Eigen::Vector3d target(-3.05 + 0.1 * f, 0.0, 6.0), pole(0, 0, 10);
    const Eigen::Vector3d axis = target.normalized();
    const double w = (pole - axis * axis.dot(pole)).norm() / pole.norm();
    const double u = std::clamp((w - std::sin(2 / kDeg)) / (0.5 - std::sin(2 / kDeg)), 0.0, 1.0);
    const double t = u * u * (3 - 2 * u);
    if (t_prev >= 0) max_dt = std::max(max_dt, t - t_prev);
    t_prev = t;
  }
  return kPi * max_dt + 0.1 * kPi / 4;
}

TEST(Trust, PoleCrossingKeepsTheElbowContinuous) {
  const FlipRun before = RunFlipPath(false);
  const FlipRun after = RunFlipPath(true);
  std::printf(
      "largest elbow step: %.3f without continuity, %.3f with (target step %.3f); "
      "largest swivel jump %.2f deg; end: elbow %.2f deg from the pole's side\n",
      before.largest_elbow_step, after.largest_elbow_step, after.largest_target_step,
      after.largest_jump * kDeg, after.elbow_at_end_to_pole * kDeg);
  // Without continuity the elbow pops to the other side as the target crosses the pole line.
  EXPECT_GT(before.largest_elbow_step, 4.0);
  const double swivel_step = SwivelStepBound();
  const double bound = 2 * after.largest_target_step + 5.0 * swivel_step;
  EXPECT_LE(after.largest_elbow_step, bound);
  EXPECT_LE(after.largest_jump, swivel_step + 1e-9);
  // And in absolute terms: a small fraction of the upper arm, against a whole-arm pop before.
  EXPECT_LT(after.largest_elbow_step, 0.15 * 5.0);
  // The pole is followed again once it is well defined: the elbow ends on the pole's side.
  EXPECT_LT(after.elbow_at_end_to_pole, 1e-6);
}

// The same path solved by every iterative method that takes a pole task (the pole one priority
// below the wrist): the pole task keeps the swivel continuous as the kTwoBone stage does, within
// the same bound; with the continuity reset every frame the elbow pops.
TEST(Trust, IterativePoleKeepsTheElbowContinuous) {
  const double swivel_step = SwivelStepBound();
  for (const Method m :
       {Method::kDlsAdaptive, Method::kDls, Method::kPseudoInverse, Method::kSvd, Method::kQr}) {
    const FlipRun before = RunFlipPath(false, m);
    const FlipRun after = RunFlipPath(true, m);
    std::printf("%-14s largest elbow step %.3f without continuity, %.3f with; jump %.2f deg\n",
                std::string(MethodName(m)).c_str(), before.largest_elbow_step,
                after.largest_elbow_step, after.largest_jump * kDeg);
    EXPECT_GT(before.largest_elbow_step, 4.0) << MethodName(m);
    EXPECT_LE(after.largest_elbow_step, 2 * after.largest_target_step + 5.0 * swivel_step)
        << MethodName(m);
    EXPECT_LT(after.largest_elbow_step, 0.15 * 5.0) << MethodName(m);
    EXPECT_LT(after.elbow_at_end_to_pole, 1e-3) << MethodName(m);
  }
}

// Issue 27: the pole at the wrist's own priority (one task level, not a null-space term): the
// elbow stays as continuous as with the pole one priority lower (a 92 degree flip in one frame
// with dls_adaptive before).
TEST(Trust, IterativePoleAtTheWristsPriorityKeepsTheElbowContinuous) {
  const double swivel_step = SwivelStepBound();
  for (const Method m :
       {Method::kDlsAdaptive, Method::kDls, Method::kPseudoInverse, Method::kSvd, Method::kQr}) {
    const FlipRun after = RunFlipPath(true, m, 0);
    std::printf("%-14s same priority: largest elbow step %.3f (target step %.3f); jump %.2f deg\n",
                std::string(MethodName(m)).c_str(), after.largest_elbow_step,
                after.largest_target_step, after.largest_jump * kDeg);
    EXPECT_LE(after.largest_elbow_step, 2 * after.largest_target_step + 5.0 * swivel_step)
        << MethodName(m);
    EXPECT_LT(after.largest_elbow_step, 0.15 * 5.0) << MethodName(m);
    EXPECT_LT(after.elbow_at_end_to_pole, 1e-3) << MethodName(m);
  }
}

// The kTwoBone stage keeps the swivel across solves with one workspace and reports each frame's
// jump, measured independently from the elbow positions; a pole on the limb axis is flagged.
TEST(Trust, TwoBoneStageReportsSwivelJumpAndDegeneratePole) {
  const auto skeleton = LongArm();
  const Skeleton& s = *skeleton;
  Rig rig(skeleton);
  rig.AddTask(EndTask(TaskType::kPosition, Eigen::Vector3d::Zero()));
  rig.AddTask(LimbPoleTask());
  Stage stage;
  stage.method = Method::kTwoBone;
  rig.stages.push_back(stage);
  Workspace ws;
  SolveReport report;
  Pose pose(s);
  pose.channels[1] = 0.3;
  pose.channels[3] = 0.8;
  std::vector<Target> targets(2);
  targets[1].position = Eigen::Vector3d(0, 0, 10);
  double largest_step = 0, largest_jump = 0;
  Eigen::Vector3d elbow_dir_prev = Eigen::Vector3d::Zero();
  Eigen::Vector3d elbow_prev = Eigen::Vector3d::Zero();
  for (int f = 0; f <= 70; ++f) {
    targets[0].position = Eigen::Vector3d(-3.05 + 0.1 * f, 0.0, 6.0);
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
    ASSERT_EQ(report.limbs.size(), 1u);
    EXPECT_EQ(report.limbs[0].stage, 0);
    EXPECT_EQ(report.limbs[0].pole_task, 1);
    const Eigen::Vector3d axis = targets[0].position.normalized();
    const Eigen::Vector3d elbow = pose.world[1].translation();
    const Eigen::Vector3d dir = (elbow - axis * axis.dot(elbow)).normalized();
    if (f == 0) {
      EXPECT_EQ(report.limbs[0].jump, 0.0);
    } else {
      // The previous direction moved onto the new axis' normal plane, as the record defines it.
      const Eigen::Vector3d prev = (elbow_dir_prev - axis * axis.dot(elbow_dir_prev)).normalized();
      EXPECT_NEAR(report.limbs[0].jump, std::atan2(prev.cross(dir).norm(), prev.dot(dir)), 1e-9);
      largest_step = std::max(largest_step, (elbow - elbow_prev).norm());
    }
    largest_jump = std::max(largest_jump, report.limbs[0].jump);
    // The per-frame record a bake keeps carries the same evidence.
    FrameRecord record;
    RecordFrame(f, report, &record);
    EXPECT_EQ(record.frame, f);
    EXPECT_EQ(record.status, report.status);
    EXPECT_EQ(record.iterations, report.iterations);
    ASSERT_EQ(record.effectors.size(), 2u);
    EXPECT_LT(record.effectors[0].position_error, 1e-9);
    EXPECT_EQ(record.effectors[1].angle_error, report.angle_error[1]);
    EXPECT_EQ(record.channels_on_limit, report.channels_on_limit);
    EXPECT_NEAR(record.SwivelJumpDegrees(), report.limbs[0].jump * kDeg, 1e-12);
    EXPECT_EQ(record.AnyDegeneratePole(), report.limbs[0].pole_degenerate);
    // Degenerate exactly while the pole is within 2 degrees of the limb axis (the crossing).
    const Eigen::Vector3d q = targets[1].position;
    const double w = (q - axis * axis.dot(q)).norm() / q.norm();
    EXPECT_EQ(report.limbs[0].pole_degenerate, w <= std::sin(2 / kDeg)) << f;
    elbow_dir_prev = dir;
    elbow_prev = elbow;
  }
  EXPECT_LT(largest_step, 0.15 * 5.0);
  EXPECT_GT(largest_jump, 0.0);
  // A pole on the limb axis: warned, and the swivel is kept (no jump).
  targets[0].position = Eigen::Vector3d(0, 0, 6);
  targets[1].position = Eigen::Vector3d(0, 0, 10);
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_TRUE(report.limbs[0].pole_degenerate);
  const Eigen::Vector3d before = pose.world[1].translation();
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_TRUE(report.limbs[0].pole_degenerate);
  EXPECT_LT(report.limbs[0].jump, 1e-9);
  EXPECT_LT((pose.world[1].translation() - before).norm(), 1e-9);
  // Also on a first frame (no previous swivel): flagged, not silently skipped.
  ws.ResetContinuity();
  ASSERT_TRUE(Solve(rig, targets, pose, ws, &report));
  EXPECT_TRUE(report.limbs[0].pole_degenerate);
  EXPECT_EQ(report.limbs[0].jump, 0.0);
}

}  // namespace
}  // namespace trust_test
}  // namespace rigel::ik
