// Per-constraint, per-frame cost: one Run of each kind on a 62-joint skeleton (a 6-channel root,
// a 60-joint ZXY chain, and a 6-channel prop as a second root). Rotation kinds constrain chain
// joint 30 (the write-back refreshes the world transforms of the 31 joints after it); position
// kinds constrain the prop (last joint). Each iteration restores the frame's channels and world
// transforms first (a copy, measured alone as BM_RestorePose), as a bake starts each frame anew.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

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
    for (size_t c = 0; c < frame.channels.size(); ++c) {
      frame.channels[c] = 0.01 * static_cast<double>(c % 7) - 0.03;
    }
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

// The job of each per-kind benchmark, by name: rotation kinds on the chain's middle joint,
// position kinds on the prop.
std::vector<std::pair<const char*, constraints::Constraint>> Jobs(const Fixture& f) {
  namespace cs = constraints;
  return {
      {"BM_Parent", cs::ParentConstraint{.joint = f.prop, .target = f.tip, .influence = 0.7}},
      {"BM_Point", cs::PointConstraint{.joint = f.prop, .target = f.tip, .axes = 0b101}},
      {"BM_Orient",
       cs::OrientConstraint{.joint = f.mid, .target = f.other, .maintain_offset = true}},
      {"BM_Aim",
       cs::AimConstraint{
           .joint = f.mid, .target = f.prop, .up_type = cs::UpType::kObject, .up_target = f.other}},
      {"BM_CopyLocation",
       cs::CopyLocationConstraint{.joint = f.prop, .target = f.tip, .mix = cs::Mix::kAdd}},
      {"BM_CopyRotation",
       cs::CopyRotationConstraint{.joint = f.mid, .target = f.prop, .axes = 0b011}},
      {"BM_LimitRotation", cs::LimitRotationConstraint{.joint = f.mid,
                                                       .min = Eigen::Vector3d::Constant(-0.01),
                                                       .max = Eigen::Vector3d::Constant(0.01)}},
      {"BM_LimitDistance",
       cs::LimitDistanceConstraint{.joint = f.prop, .target = f.tip, .distance = 0.5}},
  };
}

}  // namespace
}  // namespace rigel

// BM_RestorePose (registered above), then one benchmark per kind in Jobs' order; each visits its
// job once, outside the timed loop.
int main(int argc, char** argv) {
  for (const auto& [name, job] : rigel::Jobs(rigel::F())) {
    benchmark::RegisterBenchmark(name, [job = job](benchmark::State& st) {
      std::visit([&](const auto& c) { rigel::RunJob(st, c); }, job);
    });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
