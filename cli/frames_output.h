// --frames-report DIR of `rigel bake` and `rigel retarget`: writes DIR/<output name>.frames.jsonl
// (exporters/frames_report.h: the per-frame solve records, when there are any, and the pop score
// and foot slide measured on the written clip) and puts its path and counts in the clip's report.
#ifndef RIGEL_CLI_FRAMES_OUTPUT_H_
#define RIGEL_CLI_FRAMES_OUTPUT_H_

#include <string>

#include "cli/batch/batch.h"
#include "core/clip.h"
#include "core/ik/frame_record.h"
#include "core/scene.h"
#include "core/skeleton.h"

namespace rigel::cli {

// `scene` gives the length unit of the header (the input's, stated or estimated); `records` may be
// nullptr. The file is DIR/<output stem>.frames.jsonl, or DIR/<output stem>.<take_suffix>
// .frames.jsonl for one take of an output that holds several. Throws ExportError when the file
// cannot be written.
void WriteFramesReportFor(const std::string& dir, const Scene& scene, const std::string& input,
                          const std::string& output, const std::string& take_suffix,
                          const Skeleton& skeleton, const Clip& clip,
                          const ik::BakeRecords* records, batch::ClipReport* report);

}  // namespace rigel::cli

#endif  // RIGEL_CLI_FRAMES_OUTPUT_H_
