// Batch-bake benchmark.
//
// Library: at least 200 clips of 240 frames cut from the CMU clips in ../shared/data (01_01,
// 01_03), each perturbed differently (small deterministic noise on every rotation channel, a
// different hip offset), written as BVH to a temporary folder once.
// Rig: bench/bake/fullbody_rig.lua: 4 six-D effectors (hands and feet) on the 31-joint CMU
// skeleton, targets taken from the clip and moved each frame, solved by damped least squares.
// Measured: `rigel bake` wall time at -j1 and -j2 (clips/min, frames/s, speed-up), and headless
// Blender 3.4 stepping a 60-bone rig with 4 six-D IK constraints (bench/bake/blender_ik_bench.py)
// when `blender` is installed, in the same run, as ratios; and worker processes against the
// in-process path (BM_Bake_WorkersVsInProcess).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "exporters/bvh_writer.h"
#include "importers/bvh_reader.h"

namespace fs = std::filesystem;

namespace {

constexpr int kClips = 200;
constexpr int kFramesPerClip = 240;

const fs::path& Library() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / "rigel_bake_library";
    if (fs::exists(d / "done")) return d;
    fs::remove_all(d);
    fs::create_directories(d);
    const std::string data = RIGEL_SHARED_DATA;
    std::vector<rigel::Scene> sources;
    for (const char* f : {"/cmu_cgspeed/01_01.bvh", "/cmu_cgspeed/01_03.bvh"}) {
      sources.push_back(rigel::ReadBvh(data + f));
    }
    std::mt19937_64 rng(42);
    std::normal_distribution<double> noise(0.0, 0.01);  // radians
    int made = 0, cut = 0;
    while (made < kClips) {
      for (const rigel::Scene& s : sources) {
        const rigel::Clip& full = s.clips[0];
        const int start = (cut * 97) % (full.num_frames() - kFramesPerClip);
        rigel::Clip clip(kFramesPerClip, full.num_channels(), full.frame_time());
        for (int f = 0; f < kFramesPerClip; ++f) {
          for (int c = 0; c < full.num_channels(); ++c) {
            double v = full.at(start + f, c);
            if (rigel::IsRotation(s.skeleton->channels()[c])) v += noise(rng);
            clip.at(f, c) = v;
          }
        }
        rigel::WriteBvh(*s.skeleton, clip, (d / ("clip" + std::to_string(made) + ".bvh")).string());
        if (++made == kClips) break;
      }
      ++cut;
    }
    std::ofstream(d / "done") << made;
    return d;
  }();
  return dir;
}

// Runs a command, returns wall seconds; -1 when it fails.
double TimeCommand(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rc == 0 ? s : -1;
}

double g_rigel_fps_j1 = 0;

void RunBake(benchmark::State& state, int jobs) {
  if (!fs::exists(RIGEL_SHARED_DATA)) {
    state.SkipWithError("../shared/data not found: the library is cut from it");
    return;
  }
  const fs::path lib = Library();
  const fs::path out = fs::temp_directory_path() / ("rigel_bake_out_j" + std::to_string(jobs));
  const fs::path report = out.string() + ".json";
  double seconds = 0;
  for (auto _ : state) {
    fs::remove_all(out);
    const std::string command = std::string(RIGEL_BINARY) + " bake --no-progress --rig " +
                                RIGEL_BENCH_DIR + "/fullbody_rig.lua -j " + std::to_string(jobs) +
                                " --out " + out.string() + " --report " + report.string() + " " +
                                lib.string() + " 2>/dev/null";
    seconds = TimeCommand(command);
    if (seconds < 0) {
      state.SkipWithError("rigel bake failed");
      return;
    }
    state.SetIterationTime(seconds);
  }
  std::ifstream in(report);
  const nlohmann::json r = nlohmann::json::parse(in);
  const double frames = r["summary"]["frames"].get<double>();
  const double ok = r["summary"]["ok"].get<double>();
  double residual = 0, unreachable = 0;
  for (const auto& c : r["clips"]) {
    residual = std::max(residual, c["solver"]["residual_max"].get<double>());
    unreachable += c["solver"]["frames_unreachable"].get<double>();
  }
  state.counters["clips"] = ok;
  state.counters["frames"] = frames;
  state.counters["frames_per_s"] = frames / seconds;
  state.counters["clips_per_min"] = ok / seconds * 60;
  state.counters["max_residual"] = residual;
  state.counters["frames_unreachable"] = unreachable;
  if (jobs == 1) g_rigel_fps_j1 = frames / seconds;
  if (jobs == 2 && g_rigel_fps_j1 > 0)
    state.counters["speedup_vs_j1"] = frames / seconds / g_rigel_fps_j1;
}

