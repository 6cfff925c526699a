#include "exporters/export_check.h"

#include <optional>

#include "core/clip_check.h"
#include "exporters/atomic_file.h"

namespace rigel {

void CheckClipsForExport(const Skeleton& skeleton, std::span<const Clip> clips,
                         const std::string& name) {
  if (clips.empty()) throw ExportError(name + ": nothing to write (no clip)");
  for (const Clip& clip : clips) {
    const std::optional<ClipFault> fault = CheckClip(skeleton, clip);
    if (!fault) continue;
    std::string message = name + ": ";
    if (!clip.name().empty()) message += "clip '" + clip.name() + "': ";
    throw ExportError(message + DescribeClipFault(*fault, skeleton, clip));
  }
}

}  // namespace rigel
