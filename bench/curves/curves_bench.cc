// Curve clean-up speed in frames per second (counter "frames/s") on the corpus's longest clip,
// CMU 01_03 (4511 frames at 120 frames/s, 31 joints): key reduction (as for glTF, and as for FBX
// with its Euler curves), the zero-phase low-pass filter (with and without the feet's contacts
// kept), mirroring, trimming, resampling and loops. A bake of the same clip runs at thousands of
// frames per second (bench/bake); these must stay far above it.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "core/clip_ops.h"
#include "core/curves/filter.h"
#include "core/curves/key_reduction.h"
#include "core/curves/mirror.h"
#include "core/scene.h"
#include "exporters/fbx_writer.h"
#include "importers/load_scene.h"

namespace {

const rigel::Scene& Cmu() {
  static const rigel::Scene scene =
      rigel::LoadScene(std::string(RIGEL_SHARED_DATA) + "/cmu_cgspeed/01_03.bvh");
  return scene;
}

void Count(benchmark::State& state, int frames) {
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ReduceGltf(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  rigel::KeyReductionOptions options;
  options.metres_per_unit = rigel::MetresPerUnitOrEstimate(s);
  long long keys = 0;
  for (auto _ : state) keys = rigel::ReduceKeys(*s.skeleton, s.clips[0], options).keys;
  state.counters["keys"] = static_cast<double>(keys);
  Count(state, s.clips[0].num_frames());
}
BENCHMARK(BM_ReduceGltf)->Unit(benchmark::kMillisecond);

void BM_ReduceFbx(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  rigel::KeyReductionOptions options;
  options.metres_per_unit = rigel::MetresPerUnitOrEstimate(s);
  options.euler_curves = rigel::FbxEulerCurves(*s.skeleton);
  long long keys = 0;
  for (auto _ : state) keys = rigel::ReduceKeys(*s.skeleton, s.clips[0], options).keys;
  state.counters["keys"] = static_cast<double>(keys);
  Count(state, s.clips[0].num_frames());
}
BENCHMARK(BM_ReduceFbx)->Unit(benchmark::kMillisecond);

void BM_Filter(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  rigel::FilterOptions options;
  options.keep_contacts = state.range(0) != 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(rigel::FilterClip(*s.skeleton, s.clips[0], options));
  }
  Count(state, s.clips[0].num_frames());
}
BENCHMARK(BM_Filter)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Mirror(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  const std::vector<int> mates = rigel::MirrorCounterparts(*s.skeleton);
  const rigel::MirrorPlane plane = rigel::CharacterPlane(*s.skeleton, mates);
  for (auto _ : state) {
    benchmark::DoNotOptimize(rigel::MirrorClip(*s.skeleton, s.clips[0], mates, plane));
  }
  Count(state, s.clips[0].num_frames());
}
BENCHMARK(BM_Mirror)->Unit(benchmark::kMillisecond);

void BM_Trim(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  const rigel::Clip& c = s.clips[0];
  int frames = 0;
  for (auto _ : state) {
    const rigel::Clip t = rigel::TrimClipSeconds(c, c.duration() / 4, c.duration() * 3 / 4);
    frames = t.num_frames();
    benchmark::DoNotOptimize(t);
  }
  Count(state, frames);
}
BENCHMARK(BM_Trim)->Unit(benchmark::kMillisecond);

void BM_Resample(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  int frames = 0;
  for (auto _ : state) {
    const rigel::Clip r = rigel::ResampleClip(*s.skeleton, s.clips[0], 30.0);
    frames = r.num_frames();
    benchmark::DoNotOptimize(r);
  }
  Count(state, frames);
}
BENCHMARK(BM_Resample)->Unit(benchmark::kMillisecond);

void BM_Loop(benchmark::State& state) {
  const rigel::Scene& s = Cmu();
  rigel::LoopOptions options;
  options.blend_frames = 60;
  for (auto _ : state) {
    benchmark::DoNotOptimize(rigel::LoopClip(*s.skeleton, s.clips[0], options));
  }
  Count(state, s.clips[0].num_frames());
}
BENCHMARK(BM_Loop)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
