// Native BVH reader: exact channel layout, strict numbers, file:line errors.
//
// Accepts any subset and order of the six channels per joint, End Sites, several ROOTs, CRLF or LF,
// tabs and runs of spaces, trailing whitespace, numbers like ".0083333", "1.87e-05", "+3", and
// angles beyond +-180 degrees (kept as written). Rotation values are converted to radians.
//
// Rejected, with "file:line: expected X, found Y": unknown keywords, CHANNELS counts outside 0..6
// or unknown/duplicate channel names, duplicate joint names, unbalanced braces, a hierarchy or
// motion section cut short, non-numeric values, NaN/Inf, a comma as decimal separator, rows with
// too few or too many values, "Frames:" <= 0 or more frames than the rest of the file can hold,
// "Frame Time:" <= 0 or not finite, more than Skeleton::kMaxJoints joints or nesting deeper than
// Skeleton::kMaxDepth. A joint name that is not valid UTF-8 fails with "file:line: joint name is
// not valid UTF-8".
//
// One leniency: motion rows beyond the declared frame count are ignored with a warning in
// Scene::warnings (some real exporters write one extra row).
#ifndef RIGEL_IMPORTERS_BVH_READER_H_
#define RIGEL_IMPORTERS_BVH_READER_H_

#include <string>
#include <string_view>

#include "core/scene.h"
#include "importers/import_error.h"

namespace rigel {

// Reads the BVH file at `path`. Throws ImportError. The scene has exactly one clip.
Scene ReadBvh(const std::string& path);

// Parses BVH text held in memory; `name` stands for the file name in messages.
Scene ParseBvh(std::string_view text, const std::string& name);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_BVH_READER_H_
