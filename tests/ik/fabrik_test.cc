// FABRIK stages (core/ik/fabrik.cc): validity, then every result checked by forward kinematics
// of the written channels (never by the solver's own report): reachable targets on a planar and
// a 3-D chain, an unreachable target, cone and hinge limits, per-channel limits and locks, a
// pose effector, a zero-length bone, and a CMU arm reaching the clip's own hand positions.
#include "core/ik/fabrik.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "arm_rig.h"
#include "core/euler.h"
#include "core/ik/solve.h"
#include "core/pose.h"
#include "core/scene.h"
#include "importers/bvh_reader.h"
#include "support/test_skeletons.h"

namespace rigel::ik {
namespace fabrik_test {
namespace {

using C = ChannelType;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using rigel::testing::Chain;
using rigel::testing::kZXY;

constexpr double kDeg = kPi / 180;

// n joints, each with `layout`, links of `link` along X; the effector is `link` past the last.
std::shared_ptr<const Skeleton> StraightChain(int n, const std::vector<C>& layout, double link) {
  std::vector<std::vector<C>> layouts(n, layout);
  std::vector<Vector3d> offsets(n, Vector3d(link, 0, 0));
  offsets[0].setZero();
  return Chain(layouts, offsets);
}

Rig FabrikRig(std::shared_ptr<const Skeleton> s, const Vector3d& tip, int max_iterations = 200) {
  Rig rig(std::move(s));
  Task task;
  task.joint = rig.skeleton().num_joints() - 1;
  task.offset = tip;
  rig.AddTask(task);
  Stage stage;
  stage.method = Method::kFabrik;
  stage.settings.max_iterations = max_iterations;
  stage.settings.position_tolerance = 1e-6;
  rig.stages.push_back(stage);
  return rig;
}

std::vector<Eigen::Isometry3d> Fk(const Skeleton& s, const std::vector<double>& q) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, q, world);
  return world;
}

// The effector point of the rig's task 0 by FK of `q`.
Vector3d EffectorFk(const Rig& rig, const std::vector<double>& q) {
  const Task& t = rig.tasks[0];
  return Fk(rig.skeleton(), q)[t.joint] * t.offset;
}

bool AllFinite(const std::vector<double>& q) {
  for (const double v : q) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

double Angle(const Vector3d& a, const Vector3d& b) {
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

// The rig's effector at random channel values in [lo, hi] (a reachable target).
Vector3d RandomReachable(const Rig& rig, double lo, double hi, std::mt19937_64& rng) {
  std::vector<double> q(rig.skeleton().num_channels());
  for (double& v : q) v = std::uniform_real_distribution<double>(lo, hi)(rng);
  return EffectorFk(rig, q);
}

// Solves `rig` for `goal` from the rest pose; returns the channels.
std::vector<double> SolveFor(const Rig& rig, const Vector3d& goal, Workspace& ws,
                             SolveReport* report, Pose* start = nullptr) {
  std::vector<Target> targets(rig.tasks.size());
  targets[0].position = goal;
  Pose pose = start ? *start : Pose(rig.skeleton());
  EXPECT_TRUE(Solve(rig, targets, pose, ws, report)) << report->message;
  return pose.channels;
}

std::string PrepareError(const Rig& rig) {
  Workspace ws;
  std::string error;
  EXPECT_FALSE(ws.Prepare(rig, &error));
  return error;
}

TEST(Fabrik, Name) { EXPECT_EQ(MethodName(Method::kFabrik), "fabrik"); }

TEST(Fabrik, InvalidStagesAndLimitsAreRefusedWithReasons) {
  const auto s = StraightChain(4, kZXY, 1.0);
  {  // Two effectors in one stage.
    Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
    Task second;
    second.joint = 2;
    rig.AddTask(second);
    EXPECT_NE(PrepareError(rig).find("FABRIK takes one effector per stage"), std::string::npos);
  }
  {  // An aim task.
    Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
    rig.tasks[0].type = TaskType::kAim;
    EXPECT_NE(PrepareError(rig).find("position and pose effectors only"), std::string::npos);
  }
  {  // chain_root off the effector's path.
    RawSkeleton raw;
    raw.roots.emplace_back();
    raw.roots[0].name = "root";
    raw.roots[0].channels = kZXY;
    for (const char* name : {"a", "b"}) {
      RawSkeleton::Joint j;
      j.name = name;
      j.channels = kZXY;
      j.rest_translation = Vector3d(1, 0, 0);
      raw.roots[0].children.push_back(j);
    }
    Rig rig = FabrikRig(rigel::testing::BuildOrDie(raw), Vector3d(1, 0, 0));
    rig.tasks[0].joint = 2;  // "b"
    rig.stages[0].chain_root = 1;
    EXPECT_NE(PrepareError(rig).find("chain_root 'a' is not an ancestor"), std::string::npos);
  }
  {  // Every joint locked.
    Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
    for (int c = 0; c < s->num_channels(); ++c) rig.Lock(c);
    EXPECT_NE(PrepareError(rig).find("no joint with free rotation channels"), std::string::npos);
  }
  {  // A pose effector whose end joint cannot turn.
    Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
    rig.tasks[0].type = TaskType::kPose;
    for (const int c : s->rotation_channels(3)) rig.Lock(c);
    EXPECT_NE(PrepareError(rig).find("no free rotation channel to take the orientation"),
              std::string::npos);
  }
  {  // Bad cone and hinge.
    Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
    rig.SetCone(1, 4.0);
    EXPECT_NE(PrepareError(rig).find("joint 'j1': cone angle"), std::string::npos);
    rig.SetHinge(1, Vector3d(0, 0, 1), 0.5, 0.1);
    EXPECT_NE(PrepareError(rig).find("joint 'j1': hinge range"), std::string::npos);
    rig.SetHinge(1, Vector3d(0, 0, 0), 0.1, 0.5);
    EXPECT_NE(PrepareError(rig).find("joint 'j1': hinge axis"), std::string::npos);
    rig.ClearBoneLimit(1);
    Workspace ws;
    EXPECT_TRUE(ws.Prepare(rig));
  }
}

TEST(Fabrik, LimitHelpers) {
  const Vector3d rest = Vector3d::UnitX();
  // Inside the cone: unchanged; outside: on the cone's rim, in the plane of rest and want.
  const Vector3d inside = Vector3d(1, 0.2, 0).normalized();
  EXPECT_TRUE(LimitToCone(rest, inside, 30 * kDeg).isApprox(inside, 1e-15));
  const Vector3d out = LimitToCone(rest, Vector3d(0, 1, 1).normalized(), 30 * kDeg);
  EXPECT_NEAR(Angle(out, rest), 30 * kDeg, 1e-12);
  EXPECT_NEAR(out.y(), out.z(), 1e-12);
  EXPECT_NEAR(Angle(LimitToCone(rest, -rest, 10 * kDeg), rest), 10 * kDeg, 1e-12);
  // Hinge about Z: the angle of the projection, clamped to the nearer bound on the circle.
  const Vector3d z = Vector3d::UnitZ();
  EXPECT_NEAR(HingeAngle(z, rest, Vector3d(0, 1, 5).normalized(), -kPi, kPi, 0), kPi / 2, 1e-12);
  EXPECT_NEAR(HingeAngle(z, rest, Vector3d(0, 1, 0), 0, 30 * kDeg, 0), 30 * kDeg, 1e-12);
  EXPECT_NEAR(HingeAngle(z, rest, Vector3d(1, -0.1, 0), 0, 120 * kDeg, 0), 0, 1e-12);
  // -170 deg is 40 deg from 150 around the back, 160 deg from -10: goes to 150.
  const Vector3d back(std::cos(-170 * kDeg), std::sin(-170 * kDeg), 0);
  EXPECT_NEAR(HingeAngle(z, rest, back, -10 * kDeg, 150 * kDeg, 0), 150 * kDeg, 1e-12);
  // Along the axis: the current angle, clamped.
  EXPECT_NEAR(HingeAngle(z, rest, z, 0, 1, 2), 1, 0);
}

// Planar chain of 4 Z hinges (one rotation channel each): targets made by FK in the plane.
TEST(Fabrik, ReachesPlanarTargets) {
  const Rig rig = FabrikRig(StraightChain(4, {C::kZrotation}, 1.0), Vector3d(1, 0, 0));
  std::mt19937_64 rng(1);
  Workspace ws;
  int converged = 0;
  double iterations = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    const Vector3d goal = RandomReachable(rig, -kPi, kPi, rng);
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report);
    const Vector3d p = EffectorFk(rig, q);
    EXPECT_NEAR(p.z(), 0.0, 1e-12) << trial;  // Hinges keep the chain in its plane.
    if (report.status == Status::kConverged) {
      EXPECT_LE((p - goal).norm(), 1e-6) << trial;
      ++converged;
    }
    iterations += report.iterations;
  }
  std::printf("[planar 4 hinges] converged %d of %d, %.1f iterations per solve\n", converged,
              kTrials, iterations / kTrials);
  EXPECT_GE(converged, 195);
}

// 3-D chain of 6 ZXY joints, no limits.
TEST(Fabrik, Reaches3dTargets) {
  const Rig rig = FabrikRig(StraightChain(6, kZXY, 0.5), Vector3d(0.5, 0, 0));
  std::mt19937_64 rng(2);
  Workspace ws;
  int converged = 0;
  double iterations = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    const Vector3d goal = RandomReachable(rig, -kPi / 2, kPi / 2, rng);
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report);
    ASSERT_TRUE(AllFinite(q));
    const double error = (EffectorFk(rig, q) - goal).norm();
    EXPECT_NEAR(report.position_error[0], error, 1e-12);
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-6) << trial;
      ++converged;
    }
    iterations += report.iterations;
  }
  std::printf("[3-D 6 ZXY joints] converged %d of %d, %.1f iterations per solve\n", converged,
              kTrials, iterations / kTrials);
  EXPECT_EQ(converged, kTrials);
}

