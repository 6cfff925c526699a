#include "cli/preview/live.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/preview/preview_assets.h"
#include "cli/preview/preview_page.h"

#ifdef RIGEL_HAVE_HTTPLIB
#include <httplib.h>
#endif

extern char** environ;

namespace rigel::preview {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// What the server serves; written by the watch loop, read by the server's threads.
struct LiveState {
  std::mutex mutex;
  std::string page;   // the last good page, with the live script
  std::string data;   // its data (the JSON the page draws)
  int version = 0;    // bumps with every good bake (the page reloads)
  std::string error;  // the last bake's error ("" when it worked)
  int error_count = 0;
  double bake_ms = 0, page_ms = 0;
};

// The script the served page runs (after its own): restores frame, camera and selection across
// reloads (sessionStorage), polls /TOKEN/status every 200 ms, reloads on a new version and shows
// an error in a banner over the last good result.
constexpr const char* kLiveScript = R"JS(
(function () {
  const P = window.rigelPreview;
  let version = VERSION;
  const key = 'rigel-live:' + location.pathname;
  const banner = document.createElement('pre');
  banner.id = 'live-error';
  banner.hidden = true;
  banner.style.cssText = 'position:fixed;left:8px;right:8px;bottom:8px;margin:0;padding:8px;' +
    'background:#7f1d1d;color:#fff;font:13px monospace;white-space:pre-wrap;z-index:10;' +
    'border-radius:4px;opacity:0.95';
  document.body.appendChild(banner);
  const badge = document.createElement('span');
  badge.id = 'live-badge';
  document.getElementById('bar').appendChild(badge);
  const showVersion = () => { badge.textContent = ' live v' + version; };
  showVersion();
  try {
    const s = JSON.parse(sessionStorage.getItem(key) || 'null');
    if (s) {
      P.setFrame(Math.min(s.frame, P.frameCount - 1));
      if (s.camera) P.setCamera(s.camera.position, s.camera.target);
      if (s.selected) P.selectJoint(s.selected.clip, s.selected.joint);
    }
  } catch (e) { /* a page of another layout: start fresh */ }
  function save() {
    sessionStorage.setItem(key, JSON.stringify({ frame: P.frame(), camera: P.camera(),
                                                 selected: P.selected() }));
  }
  window.rigelLive = {
    get version() { return version; },
    error: () => (banner.hidden ? '' : banner.textContent),
    updates: { inPlace: 0 },
    // Milliseconds of the last in-place update: status seen -> data fetched -> parsed -> drawn.
    timing: null,
  };
  // A new bake: its data in place when the layout is the same (frame, camera and selection stay
  // as they are), else a reload that restores them.
  async function take(next) {
    const t0 = performance.now();
    const r = await fetch('data?v=' + next, { cache: 'no-store' });
    const text = r.ok ? await r.text() : '';
    const t1 = performance.now();
    const parsed = text ? JSON.parse(text) : null;
    const t2 = performance.now();
    if (parsed && P.updateData(parsed)) {
      const t3 = performance.now();
      window.rigelLive.timing = { fetch: t1 - t0, parse: t2 - t1, update: t3 - t2,
                                  bytes: text.length };
      version = next;
      window.rigelLive.updates.inPlace++;
      showVersion();
      return;
    }
    save();
    location.reload();
  }
  async function poll() {
    try {
      const r = await fetch('status', { cache: 'no-store' });
      const s = await r.json();
      banner.textContent = s.error ? 'rig error (showing the last good bake):\n' + s.error : '';
      banner.hidden = !s.error;
      if (s.version !== version) await take(s.version);
    } catch (e) { /* server restarting */ }
    setTimeout(poll, 50);
  }
  poll();
})();
)JS";

std::string RandomToken() {
  std::random_device device;  // /dev/urandom
  std::string token;
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(device() & 0xff));
    token += hex;
  }
  return token;
}

// A file's modification time and size, to notice a save (also through a rename).
std::string Stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_ino);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `args` with stdout and stderr into `log`; returns the exit status (-1: not run).
int Run(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The lines of a failed bake's log that say why (the script's file:line message first).
std::string ErrorOf(const std::string& log) {
  std::istringstream in(log);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos || line.find(".lua:") != std::string::npos) {
      out += line + "\n";
    }
  }
  return out.empty() ? log : out;
}

