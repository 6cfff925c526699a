// Clip operations: slicing and resampling to another frame rate.
#ifndef RIGEL_CORE_CLIP_OPS_H_
#define RIGEL_CORE_CLIP_OPS_H_

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// Frames [first, last] (0-based, inclusive) of `clip` as a new clip with the same frame time.
// Requires 0 <= first <= last < clip.num_frames().
Clip SliceClip(const Clip& clip, int first, int last);

// `clip` resampled at `frames_per_second` (> 0) over the same duration: position channels and
// joints with fewer than three rotation channels interpolate linearly; three-rotation joints
// interpolate their rotations by slerp and decompose them nearest the linearly interpolated
// angles (no 360-degree jumps). The result has floor(duration * fps + 1e-6) + 1 frames.
Clip ResampleClip(const Skeleton& skeleton, const Clip& clip, double frames_per_second);

}  // namespace rigel

#endif  // RIGEL_CORE_CLIP_OPS_H_
