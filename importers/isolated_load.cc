#include "importers/isolated_load.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <string_view>
#include <thread>

#include "importers/assimp_reader.h"
#include "importers/confine.h"
#include "importers/scene_codec.h"

namespace rigel {

namespace {

constexpr std::size_t kMaxStderr = 16 * 1024;

// Bytes of address space this process maps now (0 when unknown).
std::size_t CurrentAddressSpace() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

void WriteAll(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

// The child's allocations. The forked heap holds the caller's free blocks: malloc would reuse them
// and every first write would copy a page from the parent (after an earlier import in the caller,
// 4000 copy-on-write faults, a third of the import's time). The importer therefore runs on a new
// thread, which glibc gives a fresh arena (new mappings, nothing shared), marked for transparent
// huge pages where the kernel offers them (madvise mode), with no mmap per large block and no
// trimming: 2 MiB faults instead of 4 KiB ones.
void PrepareChildArena() {
  constexpr std::uintptr_t kArenaHeap = std::uintptr_t{64} << 20;  // glibc's HEAP_MAX_SIZE
  mallopt(M_MMAP_THRESHOLD, 32 << 20);                             // glibc's maximum
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 32 << 20);
  void* probe = std::malloc(64);
  asm volatile("" : : "r"(probe) : "memory");  // keep the compiler from eliding the pair
  auto* const main_heap_end = static_cast<char*>(sbrk(0));
  const auto address = reinterpret_cast<std::uintptr_t>(probe);
  // A thread arena's heap is a kArenaHeap-aligned mapping; the main arena lies below the break.
  if (probe && static_cast<char*>(probe) > main_heap_end) {
    madvise(reinterpret_cast<void*>(address & ~(kArenaHeap - 1)), kArenaHeap, MADV_HUGEPAGE);
  }
  std::free(probe);
}

// `reply` after room for its length (filled in by ChildMain).
std::string Framed(const std::string& reply) {
  return std::string(sizeof(std::uint64_t), '\0') + reply;
}

// Set in the import child when an allocation failed (its own new handler).
std::atomic<bool> g_child_out_of_memory{false};

void ChildNewHandler() {
  g_child_out_of_memory.store(true);
  throw std::bad_alloc();
}

// Runs `read` and encodes the reply, after room for its length: "S" + scene, "E" + ImportError
// message, "R" + other failure.
std::string ReadAndEncode(const LoadOptions& options, const std::function<Scene()>& read) {
  try {
    PrepareChildArena();
    // Room for the length (filled in by ChildMain) and the tag, then the scene: one buffer.
    return EncodeScene(read(), std::string(sizeof(std::uint64_t), '\0') + "S");
  } catch (const ImportError& e) {
    // An importer that caught the allocation failure itself ("cannot read (std::bad_alloc)"):
    // the limit it met is named.
    if (g_child_out_of_memory) {
      return Framed(
          fmt::format("Rran out of memory (limit {} MiB): {}", options.memory_limit_mib, e.what()));
    }
    return Framed(std::string("E") + e.what());
  } catch (const std::bad_alloc&) {
    return Framed(fmt::format("Rran out of memory (limit {} MiB)", options.memory_limit_mib));
  } catch (const std::exception& e) {
    return Framed(std::string("R") + e.what());
  } catch (...) {
    return Framed("Runknown exception");
  }
}

// What the child may read: the file's own folder (as named, and where its symlinks lead), so a
// reference the file makes to anything outside it (a glTF buffer uri of "../../etc/passwd", an
// FBX or DAE external file) is refused by the kernel.
ConfinementRules LoaderRules(const std::string& path) {
  namespace fs = std::filesystem;
  ConfinementRules rules;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return rules;
  rules.read_only.push_back(absolute.parent_path().string());
  const fs::path canonical = fs::canonical(absolute, ec);
  if (!ec && canonical.parent_path() != absolute.parent_path()) {
    rules.read_only.push_back(canonical.parent_path().string());
  }
  return rules;
}

[[noreturn]] void ChildMain(int data_fd, int err_fd, pid_t parent, const LoadOptions& options,
                            std::size_t base_address_space, const ConfinementRules& rules,
                            const std::function<Scene()>& read) {
  // Never outlive the caller (rigel info killed, rigel run timed out, a bake worker killed):
  // SIGKILL when the parent dies, and no start at all when it is already gone.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  // The caller's new handler (a bake worker's marks the worker out of memory) is not this
  // process's: running out here is the import's own limit (--import-memory-mb).
  std::set_new_handler(ChildNewHandler);
  // stdout/stderr of the importer go to the capture pipe, never to the caller's terminal.
  dup2(err_fd, STDERR_FILENO);
  dup2(err_fd, STDOUT_FILENO);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  const rlim_t limit = static_cast<rlim_t>(base_address_space) +
                       static_cast<rlim_t>(options.memory_limit_mib) * 1024 * 1024;
  rlimit as{limit, limit};
  setrlimit(RLIMIT_AS, &as);
  std::string reply;
  try {
    // Before the worker thread starts, so that it is confined too.
    ConfineCurrentThread(rules);
  } catch (const std::exception& e) {
    reply = Framed(std::string("R") + e.what());  // nothing is read unconfined
  }
  if (reply.empty()) {
    try {
      std::thread worker([&] { reply = ReadAndEncode(options, read); });
      worker.join();
    } catch (const std::exception&) {  // no thread: run here, on the inherited heap
      reply = ReadAndEncode(options, read);
    }
  }
  // Length first, so the parent allocates the buffer once; then the reply in one write.
  const std::uint64_t length = reply.size() - sizeof(std::uint64_t);
  std::memcpy(reply.data(), &length, sizeof(length));
  WriteAll(data_fd, reply);
  close(data_fd);
  _exit(0);
}

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  const std::size_t nl = text.find_last_of('\n');
  if (nl != std::string::npos) text = text.substr(nl + 1);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

// Forks the importer process (ChildMain) with a pipe for its reply and one for its stderr;
// returns its pid and the pipes' reading ends.
pid_t StartChild(const std::string& path, const LoadOptions& options,
                 const std::function<Scene()>& read, int& data_fd, int& err_fd) {
  int data_pipe[2], err_pipe[2];
  if (pipe2(data_pipe, O_CLOEXEC) != 0) {
    throw ImportError(fmt::format("{}: cannot start the importer process (pipe: {})", path,
                                  std::strerror(errno)));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(data_pipe[0]);
    close(data_pipe[1]);
    throw ImportError(fmt::format("{}: cannot start the importer process (pipe: {})", path,
                                  std::strerror(errno)));
  }
  const std::size_t base = CurrentAddressSpace();
  const ConfinementRules rules = LoaderRules(path);
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {data_pipe[0], data_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    throw ImportError(fmt::format("{}: cannot start the importer process (fork: {})", path,
                                  std::strerror(errno)));
  }
  if (pid == 0) {
    close(data_pipe[0]);
    close(err_pipe[0]);
    ChildMain(data_pipe[1], err_pipe[1], parent, options, base, rules, read);
  }
  close(data_pipe[1]);
  close(err_pipe[1]);
  data_fd = data_pipe[0];
  err_fd = err_pipe[0];
  return pid;
}

// What the importer process sent: its reply (length first) and stderr, and the scene decoded as
// soon as the whole reply was in, while the child was still being torn down.
struct ChildOutput {
  std::string data, err;
  bool length_known = false;
  std::uint64_t length = 0;
  std::optional<Scene> early;
  std::exception_ptr early_error;
  bool timed_out = false;
};

// Appends what was read from the reply pipe (i == 0) or stderr (i == 1).
void TakeChunk(int i, const char* buffer, std::size_t n, const std::string& path,
               ChildOutput& out) {
  std::string& data = out.data;
  std::string& sink = i == 0 ? data : out.err;
  sink.append(buffer, n);
  if (i == 0 && !out.length_known && data.size() >= sizeof(std::uint64_t)) {
    std::memcpy(&out.length, data.data(), sizeof(out.length));
    out.length_known = true;
    if (out.length < (std::uint64_t{1} << 40)) data.reserve(sizeof(out.length) + out.length);
  }
  if (i == 0 && out.length_known && data.size() == sizeof(out.length) + out.length &&
      out.length > 0 && data[sizeof(out.length)] == 'S' && !out.early && !out.early_error) {
    try {
      out.early = DecodeScene(std::string_view(data).substr(sizeof(out.length) + 1), path);
    } catch (...) {
      out.early_error = std::current_exception();
    }
  }
  if (i == 1 && out.err.size() > 2 * kMaxStderr) out.err.erase(0, out.err.size() - kMaxStderr);
}

// Reads both pipes until the child closes them or the time limit passes (the child is then
// killed); closes the pipes.
void CollectOutput(pid_t pid, int data_fd, int err_fd, const std::string& path,
                   const LoadOptions& options, ChildOutput& out) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.time_limit_seconds);
  pollfd fds[2] = {{data_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buffer[1 << 16];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      TakeChunk(i, buffer, static_cast<std::size_t>(n), path, out);
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
}

}  // namespace

Scene RunIsolated(const std::string& path, const LoadOptions& options,
                  const std::function<Scene()>& read) {
  int data_fd = -1, err_fd = -1;
  const pid_t pid = StartChild(path, options, read, data_fd, err_fd);
  // A larger pipe: the scene (2 MB for 2752 frames x 32 joints) crosses in fewer round trips.
  fcntl(data_fd, F_SETPIPE_SZ, 1 << 20);

  ChildOutput out;
  CollectOutput(pid, data_fd, err_fd, path, options, out);
  const std::string& data = out.data;
  const std::string& err = out.err;
  std::uint64_t length = out.length;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.timed_out) {
    throw ImportError(fmt::format("{}: the importer did not finish within {} s and was stopped",
                                  path, options.time_limit_seconds));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const std::string last = LastLine(err);
    throw ImportError(fmt::format(
        "{}: the importer crashed on this file (signal {}: {}){}{}; the file is corrupt or "
        "unsupported",
        path, sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", last.empty() ? "" : ": ", last));
  }
  std::string_view reply;
  if (data.size() >= sizeof(std::uint64_t)) {
    std::memcpy(&length, data.data(), sizeof(length));
    if (length != data.size() - sizeof(length)) {
      throw ImportError(fmt::format("{}: the importer process sent a truncated result{}{}", path,
                                    err.empty() ? "" : ": ", LastLine(err)));
    }
    reply = std::string_view(data).substr(sizeof(length));
  }
  if (reply.empty()) {
    throw ImportError(fmt::format("{}: the importer process exited without a result{}{}", path,
                                  err.empty() ? "" : ": ", LastLine(err)));
  }
  if (reply[0] == 'E') throw ImportError(std::string(reply.substr(1)));
  if (reply[0] == 'R') throw ImportError(fmt::format("{}: {}", path, reply.substr(1)));
  if (out.early_error) std::rethrow_exception(out.early_error);
  if (out.early) return std::move(*out.early);
  return DecodeScene(reply.substr(1), path);
}

Scene LoadSceneIsolated(const std::string& path, const LoadOptions& options) {
  Scene scene = RunIsolated(path, options, [&path]() { return ReadWithAssimp(path); });
  ConvertSceneUnit(scene, options.unit);
  return scene;
}

}  // namespace rigel
