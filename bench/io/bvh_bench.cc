// BVH read/write benchmark: rigel's reader against Assimp's ReadFile on the same generated file
// (60 joints, 20,000 frames, about 30 MB), in one run, plus writer throughput (BVH to a file and
// to memory; glTF and FBX of the same clip, in MB/s and us per frame) and the peak memory (max
// RSS) of a fresh process that reads the file with each library. At the end it prints each
// writer's throughput over the reader's, from the medians when run with repetitions
// (--benchmark_repetitions=5 on a busy machine; rates use CPU time).
//
//   bvh_bench [google-benchmark flags]          timings + peak-memory counters
//   bvh_bench --peak=rigel|assimp|none FILE     (internal) read FILE and exit
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <assimp/Importer.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "exporters/bvh_writer.h"
#include "exporters/fbx_writer.h"
#include "exporters/gltf_writer.h"
#include "importers/bvh_reader.h"

namespace {

constexpr int kJoints = 60;
constexpr int kFrames = 20000;

// A 60-joint humanoid-like tree: a root with 6 channels, 59 joints with 3 rotation channels in
// mixed orders; values with 6 decimals as mocap exporters write them.
std::string GenerateBvh() {
  std::string s = "HIERARCHY\n";
  const char* orders[] = {"Zrotation Xrotation Yrotation", "Zrotation Yrotation Xrotation",
                          "Xrotation Yrotation Zrotation"};
  // Five chains of 12 joints from the root (spine, arms, legs), the root counted in the first.
  int depth = 0;
  int made = 0;
  std::string close;
  s += "ROOT j0\n{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation "
       "Xrotation Yrotation\n";
  ++made;
  for (int chain = 0; chain < 5; ++chain) {
    const int length = chain == 0 ? 11 : 12;
    for (int k = 0; k < length; ++k) {
      s += std::string(depth + 1, '\t') + "JOINT j" + std::to_string(made) + "\n" +
           std::string(depth + 1, '\t') + "{\n" + std::string(depth + 2, '\t') + "OFFSET " +
           std::to_string(chain - 2) + ".5 " + std::to_string(4 + k % 3) + ".25 0.125\n" +
           std::string(depth + 2, '\t') + "CHANNELS 3 " + orders[made % 3] + "\n";
      ++made;
      ++depth;
    }
    s += std::string(depth + 1, '\t') + "End Site\n" + std::string(depth + 1, '\t') + "{\n" +
         std::string(depth + 2, '\t') + "OFFSET 0 2 0\n" + std::string(depth + 1, '\t') + "}\n";
    while (depth > 0) {
      s += std::string(depth, '\t') + "}\n";
      --depth;
    }
  }
  s += "}\nMOTION\nFrames: " + std::to_string(kFrames) + "\nFrame Time: 0.0083333\n";
  const int channels = 6 + 3 * (made - 1);
  char buf[32];
  for (int f = 0; f < kFrames; ++f) {
    for (int c = 0; c < channels; ++c) {
      const double v = (c < 3 ? 10.0 : 90.0) * std::sin(0.001 * f * (c + 1) + c);
      std::snprintf(buf, sizeof buf, c ? " %.4f" : "%.4f", v);
      s += buf;
    }
    s += '\n';
  }
  if (made != kJoints) std::abort();
  return s;
}

std::string& FilePath() {
  static std::string path = [] {
    const std::string p =
        (std::filesystem::temp_directory_path() / "rigel_bench_60j_20000f_v2.bvh").string();
    if (!std::filesystem::exists(p)) std::ofstream(p, std::ios::binary) << GenerateBvh();
    return p;
  }();
  return path;
}

void BM_ReadBvh_Rigel(benchmark::State& state) {
  const std::string& path = FilePath();
  int64_t values = 0;
  for (auto _ : state) {
    rigel::Scene scene = rigel::ReadBvh(path);
    values = static_cast<int64_t>(scene.clips[0].values().size());
    benchmark::DoNotOptimize(scene.clips[0].values().data());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(std::filesystem::file_size(path)));
  state.counters["values"] = static_cast<double>(values);
}

void BM_ReadBvh_Assimp(benchmark::State& state) {
  const std::string& path = FilePath();
  for (auto _ : state) {
    Assimp::Importer importer;
    const aiScene* scene = importer.ReadFile(path, 0);
    if (!scene) state.SkipWithError(importer.GetErrorString());
    benchmark::DoNotOptimize(scene);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(std::filesystem::file_size(path)));
}

const rigel::Scene& BenchScene() {
  static const rigel::Scene scene = rigel::ReadBvh(FilePath());
  return scene;
}

// WriteBvh to a file (atomic: temporary file, fsync, rename), as the CLI writes.
void BM_WriteBvh_Rigel(benchmark::State& state) {
  const rigel::Scene& scene = BenchScene();
  const std::string out =
      (std::filesystem::temp_directory_path() / "rigel_bench_written.bvh").string();
  for (auto _ : state) {
    rigel::WriteBvh(*scene.skeleton, scene.clips[0], out);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(std::filesystem::file_size(out)));
  std::filesystem::remove(out);
}

// FormatBvh: the text in memory, no file system.
void BM_FormatBvh_Rigel(benchmark::State& state) {
  const rigel::Scene& scene = BenchScene();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = rigel::FormatBvh(*scene.skeleton, scene.clips[0]);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

// glTF (binary) and FBX of the same skeleton and clip, in memory: MB/s of output and us per
// frame (one frame = 60 joints' TRS keys).
template <typename Format>
void WriterCase(benchmark::State& state, Format format) {
  const rigel::Scene& scene = BenchScene();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string data = format(*scene.skeleton, std::span(scene.clips));
    bytes = data.size();
    benchmark::DoNotOptimize(data.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["us_per_frame"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * scene.clips[0].num_frames() * 1e-6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_FormatGltf_Rigel(benchmark::State& state) {
  WriterCase(state, [](const rigel::Skeleton& s, std::span<const rigel::Clip> clips) {
    return rigel::FormatGltf(s, clips, rigel::GltfOptions{}, "bench.glb");
  });
}

void BM_FormatFbx_Rigel(benchmark::State& state) {
  WriterCase(state, [](const rigel::Skeleton& s, std::span<const rigel::Clip> clips) {
    return rigel::FormatFbx(s, clips, rigel::FbxOptions{}, "bench.fbx");
  });
}

// Peak resident memory (VmHWM) in MB of a fresh process (this program re-executed) that reads
// the file with `which`; the child reports its own VmHWM, which is per address space, so nothing
// of this process is counted.
double PeakMb(const char* self, const std::string& which) {
  const std::string command = std::string(self) + " --peak=" + which + " " + FilePath();
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  double kb = -1;
  if (std::fscanf(pipe, "%lf", &kb) != 1) kb = -1;
  if (pclose(pipe) != 0) return -1;
  return kb / 1024.0;
}

// VmHWM of this process in kB.
long VmHwmKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

const char* g_self = nullptr;

void BM_PeakMemory(benchmark::State& state) {
  double rigel = 0, assimp = 0, none = 0;
  for (auto _ : state) {
    none = PeakMb(g_self, "none");
    rigel = PeakMb(g_self, "rigel");
    assimp = PeakMb(g_self, "assimp");
  }
  state.counters["empty_process_MB"] = none;
  state.counters["rigel_peak_MB"] = rigel;
  state.counters["assimp_peak_MB"] = assimp;
  state.counters["file_MB"] =
      static_cast<double>(std::filesystem::file_size(FilePath())) / 1048576.0;
}

BENCHMARK(BM_ReadBvh_Rigel)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ReadBvh_Assimp)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_WriteBvh_Rigel)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FormatBvh_Rigel)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FormatGltf_Rigel)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FormatFbx_Rigel)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_PeakMemory)->Unit(benchmark::kMillisecond)->Iterations(1);