// Out of reach: the chain ends straight, pointing at the target, with no NaN.
TEST(Fabrik, UnreachableTargetStraightensTheChainTowardsIt) {
  const Rig rig = FabrikRig(StraightChain(5, kZXY, 1.0), Vector3d(1, 0, 0));
  std::mt19937_64 rng(3);
  Workspace ws;
  for (int trial = 0; trial < 20; ++trial) {
    Vector3d dir(std::normal_distribution<double>()(rng), std::normal_distribution<double>()(rng),
                 std::normal_distribution<double>()(rng));
    dir.normalize();
    const Vector3d goal = dir * (7.0 + trial);  // Reach is 5.
    // A bent start.
    Pose start(rig.skeleton());
    for (double& v : start.channels) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    start.UpdateWorld(rig.skeleton());
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report, &start);
    ASSERT_TRUE(AllFinite(q));
    EXPECT_NE(report.status, Status::kConverged);
    const auto world = Fk(rig.skeleton(), q);
    for (int j = 0; j < 5; ++j) {
      const Vector3d a = world[j].translation();
      const Vector3d b = j + 1 < 5 ? world[j + 1].translation() : world[4] * Vector3d(1, 0, 0);
      EXPECT_LE(Angle(b - a, goal), 1e-6) << trial << " bone " << j;
    }
    EXPECT_NEAR((EffectorFk(rig, q) - goal).norm(), goal.norm() - 5.0, 1e-6);
  }
}

