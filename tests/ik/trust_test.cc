// Trusting the solve (issue 13): no iterative method oscillates on unreachable targets, poles keep
// the swivel continuous from frame to frame, and the per-frame record.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/ik/solve.h"
#include "core/pose.h"
#include "ik_test_util.h"

namespace rigel::ik {
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
      Task task;
      task.joint = 2;
      rig.AddTask(task);
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

}  // namespace
}  // namespace rigel::ik
