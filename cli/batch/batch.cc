#include "cli/batch/batch.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "exporters/atomic_file.h"

namespace fs = std::filesystem;

namespace rigel::batch {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string WithoutExtension(const fs::path& p) {
  return (p.parent_path() / p.stem()).generic_string();
}

void AddPath(const std::string& arg, const fs::path& base,
             const std::vector<std::string>& extensions, std::vector<Input>* out,
             const std::string& origin) {
  fs::path p(arg);
  if (p.is_relative() && !base.empty()) p = base / p;
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    std::vector<fs::path> found;
    for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string ext = Lower(it->path().extension().string());
      if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
        found.push_back(it->path());
      }
    }
    for (const fs::path& f : found) {
      out->push_back({f.string(), WithoutExtension(fs::relative(f, p))});
    }
    return;
  }
  // A missing file is kept: it fails as its clip ("cannot open: No such file or directory") and
  // the batch goes on, like any other unreadable input.
  (void)origin;
  out->push_back({p.string(), p.stem().string()});
}

}  // namespace

std::vector<Input> CollectInputs(const std::vector<std::string>& args,
                                 const std::vector<std::string>& extensions) {
  std::vector<Input> inputs;
  for (const std::string& arg : args) {
    if (!arg.empty() && arg[0] == '@') {
      const fs::path list(arg.substr(1));
      std::ifstream in(list);
      if (!in) throw UsageError(fmt::format("{}: cannot read the input list", list.string()));
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        while (!line.empty() &&
               (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
          line.pop_back();
        }
        const size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        AddPath(line.substr(start), list.parent_path(), extensions, &inputs,
                fmt::format(" (listed at {}:{})", list.string(), number));
      }
      continue;
    }
    AddPath(arg, fs::path(), extensions, &inputs, "");
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const Input& a, const Input& b) { return a.path < b.path; });
  inputs.erase(std::unique(inputs.begin(), inputs.end(),
                           [](const Input& a, const Input& b) {
                             std::error_code ec;
                             return a.path == b.path || fs::equivalent(a.path, b.path, ec);
                           }),
               inputs.end());
  if (inputs.empty()) throw UsageError("no input files");
  std::map<std::string, std::string> by_stem;
  for (const Input& i : inputs) {
    auto [it, fresh] = by_stem.emplace(i.stem, i.path);
    if (!fresh) {
      throw UsageError(
          fmt::format("{} and {} would both write the output '{}'", it->second, i.path, i.stem));
    }
  }
  return inputs;
}

namespace {

// st_dev/st_ino of what `path` names (through symlinks); nullopt when it does not exist.
std::optional<std::pair<dev_t, ino_t>> FileId(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

fs::path Resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) p = path;
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : canonical;
}

}  // namespace

