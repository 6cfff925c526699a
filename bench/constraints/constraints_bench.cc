// Per-constraint, per-frame cost: one Run of each kind on a 62-joint skeleton (a 6-channel root,
// a 60-joint ZXY chain, and a 6-channel prop as a second root). Rotation kinds constrain chain
// joint 30 (the write-back refreshes the world transforms of the 31 joints after it); position
// kinds constrain the prop (last joint). Each iteration restores the frame's channels and world
// transforms first (a copy, measured alone as BM_RestorePose), as a bake starts each frame anew.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "core/constraints/stack.h"
#include "core/pose.h"
#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"

namespace rigel {
namespace {

using C = ChannelType;
constexpr int kChain = 60;

std::shared_ptr<const Skeleton> Build() {
  RawSkeleton raw;
  RawSkeleton::Joint root;
  root.name = "root";
  root.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  // A chain built from its tip up.
  RawSkeleton::Joint child;
  for (int i = kChain - 1; i >= 0; --i) {
    RawSkeleton::Joint j;
    j.name = "j" + std::to_string(i);
    j.rest_translation = Eigen::Vector3d(0.05, 0.01 * (i % 3), 0);
    j.channels = {C::kZrotation, C::kXrotation, C::kYrotation};
    if (i < kChain - 1) j.children.push_back(std::move(child));
    child = std::move(j);
  }
  root.children.push_back(std::move(child));
  raw.roots.push_back(std::move(root));
  RawSkeleton::Joint prop;
  prop.name = "prop";
  prop.channels = {C::kXposition, C::kYposition, C::kZposition,
                   C::kZrotation, C::kXrotation, C::kYrotation};
  raw.roots.push_back(std::move(prop));
  std::string error;
  std::unique_ptr<Skeleton> s = SkeletonBuilder().Build(raw, &error);
  if (!s) std::abort();
  return std::shared_ptr<const Skeleton>(std::move(s));
}

struct Fixture {
  std::shared_ptr<const Skeleton> skeleton = Build();
  Pose frame;
  int mid = skeleton->FindJoint("j30");
  int tip = skeleton->FindJoint("j59");
  int other = skeleton->FindJoint("j10");
  int prop = skeleton->FindJoint("prop");
  Fixture() {
    frame = Pose(*skeleton);
    for (size_t c = 0; c < frame.channels.size(); ++c) frame.channels[c] = 0.01 * (c % 7) - 0.03;
    frame.UpdateWorld(*skeleton);
  }
};

const Fixture& F() {
  static const Fixture f;
  return f;
}

template <class Job>
void RunJob(benchmark::State& st, const Job& job) {
  const Fixture& f = F();
  Pose pose = f.frame;
  constraints::State state;
  std::string error;
  for (auto _ : st) {
    pose.channels = f.frame.channels;
    pose.world = f.frame.world;
    const bool ok = job.Run(*f.skeleton, pose, 0, state, &error);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(pose.channels.data());
  }
  if (!error.empty()) st.SkipWithError(error.c_str());
}

void BM_RestorePose(benchmark::State& st) {
  const Fixture& f = F();
  Pose pose = f.frame;
  for (auto _ : st) {
    pose.channels = f.frame.channels;
    pose.world = f.frame.world;
    benchmark::DoNotOptimize(pose.channels.data());
  }
}
BENCHMARK(BM_RestorePose);

void BM_Parent(benchmark::State& st) {
  constraints::ParentConstraint c;
  c.joint = F().prop;
  c.target = F().tip;
  c.influence = 0.7;
  RunJob(st, c);
}
BENCHMARK(BM_Parent);

void BM_Point(benchmark::State& st) {
  constraints::PointConstraint c;
  c.joint = F().prop;
  c.target = F().tip;
  c.axes = 0b101;
  RunJob(st, c);
}
BENCHMARK(BM_Point);

void BM_Orient(benchmark::State& st) {
  constraints::OrientConstraint c;
  c.joint = F().mid;
  c.target = F().other;
  c.maintain_offset = true;
  RunJob(st, c);
}
BENCHMARK(BM_Orient);

void BM_Aim(benchmark::State& st) {
  constraints::AimConstraint c;
  c.joint = F().mid;
  c.target = F().prop;
  c.up_type = constraints::UpType::kObject;
  c.up_target = F().other;
  RunJob(st, c);
}
BENCHMARK(BM_Aim);

void BM_CopyLocation(benchmark::State& st) {
  constraints::CopyLocationConstraint c;
  c.joint = F().prop;
  c.target = F().tip;
  c.mix = constraints::Mix::kAdd;
  RunJob(st, c);
}
BENCHMARK(BM_CopyLocation);

void BM_CopyRotation(benchmark::State& st) {
  constraints::CopyRotationConstraint c;
  c.joint = F().mid;
  c.target = F().prop;
  c.axes = 0b011;
  RunJob(st, c);
}
BENCHMARK(BM_CopyRotation);

void BM_LimitRotation(benchmark::State& st) {
  constraints::LimitRotationConstraint c;
  c.joint = F().mid;
  c.min = Eigen::Vector3d::Constant(-0.01);
  c.max = Eigen::Vector3d::Constant(0.01);
  RunJob(st, c);
}
BENCHMARK(BM_LimitRotation);

void BM_LimitDistance(benchmark::State& st) {
  constraints::LimitDistanceConstraint c;
  c.joint = F().prop;
  c.target = F().tip;
  c.distance = 0.5;
  RunJob(st, c);
}
BENCHMARK(BM_LimitDistance);

}  // namespace
}  // namespace rigel

BENCHMARK_MAIN();