// Cone limits of 25 degrees on joints 1..4: every bone stays within 25 degrees of its parent
// bone (the rest chain is straight, so the rest direction is the parent bone's), targets made
// inside the cones are reached, and targets anywhere never break a cone.
TEST(Fabrik, ConeLimitsHold) {
  const double cone = 25 * kDeg;
  Rig rig = FabrikRig(StraightChain(5, kZXY, 1.0), Vector3d(1, 0, 0), 500);
  for (int j = 1; j < 5; ++j) rig.SetCone(j, cone);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  Workspace ws;
  int converged = 0, near = 0, inside = 0;
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Vector3d goal;
    const bool made_inside = trial % 2 == 0;
    if (made_inside) {
      // Each joint turned by a random rotation of at most 20 degrees: bones within the cones.
      std::vector<double> q(rig.skeleton().num_channels());
      for (int j = 0; j < 5; ++j) {
        const Vector3d axis = Vector3d(u(rng), u(rng), u(rng)).normalized();
        const double angle = (j == 0 ? 90.0 : 20.0) * kDeg * std::abs(u(rng));
        SetRotationChannels(rig.skeleton(), j, Eigen::AngleAxisd(angle, axis).toRotationMatrix(), q,
                            q);
      }
      goal = EffectorFk(rig, q);
      ++inside;
    } else {
      goal = Vector3d(u(rng), u(rng), u(rng)) * 5.0;
    }
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report);
    ASSERT_TRUE(AllFinite(q));
    const auto world = Fk(rig.skeleton(), q);
    for (int j = 1; j < 5; ++j) {
      const Vector3d parent_bone = world[j].translation() - world[j - 1].translation();
      const Vector3d bone =
          (j + 1 < 5 ? world[j + 1].translation() : world[4] * Vector3d(1, 0, 0)) -
          world[j].translation();
      const double angle = Angle(parent_bone, bone);
      worst = std::max(worst, angle);
      EXPECT_LE(angle, cone + 1e-9) << trial << " joint " << j;
    }
    const double error = (EffectorFk(rig, q) - goal).norm();
    if (made_inside && error <= 1e-5) ++converged;
    if (made_inside && error <= 1e-3) ++near;
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-6);
    }
  }
  std::printf(
      "[cones 25 deg] targets made inside the cones reached within 1e-5: %d of %d, within "
      "1e-3: %d; widest bone angle %.6f deg\n",
      converged, inside, near, worst / kDeg);
  // 81 and 100 when written: with cones active FABRIK's last digits come slowly (the misses
  // end at 1e-5..6e-4 after 500 iterations).
  EXPECT_GE(converged, 78);
  EXPECT_GE(near, 97);
}

