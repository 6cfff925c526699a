// The writers' clip check: CheckClip (core/clip_check.h) on every clip, as an ExportError.
#ifndef RIGEL_EXPORTERS_EXPORT_CHECK_H_
#define RIGEL_EXPORTERS_EXPORT_CHECK_H_

#include <span>
#include <string>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// Throws ExportError "<name>: [clip '<clip>': ]<fault>" (DescribeClipFault: frame, joint and
// channel of a non-finite value, ...) for the first clip of `clips` CheckClip refuses on
// `skeleton`, or "<name>: nothing to write (no clip)" when `clips` is empty. The clip's name is
// given when it has one (glTF and FBX takes; BVH clips have none).
void CheckClipsForExport(const Skeleton& skeleton, std::span<const Clip> clips,
                         const std::string& name);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_EXPORT_CHECK_H_