// The console output, then each writer's bytes per second over the reader's (the median of the
// repetitions when there are several, else the single run).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colour only on a terminal (Google Benchmark's own reporter decides the same way).
  RatioReporter() : ConsoleReporter(isatty(fileno(stdout)) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const auto rate = run.counters.find("bytes_per_second");
      if (run.error_occurred || rate == run.counters.end()) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      std::string name = run.run_name.function_name;
      if (median || !rates_.count(name)) rates_[name] = rate->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto reader = rates_.find("BM_ReadBvh_Rigel");
    if (reader == rates_.end()) return;
    std::printf("\nThroughput over rigel's BVH reader (%.0f MB/s, MB = 10^6 bytes; CPU time):\n",
                reader->second / 1e6);
    for (const auto& [name, rate] : rates_) {
      if (name == reader->first) continue;
      std::printf("  %-22s %8.0f MB/s  %.2fx\n", name.c_str(), rate / 1e6, rate / reader->second);
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strncmp(argv[1], "--peak=", 7) == 0) {
    const std::string which = argv[1] + 7;
    bool ok = true;
    if (which == "rigel") {
      rigel::Scene scene = rigel::ReadBvh(argv[2]);
      ok = scene.clips[0].num_frames() == kFrames;
    } else if (which == "assimp") {
      Assimp::Importer importer;
      ok = importer.ReadFile(argv[2], 0) != nullptr;
    }
    std::printf("%ld\n", VmHwmKb());
    return ok ? 0 : 1;
  }
  g_self = argv[0];
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