// A hinge about Z in [0, 120] degrees on the ZXY joints 1..3: the joint's channel rotation stays
// a rotation about Z (so the bone stays in the hinge plane) by an angle in the range.
TEST(Fabrik, HingeLimitsHold) {
  const double lo = 0, hi = 120 * kDeg;
  Rig rig = FabrikRig(StraightChain(4, kZXY, 1.0), Vector3d(1, 0, 0), 500);
  for (int j = 1; j < 4; ++j) rig.SetHinge(j, Vector3d::UnitZ(), lo, hi);
  const Skeleton& s = rig.skeleton();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  Workspace ws;
  int reached = 0, made = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Vector3d goal;
    const bool made_inside = trial % 2 == 0;
    if (made_inside) {
      // Root: any rotation; hinges: angles inside the range.
      std::vector<double> q(s.num_channels(), 0.0);
      for (const int c : s.rotation_channels(0)) q[c] = kPi * u(rng);
      for (int j = 1; j < 4; ++j) q[s.rotation_channels(j)[0]] = hi * 0.5 * (1 + u(rng));  // Z.
      goal = EffectorFk(rig, q);
      ++made;
    } else {
      goal = Vector3d(u(rng), u(rng), u(rng)) * 4.0;
    }
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report);
    ASSERT_TRUE(AllFinite(q));
    const auto world = Fk(s, q);
    for (int j = 1; j < 4; ++j) {
      // The channel rotation, from FK: (parent world rotation)^T * joint world rotation.
      const Matrix3d r = world[j - 1].linear().transpose() * world[j].linear();
      const Eigen::AngleAxisd aa(r);
      const double angle = aa.angle() < 1e-12 ? 0.0 : aa.angle() * aa.axis().z();
      if (aa.angle() > 1e-9) {
        EXPECT_NEAR(std::abs(aa.axis().z()), 1.0, 1e-9) << trial << " joint " << j;
      }
      EXPECT_GE(angle, lo - 1e-9) << trial << " joint " << j;
      EXPECT_LE(angle, hi + 1e-9) << trial << " joint " << j;
      // The bone in the parent's frame stays in the plane z = 0 of the hinge.
      const Vector3d next = j + 1 < 4 ? world[j + 1].translation() : world[3] * Vector3d(1, 0, 0);
      const Vector3d bone = world[j - 1].linear().transpose() * (next - world[j].translation());
      EXPECT_NEAR(bone.z(), 0.0, 1e-9) << trial << " joint " << j;
    }
    if (made_inside && (EffectorFk(rig, q) - goal).norm() <= 1e-5) ++reached;
  }
  std::printf("[hinges 0..120 deg] targets made inside the range reached: %d of %d\n", reached,
              made);
  EXPECT_GE(reached, 80);
}

// The arm rig's per-channel limits: no channel leaves its limits, and targets made inside the
// limits are mostly reached (FABRIK writes each joint's rotation and the limits then clamp its
// Euler angles, a projection the next pass works from).
TEST(Fabrik, PerChannelLimitsHold) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kFabrik);
  rig.stages[0].settings.max_iterations = 500;
  rig.stages[0].settings.position_tolerance = 1e-5;
  std::mt19937_64 rng(6);
  Workspace ws;
  int converged = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<Target> targets = {ReachableTarget(rig, rng)};
    Pose pose = MidPose(rig);
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    for (int c = 0; c < 7; ++c) {
      EXPECT_GE(pose.channels[c], rig.min[c]) << trial;
      EXPECT_LE(pose.channels[c], rig.max[c]) << trial;
    }
    const double error = (Fk(rig.skeleton(), pose.channels)[2] * kTip - targets[0].position).norm();
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-5);
      ++converged;
    }
  }
  std::printf("[arm, per-channel limits] converged %d of %d\n", converged, kTrials);
  EXPECT_GE(converged, 125);  // 131 when written (CCD: 76 of 100 in ccd_test).
}

