// Kernel-enforced file confinement (Linux Landlock) for the processes that run untrusted input:
// `rigel run` scripts (a confined child of the CLI) and the isolated Assimp loader
// (isolated_load.h). Once ConfineCurrentThread has run, the kernel refuses every file access
// outside the rules, whatever the code asks for: a Lua string check that a bug lets through, a
// glTF buffer `uri` of "../../../etc/passwd", a dangling symlink, a path given as a number.
//
// What is restricted (by Landlock ABI version): read, write, create, remove, rename, link
// (REFER, ABI 2), truncate (ABI 3), ioctl on devices (ABI 5), TCP bind/connect (ABI 4), and
// signals and abstract Unix sockets to processes outside the domain (ABI 6). Not restricted:
// stat()/existence of paths, file descriptors opened before the call (stdout, stderr, pipes),
// CPU time and memory (see the worker limits).
//
// Call point: in a process that is single-threaded at that moment (a freshly forked child), or
// at the start of the one thread that will run the untrusted code: Landlock confines the calling
// thread and everything it starts afterwards, never threads that already exist. `rigel bake`
// runs its clips on threads of the CLI process today; its workers call this before their first
// clip once they are processes (see docs/security.md).
#ifndef RIGEL_IMPORTERS_CONFINE_H_
#define RIGEL_IMPORTERS_CONFINE_H_

#include <stdexcept>
#include <string>
#include <vector>

namespace rigel {

// The mechanism that confines file access.
enum class ConfinementKind {
  kNone,      // nothing from the kernel: the Lua sandbox's path checks only
  kLandlock,  // Linux Landlock
};

// What this kernel offers.
struct ConfinementSupport {
  ConfinementKind kind = ConfinementKind::kNone;
  int abi = 0;         // Landlock ABI version, 0 when none
  std::string reason;  // why kind is kNone ("Landlock unavailable: ...")
};

// Probes the kernel once (landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION) and
// caches the answer. The environment variable RIGEL_CONFINEMENT=none turns confinement off (for
// tests of the fallback, or a kernel whose Landlock misbehaves).
const ConfinementSupport& ProbeConfinement();

// "landlock (ABI 7)" or "none (Landlock unavailable: ...; Lua path checks only)".
std::string DescribeConfinement();

// Thrown when Landlock exists but the rules cannot be applied.
class ConfinementError : public std::runtime_error {
 public:
  explicit ConfinementError(const std::string& message) : std::runtime_error(message) {}
};

// Paths the confined code may use. A folder covers everything beneath it; a file covers itself.
// Paths that do not exist are skipped (nothing to allow). Symlinks in the paths are followed:
// the rule is on what they point to.
struct ConfinementRules {
  // Read files, list folders.
  std::vector<std::string> read_only;
  // Read, write, create and remove regular files and folders, rename and truncate beneath.
  // No device nodes, sockets, fifos or symlinks are created.
  std::vector<std::string> read_write;
};

// Restricts the calling thread, and every thread and process it starts afterwards, to `rules`
// (sets PR_SET_NO_NEW_PRIVS first, as Landlock requires). Returns kLandlock when applied, kNone
// when the kernel has no Landlock (the caller keeps its own checks). Throws ConfinementError
// when Landlock is there but refuses the rules. Can be called again to narrow further (up to 16
// layers); never widens.
ConfinementKind ConfineCurrentThread(const ConfinementRules& rules);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_CONFINE_H_
