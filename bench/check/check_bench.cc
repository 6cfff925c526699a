// The cost of the plausibility checks (core/check/plausibility.h) against the retarget they judge
// (issue 27: under 5 %): CMU 01_01 (2752 frames, 31 joints) retargeted onto the MakeHuman default
// rig (173 joints, Z-up) and the Motion Analysis rig of Boxing_Toes.bvh (21 joints), with and
// without the IK clean-up (--pin-feet), then checked.
// Each iteration times both; the counters give each one's milliseconds and the checks' share of
// the retarget in percent. BM_CheckConvert times the checks of an output against itself (a
// convert) per frame.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "bench/retarget/retarget_data.h"
#include "core/check/plausibility.h"
#include "core/retarget/retarget.h"

namespace {

using Data = rigel::bench::RetargetData;
constexpr auto& kTargets = rigel::bench::kRetargetTargets;
const Data* Load() { return rigel::bench::LoadRetargetData(); }

rigel::check::CheckSide Side(const rigel::Scene& scene, const rigel::Clip& clip) {
  rigel::check::CheckSide side;
  side.skeleton = scene.skeleton.get();
  side.clip = &clip;
  side.up = scene.axes.up.value;
  return side;
}

void BM_CheckVsRetarget(benchmark::State& state) {
  const auto r = rigel::bench::RetargeterFor(state);
  if (!r) return;
  const Data* d = Load();
  const rigel::Clip& clip = d->source.clips[0];
  using Clock = std::chrono::steady_clock;
  double retarget_s = 0, check_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const rigel::retarget::RetargetResult result = r->Run(clip);
    const auto t1 = Clock::now();
    rigel::check::PlausibilityJob job;
    job.kind = rigel::check::OutputKind::kRetarget;
    job.source = Side(d->source, clip);
    job.output = Side(d->targets[state.range(0)], result.clip);
    const rigel::check::CheckReport report = job.Run();
    const auto t2 = Clock::now();
    benchmark::DoNotOptimize(report.findings.data());
    retarget_s += std::chrono::duration<double>(t1 - t0).count();
    check_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.SetLabel(std::string(kTargets[state.range(0)]) + (state.range(1) != 0 ? " +IK" : ""));
  state.counters["retarget_ms"] = 1e3 * retarget_s / n;
  state.counters["check_ms"] = 1e3 * check_s / n;
  state.counters["check_us_per_frame"] = 1e6 * check_s / n / clip.num_frames();
  state.counters["check_percent"] = 100.0 * check_s / retarget_s;
}
BENCHMARK(BM_CheckVsRetarget)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"target", "ik"})
    ->Unit(benchmark::kMillisecond);

void BM_CheckConvert(benchmark::State& state) {
  const Data* d = Load();
  if (!d) {
    state.SkipWithError("../shared/data not found");
    return;
  }
  const rigel::Clip& clip = d->source.clips[0];
  rigel::check::PlausibilityJob job;
  job.source = Side(d->source, clip);
  job.output = job.source;
  for (auto _ : state) {
    const rigel::check::CheckReport report = job.Run();
    benchmark::DoNotOptimize(report.findings.data());
  }
  state.counters["frames/s"] = benchmark::Counter(
      static_cast<double>(clip.num_frames()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CheckConvert)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
