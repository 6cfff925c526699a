// LoadSceneIsolated: runs an importer in a child process so that an abort() (Debian's Assimp is a
// debug build whose failed asserts abort), a crash, a runaway allocation or an endless loop ends
// with an ImportError naming the file instead of taking the caller down.
//
// The child gets an address-space limit (RLIMIT_AS: what the caller maps plus
// LoadOptions::memory_limit_mib), no core dumps, and a wall-clock limit
// (LoadOptions::time_limit_seconds, then SIGKILL). The read runs on a second thread of the child
// (so it allocates from a fresh arena, not from the caller's copy-on-write heap). The child sends
// the Scene back through a pipe (scene_codec.h); its stderr is captured and the last line is
// quoted in the error when it dies.
// Before reading, the child confines itself (confine.h, Landlock where the kernel has it) to
// reading the file's own folder: a reference the file makes to anything outside it (a glTF
// buffer or image uri "../../etc/passwd", an FBX or DAE external file) fails to open.
// Safe to call from several threads at once (each call forks its own child).
#ifndef RIGEL_IMPORTERS_ISOLATED_LOAD_H_
#define RIGEL_IMPORTERS_ISOLATED_LOAD_H_

#include <functional>
#include <string>

#include "core/scene.h"
#include "importers/load_scene.h"

namespace rigel {

// Reads `path` through Assimp in a child process and applies options.unit. Throws ImportError.
Scene LoadSceneIsolated(const std::string& path, const LoadOptions& options = {});

// Runs `read` in a child process with the limits of `options` and returns its Scene. `read` may
// throw ImportError (passed through with its message) or any other exception. Throws ImportError
// ("<path>: ...") when the child crashes, exceeds a limit or cannot be started.
Scene RunIsolated(const std::string& path, const LoadOptions& options,
                  const std::function<Scene()>& read);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_ISOLATED_LOAD_H_