// Locks: the arm's wrist locked at the values that made the target (the hand then rides rigidly
// on the forearm): locked channels keep their values, and the shoulder and elbow reach the
// targets.
TEST(Fabrik, LocksHold) {
  Rig rig = ArmRig(TaskType::kPosition, Method::kFabrik);
  Unlimit(rig);
  rig.stages[0].settings.max_iterations = 500;
  for (const int c : {4, 5, 6}) rig.Lock(c);
  std::mt19937_64 rng(9);
  Workspace ws;
  int converged = 0;
  constexpr int kTrials = 100;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<double> made(7);
    for (double& v : made) v = std::uniform_real_distribution<double>(-1.2, 1.2)(rng);
    made[3] = std::abs(made[3]);
    std::vector<Target> targets = {FrameTarget(rig.skeleton(), made, 2, kTip)};
    Pose pose(rig.skeleton());
    for (const int c : {4, 5, 6}) pose.channels[c] = made[c];
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    for (const int c : {4, 5, 6}) EXPECT_EQ(pose.channels[c], made[c]) << trial;
    const double error = (Fk(rig.skeleton(), pose.channels)[2] * kTip - targets[0].position).norm();
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-6);
      ++converged;
    }
  }
  std::printf("[arm, wrist locked] converged %d of %d\n", converged, kTrials);
  EXPECT_GE(converged, 90);  // 96 when written.
}

// A pose effector: the hand's orientation is applied to the end joint, its position by FABRIK.
TEST(Fabrik, PoseEffectorTakesTheOrientation) {
  Rig rig = FabrikRig(StraightChain(5, kZXY, 1.0), Vector3d(0.2, 0, 0));
  rig.tasks[0].type = TaskType::kPose;
  std::mt19937_64 rng(7);
  Workspace ws;
  int converged = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> made(rig.skeleton().num_channels());
    for (double& v : made) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    std::vector<Target> targets = {FrameTarget(rig.skeleton(), made, 4, Vector3d(0.2, 0, 0))};
    Pose pose(rig.skeleton());
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    const auto world = Fk(rig.skeleton(), pose.channels);
    const double angle =
        Eigen::AngleAxisd(world[4].linear() * targets[0].orientation.toRotationMatrix().transpose())
            .angle();
    EXPECT_LE(angle, 1e-9) << trial;
    const double error = (world[4] * Vector3d(0.2, 0, 0) - targets[0].position).norm();
    if (report.status == Status::kConverged) {
      EXPECT_LE(error, 1e-6);
      ++converged;
    }
  }
  EXPECT_GE(converged, 98);
}

// A joint at its parent's origin (zero-length bone, as CMU's LHipJoint): no NaN, still reaches.
TEST(Fabrik, ZeroLengthBone) {
  const auto s = Chain({kZXY, kZXY, kZXY, kZXY},
                       {Vector3d::Zero(), Vector3d(1, 0, 0), Vector3d::Zero(), Vector3d(1, 0, 0)});
  const Rig rig = FabrikRig(s, Vector3d(1, 0, 0));
  std::mt19937_64 rng(8);
  Workspace ws;
  int converged = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Vector3d goal = RandomReachable(rig, -1, 1, rng);
    SolveReport report;
    const std::vector<double> q = SolveFor(rig, goal, ws, &report);
    ASSERT_TRUE(AllFinite(q));
    if (report.status == Status::kConverged) {
      EXPECT_LE((EffectorFk(rig, q) - goal).norm(), 1e-6);
      ++converged;
    }
  }
  EXPECT_GE(converged, 49);
  // The target exactly at the base: no direction to aim at; still no NaN.
  SolveReport report;
  EXPECT_TRUE(AllFinite(SolveFor(rig, Vector3d::Zero(), ws, &report)));
}

