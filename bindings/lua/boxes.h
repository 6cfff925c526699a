// The userdata boxes of the shared-object types. Each holds shared_ptrs (destroyed in __gc, or
// earlier by __close / release()), so a Clip keeps its Skeleton alive and a Clip taken from a
// Scene keeps the Scene alive.
#ifndef RIGEL_BINDINGS_LUA_BOXES_H_
#define RIGEL_BINDINGS_LUA_BOXES_H_

#include <climits>
#include <memory>

#include "bindings/lua/runtime.h"
#include "core/clip.h"
#include "core/pose.h"
#include "core/scene.h"
#include "core/skeleton.h"

namespace rigel::lua {

struct SkeletonBox {
  std::shared_ptr<const Skeleton> skeleton;
  bool alive = true;
};

struct SceneBox {
  std::shared_ptr<Scene> scene;
  bool alive = true;
};

struct ClipBox {
  std::shared_ptr<const Skeleton> skeleton;
  std::shared_ptr<Clip> clip;
  bool alive = true;
};

// A Pose plus the first joint whose world transform is stale (INT_MAX = all up to date): set()
// marks, world queries refresh lazily.
struct PoseState {
  Pose pose;
  int stale_from = INT_MAX;
  void MarkStale(int joint) {
    if (joint < stale_from) stale_from = joint;
  }
  void Refresh(const Skeleton& skeleton) {
    if (stale_from != INT_MAX) {
      pose.UpdateWorld(skeleton, stale_from);
      stale_from = INT_MAX;
    }
  }
};

struct PoseBox {
  std::shared_ptr<const Skeleton> skeleton;
  std::shared_ptr<PoseState> state;
  bool alive = true;
};

// Checked accessors: the box at `arg` with its objects present, else a Lua argument error
// ("Clip expected, got nil" / "Clip was released").
SkeletonBox* CheckSkeleton(lua_State* L, int arg);
SceneBox* CheckScene(lua_State* L, int arg);
ClipBox* CheckClip(lua_State* L, int arg);
PoseBox* CheckPose(lua_State* L, int arg);

void PushSkeleton(lua_State* L, std::shared_ptr<const Skeleton> skeleton);
void PushClip(lua_State* L, std::shared_ptr<const Skeleton> skeleton, std::shared_ptr<Clip> clip);
void PushPose(lua_State* L, std::shared_ptr<const Skeleton> skeleton,
              std::shared_ptr<PoseState> state);
void PushScene(lua_State* L, std::shared_ptr<Scene> scene);

// The skeleton of any object that has one (Skeleton, Scene, Clip, Pose, Rig), or nullptr.
const std::shared_ptr<const Skeleton>* SkeletonOf(lua_State* L, int idx);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_BOXES_H_
