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
// in-process path (BM_Bake_WorkersVsInProcess); where a frame's time goes (BM_Bake_Breakdown:
// read, Lua callback, solve, write) and the peak memory of a 100- and a 10,000-clip batch
// (BM_Bake_Memory).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A library of `clips` short clips (`frames` frames each, cut from 01_01 at different starts),
// written once under the temporary folder.
fs::path ShortLibrary(int clips, int frames) {
  const fs::path d = fs::temp_directory_path() /
                     ("rigel_bake_short_" + std::to_string(clips) + "x" + std::to_string(frames));
  if (fs::exists(d / "done")) return d;
  fs::remove_all(d);
  fs::create_directories(d);
  const rigel::Scene source =
      rigel::ReadBvh(std::string(RIGEL_SHARED_DATA) + "/cmu_cgspeed/01_01.bvh");
  const rigel::Clip& full = source.clips[0];
  for (int k = 0; k < clips; ++k) {
    const int start = (k * 37) % (full.num_frames() - frames);
    rigel::Clip clip(frames, full.num_channels(), full.frame_time());
    for (int f = 0; f < frames; ++f) {
      for (int c = 0; c < full.num_channels(); ++c) clip.at(f, c) = full.at(start + f, c);
    }
    rigel::WriteBvh(*source.skeleton, clip, (d / ("c" + std::to_string(k) + ".bvh")).string());
  }
  std::ofstream(d / "done") << clips;
  return d;
}

// Runs `argv` (stderr to /dev/null), returns its wall seconds and sets *max_rss_mb to the peak
// resident memory of it and every descendant it waited for (wait4's ru_maxrss); -1 on failure.
double RunMeasured(const std::vector<std::string>& argv, double* max_rss_mb) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(127);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return -1;
  *max_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

// Memory over a long batch: `rigel bake -j2` over state.range(0) short clips (10 frames), the
// peak resident memory of the whole run (coordinator and workers) and, from the report, of the
// coordinator and of the largest worker. Flat means the same at 100 and at 10,000 clips.
void BM_Bake_Memory(benchmark::State& state) {
  if (!fs::exists(RIGEL_SHARED_DATA)) {
    state.SkipWithError("../shared/data not found: the library is cut from it");
    return;
  }
  const int clips = static_cast<int>(state.range(0));
  const fs::path lib = ShortLibrary(clips, 10);
  const fs::path out = fs::temp_directory_path() / ("rigel_bake_mem_out_" + std::to_string(clips));
  const fs::path report = out.string() + ".json";
  double rss = 0, seconds = 0;
  for (auto _ : state) {
    fs::remove_all(out);
    seconds = RunMeasured({RIGEL_BINARY, "bake", "--no-progress", "--rig",
                           std::string(RIGEL_BENCH_DIR) + "/fullbody_rig.lua", "-j", "2", "--out",
                           out.string(), "--report", report.string(), lib.string()},
                          &rss);
    if (seconds < 0) {
      state.SkipWithError("rigel bake failed");
      return;
    }
    state.SetIterationTime(seconds);
  }
  std::ifstream in(report);
  const nlohmann::json r = nlohmann::json::parse(in);
  state.counters["clips"] = r["summary"]["ok"].get<double>();
  state.counters["clips_per_s"] = r["summary"]["ok"].get<double>() / seconds;
  state.counters["peak_rss_mb"] = rss;
  state.counters["coordinator_rss_mb"] = r["summary"]["peak_rss_mb"]["coordinator"].get<double>();
  state.counters["worker_rss_mb"] = r["summary"]["peak_rss_mb"]["workers"].get<double>();
  fs::remove_all(out);
}

// Where a bake's time goes, per frame, over the 200-clip library at -j1: read, script (the Lua
// callback and the solve), write, from the report's phases; the Lua callback's share from the
// same bake with fullbody_targets_rig.lua (the same callback, no solve). Alternating rounds,
// medians.
void BM_Bake_Breakdown(benchmark::State& state) {
  if (!fs::exists(RIGEL_SHARED_DATA)) {
    state.SkipWithError("../shared/data not found: the library is cut from it");
    return;
  }
  const fs::path lib = Library();
  std::vector<double> read, script, write, callback, wall;
  double frames = 0;
  for (auto _ : state) {
    for (int round = 0; round < 3; ++round) {
      for (const char* rig : {"fullbody_rig.lua", "fullbody_targets_rig.lua"}) {
        const fs::path out = fs::temp_directory_path() / "rigel_bake_breakdown";
        const fs::path report = out.string() + ".json";
        fs::remove_all(out);
        const double seconds =
            TimeCommand(std::string(RIGEL_BINARY) + " bake --no-progress --rig " + RIGEL_BENCH_DIR +
                        "/" + rig + " -j 1 --out " + out.string() + " --report " + report.string() +
                        " " + lib.string() + " 2>/dev/null");
        if (seconds < 0) {
          state.SkipWithError("rigel bake failed");
          return;
        }
        std::ifstream in(report);
        const nlohmann::json s = nlohmann::json::parse(in)["summary"];
        frames = s["frames"].get<double>();
        const nlohmann::json& p = s["phases_s"];
        if (std::string(rig) == "fullbody_rig.lua") {
          read.push_back(p["read"].get<double>());
          script.push_back(p["script"].get<double>());
          write.push_back(p["write"].get<double>());
          wall.push_back(seconds);
        } else {
          callback.push_back(p["script"].get<double>());
        }
      }
    }
    state.SetIterationTime(Median(wall));
  }
  const double us = 1e6 / frames;
  state.counters["read_us_per_frame"] = Median(read) * us;
  state.counters["script_us_per_frame"] = Median(script) * us;
  state.counters["lua_callback_us_per_frame"] = Median(callback) * us;
  state.counters["solve_us_per_frame"] = (Median(script) - Median(callback)) * us;
  state.counters["write_us_per_frame"] = Median(write) * us;
  state.counters["wall_us_per_frame"] = Median(wall) * us;
  state.counters["lua_callback_share"] = Median(callback) / Median(script);
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

BENCHMARK(BM_Bake_Breakdown)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Bake_Memory)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->Arg(100)
    ->Arg(10000);
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
