// batch::Run: outputs prepared, clips handed to threads or worker processes (workers.cc),
// progress on stderr.
#include "cli/batch/batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

#include "cli/batch/workers.h"
#include "exporters/atomic_file.h"

namespace fs = std::filesystem;

namespace rigel::batch {

namespace {

std::string ClockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string OutputPath(const RunOptions& options, const Input& input) {
  return OutputPath(options, input.stem);
}

std::string OutputPath(const RunOptions& options, std::string_view stem) {
  std::string name(stem);
  name += options.extension;
  return (fs::path(options.out_dir) / name).string();
}

std::vector<std::string> WrittenFiles(const ClipReport& report, const std::string& output) {
  std::vector<std::string> files;
  for (const ClipReport& take : report.takes) {
    if (std::find(files.begin(), files.end(), take.output) == files.end()) {
      files.push_back(take.output);
    }
  }
  if (files.empty()) files.push_back(output);
  return files;
}

namespace {

// The outputs of the inputs (OutputPath, made when needed, not kept) checked not to overwrite any
// input (before any write); the output folder made and the partial files an interrupted run left
// removed.
void PrepareOutputs(const InputList& inputs, const RunOptions& options) {
  CheckInputsNotOverwritten(inputs, options);  // before any write
  std::error_code folder_ec;
  fs::create_directories(options.out_dir, folder_ec);
  SetDurableWritesByDefault(false);
  const int stale = RemoveStaleTemporaries(
      inputs.size(), [&](std::size_t i) { return OutputPath(options, inputs.stem(i)); });
  if (stale > 0) {
    std::fprintf(stderr, "rigel %s: removed %d partial file(s) left by an interrupted run\n",
                 options.command.c_str(), stale);
  }
}

// The counts of a run, updated by the threads that finish clips.
struct Counts {
  std::atomic<int> done{0}, failed{0}, suspect{0};
  std::atomic<long long> frames{0};
};

// The progress bar (redrawn in place), or the final line, after `seconds` of `total` clips.
void DrawProgress(const Counts& counts, const RunOptions& options, size_t total, double seconds,
                  bool final_line) {
  const double t = seconds;
  const int d = counts.done.load();
  const double fps = t > 0 ? static_cast<double>(counts.frames.load()) / t : 0.0;
  const double eta = d > 0 ? t / d * static_cast<double>(total - d) : NAN;
  const int width = 24;
  const int filled = total == 0 ? width : static_cast<int>(width * d / total);
  const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
  if (final_line) {
    if (options.progress) std::fputs("\r\033[K", stderr);
    const std::string suspects =
        counts.suspect.load() > 0 ? ", " + std::to_string(counts.suspect.load()) + " suspect" : "";
    std::fprintf(stderr, "rigel %s: %d/%zu clips, %d failed%s, %.0f frames/s, %s\n",
                 options.command.c_str(), d, total, counts.failed.load(), suspects.c_str(), fps,
                 ClockText(t).c_str());
  } else {
    std::fprintf(stderr, "\r\033[K[%s] %d/%zu clips  %.0f frames/s  ETA %s  failed %d", bar.c_str(),
                 d, total, fps, ClockText(eta).c_str(), counts.failed.load());
  }
  std::fflush(stderr);
}

// Run's work: each input's report handed to `done` as it completes (from the worker threads,
// several at once, or from this thread with worker processes).
void RunEach(const InputList& inputs, const RunOptions& options, const Processor& process,
             const std::function<void(size_t, ClipReport)>& completed) {
  PrepareOutputs(inputs, options);
  const auto output = [&](size_t i) { return OutputPath(options, inputs.stem(i)); };
  std::atomic<size_t> next{0};
  Counts counts;
  std::atomic<int>& done = counts.done;
  std::atomic<int>& failed = counts.failed;
  std::atomic<int>& suspect = counts.suspect;
  std::atomic<long long>& frames = counts.frames;
  std::mutex progress_mutex;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto draw = [&](bool final_line) {
    DrawProgress(counts, options, inputs.size(), elapsed(), final_line);
  };
  // Before a clip: its provenance, and whether --resume skips it (then *report is final).
  // Otherwise its folder exists. An old manifest stays until this run's one replaces it: it holds
  // the hash of every file it vouches for, so it cannot vouch for a file remade since, and a run
  // that fails (or another run on the same --out) leaves a finished output's manifest intact.
  auto prepare = [&](size_t i, Provenance* provenance, ClipReport* report) {
    *provenance = options.recipe;
    provenance->input_hash = HashFile(inputs.path(i));
    const std::string out = output(i);
    if (options.resume && ManifestMatches(out, *provenance)) {
      report->status = "skipped";
      return false;
    }
    fs::create_directories(fs::path(out).parent_path());
    return true;
  };
  auto finish = [&](size_t i, ClipReport report, double seconds) {
    report.input = inputs.path(i);
    report.output = output(i);
    report.seconds = seconds;
    if (report.status == "failed") ++failed;
    if (report.status == "suspect") ++suspect;
    frames += report.frames;
    completed(i, std::move(report));
    ++done;
    if (options.progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      draw(false);
    }
  };
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  auto work = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= inputs.size()) return;
      ClipReport report;
      const auto clip_start = std::chrono::steady_clock::now();
      try {
        Provenance provenance;
        if (prepare(i, &provenance, &report)) {
          const std::string out = output(i);
          report = process(inputs[i], out);
          if (report.status != "suspect") report.status = "ok";
          WriteManifest(out, provenance, WrittenFiles(report, out));
        }
      } catch (const std::exception& e) {
        report.status = "failed";
        report.reason = e.what();
      }
      finish(i, std::move(report), seconds_since(clip_start));
    }
  };
  const int wanted =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  const int jobs = std::max(1, std::min<int>(wanted, static_cast<int>(inputs.size())));
  if (options.processes) {
    RunInWorkers(inputs, options, jobs, process, prepare, finish);
  } else {
    std::vector<std::thread> threads;
    for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
  }
  draw(true);
}

}  // namespace

std::vector<ClipReport> Run(const InputList& inputs, const RunOptions& options,
                            const Processor& process) {
  // Worker processes are forked first and would inherit (and count in their resident memory) a
  // report per clip allocated before: then the reports come with the first finished clip.
  std::vector<ClipReport> reports(options.processes ? 0 : inputs.size());
  RunEach(inputs, options, process, [&](size_t i, ClipReport report) {
    if (reports.size() != inputs.size()) reports.resize(inputs.size());  // processes: one thread
    reports[i] = std::move(report);
  });
  return reports;
}

void Run(const InputList& inputs, const RunOptions& options, const Processor& process,
         ReportSpill* spill) {
  RunEach(inputs, options, process,
          [spill](size_t i, ClipReport report) { spill->Add(i, report); });
}

}  // namespace rigel::batch