// Degenerate goals on a chain mixing every kind of joint (cone, hinge, one-channel hinge with
// Euler limits, a locked channel, a zero-length bone): goals on the base, on a joint, very far,
// and the chain folded or straight at the start. Every channel stays finite and in its limits.
TEST(Fabrik, DegenerateGoalsStayFinite) {
  const auto s = Chain({kZXY, kZXY, {C::kYrotation}, kZXY, kZXY, kZXY},
                       {Vector3d::Zero(), Vector3d(1, 0, 0), Vector3d(1, 0, 0), Vector3d(0.5, 0, 0),
                        Vector3d::Zero(), Vector3d(0.5, 0, 0)});
  Rig rig = FabrikRig(s, Vector3d(0.3, 0, 0), 50);
  rig.SetCone(1, 40 * kDeg);
  rig.SetLimits(s->rotation_channels(2)[0], 0, 2.5);
  rig.SetHinge(3, Vector3d(0, 1, 1), -1, 1);
  rig.Lock(s->rotation_channels(4)[1]);
  rig.SetCone(5, 0);
  Workspace ws;
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<Vector3d> goals = {
      Vector3d::Zero(),     Vector3d(1, 0, 0),          Vector3d(2, 0, 0),    Vector3d(3.3, 0, 0),
      Vector3d(1e12, 0, 0), Vector3d(-1e-15, 1e-15, 0), Vector3d(0, 0, -3.3), Vector3d(-1, 0, 0)};
  for (const Vector3d& goal : goals) {
    for (int start = 0; start < 3; ++start) {
      Pose pose(*s);
      if (start == 1) pose.channels[s->rotation_channels(2)[0]] = 2.5;  // Folded elbow.
      if (start == 2) {
        for (double& v : pose.channels) v = u(rng);
      }
      pose.UpdateWorld(*s);
      SolveReport report;
      const std::vector<double> q = SolveFor(rig, goal, ws, &report, &pose);
      ASSERT_TRUE(AllFinite(q)) << goal.transpose() << " start " << start;
      for (int c = 0; c < s->num_channels(); ++c) {
        EXPECT_GE(q[c], rig.min[c]);
        EXPECT_LE(q[c], rig.max[c]);
      }
      EXPECT_TRUE(std::isfinite(report.position_error[0]));
    }
  }
}

// CMU 01_01: the right arm (chain_root RightArm) reaches the hand's positions of other frames,
// starting from frame 0 (the targets are reachable: the same arm made them).
TEST(Fabrik, CmuArmReachesTheClipsHandPositions) {
  const std::string path = std::string(RIGEL_SHARED_DATA) + "/cmu_cgspeed/01_01.bvh";
  if (!std::ifstream(path)) GTEST_SKIP() << "no " << path << " (real-data corpus absent)";
  const Scene scene = ReadBvh(path);
  const Skeleton& s = *scene.skeleton;
  const Clip& clip = scene.clips[0];
  const int hand = s.FindJoint("RightHand");
  const int arm = s.FindJoint("RightArm");
  ASSERT_GE(hand, 0);
  ASSERT_GE(arm, 0);
  Rig rig(scene.skeleton);
  Task task;
  task.joint = hand;
  rig.AddTask(task);
  Stage stage;
  stage.method = Method::kFabrik;
  stage.chain_root = arm;
  stage.settings.max_iterations = 200;
  stage.settings.position_tolerance = 1e-4;  // CMU units (about 5.6 cm): 5.6 um.
  rig.stages.push_back(stage);
  Workspace ws;
  std::vector<Target> targets(1);
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  int reached = 0, solves = 0;
  double iterations = 0;
  for (int f = 10; f < clip.num_frames(); f += 25) {
    // The hand where frame f has it relative to the shoulder, moved to the shoulder of frame 0.
    ForwardKinematics(s, clip.frame(f), world);
    const Eigen::Isometry3d shoulder_f = world[s.parent(arm)];
    const Vector3d hand_f = world[hand].translation();
    Pose pose(s);
    pose.SetFromRow(s, clip.frame(0));
    targets[0].position = pose.world[s.parent(arm)] * (shoulder_f.inverse() * hand_f);
    const Eigen::Isometry3d shoulder = pose.world[s.parent(arm)];
    SolveReport report;
    ASSERT_TRUE(Solve(rig, targets, pose, ws, &report)) << report.message;
    ASSERT_TRUE(AllFinite(pose.channels));
    ForwardKinematics(s, pose.channels, world);
    const double error = (world[hand].translation() - targets[0].position).norm();
    ++solves;
    reached += error <= 1e-4;
    iterations += report.iterations;
    // Joints above the chain did not move.
    EXPECT_TRUE(world[s.parent(arm)].isApprox(shoulder, 1e-12));
  }
  std::printf("[CMU 01_01 right arm] reached %d of %d targets within 1e-4 units, %.1f iterations\n",
              reached, solves, iterations / solves);
  EXPECT_GE(reached, solves * 95 / 100);
}

}  // namespace
}  // namespace fabrik_test
}  // namespace rigel::ik
