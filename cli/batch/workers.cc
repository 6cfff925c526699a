// Worker processes of batch::Run (RunOptions::processes): forked workers reused clip after clip,
// with per-clip memory and time limits, reporting over a socket pair.
#include "cli/batch/workers.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <tuple>
#include <utility>

namespace rigel::batch {

namespace {

constexpr size_t kMaxReasonBytes = 4096;         // a failure's reason, a warning
constexpr size_t kMaxWarnings = 100;             // warnings per report row
constexpr uint32_t kMaxMessageBytes = 8u << 20;  // one report on the wire
constexpr int kMessageSeconds = 10;              // for a report to arrive once it has begun
constexpr int kExitSeconds = 5;                  // for an idle worker to exit at end of file

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

// Every field of the solver statistics (the report's "solver" object shows some of them), in
// the order of the wire array.
constexpr auto kSolverFields = std::make_tuple(
    &ik::BakeSummary::frames, &ik::BakeSummary::converged, &ik::BakeSummary::not_converged,
    &ik::BakeSummary::unreachable, &ik::BakeSummary::skipped, &ik::BakeSummary::iterations,
    &ik::BakeSummary::iterations_max, &ik::BakeSummary::iterations_mean,
    &ik::BakeSummary::residual_max, &ik::BakeSummary::residual_mean,
    &ik::BakeSummary::max_angle_error, &ik::BakeSummary::worst_frame,
    &ik::BakeSummary::frames_with_limit_hits);

nlohmann::json SolverWire(const ik::BakeSummary& s) {
  return std::apply([&](auto... field) { return nlohmann::json::array({(s.*field)...}); },
                    kSolverFields);
}
ik::BakeSummary SolverFromWire(const nlohmann::json& j) {
  ik::BakeSummary s;
  std::apply(
      [&](auto... field) {
        size_t i = 0;
        ((j.at(i++).get_to(s.*field)), ...);
      },
      kSolverFields);
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

// Waits until `fd` is readable or `deadline` passes; false at the deadline or on a poll error.
bool WaitReadable(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// ReadAll with a deadline: a worker that stops in the middle of a message is not waited for.
bool ReadAllBy(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (!WaitReadable(fd, deadline)) return false;
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// ReadAllBy without a deadline (a worker waiting for its next clip waits as long as it takes).
bool ReadAll(int fd, void* data, size_t size) {
  return ReadAllBy(fd, data, size, std::chrono::steady_clock::time_point::max());
}

// One report from a worker: uint32 length, then the JSON. A message, once begun, has
// kMessageSeconds to arrive whole, and kMaxMessageBytes at most: a worker that stops mid-message
// or sends more is killed and its clip failed. kEnd: end of file (the worker died).
enum class Message { kOk, kEnd, kTooBig, kStalled };
Message ReadMessage(int fd, std::string* body, uint32_t* size) {
  const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(kMessageSeconds);
  const auto failed = [&] {
    return std::chrono::steady_clock::now() >= by ? Message::kStalled : Message::kEnd;
  };
  if (!ReadAllBy(fd, size, sizeof *size, by)) return failed();
  if (*size > kMaxMessageBytes) return Message::kTooBig;
  body->resize(*size);
  if (!ReadAllBy(fd, body->data(), *size, by)) {
    body->clear();
    return failed();
  }
  return Message::kOk;
}

// `text` cut to kMaxReasonBytes, with a note of how much was cut.
void CutText(std::string* text) {
  if (text->size() <= kMaxReasonBytes) return;
  const size_t cut = text->size() - kMaxReasonBytes;
  text->resize(kMaxReasonBytes);
  *text += fmt::format(" ... ({} more bytes cut)", cut);
}

// A report's texts (reason, warnings, also of its takes) cut to kMaxReasonBytes each.
void CutTexts(ClipReport* report) {
  CutText(&report->reason);
  for (std::string& w : report->warnings) CutText(&w);
  if (report->warnings.size() > kMaxWarnings) {
    const size_t cut = report->warnings.size() - kMaxWarnings;
    report->warnings.resize(kMaxWarnings);
    report->warnings.push_back(fmt::format("... ({} more warnings cut)", cut));
  }
  for (ClipReport& take : report->takes) CutTexts(&take);
}

// The wire text of a worker's report. Any bytes (a script's error("\255"), a non-UTF-8 path or
// joint name) are sent, invalid UTF-8 replaced by U+FFFD.
std::string WireBody(const ClipReport& report, bool out_of_memory) {
  nlohmann::json j = ClipReportJson(report);
  j["worker_exits"] = out_of_memory;
  j["solver_all"] = SolverWire(report.solver);
  for (size_t t = 0; t < report.takes.size(); ++t) {
    j["takes"][t]["solver_all"] = SolverWire(report.takes[t].solver);
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
[[noreturn]] void WorkerMain(int fd, pid_t supervisor, const InputList& inputs,
                             const RunOptions& options, const Processor& process,
                             WorkerShared* shared) {
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
      report = process(inputs[index], OutputPath(options, inputs.stem(index)));
      if (report.status != "suspect") report.status = "ok";
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
    bool exits = out_of_memory;
    try {
      CutTexts(&report);
      body = WireBody(report, out_of_memory);
    } catch (const std::exception& e) {
      exits = true;  // the supervisor retires this worker: exit after answering
      body = nlohmann::json{
          {"status", "failed"},
          {"reason", std::string("cannot send the report: ") + e.what()},
          {"worker_exits",
           true}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    std::fflush(nullptr);
    const uint32_t size = static_cast<uint32_t>(body.size());
    if (!WriteAll(fd, &size, sizeof size) || !WriteAll(fd, body.data(), body.size())) break;
    if (exits) break;  // the next clip gets a fresh heap
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

using Clock = std::chrono::steady_clock;

// The supervisor's side of RunInWorkers: hands the clips out to the workers (starting them as
// needed), waits for their replies, and fails the clip of a worker that dies, passes its deadline
// or sends what cannot be read.
class Supervisor {
 public:
  Supervisor(const InputList& inputs, const RunOptions& options, const Processor& process,
             const PrepareFn& prepare, const FinishFn& finish, WorkerShared* shared, int jobs)
      : inputs_(inputs),
        options_(options),
        process_(process),
        prepare_(prepare),
        finish_(finish),
        shared_(shared),
        workers_(static_cast<size_t>(jobs)),
        self_(getpid()) {}

  // Until every clip is finished; then the workers are told to exit.
  void Run();

 private:
  bool StartWorker(size_t w);
  // Kills (if asked) and reaps worker w; returns its wait status.
  int StopWorker(Worker& w, bool kill_it);
  void FailClip(Worker& w, const std::string& reason);
  std::string DeathReason(size_t index, int status) const;
  // Gives idle worker w the next clips until it has one to run (clips `prepare` skips finish
  // here).
  void HandOut(size_t w);
  // Waits for a reply, a death or the nearest deadline: which workers can be read, which exited.
  void Wait(std::vector<bool>* readable, std::vector<bool>* exited);
  // Reads worker w's reply; false when it sent nothing (end of file: it died).
  bool ReadReply(Worker& worker);
  // The report of clip i from the reply `body` (`*retire`: the worker exits after it), its
  // manifest written when its outputs were.
  ClipReport ReportOfReply(const std::string& body, size_t i, const Provenance& provenance,
                           bool* retire) const;
  // Worker w after the wait: its reply read, or its death or deadline failing its clip.
  void Check(size_t w, bool readable, bool exited);

  // The output of clip i (OutputPath: made when needed, not kept).
  std::string Output(size_t i) const { return OutputPath(options_, inputs_.stem(i)); }

  const InputList& inputs_;
  const RunOptions& options_;
  const Processor& process_;
  const PrepareFn& prepare_;
  const FinishFn& finish_;
  WorkerShared* shared_;
  std::vector<Worker> workers_;
  const pid_t self_;
  size_t finished_ = 0;
  size_t next_ = 0;
};

bool Supervisor::StartWorker(size_t w) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
  shared_[w].out_of_memory.store(0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    for (const Worker& other : workers_) {
      if (other.fd >= 0) close(other.fd);
      if (other.pidfd >= 0) close(other.pidfd);
    }
    WorkerMain(sv[1], self_, inputs_, options_, process_, &shared_[w]);
  }
  close(sv[1]);
  workers_[w].pid = pid;
  workers_[w].fd = sv[0];
  workers_[w].pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return true;
}

int Supervisor::StopWorker(Worker& w, bool kill_it) {
  if (!kill_it && w.fd >= 0) {  // end of file: an idle worker exits
    close(w.fd);
    w.fd = -1;
  }
  if (kill_it) {
    kill(-w.pid, SIGKILL);
    kill(w.pid, SIGKILL);
  }
  // A worker asked to exit gets kExitSeconds, then SIGKILL: the supervisor never waits on one.
  int status = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(kExitSeconds);
  for (;;) {
    const pid_t r = waitpid(w.pid, &status, kill_it ? 0 : WNOHANG);
    if (r == w.pid || (r < 0 && errno != EINTR)) break;
    if (r == 0 && Clock::now() >= give_up) {
      kill(-w.pid, SIGKILL);
      kill(w.pid, SIGKILL);
      kill_it = true;
    } else if (r == 0) {
      usleep(10000);
    }
  }
  if (w.fd >= 0) close(w.fd);
  if (w.pidfd >= 0) close(w.pidfd);
  w.pid = -1;
  w.fd = w.pidfd = -1;
  return status;
}

void Supervisor::FailClip(Worker& w, const std::string& reason) {
  ClipReport report;
  report.status = "failed";
  report.reason = reason;
  const size_t i = static_cast<size_t>(w.clip);
  w.clip = -1;
  RemoveStaleTemporaries({Output(i)});  // a killed worker leaves no partial output
  finish_(i, std::move(report), std::chrono::duration<double>(Clock::now() - w.started).count());
  ++finished_;
}

std::string Supervisor::DeathReason(size_t index, int status) const {
  if (shared_[index].out_of_memory.load() != 0) {
    return fmt::format("out of memory (--memory-mb {})", options_.memory_mb);
  }
  if (WIFSIGNALED(status)) {
    return fmt::format("worker killed by signal {}", SignalName(WTERMSIG(status)));
  }
  return fmt::format("worker exited with status {} before finishing the clip",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void Supervisor::HandOut(size_t w) {
  Worker& worker = workers_[w];
  while (worker.clip < 0 && next_ < inputs_.size()) {
    const size_t i = next_++;
    ClipReport report;
    bool run = false;
    try {
      run = prepare_(i, &worker.provenance, &report);
    } catch (const std::exception& e) {
      report.status = "failed";
      report.reason = e.what();
    }
    if (!run) {
      finish_(i, std::move(report), 0);
      ++finished_;
      continue;
    }
    worker.started = Clock::now();
    worker.deadline =
        options_.timeout > 0
            ? worker.started +
                  std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(options_.timeout + options_.timeout_grace))
            : Clock::time_point::max();
    worker.clip = static_cast<long>(i);
    if (worker.pid < 0 && !StartWorker(w)) {
      FailClip(worker, fmt::format("cannot start a worker process: {}", std::strerror(errno)));
      continue;
    }
    const uint32_t index = static_cast<uint32_t>(i);
    if (!WriteAll(worker.fd, &index, sizeof index)) {
      // It died while idle: reap it and let a fresh one take the clip.
      StopWorker(worker, true);
      if (!StartWorker(w) || !WriteAll(worker.fd, &index, sizeof index)) {
        FailClip(worker, "cannot reach a worker process");
      }
    }
  }
}

void Supervisor::Wait(std::vector<bool>* readable, std::vector<bool>* exited) {
  std::vector<pollfd> fds;
  std::vector<size_t> owner;
  Clock::time_point nearest = Clock::time_point::max();
  bool poll_waitpid = false;
  for (size_t w = 0; w < workers_.size(); ++w) {
    const Worker& worker = workers_[w];
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
  readable->assign(workers_.size(), false);
  exited->assign(workers_.size(), false);
  for (size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    (fds[k].fd == workers_[owner[k]].fd ? *readable : *exited)[owner[k]] = true;
  }
}

ClipReport Supervisor::ReportOfReply(const std::string& body, size_t i,
                                     const Provenance& provenance, bool* retire) const {
  ClipReport report;
  try {
    const nlohmann::json j = nlohmann::json::parse(body);
    *retire = j.value("worker_exits", false);
    report = ClipReportFromJson(j);
    if (j.contains("solver_all")) report.solver = SolverFromWire(j.at("solver_all"));
    for (size_t t = 0; t < report.takes.size(); ++t) {
      const nlohmann::json& take = j.at("takes").at(t);
      if (take.contains("solver_all")) {
        report.takes[t].solver = SolverFromWire(take.at("solver_all"));
      }
    }
    if (Written(report.status)) {
      const std::string output = Output(i);
      WriteManifest(output, provenance, WrittenFiles(report, output));
    }
  } catch (const std::exception& e) {
    report.status = "failed";
    report.reason = e.what();
  }
  return report;
}

bool Supervisor::ReadReply(Worker& worker) {
  std::string body;
  uint32_t size = 0;
  const Message got = ReadMessage(worker.fd, &body, &size);
  if (got == Message::kTooBig || got == Message::kStalled) {
    StopWorker(worker, true);
    FailClip(worker, got == Message::kTooBig
                         ? fmt::format("the worker sent a report of {} bytes (at most {}): "
                                       "stopped",
                                       size, kMaxMessageBytes)
                         : fmt::format("the worker stopped answering in the middle of its "
                                       "report ({} s): stopped",
                                       kMessageSeconds));
    return true;
  }
  if (body.empty()) return false;
  const size_t i = static_cast<size_t>(worker.clip);
  worker.clip = -1;
  bool retire = false;
  ClipReport report = ReportOfReply(body, i, worker.provenance, &retire);
  if (report.status == "failed") RemoveStaleTemporaries({Output(i)});
  if (retire) StopWorker(worker, true);  // it answered; it exits now anyway
  finish_(i, std::move(report),
          std::chrono::duration<double>(Clock::now() - worker.started).count());
  ++finished_;
  return true;
}

void Supervisor::Check(size_t w, bool readable, bool exited) {
  Worker& worker = workers_[w];
  if (worker.clip < 0) return;
  if (readable) {
    if (ReadReply(worker)) return;
    exited = true;  // end of file: it died
  }
  if (!exited && worker.pidfd < 0) {
    int status = 0;
    if (waitpid(worker.pid, &status, WNOHANG) == worker.pid) {
      if (worker.fd >= 0) close(worker.fd);
      worker.pid = -1;
      worker.fd = -1;
      FailClip(worker, DeathReason(w, status));
      return;
    }
  }
  if (exited) {
    FailClip(worker, DeathReason(w, StopWorker(worker, false)));
  } else if (Clock::now() >= worker.deadline) {
    StopWorker(worker, true);
    FailClip(worker, fmt::format("clip timed out after {:g} s (--timeout)", options_.timeout));
  }
}

void Supervisor::Run() {
  while (finished_ < inputs_.size()) {
    // Hand out clips to idle workers.
    for (size_t w = 0; w < workers_.size(); ++w) HandOut(w);
    if (finished_ >= inputs_.size()) break;
    std::vector<bool> readable, exited;
    Wait(&readable, &exited);
    for (size_t w = 0; w < workers_.size(); ++w) Check(w, readable[w], exited[w]);
  }
  for (Worker& worker : workers_) {
    if (worker.pid < 0) continue;
    StopWorker(worker, false);  // end of file: it exits (or is killed after kExitSeconds)
  }
}

}  // namespace

void RunInWorkers(const InputList& inputs, const RunOptions& options, int jobs,
                  const Processor& process, const PrepareFn& prepare, const FinishFn& finish) {
  void* page = mmap(nullptr, sizeof(WorkerShared) * static_cast<size_t>(jobs),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error("cannot map the workers' shared page");
  auto* shared = static_cast<WorkerShared*>(page);
  for (int w = 0; w < jobs; ++w) new (&shared[w]) WorkerShared();
  Supervisor(inputs, options, process, prepare, finish, shared, jobs).Run();
  for (int w = 0; w < jobs; ++w) shared[w].~WorkerShared();
  munmap(page, sizeof(WorkerShared) * static_cast<size_t>(jobs));
}

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

}  // namespace rigel::batch
