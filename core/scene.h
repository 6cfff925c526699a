// Scene: what an importer returns: one skeleton and its clips.
#ifndef RIGEL_CORE_SCENE_H_
#define RIGEL_CORE_SCENE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

struct Scene {
  // Shared, immutable: clips, poses, rigs and threads all read the same skeleton.
  std::shared_ptr<const Skeleton> skeleton;
  // One clip per take (BVH: one; FBX: one per animation stack).
  std::vector<Clip> clips;
  // Where it came from (the path given to the importer).
  std::string source;
  // Non-fatal findings ("file:line: ..."), already formatted for the user.
  std::vector<std::string> warnings;
};

}  // namespace rigel

#endif  // RIGEL_CORE_SCENE_H_
