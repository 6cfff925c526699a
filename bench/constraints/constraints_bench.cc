// Per-constraint, per-frame cost: one Run of each kind on a 62-joint skeleton (a 6-channel root,
// a 60-joint ZXY chain, and a 6-channel prop as a second root). Rotation kinds constrain chain
// joint 30 (the write-back refreshes the world transforms of the 31 joints after it); position
// kinds constrain the prop (last joint). Each iteration restores the frame's channels and world
// transforms first (a copy, measured alone as BM_RestorePose), as a bake starts each frame anew.
// BM_Twist shares j40's twist over j36 and j38 (between j35, the reference, and the driver, which
// keeps its world rotation). BM_SplineIk fits j30..j39 (nine bones) along a Catmull-Rom through
// four points (keep twist; BM_SplineIkEnds: ends twist); each bone's write-back refreshes the
// joints after it. The IK/FK blend: BM_IkFkBlend is the job alone (j30..j59 at 0.5 from
// the frame towards another pose), BM_Solve / BM_SolveIkFkBlend a warm two-bone solve of the limb
// j57-j58-j59 at ik_blend 1 and 0.5: their difference is the blend's cost inside ik::Solve.
// BM_SolveFoot / BM_SolveFootRoll: a two-bone pose goal through ik::ConstrainedFrame without and
// with a foot roll (rig:foot_roll): their difference is the foot roll's cost.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/constraints/foot_roll.h"
#include "core/constraints/stack.h"
#include "core/ik/constrained_solve.h"
#include "core/ik/ik_fk_blend.h"
#include "core/ik/solve.h"
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
  // Spline IK: the ten joints j30..j39 (nine bones, 0.45 long) along a Catmull-Rom from j30
  // (their root, which has no position channels) through three fixed points.
  std::vector<int> spine;
  for (int j = f.mid; j < f.mid + 10; ++j) spine.push_back(j);
  const Eigen::Vector3d p = f.frame.world[f.mid].translation();
  const std::vector<cs::ControlPoint> points = {{f.mid, Eigen::Vector3d::Zero()},
                                                {-1, p + Eigen::Vector3d(0.15, 0.1, 0)},
                                                {-1, p + Eigen::Vector3d(0.3, 0.05, 0.1)},
                                                {-1, p + Eigen::Vector3d(0.5, 0.1, 0)}};
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
      {"BM_LimitLocation",
       cs::LimitLocationConstraint{.joint = f.prop, .max = Eigen::Vector3d(0.1, -0.5, 0.1)}},
      {"BM_Twist",
       cs::TwistConstraint{.driver = f.skeleton->FindJoint("j40"),
                           .joints = {f.skeleton->FindJoint("j36"), f.skeleton->FindJoint("j38")},
                           .weights = {0.33, 0.66}}},
      {"BM_SplineIk", cs::SplineIkConstraint{.joints = spine, .points = points}},
      {"BM_SplineIkEnds", cs::SplineIkConstraint{.joints = spine,
                                                 .points = points,
                                                 .twist = cs::SplineTwist::kEnds,
                                                 .up_start = {.vector = Eigen::Vector3d::UnitY()},
                                                 .up_end = {.vector = Eigen::Vector3d::UnitZ()}}},
  };
}