void CheckInputsNotOverwritten(const std::vector<std::string>& inputs, const std::string& out_dir,
                               const std::vector<std::string>& outputs) {
  constexpr const char* kNever = "inputs are never written";
  if (!out_dir.empty()) {
    const auto out_id = FileId(out_dir);
    const fs::path out = Resolved(out_dir);
    std::map<fs::path, bool> inside;  // folder -> is out_dir or under it (cache)
    auto folder_inside = [&](const fs::path& folder) {
      auto [it, fresh] = inside.emplace(folder, false);
      if (!fresh) return it->second;
      bool hit = false;
      for (fs::path q = folder;; q = q.parent_path()) {
        if (out_id && FileId(q) == out_id) hit = true;
        if (hit || q == q.root_path() || q.empty()) break;
      }
      it->second = hit;
      return hit;
    };
    for (const std::string& input : inputs) {
      if (input.empty()) continue;
      std::error_code ec;
      const fs::path given = fs::absolute(input, ec).lexically_normal();
      const fs::path resolved = Resolved(input);
      const auto [mismatch, ignored] =
          std::mismatch(out.begin(), out.end(), resolved.begin(), resolved.end());
      (void)ignored;
      const bool lexically_inside = mismatch == out.end() || mismatch->empty();
      if (lexically_inside || folder_inside(given.parent_path()) ||
          folder_inside(resolved.parent_path())) {
        throw UsageError(
            fmt::format("the output folder '{}' contains the input '{}': an output could "
                        "overwrite an input ({}); choose another --out",
                        out_dir, input, kNever));
      }
    }
  }
  if (outputs.empty()) return;
  std::map<std::pair<dev_t, ino_t>, const std::string*> by_id;
  std::map<fs::path, const std::string*> by_path;
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    if (const auto id = FileId(input)) by_id.emplace(*id, &input);
    by_path.emplace(Resolved(input), &input);
  }
  for (const std::string& output : outputs) {
    const auto id = FileId(output);
    const fs::path resolved = Resolved(output);
    const auto same_path = by_path.find(resolved);
    const auto same_id = id ? by_id.find(*id) : by_id.end();
    if (same_path == by_path.end() && same_id == by_id.end()) continue;
    const std::string& input = same_path != by_path.end() ? *same_path->second : *same_id->second;
    std::error_code ec;
    const char* how = fs::is_symlink(fs::symlink_status(output, ec)) ? "a symlink to"
                      : same_path != by_path.end()                   ? "the same file as"
                                                                     : "a hard link to";
    throw UsageError(
        fmt::format("the output '{}' is {} the input '{}': it would overwrite the input ({})",
                    output, how, input, kNever));
  }
}

Shard ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  Shard s;
  try {
    if (slash == std::string_view::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    const std::string k(text.substr(0, slash)), n(text.substr(slash + 1));
    s.index = std::stoi(k, &used);
    if (used != k.size()) throw std::invalid_argument("k");
    s.count = std::stoi(n, &used);
    if (used != n.size()) throw std::invalid_argument("n");
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--shard: expected K/N (e.g. 0/4), found '{}'", text));
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw UsageError(fmt::format("--shard: expected K/N with 0 <= K < N, found '{}'", text));
  }
  return s;
}

std::vector<Input> SelectShard(const std::vector<Input>& inputs, Shard shard) {
  std::vector<Input> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) == shard.index) {
      out.push_back(inputs[i]);
    }
  }
  return out;
}

namespace {
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
uint64_t Fnv(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= kFnvPrime;
  }
  return h;
}
}  // namespace

std::string HashBytes(std::string_view bytes) {
  return fmt::format("{:016x}", Fnv(kFnvOffset, bytes.data(), bytes.size()));
}

std::string HashFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  uint64_t h = kFnvOffset;
  size_t got;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) h = Fnv(h, buffer.data(), got);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) throw std::runtime_error(path + ": read error");
  return fmt::format("{:016x}", h);
}

std::string ManifestPath(const std::string& output) {
  const fs::path p(output);
  return (p.parent_path() / ("." + p.filename().string() + ".rigel-manifest")).string();
}

bool ManifestMatches(const std::string& output, const Provenance& provenance) {
  std::error_code ec;
  if (!fs::is_regular_file(output, ec)) return false;
  std::ifstream in(ManifestPath(output));
  if (!in) return false;
  try {
    const nlohmann::json m = nlohmann::json::parse(in);
    return m.at("input_hash") == provenance.input_hash &&
           m.at("recipe_hash") == provenance.recipe_hash && m.at("version") == provenance.version &&
           m.at("output_hash") == HashFile(output);
  } catch (const std::exception&) {
    return false;
  }
}

void WriteManifest(const std::string& output, const Provenance& provenance) {
  const nlohmann::json m = {{"input_hash", provenance.input_hash},
                            {"recipe_hash", provenance.recipe_hash},
                            {"version", provenance.version},
                            {"output_hash", HashFile(output)}};
  // Not fsynced: the output it vouches for already is, and a lost manifest only means the clip
  // is baked again.
  WriteFileAtomically(ManifestPath(output),
                      m.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                      /*durable=*/false);
}

