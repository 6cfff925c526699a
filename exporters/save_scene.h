// SaveClip: the one entry point for writing an animation file, dispatching on its extension.
#ifndef RIGEL_EXPORTERS_SAVE_SCENE_H_
#define RIGEL_EXPORTERS_SAVE_SCENE_H_

#include <string>
#include <vector>

#include "core/scene.h"
#include "exporters/atomic_file.h"

namespace rigel {

// File extensions SaveClip/SaveScene write, lower case with the dot.
std::vector<std::string> WritableExtensions();

// Writes one clip of `skeleton` to `path` (atomically), in the format its extension selects.
// Throws ExportError naming the file.
void SaveClip(const Skeleton& skeleton, const Clip& clip, const std::string& path);

// Writes a whole scene. Formats with one take per file (BVH) require exactly one clip.
void SaveScene(const Scene& scene, const std::string& path);

}  // namespace rigel

#endif  // RIGEL_EXPORTERS_SAVE_SCENE_H_
