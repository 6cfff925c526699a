// Seed 002's worked example: planar links 15, 10, 5; initial pose {pi/8, pi/4, pi/4}; goal
// (-20, 5); 21 frames of linearly interpolated goals. Every iterative solver reaches every
// intermediate goal to 1e-6, warm-started from the previous frame.
//
//   j0 (Zrot) --15-- j1 (Zrot) --10-- j2 (Zrot) --5-- effector (offset on j2)
#include <gtest/gtest.h>

#include <cmath>

#include "core/ik/solve.h"
#include "core/pose.h"
#include "ik_test_util.h"

namespace rigel::ik {
namespace seed_example_test {
namespace {

using C = ChannelType;

struct Case {
  Method method;
  bool alternate;
  bool preferred;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  std::string n(MethodName(info.param.method));
  if (info.param.alternate) n += "_alternate";
  if (info.param.preferred) n += "_preferred";
  return n;
}

class SeedExample : public ::testing::TestWithParam<Case> {};

TEST_P(SeedExample, ReachesEveryInterpolatedGoal) {
  const Case param = GetParam();
  const auto skeleton = rigel::testing::Chain(
      {{C::kZrotation}, {C::kZrotation}, {C::kZrotation}},
      {Eigen::Vector3d::Zero(), Eigen::Vector3d(15, 0, 0), Eigen::Vector3d(10, 0, 0)});
  Rig rig(skeleton);
  Task task;
  task.type = TaskType::kPosition;
  task.joint = 2;
  task.offset = Eigen::Vector3d(5, 0, 0);
  task.position_axes = 0b011;  // planar: X and Y
  task.alternate_jacobian = param.alternate;
  rig.AddTask(task);
  Stage stage;
  stage.method = param.method;
  stage.settings.max_iterations = 20000;
  stage.settings.stall_iterations = 50;
  stage.settings.stall_fraction = 0;
  stage.settings.lambda = param.method == Method::kDls ? 0.05 : 0.01;
  if (param.preferred) {
    for (int c = 0; c < 3; ++c) rig.SetPreferred(c, 0.0, 0.1);
  }
  rig.stages.push_back(stage);
  Pose pose(*skeleton);
  pose.channels = {kPi / 8, kPi / 4, kPi / 4};
  pose.UpdateWorld(*skeleton);
  const Eigen::Vector3d start = pose.world[2] * task.offset;
  const Eigen::Vector3d goal(-20, 5, 0);
  Workspace ws;
  std::vector<Target> targets(1);
  SolveReport report;
  double largest_line_deviation = 0.0;
  int total_iterations = 0;
  const Eigen::Vector3d line = (goal - start).normalized();
  for (int f = 0; f <= 20; ++f) {
    targets[0].position = start + (goal - start) * (f / 20.0);
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    const Eigen::Vector3d e = pose.world[2] * task.offset;
    EXPECT_EQ(report.status, Status::kConverged) << "frame " << f;
    EXPECT_LE((e - targets[0].position).norm(), 1e-6) << "frame " << f;
    const Eigen::Vector3d d = e - start;
    largest_line_deviation = std::max(largest_line_deviation, (d - line * line.dot(d)).norm());
    total_iterations += report.iterations;
    for (const double v : pose.channels) EXPECT_TRUE(std::isfinite(v));
  }
  std::printf("[ seed 002 ] %-28s iterations %6d  largest deviation from the line %.3g\n",
              Name({GetParam(), 0}).c_str(), total_iterations, largest_line_deviation);
}

INSTANTIATE_TEST_SUITE_P(
    Solvers, SeedExample,
    ::testing::Values(Case{Method::kTranspose, false, false},
                      Case{Method::kPseudoInverse, false, false}, Case{Method::kSvd, false, false},
                      Case{Method::kQr, false, false}, Case{Method::kDls, false, false},
                      Case{Method::kDlsAdaptive, false, false},
                      Case{Method::kPseudoInverse, false, true},
                      Case{Method::kDlsAdaptive, true, false}, Case{Method::kCcd, false, false}),
    Name);

}  // namespace
}  // namespace seed_example_test
}  // namespace rigel::ik
