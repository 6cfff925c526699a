// Retarget frames/s: CMU 01_01 (2752 frames, 31 joints) onto the MakeHuman default rig (173
// joints, Z-up) and the Motion Analysis rig of Boxing_Toes.bvh (21 joints), with and without the
// IK pass (feet pinned during contacts with two-bone IK). Set-up (alignment) is timed separately.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "bench/retarget/retarget_data.h"
#include "core/retarget/retarget.h"

namespace {

using Data = rigel::bench::RetargetData;
constexpr auto& kTargets = rigel::bench::kRetargetTargets;
const Data* Load() { return rigel::bench::LoadRetargetData(); }

void BM_Retarget(benchmark::State& state) {
  const auto r = rigel::bench::RetargeterFor(state);
  if (!r) return;
  const Data* d = Load();
  const rigel::Clip& clip = d->source.clips[0];
  for (auto _ : state) {
    rigel::retarget::RetargetResult result = r->Run(clip);
    benchmark::DoNotOptimize(result.clip.values().data());
  }
  state.SetLabel(std::string(kTargets[state.range(0)]) + (state.range(1) != 0 ? " +IK" : ""));
  state.counters["frames/s"] = benchmark::Counter(
      static_cast<double>(clip.num_frames()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Retarget)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"target", "ik"})
    ->Unit(benchmark::kMillisecond);

void BM_Setup(benchmark::State& state) {
  const Data* d = Load();
  if (!d) {
    state.SkipWithError("../shared/data not found");
    return;
  }
  for (auto _ : state) {
    std::string error;
    auto r = rigel::retarget::Retargeter::Create(
        d->source.skeleton, d->targets[state.range(0)].skeleton, {}, {}, &error);
    benchmark::DoNotOptimize(r.get());
  }
  state.SetLabel(kTargets[state.range(0)]);
}
BENCHMARK(BM_Setup)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
