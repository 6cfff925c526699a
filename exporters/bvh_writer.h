// Native BVH writer: the skeleton's joint names, order, offsets, channel layout and End Sites as
// they are, every number in its shortest exact form (exact_decimal.h): re-reading the file gives
// the same doubles, bit for bit, for every value the BVH reader can produce (any value read from
// a BVH file, whoever wrote it); written atomically.
#ifndef RIGEL_EXPORTERS_BVH_WRITER_H_
#define RIGEL_EXPORTERS_BVH_WRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/skeleton.h"
#include "exporters/atomic_file.h"

namespace rigel {

// True when some joint has a rest orientation other than identity (FBX pre-rotation, joint
// orient), which BVH cannot store.
bool HasRestOrientations(const Skeleton& skeleton);

// A skeleton without rest orientations and a clip on it that give every joint the same world
// position and world rotation as (skeleton, clip) on every frame: what a BVH can hold. Offsets and
// End Sites are unchanged (each joint keeps its world rotation, so its children's offsets keep
// their meaning); a joint with a rest orientation R gets the local rotation R * R_channels in its
// rotation channels, as the Euler triple of its order nearest the previous frame's (no 360 degree
// jumps). Such a joint with fewer than 3 rotation channels (a fixed joint, a position-only joint)
// gets the missing rotation channels appended, the axes it had first, then the others in
// ascending order; with none it takes the skeleton's most used order (ZXY when there is none).
// Joints without a rest orientation keep their channels and values exactly.
void FoldRestOrientations(const Skeleton& skeleton, const Clip& clip,
                          std::unique_ptr<Skeleton>* folded_skeleton, Clip* folded_clip);

// BVH holds no scale. The joints of `skeleton` whose scale `clip` does not fold exactly into the
// offsets (FoldScale): animated, or not the same on the three axes; empty when every scale folds.
std::vector<std::string> UnfoldableScaleJoints(const Skeleton& skeleton, const Clip& clip);

// A skeleton without scale channels and a clip on it, every joint at its world position on every
// frame: a joint whose scale is static and uniform (the same on every frame and axis) has it
// folded exactly into its descendants' offsets, position channels and End Sites; below an
// animated or non-uniform scale (UnfoldableScaleJoints names those; the callers warn) a joint
// gets position channels on the three axes holding its offset from its parent in the parent's
// rotation frame on each frame. Rotations are kept as they are; End Sites and skins cannot follow
// an animated scale.
void FoldScale(const Skeleton& skeleton, const Clip& clip,
               std::unique_ptr<Skeleton>* folded_skeleton, Clip* folded_clip);

// BVH text for `clip` on `skeleton`. Scale is folded or dropped first (FoldScale). Rest
// orientations are folded first (FoldRestOrientations). Position channels of joints whose source
// file stated absolute translations (TranslationMode::kReplace) are written as value + OFFSET, the
// file's own convention. Each value is written as the shortest text the reader turns back into
// exactly it (through its degrees-to-radians and OFFSET steps); a value no text maps to exactly (a
// solver's output can be one) is written as the double nearest to it in the file's terms, one
// rounding away. Where the reader kept the file's own number (Clip::file_values: two file numbers
// gave the clip's value) and it still maps to the clip's value, that number is written: BVH -> BVH
// keeps every number of the file bit for bit. Throws ExportError, before producing anything, when:
// - the clip's row width is not the skeleton's channel count, or it has no frame;
// - the frame time is not finite and > 0;
// - any value or offset is NaN or infinite (the message names frame, joint and channel).
std::string FormatBvh(const Skeleton& skeleton, const Clip& clip);

// Writes FormatBvh() to `path` atomically (temporary file, then rename). Throws ExportError.
void WriteBvh(const Skeleton& skeleton, const Clip& clip, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_BVH_WRITER_H_
