// Import overhead of rigel's Assimp front (in process and isolated) over a raw Assimp ReadFile,
// and glTF/FBX export speed per frame. Run by hand: assimp_bench [FILE.fbx [RUNS [KIND]]] (default:
// the CMU FBX, 15 runs; KIND raw|in-process|isolated runs only that, for perf record).
#include <assimp/scene.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <vector>

#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "importers/assimp_reader.h"
#include "importers/isolated_load.h"

namespace {

// CPU seconds (user + system) of this process and its waited-for children.
double CpuSeconds() {
  double total = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return total;
}

struct Timing {
  std::vector<double> wall, cpu;
  void Add(const std::function<void()>& f) {
    const double c0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(CpuSeconds() - c0);
  }
  static double Median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double Wall() const { return Median(wall); }
  double Cpu() const { return Median(cpu); }
};

double Seconds(const std::function<void()>& f, int repeats) {
  Timing t;
  for (int i = 0; i < repeats; ++i) t.Add(f);
  return t.Wall();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      argc > 1 ? argv[1] : std::string(RIGEL_SHARED_DATA) + "/fbx/cmu_isaacgym/01_01_cmu.fbx";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  if (argc > 3) {  // assimp_bench FILE N raw|in-process|isolated: one kind only (for perf record)
    const std::string kind = argv[3];
    for (int i = 0; i < repeats; ++i) {
      if (kind == "raw") {
        Assimp::Importer importer;
        if (!importer.ReadFile(path, 0)) return 1;
      } else if (kind == "convert") {  // prints the fastest and the median CPU time
        static Assimp::Importer importer;
        static const aiScene* scene = importer.ReadFile(path, 0);
        static Timing t;
        if (!scene) return 1;
        t.Add([&] { rigel::ConvertAssimpScene(*scene, path); });
        if (i + 1 == repeats) {
          fmt::print("conversion CPU ms: min {:.2f} median {:.2f}\n",
                     *std::min_element(t.cpu.begin(), t.cpu.end()) * 1e3, t.Cpu() * 1e3);
        }
      } else if (kind == "isolated-warm") {  // after an in-process read, as in the interleaved runs
        if (i == 0) rigel::ReadWithAssimp(path);
        rigel::LoadSceneIsolated(path);
      } else if (kind == "in-process") {
        rigel::ReadWithAssimp(path);
      } else {
        rigel::LoadSceneIsolated(path);
      }
    }
    return 0;
  }
  // Interleaved rounds (raw, in process, isolated), so load from other processes on the machine
  // hits the three alike; medians of wall-clock and CPU time (user + system, incl. the child).
  Timing raw_t, in_process_t, isolated_t, convert_t;
  Assimp::Importer kept;
  const aiScene* kept_scene = kept.ReadFile(path, 0);
  if (!kept_scene) return 1;
  for (int i = 0; i < repeats; ++i) {
    convert_t.Add([&] { rigel::ConvertAssimpScene(*kept_scene, path); });
    raw_t.Add([&] {
      Assimp::Importer importer;
      if (!importer.ReadFile(path, 0)) std::exit(1);
    });
    in_process_t.Add([&] { rigel::ReadWithAssimp(path); });
    isolated_t.Add([&] { rigel::LoadSceneIsolated(path); });
  }
  const rigel::Scene scene = rigel::LoadSceneIsolated(path);
  const auto& clips = scene.clips;
  int frames = 0;
  for (const auto& c : clips) frames += c.num_frames();
  const double glb =
      Seconds([&] { rigel::FormatGltf(*scene.skeleton, clips, {}, "bench.glb"); }, repeats);
  const double fbx =
      Seconds([&] { rigel::FormatFbx(*scene.skeleton, clips, {}, "bench.fbx"); }, repeats);
  fmt::print("file: {} ({} joints, {} frames)\n", path, scene.skeleton->num_joints(), frames);
  fmt::print("medians of {} interleaved runs; wall-clock ms / CPU ms (user + system)\n", repeats);
  const double raw = raw_t.Wall(), raw_cpu = raw_t.Cpu();
  fmt::print("raw Assimp ReadFile:          {:7.2f} / {:7.2f}\n", raw * 1e3, raw_cpu * 1e3);
  fmt::print(
      "rigel conversion alone:       {:7.2f} / {:7.2f}  (ConvertAssimpScene on a kept aiScene)\n",
      convert_t.Wall() * 1e3, convert_t.Cpu() * 1e3);
  for (const auto& [label, t] :
       {std::pair<const char*, const Timing*>{"ReadWithAssimp (in process)", &in_process_t},
        {"LoadSceneIsolated (fork)", &isolated_t}}) {
    fmt::print("{:<29} {:7.2f} / {:7.2f}  (+{:.1f}% / +{:.1f}% over raw)\n", label, t->Wall() * 1e3,
               t->Cpu() * 1e3, 100 * (t->Wall() / raw - 1), 100 * (t->Cpu() / raw_cpu - 1));
  }
  fmt::print("glb export:                 {:8.2f} ms  ({:.2f} us/frame)\n", glb * 1e3,
             glb * 1e6 / frames);
  fmt::print("fbx export:                 {:8.2f} ms  ({:.2f} us/frame)\n", fbx * 1e3,
             fbx * 1e6 / frames);
  return 0;
}