// One bake and page; updates `state`.
void Rebake(const LiveOptions& o, const fs::path& work, const std::string& token,
            LiveState* state) {
  const auto start = Clock::now();
  const fs::path out = work / "out";
  fs::remove_all(out);
  fs::create_directories(out);
  std::vector<std::string> args = {o.rigel, "bake", "--rig", o.rig, "--out", out.string()};
  if (!o.bake_args.empty()) args.push_back(o.bake_args);
  args.push_back(o.clip);
  const std::string log = (work / "bake.log").string();
  const int rc = Run(args, log);
  const double bake_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::string result;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.is_regular_file() && entry.path().extension() != ".json") {
      result = entry.path().string();
    }
  }
  if (rc != 0 || result.empty()) {
    const std::string error = ErrorOf(ReadAll(log));
    std::lock_guard<std::mutex> lock(state->mutex);
    state->error = error.empty() ? "rigel bake failed (exit " + std::to_string(rc) + ")" : error;
    ++state->error_count;
    std::fprintf(stderr, "rigel preview: bake failed (%.0f ms): %s", bake_ms, state->error.c_str());
    return;
  }
  const auto page_start = Clock::now();
  const std::string html_path = (work / "page.html").string();
  std::string page;
  try {
    PageInput input;
    input.source = o.clip;
    input.results = {result};
    input.title =
        fs::path(o.rig).filename().string() + " on " + fs::path(o.clip).filename().string();
    WritePreviewPage(input, html_path);
    page = ReadAll(html_path);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->error = e.what();
    ++state->error_count;
    return;
  }
  const double page_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - page_start).count();
  std::lock_guard<std::mutex> lock(state->mutex);
  ++state->version;
  std::string script = kLiveScript;
  const std::string version = std::to_string(state->version);
  for (size_t at; (at = script.find("VERSION")) != std::string::npos;) {
    script.replace(at, 7, version);
  }
  // The page's own script (three.js, uPlot: most of its bytes) is served once as page.js, which
  // the browser keeps compiled across reloads; the page keeps its data inline.
  const size_t open = page.rfind("<script>");
  const size_t close = open == std::string::npos ? open : page.find("</script>", open);
  if (close != std::string::npos) {
    page.replace(open, close + 9 - open, "<script src=\"page.js\"></script>");
  }
  const size_t body = page.rfind("</body>");
  page.insert(body == std::string::npos ? page.size() : body, "<script>" + script + "</script>\n");
  // The data alone, for pages that take a new bake in place (rigelPreview.updateData).
  const std::string data_open = "<script type=\"application/json\" id=\"rigel-data\">";
  const size_t data_at = page.find(data_open);
  const size_t data_end = data_at == std::string::npos ? data_at : page.find("</script>", data_at);
  state->data = data_end == std::string::npos ? std::string()
                                              : page.substr(data_at + data_open.size(),
                                                            data_end - data_at - data_open.size());
  state->page = std::move(page);
  state->error.clear();
  state->bake_ms = bake_ms;
  state->page_ms = page_ms;
  std::fprintf(stderr, "rigel preview: version %d: bake %.0f ms, page %.0f ms\n", state->version,
               bake_ms, page_ms);
  (void)token;
}

}  // namespace

#ifdef RIGEL_HAVE_HTTPLIB

bool LiveAvailable() { return PreviewAvailable(); }

int RunLivePreview(const LiveOptions& o) {
  fs::path work = o.work_dir;
  if (work.empty()) {
    work = fs::temp_directory_path() / ("rigel_live_" + std::to_string(::getpid()));
  }
  fs::create_directories(work);
  const std::string token = RandomToken();
  LiveState state;
  httplib::Server server;
  const std::string base = "/" + token + "/";
  server.Get(base, [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(state.mutex);
    res.set_header("Cache-Control", "no-store");
    if (state.page.empty()) {
      res.set_content("<!DOCTYPE html><meta http-equiv='refresh' content='0.5'><pre>" +
                          (state.error.empty() ? std::string("baking...") : state.error) + "</pre>",
                      "text/html");
      return;
    }
    res.set_content(state.page, "text/html; charset=utf-8");
  });
  server.Get(base + "status", [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(state.mutex);
    nlohmann::json s = {{"version", state.version},
                        {"error", state.error},
                        {"errors", state.error_count},
                        {"bake_ms", state.bake_ms},
                        {"page_ms", state.page_ms}};
    res.set_header("Cache-Control", "no-store");
    res.set_content(s.dump(), "application/json");
  });
  server.Get(base + "data", [&](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(state.mutex);
    res.set_header("Cache-Control", "no-store");
    if (state.data.empty()) {
      res.status = 404;
      return;
    }
    // Not a compressible type for cpp-httplib: brotli on 2-3 MB of base64 cost 600-800 ms per
    // update on this machine, sending it as is a few ms (the page parses the text itself).
    res.set_content(state.data, "application/octet-stream");
  });
  server.Get(base + "page.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "max-age=86400");
    const std::string_view script = PageScript();
    res.set_content(script.data(), script.size(), "text/javascript; charset=utf-8");
  });
  // Anything else (a wrong or missing token) is 404, with no hint.
  const int port = o.port > 0 ? (server.bind_to_port("127.0.0.1", o.port) ? o.port : -1)
                              : server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::fprintf(stderr, "rigel preview: error: cannot listen on 127.0.0.1:%d\n", o.port);
    return 2;
  }
  std::thread serve([&] { server.listen_after_bind(); });
  std::printf(
      "rigel preview: http://127.0.0.1:%d%s (watching %s, the .lua files beside it and %s; Ctrl-C "
      "stops)\n",
      port, base.c_str(), o.rig.c_str(), o.clip.c_str());
  std::fflush(stdout);
  // The rig, the modules beside it (what it requires from its folder) and the clip.
  std::string stamps;
  for (;;) {
    std::string now = Stamp(o.rig) + "|" + Stamp(o.clip);
    try {
      for (const auto& entry : fs::directory_iterator(fs::path(o.rig).parent_path())) {
        if (entry.path().extension() == ".lua") now += "|" + Stamp(entry.path().string());
      }
    } catch (const fs::filesystem_error&) {
      // A file went away while listed (an editor's save): look again.
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      continue;
    }
    if (now != stamps) {
      if (!stamps.empty()) std::fprintf(stderr, "rigel preview: a watched file changed\n");
      stamps = now;
      Rebake(o, work, token, &state);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  server.stop();
  serve.join();
  return 0;
}

#else

bool LiveAvailable() { return false; }

int RunLivePreview(const LiveOptions&) {
  std::fprintf(stderr,
               "rigel preview: error: --watch needs rigel built with cpp-httplib "
               "(apt-get install libcpp-httplib-dev, then reconfigure)\n");
  return 2;
}

#endif

}  // namespace rigel::preview
