// Native BVH writer: the skeleton's joint names, order, offsets, channel layout and End Sites as
// they are, values printed with 15 significant digits (re-reading gives the same values to 1e-14
// relative), written atomically.
#ifndef RIGEL_EXPORTERS_BVH_WRITER_H_
#define RIGEL_EXPORTERS_BVH_WRITER_H_

#include <string>

#include "core/clip.h"
#include "core/skeleton.h"
#include "exporters/atomic_file.h"

namespace rigel {

// BVH text for `clip` on `skeleton`. Throws ExportError, before producing anything, when:
// - the clip's row width is not the skeleton's channel count, or it has no frame;
// - the frame time is not finite and > 0;
// - any value or offset is NaN or infinite (the message names frame, joint and channel);
// - a joint has a rest orientation other than identity (BVH cannot store one).
std::string FormatBvh(const Skeleton& skeleton, const Clip& clip);

// Writes FormatBvh() to `path` atomically (temporary file, then rename). Throws ExportError.
void WriteBvh(const Skeleton& skeleton, const Clip& clip, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_BVH_WRITER_H_
