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
#include <string>
#include <vector>

#include "bindings/lua/runtime.h"
#include "core/channel.h"
#include "core/clip.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/scene.h"
#include "core/skeleton.h"
#include "exporters/save_scene.h"

namespace rigel::lua {

// Every box says which object it stands for (object(): what __eq compares and locks are keyed
// on; null once released) and has its registry type in kBoxType. With that, the generic methods
// below (LÖVE's luax_checktype, __eq, __tostring and release) serve every type.
struct SkeletonBox {
  std::shared_ptr<const Skeleton> skeleton;
  bool alive = true;
  const void* object() const { return skeleton.get(); }
};

struct SceneBox {
  std::shared_ptr<Scene> scene;
  bool alive = true;
  const void* object() const { return scene.get(); }
};

struct ClipBox {
  std::shared_ptr<const Skeleton> skeleton;
  std::shared_ptr<Clip> clip;
  bool alive = true;
  const void* object() const { return clip.get(); }
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
  // Channels and blend-shape weights of frame `f` of `clip`.
  void SetFrame(const Clip& clip, int f) {
    SetChannels(clip.frame(f));
    if (pose.weight_channels != clip.weight_channels())
      pose.weight_channels = clip.weight_channels();
    const std::span<const double> weights = clip.weights(f);
    pose.weights.assign(weights.begin(), weights.end());
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
  const void* object() const { return state.get(); }
};

// The registry type of each box (one of the k*Type constants of runtime.h).
template <class Box>
inline constexpr const char* kBoxType = nullptr;
template <>
inline constexpr const char* kBoxType<SkeletonBox> = kSkeletonType;
template <>
inline constexpr const char* kBoxType<SceneBox> = kSceneType;
template <>
inline constexpr const char* kBoxType<ClipBox> = kClipType;
template <>
inline constexpr const char* kBoxType<PoseBox> = kPoseType;

// The box of type Box at `arg` with its object present, else a Lua argument error ("Clip
// expected, got nil" / "Clip was released").
template <class Box>
Box* CheckLiveBox(lua_State* L, int arg) {
  auto* box = static_cast<Box*>(CheckBox(L, arg, kBoxType<Box>));
  if (!box->alive || box->object() == nullptr) {
    luaL_argerror(L, arg, lua_pushfstring(L, "%s was released", kBoxType<Box> + 6));
  }
  return box;
}

// obj:release() (and __close): drops the box's objects now (the box becomes an empty one);
// raises "clip:release: clip is being baked" while a C++ call that runs Lua code works on the
// object.
template <class Box>
int ReleaseBox(lua_State* L) {
  auto* box = static_cast<Box*>(CheckBox(L, 1, kBoxType<Box>));
  if (box->alive) {
    char name[32];  // "clip": the type's short name in lower case
    size_t n = 0;
    for (const char* c = kBoxType<Box> + 6; *c != '\0' && n + 1 < sizeof name; ++c) {
      name[n++] = static_cast<char>(*c | 0x20);
    }
    name[n] = '\0';
    CheckUnlocked(L, box->object(), lua_pushfstring(L, "%s:release", name), name);
    *box = Box{};
  }
  return 0;
}

// __eq: two live boxes of type Box standing for the same object.
template <class Box>
int BoxEq(lua_State* L) {
  auto* a = static_cast<Box*>(TestBox(L, 1, kBoxType<Box>));
  auto* b = static_cast<Box*>(TestBox(L, 2, kBoxType<Box>));
  lua_pushboolean(L, a != nullptr && b != nullptr && a->alive && b->alive &&
                         a->object() != nullptr && a->object() == b->object());
  return 1;
}

// __tostring: "Clip (released)", or what `Describe` pushes for a live box.
template <class Box, void (*Describe)(lua_State*, const Box&)>
int BoxToString(lua_State* L) {
  auto* box = static_cast<Box*>(CheckBox(L, 1, kBoxType<Box>));
  if (!box->alive || box->object() == nullptr) {
    lua_pushfstring(L, "%s (released)", kBoxType<Box> + 6);
  } else {
    Describe(L, *box);
  }
  return 1;
}

// Registers the metatable of box type Box: `methods`, `getters` and `meta` (may be nullptr) plus
// what every box has (__gc destroys the box, __close and release() are ReleaseBox, __eq is BoxEq,
// __tostring BoxToString with `Describe`) and, when `constructor` is given, sets it as field
// `name` of the module table on top of the stack.
template <class Box, void (*Describe)(lua_State*, const Box&)>
void OpenBoxType(lua_State* L, const luaL_Reg* methods, const luaL_Reg* getters,
                 const luaL_Reg* meta, const char* name = nullptr,
                 lua_CFunction constructor = nullptr) {
  RegisterType(L,
               {kBoxType<Box>, methods, getters, meta, DestroyBox<Box>, ReleaseBox<Box>, nullptr});
  luaL_getmetatable(L, kBoxType<Box>);
  lua_pushcfunction(L, BoxEq<Box>);
  lua_setfield(L, -2, "__eq");
  lua_pushcfunction(L, (BoxToString<Box, Describe>));
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  if (constructor != nullptr) {
    lua_pushcfunction(L, constructor);
    lua_setfield(L, -2, name);
  }
}

// Checked accessors (CheckLiveBox of each type).
inline SkeletonBox* CheckSkeleton(lua_State* L, int arg) {
  return CheckLiveBox<SkeletonBox>(L, arg);
}
inline SceneBox* CheckScene(lua_State* L, int arg) { return CheckLiveBox<SceneBox>(L, arg); }
inline ClipBox* CheckClip(lua_State* L, int arg) { return CheckLiveBox<ClipBox>(L, arg); }
inline PoseBox* CheckPose(lua_State* L, int arg) { return CheckLiveBox<PoseBox>(L, arg); }

// The weight columns (core/clip.h WeightChannel) that args `mesh_arg` (a mesh name, or nil: every
// mesh) and `target_arg` (a blend shape's name) select in `channels`; raises "no blend shape
// 'Smile' on mesh 'Face' (weight channels: Face/Blink, ...)" when none does.
std::vector<int> CheckWeightColumns(lua_State* L, int mesh_arg, int target_arg,
                                    const std::vector<WeightChannel>& channels);

void PushSkeleton(lua_State* L, std::shared_ptr<const Skeleton> skeleton);
void PushClip(lua_State* L, std::shared_ptr<const Skeleton> skeleton, std::shared_ptr<Clip> clip);
void PushPose(lua_State* L, std::shared_ptr<const Skeleton> skeleton,
              std::shared_ptr<PoseState> state);
void PushScene(lua_State* L, std::shared_ptr<Scene> scene);
// The length unit (metres per unit) of a skeleton that reached Lua in a loaded scene (PushScene
// registers it), found again for every clip on that skeleton; 0 when unknown (a skeleton built
// in the script). A freed skeleton's entry never matches a new skeleton at the same address.
double SkeletonUnit(lua_State* L, const std::shared_ptr<const Skeleton>& skeleton);
// Records `metres` (> 0) as the unit of `skeleton` for SkeletonUnit.
void RegisterSkeletonUnit(lua_State* L, const std::shared_ptr<const Skeleton>& skeleton,
                          double metres);
// What rigel.save and clip:save write `clip` of `skeleton` to `path` with, given the skeleton's
// SkeletonUnit: glTF and FBX need the unit (glTF is in metres); when the skeleton has none it is
// estimated from the figure's height at the first frame, with a warning on stderr naming the file
// (or, when it cannot be, the clip is written in its own units, said the same way). BVH needs no
// unit. C++ only (may throw): call it inside catch_exceptions.
SaveOptions ClipSaveOptions(const std::string& path, const Skeleton& skeleton, const Clip& clip,
                            double known_unit);

// The skeleton of any object that has one (Skeleton, Scene, Clip, Pose), or nullptr.
const std::shared_ptr<const Skeleton>* SkeletonOf(lua_State* L, int idx);
// SkeletonOf the argument at `arg`; never nullptr: raises "bad argument #arg to 'fn' (<expected>
// expected, got <type>)" instead.
const std::shared_ptr<const Skeleton>* CheckSkeletonOf(lua_State* L, int arg, const char* expected);

// obj.skeleton: the Skeleton the box is on.
template <class Box>
int GetBoxSkeleton(lua_State* L) {
  CheckLiveBox<Box>(L, 1);
  PushSkeleton(L, *SkeletonOf(L, 1));
  return 1;
}

// Pushes the list {item(0), ..., item(count - 1)}: `push_item(i)` pushes item i.
template <class PushItem>
void PushList(lua_State* L, size_t count, const PushItem& push_item) {
  lua_createtable(L, static_cast<int>(count), 0);
  for (size_t i = 0; i < count; ++i) {
    push_item(i);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// Pushes a list of strings (anything with size() and [i].c_str()) as a table.
template <class Strings>
void PushStrings(lua_State* L, const Strings& strings) {
  PushList(L, strings.size(), [&](size_t i) { lua_pushstring(L, strings[i].c_str()); });
}

// Channel `c` of `skeleton` as Lua sees it: degrees for rotations, file units for positions.
inline double ChannelToLua(const Skeleton& skeleton, int c, double value) {
  const ChannelType type = skeleton.channels()[c];
  if (IsScale(type)) return 1.0 + value;  // the scale factor (1 at rest)
  return IsRotation(type) ? value * kDegPerRad : value;
}
// A Lua value of channel `c` as rigel stores it (radians for rotations).
inline double ChannelFromLua(const Skeleton& skeleton, int c, double value) {
  const ChannelType type = skeleton.channels()[c];
  if (IsScale(type)) return value - 1.0;
  return IsRotation(type) ? value * kRadPerDeg : value;
}

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_BOXES_H_
