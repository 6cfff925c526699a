// Shared fixture of the constraint tests: a small tree with mixed rotation orders, rest
// orientations and a six-channel prop under a rotated parent, posed away from rest.
//
//   root (Xpos Ypos Zpos Zrot Xrot Yrot)
//    |-- arm (ZXY, rest orientation 30 deg about (1,1,0)) --1.0-- hand (XYZ) --0.5-- (end)
//    |-- prop (Xpos Ypos Zpos Yrot Xrot Zrot, rest orientation 20 deg about Z), 0.3 from root
//    |-- other (Zrot Yrot Xrot), 0.7 from root on -X
//    `-- stub (Zrot only), 0.2 from root on Y
#ifndef RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_
#define RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/constraints/aim.h"
#include "core/constraints/constraint.h"
#include "core/constraints/limit_rotation.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/skeleton.h"
#include "support/test_skeletons.h"

namespace rigel::constraints_test {

using C = ChannelType;
using constraints::State;

enum Joint { kRoot = 0, kArm = 1, kHand = 2, kProp = 3, kOther = 4, kStub = 5 };

using testing::AddChild;

inline std::shared_ptr<const Skeleton> Tree() {
  RawSkeleton raw;
  RawSkeleton::Joint& root = raw.roots.emplace_back();
  root.name = "root";
  root.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton::Joint& arm = AddChild(root, "arm", Eigen::Vector3d(0.1, 0.2, 0),
                                     {C::kZrotation, C::kXrotation, C::kYrotation});
  arm.rest_orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.5236, Eigen::Vector3d(1, 1, 0).normalized()));
  AddChild(arm, "hand", Eigen::Vector3d(1.0, 0, 0), {C::kXrotation, C::kYrotation, C::kZrotation});
  RawSkeleton::Joint& prop = AddChild(
      root, "prop", Eigen::Vector3d(0, 0, 0.3),
      {C::kXposition, C::kYposition, C::kZposition, C::kYrotation, C::kXrotation, C::kZrotation});
  prop.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.349, Eigen::Vector3d::UnitZ()));
  AddChild(root, "other", Eigen::Vector3d(-0.7, 0, 0),
           {C::kZrotation, C::kYrotation, C::kXrotation});
  AddChild(root, "stub", Eigen::Vector3d(0, 0.2, 0), {C::kZrotation});
  return testing::BuildOrDie(raw);
}

// A pose away from rest: every channel gets a distinct value (seeded by `k`), world updated.
inline Pose Posed(const Skeleton& s, double k = 1.0) {
  Pose pose(s);
  for (size_t c = 0; c < pose.channels.size(); ++c) {
    pose.channels[c] = 0.1 * k * (static_cast<double>(c % 5) - 1.7) + 0.05 * static_cast<double>(c);
  }
  pose.UpdateWorld(s);
  return pose;
}

// World transform of `joint` recomputed by FK from the pose's channels alone.
inline Eigen::Isometry3d Fk(const Skeleton& s, const Pose& pose, int joint) {
  Pose fresh(s);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(s);
  return fresh.world[joint];
}

