// Import overhead of rigel's Assimp front (in process and isolated) over a raw Assimp ReadFile,
// and glTF/FBX export speed per frame. Run by hand: assimp_bench [FILE.fbx] (default: CMU FBX).
#include <assimp/scene.h>
#include <fmt/format.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <chrono>
#include <functional>
#include <vector>

#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "importers/assimp_reader.h"
#include "importers/isolated_load.h"

namespace {

double Seconds(const std::function<void()>& f, int repeats) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];  // median
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(RIGEL_SHARED_DATA) + "/fbx/cmu_isaacgym/01_01_cmu.fbx";
  const int repeats = 7;
  const double raw = Seconds(
      [&] {
        Assimp::Importer importer;
        if (!importer.ReadFile(path, 0)) std::exit(1);
      },
      repeats);
  const double in_process = Seconds([&] { rigel::ReadWithAssimp(path); }, repeats);
  const double isolated = Seconds([&] { rigel::LoadSceneIsolated(path); }, repeats);
  const rigel::Scene scene = rigel::LoadSceneIsolated(path);
  const auto& clips = scene.clips;
  int frames = 0;
  for (const auto& c : clips) frames += c.num_frames();
  const double glb =
      Seconds([&] { rigel::FormatGltf(*scene.skeleton, clips, {}, "bench.glb"); }, repeats);
  const double fbx =
      Seconds([&] { rigel::FormatFbx(*scene.skeleton, clips, {}, "bench.fbx"); }, repeats);
  fmt::print("file: {} ({} joints, {} frames)\n", path, scene.skeleton->num_joints(), frames);
  fmt::print("raw Assimp ReadFile:        {:8.2f} ms\n", raw * 1e3);
  fmt::print("ReadWithAssimp (in process): {:8.2f} ms  (+{:.1f}% over raw)\n", in_process * 1e3,
             100 * (in_process / raw - 1));
  fmt::print("LoadSceneIsolated (fork):   {:8.2f} ms  (+{:.1f}% over raw)\n", isolated * 1e3,
             100 * (isolated / raw - 1));
  fmt::print("glb export:                 {:8.2f} ms  ({:.2f} us/frame)\n", glb * 1e3,
             glb * 1e6 / frames);
  fmt::print("fbx export:                 {:8.2f} ms  ({:.2f} us/frame)\n", fbx * 1e3,
             fbx * 1e6 / frames);
  return 0;
}
