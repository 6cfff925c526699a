// Live preview (`rigel preview --watch RIG.lua CLIP`): re-bakes the clip whenever the rig script or
// the clip changes and serves the preview page from a local HTTP server (cpp-httplib) bound to
// 127.0.0.1 only, under a random token. The page polls the server, reloads itself when a new bake
// is ready (keeping frame, camera and selected joint) and shows a script error with its line next
// to the last good result. See docs/preview.md.
#ifndef RIGEL_CLI_PREVIEW_LIVE_H_
#define RIGEL_CLI_PREVIEW_LIVE_H_

#include <string>

namespace rigel::preview {

struct LiveOptions {
  // The rig script and the clip it bakes (as `rigel bake --rig RIG CLIP`).
  std::string rig;
  std::string clip;
  // The rigel executable that bakes (a child process per bake: the script runs confined, as in
  // `rigel bake`, and a crash cannot take the server down).
  std::string rigel;
  // Port on 127.0.0.1; 0 picks a free one.
  int port = 0;
  // Folder for the bakes and pages (created; default: a new folder under the temp directory).
  std::string work_dir;
  // Extra arguments for each `rigel bake` (e.g. --allow-io).
  std::string bake_args;
};

// True when rigel was built with cpp-httplib (libcpp-httplib-dev).
bool LiveAvailable();

// Serves until the process is stopped (SIGINT/SIGTERM). Prints the page address on stdout and one
// line per re-bake on stderr (what changed, bake and page milliseconds, or the error). Returns the
// exit code (2 when the server cannot start).
int RunLivePreview(const LiveOptions& options);

}  // namespace rigel::preview

#endif  // RIGEL_CLI_PREVIEW_LIVE_H_
