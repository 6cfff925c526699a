// The arm rig of the IK solver tests and the targets they give it. In rigel::ik, the namespace the
// IK suites live in, so that every suite uses them as they are (the arm itself, a 7-DOF chain, is
// tests/support/test_skeletons.h's, shared with bench/ik).
#ifndef RIGEL_TESTS_IK_ARM_RIG_H_
#define RIGEL_TESTS_IK_ARM_RIG_H_

#include <Eigen/Geometry>
#include <random>
#include <vector>

#include "core/ik/rig.h"
#include "core/ik/two_bone.h"
#include "core/pose.h"
#include "support/test_skeletons.h"

namespace rigel::ik {

// The effector offset past the wrist (joint 2) of the arm.
inline const Eigen::Vector3d kTip = rigel::testing::kArmTip;

// Sets the arm's limits (radians, per channel in layout order, as in the benchmark) on `rig`.
inline void SetArmLimits(Rig& rig) {
  std::vector<double> lo, hi;
  rigel::testing::ArmLimits(lo, hi);
  for (int c = 0; c < 7; ++c) rig.SetLimits(c, lo[c], hi[c]);
}

// A task of `type` on joint 2 (the arm's wrist, a leg's ankle), effector `offset` past it.
inline Task EndTask(TaskType type, const Eigen::Vector3d& offset) {
  Task t;
  t.type = type;
  t.joint = 2;
  t.offset = offset;
  return t;
}

// Adds a stage of `method` (over every task) that stops after `max_iterations`.
inline void AddStage(Rig& rig, Method method, int max_iterations) {
  Stage stage;
  stage.method = method;
  stage.settings.max_iterations = max_iterations;
  rig.stages.push_back(stage);
}

// The arm rig of the solver tests: one task of `type` on the wrist (effector kTip past it), the
// arm's limits, one stage of `method` with 200 iterations.
inline Rig ArmRig(TaskType type, Method method) {
  Rig rig(rigel::testing::Arm());
  SetArmLimits(rig);
  rig.AddTask(EndTask(type, kTip));
  AddStage(rig, method, 200);
  return rig;
}

// Takes every limit off the rig's channels.
inline void Unlimit(Rig& rig) {
  for (size_t c = 0; c < rig.min.size(); ++c) rig.SetLimits(static_cast<int>(c), -kInf, kInf);
}

// Random channel values inside the rig's limits.
inline std::vector<double> RandomInside(const Rig& rig, std::mt19937_64& rng) {
  std::vector<double> q(rig.min.size());
  for (size_t c = 0; c < q.size(); ++c) {
    q[c] = std::uniform_real_distribution<double>(rig.min[c], rig.max[c])(rng);
  }
  return q;
}

// A pose of the rig's skeleton with every channel in the middle of its limits.
inline Pose MidPose(const Rig& rig) {
  Pose pose(rig.skeleton());
  for (size_t c = 0; c < rig.min.size(); ++c) pose.channels[c] = 0.5 * (rig.min[c] + rig.max[c]);
  return pose;
}

// The world frame of `joint` (+ offset) at channels q, as a target.
inline Target FrameTarget(const Skeleton& s, const std::vector<double>& q, int joint,
                          const Eigen::Vector3d& offset) {
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  ForwardKinematics(s, q, world);
  Target t;
  t.position = world[joint] * offset;
  t.orientation = Eigen::Quaterniond(world[joint].linear());
  return t;
}

// A reachable target of the arm rig's wrist task: the effector's frame at random channels inside
// the rig's limits.
inline Target ReachableTarget(const Rig& rig, std::mt19937_64& rng) {
  return FrameTarget(rig.skeleton(), RandomInside(rig, rng), 2, kTip);
}

// The pole task of the limb 0 (root) - 1 (mid) - 2 (end): the elbow turns towards its target.
inline Task LimbPoleTask() {
  Task t;
  t.type = TaskType::kPole;
  t.joint = 2;
  t.pole_root = 0;
  t.pole_mid = 1;
  return t;
}

// The two-bone job of the limb 0 (upper) - 1 (lower) - 2 (end) of `s`, acting on `pose` (effector
// `offset` past the end); target and pole are left to the caller.
inline TwoBoneJob LimbJob(const Skeleton& s, Pose& pose, const Eigen::Vector3d& offset) {
  TwoBoneJob job;
  job.skeleton = &s;
  job.channels = pose.channels;
  job.world = pose.world;
  job.upper = 0;
  job.lower = 1;
  job.end = 2;
  job.offset = offset;
  return job;
}

}  // namespace rigel::ik

#endif  // RIGEL_TESTS_IK_ARM_RIG_H_