// CPU seconds (user + system) of the waited-for children so far: `rigel` and its workers.
double ChildrenCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Worker processes (the default) against threads of the CLI process (--workers 0), -j1, in the
// same run, alternating (workers first on even rounds, in-process first on odd ones) so that
// the load of the machine falls on both alike. Counters: frames per wall second and per CPU
// second (user + system of rigel and its workers, which the load of other processes does not
// inflate), medians over the rounds, and the ratios workers / in-process (1 = no overhead).
void BM_Bake_WorkersVsInProcess(benchmark::State& state) {
  if (!fs::exists(RIGEL_SHARED_DATA)) {
    state.SkipWithError("../shared/data not found: the library is cut from it");
    return;
  }
  const fs::path lib = Library();
  const int rounds = static_cast<int>(state.range(0));
  std::vector<double> wall[2], cpu[2];  // [0] workers, [1] in-process
  double frames = 0;
  for (auto _ : state) {
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < 2; ++k) {
        const int mode = (round + k) % 2;
        const fs::path out = fs::temp_directory_path() / "rigel_bake_out_modes";
        const fs::path report = out.string() + ".json";
        fs::remove_all(out);
        const std::string command =
            std::string(RIGEL_BINARY) + " bake --no-progress --rig " + RIGEL_BENCH_DIR +
            "/fullbody_rig.lua -j 1" + (mode == 1 ? " --workers 0" : "") + " --out " +
            out.string() + " --report " + report.string() + " " + lib.string() + " 2>/dev/null";
        const double cpu0 = ChildrenCpuSeconds();
        const double seconds = TimeCommand(command);
        const double cpu_seconds = ChildrenCpuSeconds() - cpu0;
        if (seconds < 0) {
          state.SkipWithError("rigel bake failed");
          return;
        }
        std::ifstream in(report);
        frames = nlohmann::json::parse(in)["summary"]["frames"].get<double>();
        wall[mode].push_back(seconds);
        cpu[mode].push_back(cpu_seconds);
      }
    }
    state.SetIterationTime(Median(wall[0]));
  }
  const double fps_wall_w = frames / Median(wall[0]), fps_wall_t = frames / Median(wall[1]);
  const double fps_cpu_w = frames / Median(cpu[0]), fps_cpu_t = frames / Median(cpu[1]);
  state.counters["rounds"] = rounds;
  state.counters["workers_frames_per_s"] = fps_wall_w;
  state.counters["inprocess_frames_per_s"] = fps_wall_t;
  state.counters["wall_ratio"] = fps_wall_w / fps_wall_t;
  state.counters["workers_frames_per_cpu_s"] = fps_cpu_w;
  state.counters["inprocess_frames_per_cpu_s"] = fps_cpu_t;
  state.counters["cpu_ratio"] = fps_cpu_w / fps_cpu_t;
}

void BM_Bake_j1(benchmark::State& state) { RunBake(state, 1); }
void BM_Bake_j2(benchmark::State& state) { RunBake(state, 2); }

void Blender(benchmark::State& state, const char* chains) {
  if (std::system("command -v blender >/dev/null 2>&1") != 0) {
    state.SkipWithError("blender not installed");
    return;
  }
  const int frames = std::string(chains) == "body" ? 60 : 600;
  const fs::path log = fs::temp_directory_path() / "rigel_blender_bench.txt";
  for (auto _ : state) {
    const std::string command = "blender -b --factory-startup --python " +
                                std::string(RIGEL_BENCH_DIR) + "/blender_ik_bench.py -- --frames " +
                                std::to_string(frames) + " --chains " + chains + " --bake > " +
                                log.string() + " 2>&1";
    if (TimeCommand(command) < 0) {
      state.SkipWithError("blender failed");
      return;
    }
  }
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const std::string tag = "RIGEL_BLENDER_BENCH ";
    if (line.rfind(tag, 0) != 0) continue;
    const nlohmann::json r = nlohmann::json::parse(line.substr(tag.size()));
    const double fps = r["frames_per_second"].get<double>();
    state.SetIterationTime(r["seconds"].get<double>());
    state.counters["blender_frames_per_s"] = fps;
    state.counters["blender_bake_frames_per_s"] = r["bake_frames_per_second"].get<double>();
    if (g_rigel_fps_j1 > 0) state.counters["rigel_j1_over_blender"] = g_rigel_fps_j1 / fps;
  }
}

void BM_Blender_FullBodyChains(benchmark::State& state) { Blender(state, "body"); }
void BM_Blender_LimbChains(benchmark::State& state) { Blender(state, "limb"); }

BENCHMARK(BM_Bake_j1)->UseManualTime()->Iterations(2)->Unit(benchmark::kSecond);
BENCHMARK(BM_Bake_j2)->UseManualTime()->Iterations(2)->Unit(benchmark::kSecond);
BENCHMARK(BM_Bake_WorkersVsInProcess)
    ->Arg(5)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Blender_FullBodyChains)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Blender_LimbChains)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
