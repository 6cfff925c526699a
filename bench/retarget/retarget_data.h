// The data the retarget benchmarks share (retarget_bench, check_bench): CMU 01_01 (2752 frames,
// 31 joints) as the source, the MakeHuman default rig (173 joints, Z-up) and the Motion Analysis
// rig of Boxing_Toes.bvh (21 joints) as targets, loaded once from ../shared/data.
#ifndef RIGEL_BENCH_RETARGET_RETARGET_DATA_H_
#define RIGEL_BENCH_RETARGET_RETARGET_DATA_H_

#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/retarget/retarget.h"
#include "importers/load_scene.h"

namespace rigel::bench {

inline constexpr const char* kRetargetTargets[] = {"makehuman/tpose.bvh",
                                                   "assimp_misc/Boxing_Toes.bvh"};

struct RetargetData {
  Scene source;
  Scene targets[2];
};

// The scenes, or nullptr when ../shared/data is not there.
inline const RetargetData* LoadRetargetData() {
  static std::unique_ptr<RetargetData> data = [] {
    const std::string root = RIGEL_SHARED_DATA;
    if (!std::filesystem::is_directory(root)) return std::unique_ptr<RetargetData>();
    auto d = std::make_unique<RetargetData>();
    d->source = LoadScene(root + "/cmu_cgspeed/01_01.bvh");
    for (int i = 0; i < 2; ++i) d->targets[i] = LoadScene(root + "/" + kRetargetTargets[i]);
    return d;
  }();
  return data.get();
}

// The retargeter of the source onto target state.range(0), feet pinned when state.range(1) is not
// 0; nullptr (and the benchmark skipped with the reason) when the data are missing or it fails.
inline std::unique_ptr<retarget::Retargeter> RetargeterFor(benchmark::State& state) {
  const RetargetData* d = LoadRetargetData();
  if (!d) {
    state.SkipWithError("../shared/data not found");
    return nullptr;
  }
  retarget::RetargetOptions options;
  options.pin_feet = state.range(1) != 0;
  std::string error;
  auto r = retarget::Retargeter::Create(d->source.skeleton, d->targets[state.range(0)].skeleton, {},
                                        options, &error, &d->source.clips[0]);
  if (!r) state.SkipWithError(error.c_str());
  return r;
}

}  // namespace rigel::bench

#endif  // RIGEL_BENCH_RETARGET_RETARGET_DATA_H_
