// Workspace::Prepare (core/ik/plan.cc): the rig validity matrix, and preparation as a
// transaction (a Prepare that fails leaves the workspace as it was, never half-built).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "arm_rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {
namespace plan_test {
namespace {

TEST(Plan, InvalidRigs) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Pose pose(rig.skeleton());
  std::vector<Target> targets(1);
  SolveReport report;
  auto expect_bad_rig = [&](Rig bad, const char* what) {
    Workspace ws;
    std::string error;
    EXPECT_FALSE(ws.Prepare(bad, &error)) << what;
    EXPECT_FALSE(error.empty()) << what;
    EXPECT_FALSE(Solve(bad, targets, pose, ws, &report)) << what;
    EXPECT_EQ(report.status, Status::kInvalidInput) << what;
  };
  {
    Rig bad = rig;
    bad.tasks[0].joint = 99;
    expect_bad_rig(bad, "joint out of range");
  }
  {
    Rig bad = rig;
    bad.tasks[0].weight = -1;
    expect_bad_rig(bad, "negative weight");
  }
  {
    Rig bad = rig;
    bad.tasks[0].position_axes = 0;
    expect_bad_rig(bad, "no axis");
  }
  {
    Rig bad = rig;
    bad.SetLimits(0, 1, -1);
    expect_bad_rig(bad, "min > max");
  }
  {
    Rig bad = rig;
    bad.SetStrength(0, -1);
    expect_bad_rig(bad, "negative strength");
  }
  {
    Rig bad = rig;
    bad.stages[0].tasks = {3};
    expect_bad_rig(bad, "stage task");
  }
  {
    Rig bad = rig;
    bad.stages[0].settings.max_iterations = 0;
    expect_bad_rig(bad, "settings");
  }
  {
    Rig bad = rig;
    bad.stages[0].settings.preferred_power = 3;
    expect_bad_rig(bad, "odd power");
  }
  {
    Rig bad = rig;
    bad.tasks[0].type = TaskType::kAim;
    bad.tasks[0].aim_axis = {2, 0, 0};
    expect_bad_rig(bad, "aim axis");
  }
  {
    Rig bad = rig;
    bad.tasks[0].type = TaskType::kPole;
    expect_bad_rig(bad, "pole joints");
  }
  {
    Rig bad = rig;
    bad.stages[0].method = Method::kTwoBone;
    bad.stages[0].upper = 2;
    expect_bad_rig(bad, "two-bone joints");
  }
  {
    Rig bad;
    expect_bad_rig(bad, "no skeleton");
  }
}

// Rigs that pass the rig-level checks and fail only while their stages are planned (after the
// workspace has recorded earlier stages): a CCD stage without a position task, a two-bone stage
// whose joints cannot be found, behind a valid first stage.
std::vector<Rig> RigsFailingInPlanning() {
  std::vector<Rig> out;
  {
    Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
    rig.AddTask(EndTask(TaskType::kAim, Eigen::Vector3d::Zero()));
    Stage ccd;
    ccd.method = Method::kCcd;
    ccd.tasks = {1};
    rig.stages.push_back(ccd);
    out.push_back(rig);
  }
  {
    Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
    Stage two_bone;
    two_bone.method = Method::kTwoBone;
    two_bone.upper = 2;  // Not an ancestor of the lower joint.
    rig.stages.push_back(two_bone);
    out.push_back(rig);
  }
  return out;
}

TEST(Plan, FailedPrepareLeavesTheWorkspaceNotPreparedForThatRig) {
  for (const Rig& bad : RigsFailingInPlanning()) {
    Workspace ws;
    std::string error;
    EXPECT_FALSE(ws.Prepare(bad, &error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(ws.IsPreparedFor(bad)) << error;
    // Every later Solve reports the error (and leaves the pose alone) instead of running on a
    // half-built plan.
    Pose pose(bad.skeleton());
    pose.channels[3] = 0.5;
    const std::vector<double> before = pose.channels;
    std::vector<Target> targets(bad.tasks.size());
    targets[0].position = Eigen::Vector3d(0.3, 0.2, 0.1);
    for (int attempt = 0; attempt < 2; ++attempt) {
      SolveReport report;
      EXPECT_FALSE(Solve(bad, targets, pose, ws, &report)) << attempt;
      EXPECT_EQ(report.status, Status::kInvalidInput) << attempt;
      EXPECT_EQ(report.message, error) << attempt;
      EXPECT_EQ(pose.channels, before) << attempt;
      EXPECT_FALSE(ws.IsPreparedFor(bad)) << attempt;
    }
  }
}

TEST(Plan, FailedPrepareKeepsThePreviousPreparation) {
  const Rig good = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  std::mt19937_64 rng(11);
  const std::vector<Target> targets = {ReachableTarget(good, rng)};
  for (const Rig& bad : RigsFailingInPlanning()) {
    Workspace ws;
    ASSERT_TRUE(ws.Prepare(good));
    EXPECT_FALSE(ws.Prepare(bad));
    EXPECT_TRUE(ws.IsPreparedFor(good));
    EXPECT_FALSE(ws.IsPreparedFor(bad));
    // The kept preparation still solves, bit for bit as a fresh workspace does.
    Pose kept(good.skeleton()), fresh(good.skeleton());
    Workspace fresh_ws;
    SolveReport kept_report, fresh_report;
    ASSERT_TRUE(Solve(good, targets, kept, ws, &kept_report)) << kept_report.message;
    ASSERT_TRUE(Solve(good, targets, fresh, fresh_ws, &fresh_report));
    EXPECT_EQ(kept_report.status, Status::kConverged);
    EXPECT_EQ(kept.channels, fresh.channels);
  }
}

TEST(Plan, PrepareFollowsStructuralChanges) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kDlsAdaptive);
  Workspace ws;
  ASSERT_TRUE(ws.Prepare(rig));
  EXPECT_TRUE(ws.IsPreparedFor(rig));
  rig.tasks[0].weight = 0.5;  // Read per solve: not structural.
  EXPECT_TRUE(ws.IsPreparedFor(rig));
  rig.Lock(1);
  EXPECT_FALSE(ws.IsPreparedFor(rig));
  ASSERT_TRUE(ws.Prepare(rig));
  EXPECT_TRUE(ws.IsPreparedFor(rig));
  rig.SetStrength(0, 0.0);  // Relaxed: its columns drop out.
  EXPECT_FALSE(ws.IsPreparedFor(rig));
  rig.SetStrength(0, 1.0);
  EXPECT_TRUE(ws.IsPreparedFor(rig));
  rig.tasks[0].priority = 1;
  EXPECT_FALSE(ws.IsPreparedFor(rig));
}

}  // namespace
}  // namespace plan_test
}  // namespace rigel::ik
