// What importers and exporters share: the file-format key of a path. rigel_io's common ground
// (importers/ and exporters/ both include it; they never include each other).
#ifndef RIGEL_IO_FILE_FORMAT_H_
#define RIGEL_IO_FILE_FORMAT_H_

#include <string>

namespace rigel {

// Lower-case extension of `path`, with the dot ("" when none): ".bvh" for "Walk.BVH". LoadScene
// and SaveClips dispatch on it.
std::string LowerExtension(const std::string& path);

}  // namespace rigel

#endif  // RIGEL_IO_FILE_FORMAT_H_
