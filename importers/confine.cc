// Kernel-enforced file confinement. See confine.h.
#include "importers/confine.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

// Debian's kernel headers can be older than the kernel: the syscall numbers and the access
// rights of later ABIs are spelled out here (values from the kernel's uapi/linux/landlock.h).
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

namespace rigel {

namespace {

// Filesystem rights by ABI.
constexpr std::uint64_t kExecute = 1ULL << 0;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kReadFile = 1ULL << 2;
constexpr std::uint64_t kReadDir = 1ULL << 3;
constexpr std::uint64_t kRemoveDir = 1ULL << 4;
constexpr std::uint64_t kRemoveFile = 1ULL << 5;
constexpr std::uint64_t kMakeChar = 1ULL << 6;
constexpr std::uint64_t kMakeDir = 1ULL << 7;
constexpr std::uint64_t kMakeReg = 1ULL << 8;
constexpr std::uint64_t kMakeSock = 1ULL << 9;
constexpr std::uint64_t kMakeFifo = 1ULL << 10;
constexpr std::uint64_t kMakeBlock = 1ULL << 11;
constexpr std::uint64_t kMakeSym = 1ULL << 12;
constexpr std::uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
// Network rights (ABI 4) and scopes (ABI 6).
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

// Rights that make sense on a file (the others only on folders).
constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// struct landlock_ruleset_attr of ABI 6 (the kernel takes the size it is given: ABI 1-3 read
// only the first field, ABI 4-5 the first two).
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

// struct landlock_path_beneath_attr (packed in the uapi header).
struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

// Every filesystem right this ABI knows.
std::uint64_t HandledFs(int abi) {
  std::uint64_t fs = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile |
                     kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock |
                     kMakeSym;
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

ConfinementSupport Probe() {
  ConfinementSupport support;
  const char* env = std::getenv("RIGEL_CONFINEMENT");
  if (env != nullptr && std::strcmp(env, "none") == 0) {
    support.reason = "turned off by RIGEL_CONFINEMENT=none";
    return support;
  }
  const long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0,
                           static_cast<unsigned>(LANDLOCK_CREATE_RULESET_VERSION));
  if (abi < 1) {
    const int e = errno;
    support.reason = e == ENOSYS ? "Landlock unavailable: the kernel was built without it (ENOSYS)"
                     : e == EOPNOTSUPP ? "Landlock unavailable: disabled at boot (EOPNOTSUPP)"
                                       : fmt::format("Landlock unavailable: {}", std::strerror(e));
    return support;
  }
  support.kind = ConfinementKind::kLandlock;
  support.abi = static_cast<int>(abi);
  return support;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Adds a path-beneath rule for `path` (skipped when it does not exist).
void AddPathRule(int ruleset, const std::string& path, std::uint64_t rights) {
  if (path.empty()) return;
  const Fd fd(open(path.c_str(), O_PATH | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return;
    throw ConfinementError(
        fmt::format("confinement: cannot open '{}': {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    throw ConfinementError(
        fmt::format("confinement: cannot stat '{}': {}", path, std::strerror(errno)));
  }
  PathBeneathAttr attr{S_ISDIR(st.st_mode) ? rights : (rights & kFileRights), fd.get()};
  if (attr.allowed_access == 0) return;
  if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0) {
    throw ConfinementError(
        fmt::format("confinement: cannot allow '{}': {}", path, std::strerror(errno)));
  }
}

}  // namespace

const ConfinementSupport& ProbeConfinement() {
  static const ConfinementSupport support = Probe();
  return support;
}

std::string DescribeConfinement() {
  const ConfinementSupport& s = ProbeConfinement();
  if (s.kind == ConfinementKind::kLandlock) return fmt::format("landlock (ABI {})", s.abi);
  return fmt::format("none ({}; Lua path checks only)", s.reason);
}

namespace {

// No new sockets: socket(2) and socketpair(2) fail with EPERM (a seccomp filter on this thread and
// everything it starts). Landlock restricts TCP and abstract Unix sockets only; this also closes
// pathname Unix sockets and UDP. Sockets made before (a bake worker's own socket pair) stay
// usable. Other architectures than the build's are left alone (the filter checks the arch).
void ForbidNewSockets() {
#if defined(__x86_64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  return;
#endif
#if defined(__x86_64__) || defined(__aarch64__)
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    throw ConfinementError(
        fmt::format("confinement: the seccomp socket filter failed: {}", std::strerror(errno)));
  }
#endif
}

}  // namespace

ConfinementKind ConfineCurrentThread(const ConfinementRules& rules) {
  const ConfinementSupport& support = ProbeConfinement();
  if (support.kind != ConfinementKind::kLandlock) return ConfinementKind::kNone;
  const int abi = support.abi;
  RulesetAttr attr;
  attr.handled_access_fs = HandledFs(abi);
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttr);
  }
  const Fd ruleset(static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, size, 0U)));
  if (ruleset.get() < 0) {
    throw ConfinementError(
        fmt::format("confinement: landlock_create_ruleset failed: {}", std::strerror(errno)));
  }
  const std::uint64_t read = kReadFile | kReadDir;
  std::uint64_t write = read | kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg;
  if (abi >= 2) write |= kRefer;
  if (abi >= 3) write |= kTruncate;
  for (const std::string& p : rules.read_only) AddPathRule(ruleset.get(), p, read);
  for (const std::string& p : rules.read_write) AddPathRule(ruleset.get(), p, write);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    throw ConfinementError(
        fmt::format("confinement: PR_SET_NO_NEW_PRIVS failed: {}", std::strerror(errno)));
  }
  if (syscall(__NR_landlock_restrict_self, ruleset.get(), 0U) != 0) {
    throw ConfinementError(
        fmt::format("confinement: landlock_restrict_self failed: {}", std::strerror(errno)));
  }
  ForbidNewSockets();
  return ConfinementKind::kLandlock;
}

}  // namespace rigel