void BM_IkFkBlend(benchmark::State& st) {
  const Fixture& f = F();
  Pose ik = f.frame;
  for (size_t c = 0; c < ik.channels.size(); ++c) ik.channels[c] += 0.2 * std::sin(double(c));
  std::vector<double> weights(f.skeleton->num_joints(), 1.0);
  for (int j = f.mid; j <= f.tip; ++j) weights[j] = 0.5;
  std::vector<double> out(ik.channels.size());
  const ik::IkFkBlendJob job{.skeleton = f.skeleton.get(),
                             .fk = f.frame.channels,
                             .ik = ik.channels,
                             .weights = weights,
                             .output = out};
  for (auto _ : st) {
    const bool ok = job.Run();
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_IkFkBlend);

// A warm two-bone solve of the limb j57-j58-j59 towards a point off the tip, at IK/FK blend
// `blend`.
void SolveChain(benchmark::State& st, double blend) {
  const Fixture& f = F();
  ik::Rig rig(f.skeleton);
  rig.AddTask({.joint = f.tip});
  ik::Stage stage;
  stage.method = ik::Method::kTwoBone;
  stage.upper = f.skeleton->FindJoint("j57");
  stage.lower = f.skeleton->FindJoint("j58");
  rig.stages.push_back(stage);
  std::vector<ik::Target> targets(1);
  targets[0].position = f.frame.world[f.tip].translation() + Eigen::Vector3d(-0.02, -0.02, 0.01);
  targets[0].ik_blend = blend;
  ik::Workspace ws;
  ik::SolveReport report;
  Pose pose = f.frame;
  for (auto _ : st) {
    pose.channels = f.frame.channels;
    const bool ok = ik::Solve(rig, targets, pose, ws, &report);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(pose.channels.data());
  }
  if (report.status != ik::Status::kConverged) st.SkipWithError("the limb did not reach");
}
// A warm two-bone solve of the pose effector j58 (limb j56-j57-j58, j59 its toe) through
// ik::ConstrainedFrame, with or without a foot roll on it (the goal rolled 20 degrees over the
// ball, the toe turned back): their difference is the foot roll's cost per frame.
void SolveFoot(benchmark::State& st, bool roll) {
  const Fixture& f = F();
  const int ankle = f.skeleton->FindJoint("j58");
  ik::Rig rig(f.skeleton);
  rig.AddTask({.type = ik::TaskType::kPose, .joint = ankle});
  ik::Stage stage;
  stage.method = ik::Method::kTwoBone;
  stage.upper = f.skeleton->FindJoint("j56");
  stage.lower = f.skeleton->FindJoint("j57");
  rig.stages.push_back(stage);
  std::vector<ik::Target> targets(1);
  targets[0].position = f.frame.world[ankle].translation() + Eigen::Vector3d(-0.02, -0.02, 0.01);
  targets[0].orientation = Eigen::Quaterniond(f.frame.world[ankle].linear());
  std::vector<constraints::FootRollRig> rolls;
  if (roll) {
    constraints::FootRollRig r;
    r.task = 0;
    r.ankle = ankle;
    r.toe = f.tip;
    r.foot.ball = Eigen::Vector3d(0, -0.05, 0.1);
    r.foot.heel = Eigen::Vector3d(0, -0.05, -0.05);
    r.foot.toe = Eigen::Vector3d(0, -0.05, 0.15);
    r.foot.roll = 0.35;
    rolls.push_back(r);
  }
  ik::Workspace ws;
  ik::SolveReport report;
  const ik::ConstrainedFrame job{.rig = &rig,
                                 .targets = targets,
                                 .constraints = nullptr,
                                 .state = nullptr,
                                 .foot_rolls = rolls,
                                 .workspace = &ws};
  Pose pose = f.frame;
  bool solved = false;
  std::string error;
  for (auto _ : st) {
    pose.channels = f.frame.channels;
    const bool ok = job.Run(0, pose, &report, &solved, &error);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(pose.channels.data());
  }
  if (!error.empty()) st.SkipWithError(error.c_str());
}
void BM_SolveFoot(benchmark::State& st) { SolveFoot(st, false); }
void BM_SolveFootRoll(benchmark::State& st) { SolveFoot(st, true); }
BENCHMARK(BM_SolveFoot);
BENCHMARK(BM_SolveFootRoll);

void BM_Solve(benchmark::State& st) { SolveChain(st, 1.0); }
void BM_SolveIkFkBlend(benchmark::State& st) { SolveChain(st, 0.5); }
BENCHMARK(BM_Solve);
BENCHMARK(BM_SolveIkFkBlend);

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
