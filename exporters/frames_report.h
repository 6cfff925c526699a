// The frames report: one JSON-lines file per baked clip (docs/preview.md, "Frames-report
// schema"): a header line, then one line per frame with the solve's record (status, iterations,
// per-effector residual and target, channels on a limit, swivel jump) and the evidence measured
// on the output clip itself (pop score, foot slide; core/retarget/evidence.h). `rigel bake
// --frames-report DIR` writes it; `rigel preview` reads it. Also the per-clip counts the batch
// report gives (flips, pops, unreachable and limit frames, worst frames).
#ifndef RIGEL_EXPORTERS_FRAMES_REPORT_H_
#define RIGEL_EXPORTERS_FRAMES_REPORT_H_

#include <string>
#include <vector>

#include "core/clip.h"
#include "core/ik/frame_record.h"
#include "core/retarget/evidence.h"
#include "core/skeleton.h"

namespace rigel {

// What one frames report describes.
struct FramesReportInput {
  std::string clip_name;
  std::string source;                  // input path
  std::string output;                  // output path
  std::string unit;                    // "m", "cm", ... or "unknown"
  const Skeleton* skeleton = nullptr;  // the output clip's skeleton
  const Clip* clip = nullptr;          // the output clip
  // The bake's records (nullptr when the bake kept none: then only the evidence is written).
  const ik::BakeRecords* records = nullptr;
  // Measured on `clip` (MeasureClipEvidence).
  const retarget::ClipEvidence* evidence = nullptr;
};

// A swivel jump of at least kFlipDegrees in one frame counts as a flip.
constexpr double kFlipDegrees = 90.0;

// Per-clip counts of a frames report.
struct FramesCounts {
  int unreachable = 0;          // frames whose solve ended unreachable
  int not_converged = 0;        // frames whose solve stopped above tolerance otherwise
  int limit_frames = 0;         // frames with a channel on a limit
  int flips = 0;                // frames with a swivel jump >= kFlipDegrees
  int pops = 0;                 // frames with a pop score >= 1
  double foot_slide_max = 0.0;  // largest per-frame foot slide on a contact (length units)
  // Up to five frames (0-based), worst first: unreachable, then the largest pop score, then the
  // largest residual.
  std::vector<int> worst_frames;
};

// The report's text: the header and one line per frame of the clip.
std::string FormatFramesReport(const FramesReportInput& in);
// Writes FormatFramesReport to `path` whole or not at all (AtomicFile). Throws ExportError.
void WriteFramesReport(const FramesReportInput& in, const std::string& path);
// The counts of the report.
FramesCounts CountFrames(const FramesReportInput& in);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_FRAMES_REPORT_H_
