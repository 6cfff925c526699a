// Preview pages: one self-contained HTML file per clip that shows the source and its results as
// 3D skeletons (three.js) with per-frame plots of the solve records (uPlot), and an index page
// over a batch. World positions come from rigel's forward kinematics, computed here, and are
// embedded exactly (float64); the page does no kinematics of its own. See docs/preview.md for
// the page, its test hook and the frames-report schema.
#ifndef RIGEL_CLI_PREVIEW_PREVIEW_PAGE_H_
#define RIGEL_CLI_PREVIEW_PREVIEW_PAGE_H_

#include <string>
#include <vector>

#include "cli/batch/batch.h"

namespace rigel::preview {

// What one page shows.
struct PageInput {
  // The clip the results were made from (any readable format). May be empty when only results
  // are shown.
  std::string source;
  // Baked or retargeted clips, drawn next to (or over) the source.
  std::vector<std::string> results;
  // Per-frame records (frames-report JSON lines, docs/preview.md), one file per clip. A file is
  // drawn against the result whose path its header's "output" names, else against the result
  // of the same position, else against the source.
  std::vector<std::string> frames_reports;
  // Page title (default: the source's or first result's file name).
  std::string title;
  // The take (clip name) drawn from each file that has it; empty or absent: its first clip.
  std::string take;
};

// What the index shows of one page: counts taken from its frames reports.
struct PageSummary {
  std::string name;    // clip name (the input's stem)
  std::string page;    // page path, relative to the index when written by WritePreviewPages
  std::string status;  // "ok", "suspect", "failed", "skipped"
  std::string reason;  // why it failed or is suspect
  int frames = 0;      // frames of the longest clip on the page
  bool has_report = false;
  int worst_frame = -1;       // frame with the largest effector residual (-1: none)
  double worst_residual = 0;  // that residual (position error, file units)
  int unreachable = 0;        // frames with status unreachable or invalid
  int not_converged = 0;      // frames with status not_converged
  int limit_frames = 0;       // frames with at least one channel on a limit
  int flips = 0;              // frames whose swivel jump is at least kFlipDegrees
  int pops = 0;               // frames whose pop score is at least kPopScore
  double foot_slide_max = 0;  // largest foot slide of any frame (file units)
  double foot_slide_sum = 0;  // summed over frames
  size_t bytes = 0;           // size of the page written
};

// A swivel jump of at least this many degrees between two frames counts as a flip.
constexpr double kFlipDegrees = 90.0;
// A pop score of at least this counts as a pop.
constexpr double kPopScore = 1.0;

// True when the binary was built with the page libraries (three.js, uPlot) embedded.
bool PreviewAvailable();

// The library versions inlined into every page, e.g. "three 0.187.0, uplot 1.6.32".
std::string LibraryVersions();

// Reads the clips of `input`, computes the world position of every joint of every frame with
// rigel's FK, and writes one self-contained page to `out_path` (atomically). Throws
// std::runtime_error (naming the file) for unreadable inputs or reports.
PageSummary WritePreviewPage(const PageInput& input, const std::string& out_path);

// Writes `dir`/index.html: a table of `pages` sorted by worst frame (unreachable frames first,
// then the largest residual), with their counts and links.
void WritePreviewIndex(const std::string& dir, std::vector<PageSummary> pages,
                       const std::string& title);

// Where a batch command looks for the frames report of `output`: the output's path with its
// extension replaced by ".frames.jsonl" (out/walk.bvh -> out/walk.frames.jsonl).
std::string FramesReportPathFor(const std::string& output);

// The `--preview DIR` hook of `rigel bake` and `rigel retarget`: one page per clip of `reports`
// (input as source, output as result, FramesReportPathFor(output) when it exists) named
// DIR/<output stem>.html, plus DIR/index.html. Clips that failed are listed in the index without
// a page. Prints problems on stderr prefixed by "rigel <command>"; returns the number of pages
// that could not be written.
int WritePreviewPages(const std::string& dir, const std::vector<batch::ClipReport>& reports,
                      const std::string& command);
// The same from the rows a batch spilled (batch::ReportSpill), read back from its file.
int WritePreviewPages(const std::string& dir, const batch::ReportSpill& spill,
                      const std::string& command);

}  // namespace rigel::preview

#endif  // RIGEL_CLI_PREVIEW_PREVIEW_PAGE_H_
