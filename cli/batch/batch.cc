#include "cli/batch/batch.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
#include <new>
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

namespace {

using PrepareFn = std::function<bool(size_t, Provenance*, ClipReport*)>;
using FinishFn = std::function<void(size_t, ClipReport, double)>;

// One page shared by a worker and the supervisor: the worker's new handler sets the flag when an
// allocation fails, so a death that follows it is reported as running out of memory.
struct WorkerShared {
  std::atomic<int> out_of_memory{0};
};
WorkerShared* g_worker_shared = nullptr;  // in a worker process

void WorkerNewHandler() {
  if (g_worker_shared != nullptr) g_worker_shared->out_of_memory.store(1);
  throw std::bad_alloc();
}

// Every field of the solver statistics (the report's "solver" object shows some of them).
nlohmann::json SolverWire(const ik::BakeSummary& s) {
  return {
      s.frames,          s.converged,      s.not_converged,         s.unreachable,  s.skipped,
      s.iterations,      s.iterations_max, s.iterations_mean,       s.residual_max, s.residual_mean,
      s.max_angle_error, s.worst_frame,    s.frames_with_limit_hits};
}
ik::BakeSummary SolverFromWire(const nlohmann::json& j) {
  ik::BakeSummary s;
  s.frames = j.at(0);
  s.converged = j.at(1);
  s.not_converged = j.at(2);
  s.unreachable = j.at(3);
  s.skipped = j.at(4);
  s.iterations = j.at(5);
  s.iterations_max = j.at(6);
  s.iterations_mean = j.at(7);
  s.residual_max = j.at(8);
  s.residual_mean = j.at(9);
  s.max_angle_error = j.at(10);
  s.worst_frame = j.at(11);
  s.frames_with_limit_hits = j.at(12);
  return s;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Bytes this process maps now (/proc/self/statm, first field), 0 when unknown.
size_t MappedBytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0;
  in >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The body of a worker process: reads clip indexes from `fd`, answers each with its report
// (uint32 length + JSON), exits at end of file.
[[noreturn]] void WorkerMain(int fd, pid_t supervisor, const std::vector<Input>& inputs,
                             const std::vector<std::string>& outputs, const RunOptions& options,
                             const Processor& process, WorkerShared* shared) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
  if (getppid() != supervisor) _exit(0);
  setpgid(0, 0);  // the supervisor kills the worker with whatever it started (import children)
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (options.memory_mb > 0) {
    const rlim_t limit = MappedBytes() + (static_cast<rlim_t>(options.memory_mb) << 20);
    const rlimit as{limit, limit};
    setrlimit(RLIMIT_AS, &as);
  }
  std::string setup_error;
  if (options.worker_setup) {
    try {
      options.worker_setup();
    } catch (const std::exception& e) {
      setup_error = e.what();
    }
  }
  g_worker_shared = shared;
  std::set_new_handler(WorkerNewHandler);
  for (;;) {
    uint32_t index = 0;
    if (!ReadAll(fd, &index, sizeof index) || index >= inputs.size()) break;
    shared->out_of_memory.store(0);
    ClipReport report;
    try {
      if (!setup_error.empty()) throw std::runtime_error(setup_error);
      report = process(inputs[index], outputs[index]);
      report.status = "ok";
    } catch (const std::exception& e) {
      report.status = "failed";
      report.reason = e.what();
    }
    const bool out_of_memory = shared->out_of_memory.load() != 0;
    if (out_of_memory && report.status == "failed") {
      report.reason =
          fmt::format("out of memory (--memory-mb {}): {}", options.memory_mb, report.reason);
    }
    std::string body;
    try {
      nlohmann::json j = ClipReportJson(report);
      j["worker_exits"] = out_of_memory;
      j["solver_all"] = SolverWire(report.solver);
      body = j.dump();
    } catch (const std::exception& e) {  // e.g. a reason that is not UTF-8
      body = nlohmann::json{
          {"status", "failed"},
          {"reason", std::string("cannot send the report: ") + e.what()},
          {"worker_exits",
           true}}.dump();
    }
    std::fflush(nullptr);
    const uint32_t size = static_cast<uint32_t>(body.size());
    if (!WriteAll(fd, &size, sizeof size) || !WriteAll(fd, body.data(), body.size())) break;
    if (out_of_memory) break;  // the next clip gets a fresh heap
  }
  std::fflush(nullptr);
  _exit(0);
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;     // the supervisor's end of the socket pair
  int pidfd = -1;  // readable when the worker exits (-1: polled with waitpid)
  long clip = -1;  // the clip it is baking, -1 when idle
  Provenance provenance;
  std::chrono::steady_clock::time_point started, deadline;
};

void RunInWorkers(const std::vector<Input>& inputs, const std::vector<std::string>& outputs,
                  const RunOptions& options, int jobs, const Processor& process,
                  const PrepareFn& prepare, const FinishFn& finish) {
  using Clock = std::chrono::steady_clock;
  void* page = mmap(nullptr, sizeof(WorkerShared) * static_cast<size_t>(jobs),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error("cannot map the workers' shared page");
  auto* shared = static_cast<WorkerShared*>(page);
  for (int w = 0; w < jobs; ++w) new (&shared[w]) WorkerShared();
  std::vector<Worker> workers(static_cast<size_t>(jobs));
  const pid_t self = getpid();

  auto start_worker = [&](size_t w) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    shared[w].out_of_memory.store(0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(sv[0]);
      close(sv[1]);
      return false;
    }
    if (pid == 0) {
      close(sv[0]);
      for (const Worker& other : workers) {
        if (other.fd >= 0) close(other.fd);
        if (other.pidfd >= 0) close(other.pidfd);
      }
      WorkerMain(sv[1], self, inputs, outputs, options, process, &shared[w]);
    }
    close(sv[1]);
    workers[w].pid = pid;
    workers[w].fd = sv[0];
    workers[w].pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    return true;
  };
  // Kills (if asked) and reaps worker w; returns its wait status.
  auto stop_worker = [&](Worker& w, bool kill_it) {
    if (kill_it) {
      kill(-w.pid, SIGKILL);
      kill(w.pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (w.fd >= 0) close(w.fd);
    if (w.pidfd >= 0) close(w.pidfd);
    w.pid = -1;
    w.fd = w.pidfd = -1;
    return status;
  };
  size_t finished = 0;
  auto fail_clip = [&](Worker& w, const std::string& reason) {
    ClipReport report;
    report.status = "failed";
    report.reason = reason;
    const size_t i = static_cast<size_t>(w.clip);
    w.clip = -1;
    RemoveStaleTemporaries({outputs[i]});  // a killed worker leaves no partial output
    finish(i, std::move(report), std::chrono::duration<double>(Clock::now() - w.started).count());
    ++finished;
  };
  auto death_reason = [&](size_t index, int status) {
    if (shared[index].out_of_memory.load() != 0) {
      return fmt::format("out of memory (--memory-mb {})", options.memory_mb);
    }
    if (WIFSIGNALED(status)) {
      return fmt::format("worker killed by signal {}", SignalName(WTERMSIG(status)));
    }
    return fmt::format("worker exited with status {} before finishing the clip",
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  };

  size_t next = 0;
  while (finished < inputs.size()) {
    // Hand out clips to idle workers.
    for (size_t w = 0; w < workers.size(); ++w) {
      Worker& worker = workers[w];
      while (worker.clip < 0 && next < inputs.size()) {
        const size_t i = next++;
        ClipReport report;
        bool run = false;
        try {
          run = prepare(i, &worker.provenance, &report);
        } catch (const std::exception& e) {
          report.status = "failed";
          report.reason = e.what();
        }
        if (!run) {
          finish(i, std::move(report), 0);
          ++finished;
          continue;
        }
        worker.started = Clock::now();
        worker.deadline =
            options.timeout > 0
                ? worker.started +
                      std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(options.timeout + options.timeout_grace))
                : Clock::time_point::max();
        worker.clip = static_cast<long>(i);
        if (worker.pid < 0 && !start_worker(w)) {
          fail_clip(worker, fmt::format("cannot start a worker process: {}", std::strerror(errno)));
          continue;
        }
        const uint32_t index = static_cast<uint32_t>(i);
        if (!WriteAll(worker.fd, &index, sizeof index)) {
          // It died while idle: reap it and let a fresh one take the clip.
          stop_worker(worker, true);
          if (!start_worker(w) || !WriteAll(worker.fd, &index, sizeof index)) {
            fail_clip(worker, "cannot reach a worker process");
          }
        }
      }
    }
    if (finished >= inputs.size()) break;

    // Wait for a reply, a death or the nearest deadline.
    std::vector<pollfd> fds;
    std::vector<size_t> owner;
    Clock::time_point nearest = Clock::time_point::max();
    bool poll_waitpid = false;
    for (size_t w = 0; w < workers.size(); ++w) {
      const Worker& worker = workers[w];
      if (worker.clip < 0) continue;
      fds.push_back({worker.fd, POLLIN, 0});
      owner.push_back(w);
      if (worker.pidfd >= 0) {
        fds.push_back({worker.pidfd, POLLIN, 0});
        owner.push_back(w);
      } else {
        poll_waitpid = true;
      }
      nearest = std::min(nearest, worker.deadline);
    }
    int wait_ms = -1;
    if (nearest != Clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(nearest - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<long long>(left + 1, 0, 1000));
    }
    if (poll_waitpid) wait_ms = wait_ms < 0 ? 100 : std::min(wait_ms, 100);
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    std::vector<bool> readable(workers.size(), false), exited(workers.size(), false);
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      (fds[k].fd == workers[owner[k]].fd ? readable : exited)[owner[k]] = true;
    }
    for (size_t w = 0; w < workers.size(); ++w) {
      Worker& worker = workers[w];
      if (worker.clip < 0) continue;
      if (readable[w]) {
        uint32_t size = 0;
        std::string body;
        if (ReadAll(worker.fd, &size, sizeof size)) {
          body.resize(size);
          if (!ReadAll(worker.fd, body.data(), size)) body.clear();
        }
        if (!body.empty()) {
          const size_t i = static_cast<size_t>(worker.clip);
          worker.clip = -1;
          ClipReport report;
          bool retire = false;
          try {
            const nlohmann::json j = nlohmann::json::parse(body);
            retire = j.value("worker_exits", false);
            report = ClipReportFromJson(j);
            if (j.contains("solver_all")) report.solver = SolverFromWire(j.at("solver_all"));
            if (report.status == "ok") WriteManifest(outputs[i], worker.provenance);
          } catch (const std::exception& e) {
            report.status = "failed";
            report.reason = e.what();
          }
          if (report.status == "failed") RemoveStaleTemporaries({outputs[i]});
          if (retire) stop_worker(worker, false);
          finish(i, std::move(report),
                 std::chrono::duration<double>(Clock::now() - worker.started).count());
          ++finished;
          continue;
        }
        exited[w] = true;  // end of file: it died
      }
      if (!exited[w] && worker.pidfd < 0) {
        int status = 0;
        if (waitpid(worker.pid, &status, WNOHANG) == worker.pid) {
          if (worker.fd >= 0) close(worker.fd);
          worker.pid = -1;
          worker.fd = -1;
          fail_clip(worker, death_reason(w, status));
          continue;
        }
      }
      if (exited[w]) {
        fail_clip(worker, death_reason(w, stop_worker(worker, false)));
      } else if (Clock::now() >= worker.deadline) {
        stop_worker(worker, true);
        fail_clip(worker, fmt::format("clip timed out after {:g} s (--timeout)", options.timeout));
      }
    }
  }
  for (Worker& worker : workers) {
    if (worker.pid < 0) continue;
    close(worker.fd);
    worker.fd = -1;
    stop_worker(worker, false);  // end of file: it exits
  }
  for (int w = 0; w < jobs; ++w) shared[w].~WorkerShared();
  munmap(page, sizeof(WorkerShared) * static_cast<size_t>(jobs));
}

}  // namespace

std::size_t DefaultWorkerMemoryMb(int workers) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 4096;
  const std::size_t ram_mb =
      static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) >> 20;
  return std::max<std::size_t>(
      256,
      std::min<std::size_t>(4096, ram_mb / (2 * static_cast<std::size_t>(std::max(1, workers)))));
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return fmt::format("{} ({})", signal, abbrev != nullptr ? abbrev : "?");
}

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
  // Before a clip: its provenance, and whether --resume skips it (then *report is final).
  // Otherwise its folder exists and a stale manifest is gone.
  auto prepare = [&](size_t i, Provenance* provenance, ClipReport* report) {
    *provenance = options.recipe;
    provenance->input_hash = HashFile(inputs[i].path);
    if (options.resume && ManifestMatches(outputs[i], *provenance)) {
      report->status = "skipped";
      return false;
    }
    fs::create_directories(fs::path(outputs[i]).parent_path());
    // A stale manifest must not vouch for a half-made output: drop it first.
    std::error_code ec;
    fs::remove(ManifestPath(outputs[i]), ec);
    return true;
  };
  auto finish = [&](size_t i, ClipReport report, double seconds) {
    report.input = inputs[i].path;
    report.output = outputs[i];
    report.seconds = seconds;
    if (report.status == "failed") ++failed;
    frames += report.frames;
    reports[i] = std::move(report);
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
          report = process(inputs[i], outputs[i]);
          report.status = "ok";
          WriteManifest(outputs[i], provenance);
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
    RunInWorkers(inputs, outputs, options, jobs, process, prepare, finish);
  } else {
    std::vector<std::thread> threads;
    for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
  }
  draw(true);
  return reports;
}

nlohmann::json ClipReportJson(const ClipReport& r) {
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
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  return j;
}

ClipReport ClipReportFromJson(const nlohmann::json& j) {
  ClipReport r;
  r.input = j.value("input", "");
  r.output = j.value("output", "");
  r.status = j.at("status").get<std::string>();
  r.reason = j.value("reason", "");
  if (j.contains("warnings")) r.warnings = j.at("warnings").get<std::vector<std::string>>();
  r.frames = j.value("frames", 0);
  r.seconds = j.value("seconds", 0.0);
  if (j.contains("solver")) {
    const nlohmann::json& s = j.at("solver");
    r.solver.frames = s.at("frames");
    r.solver.residual_mean = s.at("residual_mean");
    r.solver.residual_max = s.at("residual_max");
    r.solver.iterations_mean = s.at("iterations_mean");
    r.solver.iterations_max = s.at("iterations_max");
    r.solver.frames_with_limit_hits = s.at("frames_with_limit_hits");
    r.solver.unreachable = s.at("frames_unreachable");
  }
  if (j.contains("metrics")) r.extra = j.at("metrics");
  return r;
}

namespace {

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
  for (const ClipReport& r : reports) clips.push_back(ClipReportJson(r));
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