int RemoveStaleTemporaries(const std::vector<std::string>& outputs) {
  // Temporaries AtomicFile makes for an output and for its manifest, per folder.
  std::map<fs::path, std::vector<std::string>> prefixes;
  for (const std::string& output : outputs) {
    const fs::path p(output);
    for (const fs::path& target : {p, fs::path(ManifestPath(output))}) {
      prefixes[p.parent_path()].push_back("." + target.filename().string() + ".tmp.");
    }
  }
  int removed = 0;
  std::error_code ec;
  for (const auto& [folder, names] : prefixes) {
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end;
         !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (const std::string& prefix : names) {
        if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) {
          stale.push_back(it->path());
          break;
        }
      }
    }
    for (const fs::path& p : stale) removed += fs::remove(p, ec) ? 1 : 0;
  }
  return removed;
}

namespace {

std::string Clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string OutputPath(const RunOptions& options, const Input& input) {
  return (fs::path(options.out_dir) / (input.stem + options.extension)).string();
}

std::vector<ClipReport> Run(const std::vector<Input>& inputs, const RunOptions& options,
                            const Processor& process) {
  std::vector<std::string> outputs;
  for (const Input& input : inputs) outputs.push_back(OutputPath(options, input));
  std::vector<std::string> input_paths;
  for (const Input& input : inputs) input_paths.push_back(input.path);
  CheckInputsNotOverwritten(input_paths, options.out_dir, outputs);  // before any write
  std::error_code folder_ec;
  fs::create_directories(options.out_dir, folder_ec);
  SetDurableWritesByDefault(false);
  if (const int stale = RemoveStaleTemporaries(outputs); stale > 0) {
    std::fprintf(stderr, "rigel %s: removed %d partial file(s) left by an interrupted run\n",
                 options.command.c_str(), stale);
  }
  std::vector<ClipReport> reports(inputs.size());
  std::atomic<size_t> next{0};
  std::atomic<int> done{0}, failed{0};
  std::atomic<long long> frames{0};
  std::mutex progress_mutex;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto draw = [&](bool final_line) {
    const double t = elapsed();
    const int d = done.load();
    const double fps = t > 0 ? static_cast<double>(frames.load()) / t : 0.0;
    const double eta = d > 0 ? t / d * static_cast<double>(inputs.size() - d) : NAN;
    const int width = 24;
    const int filled = inputs.empty() ? width : static_cast<int>(width * d / inputs.size());
    const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    if (final_line) {
      if (options.progress) std::fputs("\r\033[K", stderr);
      std::fprintf(stderr, "rigel %s: %d/%zu clips, %d failed, %.0f frames/s, %s\n",
                   options.command.c_str(), d, inputs.size(), failed.load(), fps, Clock(t).c_str());
    } else {
      std::fprintf(stderr, "\r\033[K[%s] %d/%zu clips  %.0f frames/s  ETA %s  failed %d",
                   bar.c_str(), d, inputs.size(), fps, Clock(eta).c_str(), failed.load());
    }
    std::fflush(stderr);
  };
  auto work = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= inputs.size()) return;
      const Input& input = inputs[i];
      const std::string& output = outputs[i];
      ClipReport report;
      const auto clip_start = std::chrono::steady_clock::now();
      try {
        Provenance provenance = options.recipe;
        provenance.input_hash = HashFile(input.path);
        if (options.resume && ManifestMatches(output, provenance)) {
          report.status = "skipped";
        } else {
          fs::create_directories(fs::path(output).parent_path());
          // A stale manifest must not vouch for a half-made output: drop it first.
          std::error_code ec;
          fs::remove(ManifestPath(output), ec);
          report = process(input, output);
          report.status = "ok";
          WriteManifest(output, provenance);
        }
      } catch (const std::exception& e) {
        report.status = "failed";
        report.reason = e.what();
      }
      report.input = input.path;
      report.output = output;
      report.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - clip_start).count();
      if (report.status == "failed") ++failed;
      frames += report.frames;
      reports[i] = std::move(report);
      ++done;
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        draw(false);
      }
    }
  };
  const int wanted =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency());
  const int jobs = std::max(1, std::min<int>(wanted, static_cast<int>(inputs.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  draw(true);
  return reports;
}

namespace {

nlohmann::json ToJson(const ClipReport& r) {
  nlohmann::json j = {{"input", r.input},   {"output", r.output}, {"status", r.status},
                      {"reason", r.reason}, {"frames", r.frames}, {"seconds", r.seconds}};
  j["solver"] = {{"frames", r.solver.frames},
                 {"residual_mean", r.solver.residual_mean},
                 {"residual_max", r.solver.residual_max},
                 {"iterations_mean", r.solver.iterations_mean},
                 {"iterations_max", r.solver.iterations_max},
                 {"frames_with_limit_hits", r.solver.frames_with_limit_hits},
                 {"frames_unreachable", r.solver.unreachable}};
  if (!r.extra.is_null()) j["metrics"] = r.extra;
  return j;
}

// A clip of a report to merge must hold what Summary and the sort read, with the types
// ToJson writes; anything else is "not a rigel report" (found by tests/fuzz/report_merge_fuzzer:
// a missing "status" escaped as a json exception, "frames": 1e300 was an undefined conversion).
void CheckClipEntry(const nlohmann::json& c) {
  if (!c.is_object()) throw std::runtime_error("a clip is not an object");
  for (const char* key : {"input", "status"}) {
    const auto it = c.find(key);
    if (it == c.end() || !it->is_string()) {
      throw std::runtime_error(fmt::format("a clip has no '{}' string", key));
    }
  }
  const auto frames = c.find("frames");
  const bool frames_ok =
      frames != c.end() && (frames->is_number_unsigned()
                                ? frames->get<std::uint64_t>() <= 2147483647u
                                : frames->is_number_integer() && frames->get<std::int64_t>() >= 0 &&
                                      frames->get<std::int64_t>() <= 2147483647);
  if (!frames_ok)
    throw std::runtime_error("a clip's 'frames' is not a whole number from 0 to 2^31-1");
  const auto seconds = c.find("seconds");
  if (seconds == c.end() || !seconds->is_number() || !std::isfinite(seconds->get<double>()) ||
      seconds->get<double>() < 0) {
    throw std::runtime_error("a clip's 'seconds' is not a finite number >= 0");
  }
}

nlohmann::json Summary(const nlohmann::json& clips) {
  int ok = 0, failed = 0, skipped = 0;
  long long frames = 0;
  double seconds = 0;
  for (const auto& c : clips) {
    const std::string s = c.at("status");
    ok += s == "ok";
    failed += s == "failed";
    skipped += s == "skipped";
    frames += c.at("frames").get<long long>();
    seconds += c.at("seconds").get<double>();
  }
  return {{"clips", clips.size()}, {"ok", ok},         {"failed", failed},
          {"skipped", skipped},    {"frames", frames}, {"clip_seconds", seconds}};
}

}  // namespace

nlohmann::json ReportJson(const std::vector<ClipReport>& reports, const RunOptions& options) {
  nlohmann::json clips = nlohmann::json::array();
  for (const ClipReport& r : reports) clips.push_back(ToJson(r));
  return {{"rigel_version", options.recipe.version},
          {"command", options.command},
          {"clips", clips},
          {"summary", Summary(clips)}};
}

nlohmann::json MergeReports(const std::vector<std::string>& paths) {
  nlohmann::json clips = nlohmann::json::array();
  std::string version, command;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    if (!in) throw UsageError(p + ": cannot read the report");
    nlohmann::json r;
    try {
      r = nlohmann::json::parse(in);
      if (!r.at("clips").is_array()) throw std::runtime_error("'clips' is not an array");
      for (const auto& c : r.at("clips")) {
        CheckClipEntry(c);
        clips.push_back(c);
      }
      version = r.at("rigel_version");
      command = r.at("command");
    } catch (const std::exception& e) {
      throw UsageError(p + ": not a rigel report (" + e.what() + ")");
    }
  }
  std::sort(clips.begin(), clips.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.at("input").get<std::string>() < b.at("input").get<std::string>();
  });
  return {{"rigel_version", version},
          {"command", command},
          {"clips", clips},
          {"summary", Summary(clips)}};
}

}  // namespace rigel::batch
