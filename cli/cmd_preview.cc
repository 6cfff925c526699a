// rigel preview SOURCE [RESULT ...] [--frames-report FILE.jsonl ...] [--out page.html]
// rigel preview --watch RIG.lua CLIP [--port N] [--allow-io]: live preview (cli/preview/live.h).
// Writes one self-contained HTML page (three.js view and uPlot plots inlined) that shows the
// source and its results as 3D skeletons with the per-frame solve records under the view.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "cli/batch/batch.h"
#include "cli/command.h"
#include "cli/preview/live.h"
#include "cli/preview/preview_page.h"

namespace rigel::cli {

Runner AddPreviewCommand(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "preview",
      "Write one self-contained HTML page (opens offline in any current browser) showing SOURCE "
      "and each RESULT as 3D skeletons, with plots of the per-frame records. See "
      "docs/preview.md.");
  struct Options {
    std::vector<std::string> clips, reports;
    std::string out, title;
    bool watch = false, allow_io = false;
    int port = 0;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("CLIPS", o->clips, "SOURCE then RESULT clips (.bvh, .fbx, .glb, .gltf, .dae)")
      ->required();
  sub->add_option("--frames-report", o->reports,
                  "Per-frame records (JSON lines, one file per clip; may repeat)");
  sub->add_option("--out", o->out, "Page to write (default: <source stem>.preview.html)");
  sub->add_option("--title", o->title, "Page title (default: the source's file name)");
  sub->add_flag("--watch", o->watch,
                "Live preview: CLIPS are RIG.lua CLIP; re-bake when either changes and serve the "
                "page on 127.0.0.1 (a random token in the address) that updates itself");
  sub->add_option("--port", o->port, "With --watch: port on 127.0.0.1 (default: a free one)")
      ->check(CLI::Range(0, 65535));
  sub->add_flag("--allow-io", o->allow_io, "With --watch: bake as `rigel bake --allow-io`");
  return [o]() {
    if (o->watch) {
      if (o->clips.size() != 2) {
        fmt::print(stderr, "rigel preview: error: --watch takes RIG.lua CLIP\n");
        return kExitUsage;
      }
      preview::LiveOptions live;
      live.rig = std::filesystem::absolute(o->clips[0]).string();
      live.clip = std::filesystem::absolute(o->clips[1]).string();
      live.rigel = std::filesystem::read_symlink("/proc/self/exe").string();
      live.port = o->port;
      if (o->allow_io) live.bake_args = "--allow-io";
      return preview::RunLivePreview(live);
    }
    try {
      preview::PageInput in;
      in.source = o->clips.front();
      in.results.assign(o->clips.begin() + 1, o->clips.end());
      in.frames_reports = o->reports;
      in.title = o->title;
      const std::string out =
          !o->out.empty() ? o->out
                          : std::filesystem::path(in.source).stem().string() + ".preview.html";
      std::vector<std::string> read = o->clips;  // inputs are never written
      read.insert(read.end(), o->reports.begin(), o->reports.end());
      try {
        batch::CheckInputsNotOverwritten({read, {}, {out}});
      } catch (const batch::UsageError& e) {
        fmt::print(stderr, "rigel preview: error: {}\n", e.what());
        return kExitUsage;
      }
      const preview::PageSummary s = preview::WritePreviewPage(in, out);
      fmt::print(stderr, "rigel preview: {}: {} clip(s), {} frames, {:.2f} MB\n", out,
                 o->clips.size(), s.frames, static_cast<double>(s.bytes) / 1e6);
      return kExitOk;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rigel preview: error: {}\n", e.what());
      return kExitBadInput;
    }
  };
}

}  // namespace rigel::cli