// Angle between two rotations (radians).
inline double AngleBetween(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

// World Euler angles (x, y, z) for R = Rz(z) Ry(y) Rx(x), computed here from the matrix entries
// (independently of core/euler).
inline Eigen::Vector3d EulerXYZ(const Eigen::Matrix3d& r) {
  return Eigen::Vector3d(std::atan2(r(2, 1), r(2, 2)), -std::asin(r(2, 0)),
                         std::atan2(r(1, 0), r(0, 0)));
}

constexpr double kTol = 1e-9;

// Checks that `got` lies halfway between rotations `own` and `goal` (a slerp at 0.5): equal
// angles to both ends, summing to the angle between them.
inline void ExpectHalfway(const Eigen::Matrix3d& got, const Eigen::Matrix3d& own,
                          const Eigen::Matrix3d& goal) {
  EXPECT_NEAR(AngleBetween(got, own), AngleBetween(got, goal), kTol);
  EXPECT_NEAR(AngleBetween(got, own) + AngleBetween(got, goal), AngleBetween(own, goal), kTol);
}

// A job of type `Job` constraining `joint` to `target`, its other options at their defaults.
template <class Job>
Job Make(int joint, int target) {
  Job job;
  job.joint = joint;
  job.target = target;
  return job;
}

// The aim job the aim tests start from: `other` aims at the hand with a slanted up vector.
inline constraints::AimConstraint ValidAim() {
  auto c = Make<constraints::AimConstraint>(kOther, kHand);
  c.aim_axis = Eigen::Vector3d(1, 1, 0).normalized();
  c.up_axis = Eigen::Vector3d(0, 0, 1);
  c.up = Eigen::Vector3d(0.2, 1, 0.1);
  return c;
}

// The limit the limit_rotation tests start from: the arm within +-0.2, +-0.3, +-0.1 rad (x, y, z).
inline constraints::LimitRotationConstraint ArmLimit() {
  constraints::LimitRotationConstraint c;
  c.joint = kArm;
  c.min = Eigen::Vector3d(-0.2, -0.3, -0.1);
  c.max = Eigen::Vector3d(0.2, 0.3, 0.1);
  return c;
}

// One case of the copy kinds' tables: mix, axes and influence of a job on the prop, copying the
// hand.
struct CopyCase {
  constraints::Mix mix;
  std::uint8_t axes;
  double influence;
};

// Every copy case: both mixes, every non-empty axis mask, full and half influence.
inline std::vector<CopyCase> AllCopyCases() {
  std::vector<CopyCase> cases;
  for (const constraints::Mix mix : {constraints::Mix::kReplace, constraints::Mix::kAdd}) {
    for (std::uint8_t axes = 1; axes <= constraints::kAllAxes; ++axes) {
      for (const double influence : {1.0, 0.5}) cases.push_back({mix, axes, influence});
    }
  }
  return cases;
}

// The copy job (CopyLocationConstraint or CopyRotationConstraint) of case `k`.
template <class Job>
Job MakeCopy(const CopyCase& k) {
  Job job = Make<Job>(kProp, kHand);
  job.mix = k.mix;
  job.axes = k.axes;
  job.influence = k.influence;
  return job;
}

// The test name of a parameterized case: its `name` member (INSTANTIATE_TEST_SUITE_P's last
// argument).
struct NameOf {
  template <class Case>
  std::string operator()(const ::testing::TestParamInfo<Case>& param) const {
    return param.param.name;
  }
};

// The result tests' common state: the tree, the error of the last Run and a fresh State.
class ConstraintTest : public ::testing::Test {
 protected:
  // Runs `job` on `pose` at `frame` with `state` (the fixture's by default); error in error_.
  template <class Job>
  bool Run(const Job& job, Pose& pose, int frame = 0) {
    return job.Run(*s_, pose, frame, state_, &error_);
  }
  template <class Job>
  bool Run(const Job& job, Pose& pose, int frame, State& state) {
    return job.Run(*s_, pose, frame, state, &error_);
  }

  std::shared_ptr<const Skeleton> s_ = Tree();
  std::string error_;
  State state_;
};

// The copy kinds' tests, one per CopyCase (AllCopyCases).
class CopyTest : public ConstraintTest, public ::testing::WithParamInterface<CopyCase> {
 protected:
  // Runs the copy job `Job` of the current case on the tree posed with `seed`. Returns the pose
  // before the run and the prop's world transform after it, recomputed by FK.
  template <class Job>
  std::pair<Pose, Eigen::Isometry3d> RunCopy(double seed) {
    const Pose before = Posed(*s_, seed);
    Pose pose = before;
    EXPECT_TRUE(Run(MakeCopy<Job>(GetParam()), pose)) << error_;
    return {before, Fk(*s_, pose, kProp)};
  }
};

}  // namespace rigel::constraints_test

#endif  // RIGEL_TESTS_CONSTRAINTS_CONSTRAINT_TEST_UTIL_H_
