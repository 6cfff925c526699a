// Retarget frames/s: CMU 01_01 (2752 frames, 31 joints) onto the MakeHuman default rig (173
// joints, Z-up) and the Motion Analysis rig of Boxing_Toes.bvh (21 joints), with and without the
// IK pass (feet pinned during contacts with two-bone IK). Set-up (alignment) is timed separately.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/retarget/retarget.h"
#include "importers/load_scene.h"

namespace {

const char* const kTargets[] = {"makehuman/tpose.bvh", "assimp_misc/Boxing_Toes.bvh"};

struct Data {
  rigel::Scene source;
  rigel::Scene targets[2];
};

const Data* Load() {
  static std::unique_ptr<Data> data = [] {
    const std::string root = RIGEL_SHARED_DATA;
    if (!std::filesystem::is_directory(root)) return std::unique_ptr<Data>();
    auto d = std::make_unique<Data>();
    d->source = rigel::LoadScene(root + "/cmu_cgspeed/01_01.bvh");
    for (int i = 0; i < 2; ++i) d->targets[i] = rigel::LoadScene(root + "/" + kTargets[i]);
    return d;
  }();
  return data.get();
}

void BM_Retarget(benchmark::State& state) {
  const Data* d = Load();
  if (!d) {
    state.SkipWithError("../shared/data not found");
    return;
  }
  const rigel::Scene& target = d->targets[state.range(0)];
  rigel::retarget::RetargetOptions options;
  options.pin_feet = state.range(1) != 0;
  std::string error;
  auto r = rigel::retarget::Retargeter::Create(d->source.skeleton, target.skeleton, {}, options,
                                               &error, &d->source.clips[0]);
  if (!r) {
    state.SkipWithError(error.c_str());
    return;
  }
  const rigel::Clip& clip = d->source.clips[0];
  for (auto _ : state) {
    rigel::retarget::RetargetResult result = r->Run(clip);
    benchmark::DoNotOptimize(result.clip.values().data());
  }
  state.SetLabel(std::string(kTargets[state.range(0)]) + (options.pin_feet ? " +IK" : ""));
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
