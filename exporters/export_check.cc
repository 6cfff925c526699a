#include "exporters/export_check.h"

#include <optional>

#include "core/clip_check.h"
#include "exporters/atomic_file.h"

namespace rigel {

void CheckClipsForExport(const Skeleton& skeleton, std::span<const Clip> clips,
                         const std::string& name, std::span<const Mesh> meshes) {
  if (clips.empty()) throw ExportError(name + ": nothing to write (no clip)");
  const int targets = CountMorphTargets(meshes);
  for (const Clip& clip : clips) {
    std::string message = name + ": ";
    if (!clip.name().empty()) message += "clip '" + clip.name() + "': ";
    const std::optional<ClipFault> fault = CheckClip(skeleton, clip);
    if (fault) throw ExportError(message + DescribeClipFault(*fault, skeleton, clip));
    if (!meshes.empty() && clip.num_weights() != 0 && clip.num_weights() != targets) {
      throw ExportError(message + std::to_string(clip.num_weights()) +
                        " weight channels, the meshes have " + std::to_string(targets) +
                        " blend shapes");
    }
  }
}

}  // namespace rigel
