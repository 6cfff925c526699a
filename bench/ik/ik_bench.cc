// IK benchmark: rigel's solvers against KDL's ChainIkSolverPos_LMA and ChainIkSolverPos_NR_JL in
// the same run (KDL only when built with it), and the full-body humanoid clip.
//
// Chains: the 7-DOF arm and the 30-DOF chain of tests/support/test_skeletons.h. 10,000 random
// reachable targets, made by FK from random channel values inside the limits; every solver starts
// from the same initial pose (the middle of the limits). Success: position error <= 1e-4 m (and
// angle error <= 1e-3 rad for 6D), checked by rigel's FK on the returned channels; "in limits" also
// requires every channel inside its limits. Times are per solve (median, p99) in microseconds.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "core/ik/solve.h"
#include "tests/support/test_skeletons.h"

#ifdef RIGEL_HAVE_KDL
#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>
#endif

namespace rigel::bench {
namespace {

using rigel::testing::Humanoid;

constexpr int kTargets = 10000;
constexpr double kPosOk = 1e-4;
constexpr double kAngOk = 1e-3;

struct Problem {
  std::string name;
  std::shared_ptr<const Skeleton> skeleton;
  int end_joint = -1;
  Eigen::Vector3d tip;
  std::vector<double> lo, hi, init;
  std::vector<Eigen::Isometry3d> targets;  // World frame of the effector.
};

// The problem of chain `s` (effector `tip` past its last joint, limits from `limits`), its targets
// drawn with `seed`.
Problem MakeProblem(const std::string& name, std::shared_ptr<const Skeleton> s,
                    const Eigen::Vector3d& tip,
                    void (*limits)(std::vector<double>& lo, std::vector<double>& hi),
                    unsigned seed) {
  Problem p;
  p.name = name;
  p.skeleton = std::move(s);
  p.end_joint = p.skeleton->num_joints() - 1;
  p.tip = tip;
  limits(p.lo, p.hi);
  p.init.resize(p.lo.size());
  for (size_t c = 0; c < p.lo.size(); ++c) p.init[c] = 0.5 * (p.lo[c] + p.hi[c]);
  std::mt19937_64 rng(seed);
  std::vector<double> q(p.lo.size());
  std::vector<Eigen::Isometry3d> world(p.skeleton->num_joints());
  for (int i = 0; i < kTargets; ++i) {
    for (size_t c = 0; c < q.size(); ++c) {
      q[c] = std::uniform_real_distribution<double>(p.lo[c], p.hi[c])(rng);
    }
    ForwardKinematics(*p.skeleton, q, world);
    Eigen::Isometry3d t = world[p.end_joint];
    t.translation() = world[p.end_joint] * p.tip;
    p.targets.push_back(t);
  }
  return p;
}

struct Result {
  double success = 0, success_limits = 0, median_us = 0, p99_us = 0, mean_us = 0;
};

// Runs solve(i, q) on every target from p.init, timing each call.
Result Sweep(const Problem& p, bool six_d,
             const std::function<void(int, std::vector<double>&)>& solve) {
  std::vector<double> times;
  times.reserve(kTargets);
  std::vector<double> q(p.init.size());
  std::vector<Eigen::Isometry3d> world(p.skeleton->num_joints());
  int ok = 0, ok_limits = 0;
  for (int i = 0; i < kTargets; ++i) {
    q = p.init;
    const auto t0 = std::chrono::steady_clock::now();
    solve(i, q);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    ForwardKinematics(*p.skeleton, q, world);
    const Eigen::Vector3d pos = world[p.end_joint] * p.tip;
    bool good = (pos - p.targets[i].translation()).norm() <= kPosOk;
    if (six_d) {
      const Eigen::AngleAxisd d(
          Eigen::Matrix3d(world[p.end_joint].linear() * p.targets[i].linear().transpose()));
      good = good && std::abs(d.angle()) <= kAngOk;
    }
    bool inside = true;
    for (size_t c = 0; c < q.size(); ++c)
      inside = inside && q[c] >= p.lo[c] - 1e-12 && q[c] <= p.hi[c] + 1e-12;
    ok += good;
    ok_limits += good && inside;
  }
  Result r;
  r.success = 100.0 * ok / kTargets;
  r.success_limits = 100.0 * ok_limits / kTargets;
  double sum = 0;
  for (const double t : times) sum += t;
  r.mean_us = sum / kTargets;
  std::sort(times.begin(), times.end());
  r.median_us = times[kTargets / 2];
  r.p99_us = times[static_cast<size_t>(kTargets * 0.99)];
  return r;
}

void Report(benchmark::State& state, const std::string& label, const Result& r) {
  state.counters["success_%"] = r.success;
  state.counters["in_limits_%"] = r.success_limits;
  state.counters["median_us"] = r.median_us;
  state.counters["p99_us"] = r.p99_us;
  std::printf(
      "%-44s success %6.2f %%  in limits %6.2f %%  median %8.2f us  p99 %8.2f us  mean %8.2f us\n",
      label.c_str(), r.success, r.success_limits, r.median_us, r.p99_us, r.mean_us);
  std::fflush(stdout);
}

// rigel on a chain problem.
void RigelChain(benchmark::State& state, const Problem* p, bool six_d, ik::Method method) {
  ik::Rig rig(p->skeleton);
  for (size_t c = 0; c < p->lo.size(); ++c) rig.SetLimits(static_cast<int>(c), p->lo[c], p->hi[c]);
  ik::Task task;
  task.type = six_d ? ik::TaskType::kPose : ik::TaskType::kPosition;
  task.joint = p->end_joint;
  task.offset = p->tip;
  rig.AddTask(task);
  ik::Stage stage;
  stage.method = method;
  stage.settings.position_tolerance = 1e-5;
  stage.settings.angle_tolerance = 1e-4;
  stage.settings.max_iterations = 100;
  // Deterministic restarts when a solve stops above tolerance (Settings::restarts).
  stage.settings.restarts = 10;
  rig.stages.push_back(stage);
  ik::Workspace ws;
  ws.Prepare(rig);
  Pose pose(*p->skeleton);
  std::vector<ik::Target> targets(1);
  ik::SolveReport report;
  Result r;
  long iterations = 0, restarts = 0;
  for (auto _ : state) {
    iterations = restarts = 0;
    r = Sweep(*p, six_d, [&](int i, std::vector<double>& q) {
      targets[0].position = p->targets[i].translation();
      targets[0].orientation = Eigen::Quaterniond(p->targets[i].linear());
      pose.channels = q;
      ik::Solve(rig, targets, pose, ws, &report);
      q = pose.channels;
      iterations += report.iterations;
      restarts += report.restarts;
    });
  }
  Report(state,
         "rigel " + std::string(ik::MethodName(method)) + " " + p->name +
             (six_d ? " 6D" : " position"),
         r);
  std::printf("%-44s iterations/solve %.2f, restarts/solve %.3f\n", "",
              static_cast<double>(iterations) / kTargets, static_cast<double>(restarts) / kTargets);
}

#ifdef RIGEL_HAVE_KDL
// The same chain in KDL: one single-axis segment per channel, the link offset on the segment
// that ends each joint (KDL's tip frame follows the joint), the effector offset on the last.
KDL::Chain ToKdl(const Problem& p) {
  const Skeleton& s = *p.skeleton;
  KDL::Chain chain;
  for (int j = 0; j < s.num_joints(); ++j) {
    const auto rc = s.rotation_channels(j);
    for (size_t k = 0; k < rc.size(); ++k) {
      const int axis = ChannelAxis(s.channels()[rc[k]]);
      const KDL::Joint joint(axis == 0   ? KDL::Joint::RotX
                             : axis == 1 ? KDL::Joint::RotY
                                         : KDL::Joint::RotZ);
      Eigen::Vector3d next = Eigen::Vector3d::Zero();
      if (k + 1 == rc.size()) next = j + 1 < s.num_joints() ? s.rest_translation(j + 1) : p.tip;
      chain.addSegment(KDL::Segment(joint, KDL::Frame(KDL::Vector(next.x(), next.y(), next.z()))));
    }
  }
  return chain;
}

KDL::Frame ToKdl(const Eigen::Isometry3d& t) {
  KDL::Rotation r(t(0, 0), t(0, 1), t(0, 2), t(1, 0), t(1, 1), t(1, 2), t(2, 0), t(2, 1), t(2, 2));
  return KDL::Frame(r, KDL::Vector(t(0, 3), t(1, 3), t(2, 3)));
}

// Sweeps a KDL position solver of the n-joint chain over p's targets (as the benchmark's loop).
template <typename Solver>
Result KdlSweep(benchmark::State& state, const Problem& p, bool six_d, Solver& solver, unsigned n) {
  KDL::JntArray q_init(n), q_out(n);
  Result r;
  for (auto _ : state) {
    r = Sweep(p, six_d, [&](int i, std::vector<double>& q) {
      for (unsigned c = 0; c < n; ++c) q_init(c) = q[c];
      solver.CartToJnt(q_init, ToKdl(p.targets[i]), q_out);
      for (unsigned c = 0; c < n; ++c) q[c] = q_out(c);
    });
  }
  return r;
}

void KdlLma(benchmark::State& state, const Problem* p, bool six_d) {
  const KDL::Chain chain = ToKdl(*p);
  Eigen::Matrix<double, 6, 1> l;
  l << 1, 1, 1, six_d ? 1 : 0, six_d ? 1 : 0, six_d ? 1 : 0;
  KDL::ChainIkSolverPos_LMA solver(chain, l, 1e-5, 500, 1e-15);
  const Result r = KdlSweep(state, *p, six_d, solver, chain.getNrOfJoints());
  Report(state, "KDL LMA " + p->name + (six_d ? " 6D" : " position"), r);
}

void KdlNrJl(benchmark::State& state, const Problem* p, bool six_d) {
  const KDL::Chain chain = ToKdl(*p);
  const unsigned n = chain.getNrOfJoints();
  KDL::JntArray lo(n), hi(n);
  for (unsigned c = 0; c < n; ++c) {
    lo(c) = p->lo[c];
    hi(c) = p->hi[c];
  }
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainIkSolverVel_pinv vel(chain);
  KDL::ChainIkSolverPos_NR_JL solver(chain, lo, hi, fk, vel, 100, 1e-6);
  const Result r = KdlSweep(state, *p, six_d, solver, n);
  // NR_JL always solves the full 6D frame (the targets' frames are reachable).
  Report(state, "KDL NR_JL " + p->name + (six_d ? " 6D" : " position (solves 6D)"), r);
}
#endif

// Full body: 4 six-D effectors (hands, feet) follow a smooth 10,000-frame clip made by FK of
// slowly varying channel values inside the limits; warm start from the previous frame.
struct BodyClip {
  std::vector<std::vector<ik::Target>> frames;
};

BodyClip MakeBodyClip(const Humanoid& h, const ik::Rig& rig, unsigned seed, int frames) {
  const Skeleton& s = *h.skeleton;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int nc = s.num_channels();
  std::vector<double> mid(nc), amp(nc), freq(nc), phase(nc);
  for (int c = 0; c < nc; ++c) {
    const double lo = std::max(h.lo[c], -1.0), hi = std::min(h.hi[c], 1.0);
    mid[c] = 0.5 * (lo + hi);
    amp[c] = 0.4 * (hi - lo) * u(rng);
    freq[c] = 2 * kPi * (0.1 + 0.4 * u(rng)) / 120.0;  // 0.1-0.5 Hz at 120 frames/s.
    phase[c] = 2 * kPi * u(rng);
  }
  for (int c = 0; c < 3; ++c) amp[c] = 0.2 * u(rng);
  BodyClip clip;
  std::vector<double> q(nc);
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  for (int f = 0; f < frames; ++f) {
    for (int c = 0; c < nc; ++c) q[c] = mid[c] + amp[c] * std::sin(freq[c] * f + phase[c]);
    ForwardKinematics(s, q, world);
    std::vector<ik::Target> t(rig.tasks.size());
    for (size_t k = 0; k < rig.tasks.size(); ++k) {
      t[k].position = world[rig.tasks[k].joint].translation();
      t[k].orientation = Eigen::Quaterniond(world[rig.tasks[k].joint].linear());
    }
    clip.frames.push_back(std::move(t));
  }
  return clip;
}

ik::Rig BodyRig(const Humanoid& h) {
  ik::Rig rig = rigel::testing::HandsAndFeetRig(h);
  ik::Stage stage;
  stage.settings.position_tolerance = 1e-5;
  stage.settings.angle_tolerance = 1e-4;
  stage.settings.max_iterations = 50;
  rig.stages.push_back(stage);
  return rig;
}

struct BodyRun {
  double seconds = 0;
  int converged = 0;
  int within = 0;
  long iterations = 0;
};

BodyRun RunBody(const ik::Rig& rig, const BodyClip& clip) {
  ik::Workspace ws;
  ws.Prepare(rig);
  Pose pose(rig.skeleton());
  ik::SolveReport report;
  BodyRun run;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& targets : clip.frames) {
    ik::Solve(rig, targets, pose, ws, &report);
    run.converged += report.status == ik::Status::kConverged;
    bool ok = true;
    for (size_t k = 0; k < report.position_error.size(); ++k) {
      ok = ok && report.position_error[k] <= kPosOk && report.angle_error[k] <= kAngOk;
    }
    run.within += ok;
    run.iterations += report.iterations;
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

void FullBody(benchmark::State& state) {
  const Humanoid h = rigel::testing::MakeHumanoid();
  const ik::Rig rig = BodyRig(h);
  const int frames = 10000;
  const BodyClip a = MakeBodyClip(h, rig, 11, frames);
  const BodyClip b = MakeBodyClip(h, rig, 23, frames);
  BodyRun one, one_b, two_a, two_b;
  double two_seconds = 0;
  auto median_run = [&rig](const BodyClip& clip, int n) {
    std::vector<BodyRun> runs;
    for (int r = 0; r < n; ++r) runs.push_back(RunBody(rig, clip));
    std::sort(runs.begin(), runs.end(),
              [](const BodyRun& x, const BodyRun& y) { return x.seconds < y.seconds; });
    return runs[runs.size() / 2];
  };
  for (auto _ : state) {
    // One thread: the median of 5 runs of each clip (a shared VM's neighbours move single runs
    // by several percent). Clip a gives the frames/s figure.
    one = median_run(a, 5);
    one_b = median_run(b, 5);
    // Two threads with the same work: each bakes both clips (one a then b, the other b then a,
    // each with its own workspace per clip); the median of 3 runs.
    std::vector<double> pair_seconds;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      std::thread ta([&] {
        two_a = RunBody(rig, a);
        RunBody(rig, b);
      });
      std::thread tb([&] {
        two_b = RunBody(rig, b);
        RunBody(rig, a);
      });
      ta.join();
      tb.join();
      pair_seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(pair_seconds.begin(), pair_seconds.end());
    two_seconds = pair_seconds[1];
  }
  const double fps1 = frames / one.seconds;
  const double fps2 = 4.0 * frames / two_seconds;
  // Two threads each doing what one thread does in one.seconds + one_b.seconds (clip b has
  // harder frames than clip a, so clip a's rate alone would misstate the scaling).
  const double speedup = 2.0 * (one.seconds + one_b.seconds) / two_seconds;
  state.counters["frames_per_s_1thread"] = fps1;
  state.counters["frames_per_s_2threads"] = fps2;
  state.counters["speedup"] = speedup;
  std::printf(
      "full body %d joints %d channels, 4 x 6D: 1 thread %.0f frames/s (%.2f us/frame, "
      "%.2f iterations/frame, converged %.2f %%, within 1e-4 m/1e-3 rad %.2f %%)\n",
      h.skeleton->num_joints(), h.skeleton->num_channels(), fps1, 1e6 / fps1,
      static_cast<double>(one.iterations) / frames, 100.0 * one.converged / frames,
      100.0 * one.within / frames);
  std::printf("full body clip b, 1 thread: %.0f frames/s (%.2f iterations/frame, within %.2f %%)\n",
              frames / one_b.seconds, static_cast<double>(one_b.iterations) / frames,
              100.0 * one_b.within / frames);
  std::printf("full body 2 threads, each baking clips a and b: %.0f frames/s; %.2fx one thread\n",
              fps2, speedup);
  std::fflush(stdout);
}

const Problem& ArmProblem() {
  static const Problem p = MakeProblem("arm7", rigel::testing::Arm(), rigel::testing::kArmTip,
                                       rigel::testing::ArmLimits, 1);
  return p;
}

const Problem& Chain30Problem() {
  static const Problem p = MakeProblem("chain30", rigel::testing::Chain30(),
                                       rigel::testing::kChainTip, rigel::testing::Chain30Limits, 2);
  return p;
}

int Register() {
  struct Entry {
    const Problem* (*problem)();
    bool six_d;
  };
  static const Entry entries[] = {{[] { return &ArmProblem(); }, false},
                                  {[] { return &ArmProblem(); }, true},
                                  {[] { return &Chain30Problem(); }, true},
                                  {[] { return &Chain30Problem(); }, false}};
  for (const Entry& e : entries) {
    const Problem* p = e.problem();
    const std::string suffix = p->name + (e.six_d ? "/6d" : "/position");
    benchmark::RegisterBenchmark(("rigel_dls_adaptive/" + suffix).c_str(), RigelChain, p, e.six_d,
                                 ik::Method::kDlsAdaptive)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
#ifdef RIGEL_HAVE_KDL
    benchmark::RegisterBenchmark(("kdl_lma/" + suffix).c_str(), KdlLma, p, e.six_d)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("kdl_nr_jl/" + suffix).c_str(), KdlNrJl, p, e.six_d)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
#endif
  }
  for (const ik::Method m :
       {ik::Method::kDls, ik::Method::kPseudoInverse, ik::Method::kSvd, ik::Method::kQr}) {
    benchmark::RegisterBenchmark(
        ("rigel_" + std::string(ik::MethodName(m)) + "/arm7/position").c_str(), RigelChain,
        &ArmProblem(), false, m)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  // The per-chain position methods without a Jacobian, next to dls_adaptive on the same chains
  // and targets (CCD and FABRIK ignore restarts).
  for (const ik::Method m : {ik::Method::kCcd, ik::Method::kFabrik}) {
    for (const Problem* p : {&ArmProblem(), &Chain30Problem()}) {
      benchmark::RegisterBenchmark(
          ("rigel_" + std::string(ik::MethodName(m)) + "/" + p->name + "/position").c_str(),
          RigelChain, p, false, m)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RegisterBenchmark("rigel_full_body/humanoid60", FullBody)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  return 0;
}

}  // namespace
}  // namespace rigel::bench

int main(int argc, char** argv) {
  rigel::bench::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
