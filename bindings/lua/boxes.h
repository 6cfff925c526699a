// The userdata boxes of the shared-object types. Each holds shared_ptrs (destroyed in __gc, or
// earlier by __close / release()), so a Clip keeps its Skeleton alive and a Clip taken from a
// Scene keeps the Scene alive.
#ifndef RIGEL_BINDINGS_LUA_BOXES_H_
#define RIGEL_BINDINGS_LUA_BOXES_H_

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

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

// A Pose plus what of its world transforms is stale. Joints below `stale_from` are up to date
// (INT_MAX = all are); a joint at or above it is up to date when `fresh[joint] == generation`.
// set() marks, world queries refresh only the queried joint's chain (World), whole-pose readers
// call Refresh. Both compute world[j] = world[parent] * LocalTransform exactly as
// ForwardKinematics does, so results are bit-identical whichever path ran.
struct PoseState {
  Pose pose;
  int stale_from = INT_MAX;
  std::uint32_t generation = 1;
  std::vector<std::uint32_t> fresh;  // per joint; sized on first partial refresh

  void MarkStale(int joint) {
    if (joint < stale_from) stale_from = joint;
    if (++generation == 0) {  // wrapped: forget every partial refresh
      std::fill(fresh.begin(), fresh.end(), 0u);
      generation = 1;
    }
  }
  // Channels from a clip row; world transforms refresh lazily.
  void SetChannels(std::span<const double> row) {
    std::copy(row.begin(), row.end(), pose.channels.begin());
    MarkStale(0);
  }
  void Refresh(const Skeleton& skeleton) {
    if (stale_from != INT_MAX) {
      pose.UpdateWorld(skeleton, stale_from);
      stale_from = INT_MAX;
    }
  }
  // After a writer (the solver) updated every world transform.
  void MarkFresh() { stale_from = INT_MAX; }
  // The up-to-date world transform of `joint`, refreshing only its chain of stale ancestors.
  const Eigen::Isometry3d& World(const Skeleton& skeleton, int joint) {
    if (joint >= stale_from && (fresh.empty() || fresh[joint] != generation)) {
      RefreshChain(skeleton, joint);
    }
    return pose.world[joint];
  }

 private:
  void RefreshChain(const Skeleton& skeleton, int joint) {
    if (fresh.size() != pose.world.size()) fresh.assign(pose.world.size(), 0u);
    const int parent = skeleton.parent(joint);
    if (parent >= 0 && parent >= stale_from && fresh[parent] != generation) {
      RefreshChain(skeleton, parent);
    }
    UpdateJointWorld(skeleton, pose.channels, pose.world, joint);
    fresh[joint] = generation;
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
