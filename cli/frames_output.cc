#include "cli/frames_output.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/retarget/evidence.h"
#include "exporters/frames_report.h"
#include "importers/bvh_reader.h"

namespace rigel::cli {

void WriteFramesReportFor(const std::string& dir, const Scene& scene, const std::string& input,
                          const std::string& output, const std::string& take_suffix,
                          const Skeleton& skeleton, const Clip& clip,
                          const ik::BakeRecords* records, batch::ClipReport* report) {
  namespace fs = std::filesystem;
  const retarget::ClipEvidence evidence = retarget::MeasureClipEvidence(skeleton, clip);
  FramesReportInput in;
  in.clip_name = fs::path(output).stem().string();
  if (!take_suffix.empty()) in.clip_name += "." + take_suffix;
  in.source = input;
  in.output = output;
  const double metres = MetresPerUnitOrEstimate(scene);
  in.unit = metres > 0 ? UnitLabel(metres) : "unknown";
  in.skeleton = &skeleton;
  in.clip = &clip;
  in.records = records;
  in.evidence = &evidence;
  const std::string path = (fs::path(dir) / (in.clip_name + ".frames.jsonl")).string();
  WriteFramesReport(in, path);
  report->frames_report = path;
  const FramesCounts c = CountFrames(in);
  report->frames_evidence = {{"unreachable", c.unreachable},
                             {"not_converged", c.not_converged},
                             {"limit_frames", c.limit_frames},
                             {"flips", c.flips},
                             {"pops", c.pops},
                             {"foot_slide_max", c.foot_slide_max},
                             {"worst_frames", c.worst_frames}};
}

}  // namespace rigel::cli
