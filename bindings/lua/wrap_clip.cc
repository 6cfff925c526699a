// rigel.Clip: frames x channels of animation on a skeleton. Frames are 1-based; rotation values
// are degrees at this boundary.
#include <cmath>

#include "bindings/lua/boxes.h"
#include "bindings/lua/sandbox.h"
#include "bindings/lua/wrap_clip_curves.h"
#include "bindings/lua/wrap_clip_edit.h"
#include "core/channel.h"
#include "core/clip_ops.h"
#include "core/euler.h"
#include "exporters/save_scene.h"

namespace rigel::lua {

namespace {

// Bounds on clips created from Lua (1e6 frames = 2.3 hours at 120 fps; 2^26 values = 512 MB).
constexpr int kMaxFrames = 1000000;
constexpr double kMaxValues = 67108864.0;

void CheckClipSize(lua_State* L, int arg, int frames, int channels) {
  if (static_cast<double>(frames) * channels > kMaxValues) {
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "%d frames x %d channels exceeds the %d-value limit", frames,
                                  channels, static_cast<int>(kMaxValues)));
  }
}

// 0-based frame from the 1-based frame at `arg`.
int CheckFrame(lua_State* L, int arg, const Clip& clip) {
  if (clip.num_frames() == 0) luaL_argerror(L, arg, "the clip has no frames");
  return static_cast<int>(CheckIntegerIn(L, arg, 1, clip.num_frames(), "frame")) - 1;
}

int w_Clip_pose(lua_State* L) {
  // clip:pose(frame [, pose]) -> Pose of that frame (filled into `pose` when given).
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  PoseBox* into = lua_isnoneornil(L, 3) ? nullptr : CheckPose(L, 3);
  CheckMaxArgs(L, 3);
  if (into != nullptr && into->skeleton != box->skeleton) {
    return luaL_argerror(L, 3, "Pose of another skeleton");
  }
  if (into != nullptr) {
    catch_exceptions(L, [&] { into->state->SetFrame(*box->clip, f); });
    lua_settop(L, 3);
    return 1;
  }
  catch_exceptions(L, [&] {
    auto state = std::make_shared<PoseState>();
    state->pose = Pose(*box->skeleton);
    state->SetFrame(*box->clip, f);
    PushPose(L, box->skeleton, std::move(state));
  });
  return 1;
}

int w_Clip_set_pose(lua_State* L) {
  // clip:set_pose(frame, pose) -> clip
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  PoseBox* pose = CheckPose(L, 3);
  CheckMaxArgs(L, 3);
  if (pose->skeleton != box->skeleton) return luaL_argerror(L, 3, "Pose of another skeleton");
  const std::vector<double>& ch = pose->state->pose.channels;
  std::copy(ch.begin(), ch.end(), box->clip->frame(f).begin());
  // The pose's blend-shape weights too, when it has the clip's weight channels.
  const Pose& p = pose->state->pose;
  if (p.weight_channels == box->clip->weight_channels()) {
    std::copy(p.weights.begin(), p.weights.end(), box->clip->weights(f).begin());
  }
  lua_settop(L, 1);
  return 1;
}

int w_Clip_weight(lua_State* L) {
  // clip:weight(frame, mesh, target) -> the blend shape's weight on that frame (mesh nil: the
  // first mesh with that target).
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  CheckMaxArgs(L, 4);
  const std::vector<int> columns = CheckWeightColumns(L, 3, 4, box->clip->weight_channels());
  lua_pushnumber(L, box->clip->weights(f)[columns.front()]);
  return 1;
}

int w_Clip_set_weight(lua_State* L) {
  // clip:set_weight(frame, mesh, target, weight) -> clip (mesh nil: every mesh with that target).
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  const double weight = CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  const std::vector<int> columns = CheckWeightColumns(L, 3, 4, box->clip->weight_channels());
  for (const int c : columns) box->clip->weights(f)[c] = weight;
  lua_settop(L, 1);
  return 1;
}

int w_Clip_get(lua_State* L) {
  // clip:get(frame, joint, channel) -> value (degrees for rotations)
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  const int c = CheckChannel(L, 3, *box->skeleton);
  CheckMaxArgs(L, 4);
  lua_pushnumber(L, ChannelToLua(*box->skeleton, c, box->clip->at(f, c)));
  return 1;
}

int w_Clip_set(lua_State* L) {
  // clip:set(frame, joint, channel, value) -> clip
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  const int c = CheckChannel(L, 3, *box->skeleton);
  const double value = CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  box->clip->at(f, c) = ChannelFromLua(*box->skeleton, c, value);
  lua_settop(L, 1);
  return 1;
}

int w_Clip_slice(lua_State* L) {
  // clip:slice(first, last) -> new Clip of frames first..last (inclusive, 1-based).
  ClipBox* box = CheckClip(L, 1);
  const int first = CheckFrame(L, 2, *box->clip);
  const int last =
      lua_isnoneornil(L, 3) ? box->clip->num_frames() - 1 : CheckFrame(L, 3, *box->clip);
  CheckMaxArgs(L, 3);
  if (last < first) {
    return luaL_argerror(
        L, 3, lua_pushfstring(L, "last frame %d is before first frame %d", last + 1, first + 1));
  }
  catch_exceptions(L, [&] {
    PushClip(L, box->skeleton, std::make_shared<Clip>(SliceClip(*box->clip, first, last)));
  });
  return 1;
}

int w_Clip_resample(lua_State* L) {
  // clip:resample(fps) -> new Clip at `fps` frames per second over the same duration.
  ClipBox* box = CheckClip(L, 1);
  const double fps = CheckFinite(L, 2);
  CheckMaxArgs(L, 2);
  if (fps <= 0 || fps > 10000) luaL_argerror(L, 2, "frame rate must be in (0, 10000]");
  if (box->clip->num_frames() == 0) return luaL_error(L, "cannot resample a clip without frames");
  if (box->clip->duration() * fps + 1 > kMaxFrames) {
    return luaL_argerror(L, 2, "resampled clip would exceed 1000000 frames");
  }
  CheckClipSize(L, 2, static_cast<int>(box->clip->duration() * fps) + 1, box->clip->num_channels());
  catch_exceptions(L, [&] {
    PushClip(L, box->skeleton,
             std::make_shared<Clip>(ResampleClip(*box->skeleton, *box->clip, fps)));
  });
  return 1;
}

int w_Clip_copy(lua_State* L) {
  ClipBox* box = CheckClip(L, 1);
  CheckMaxArgs(L, 1);
  catch_exceptions(L, [&] { PushClip(L, box->skeleton, std::make_shared<Clip>(*box->clip)); });
  return 1;
}

int w_Clip_resize(lua_State* L) {
  // clip:resize(frames) -> clip; new frames are the rest pose (zeros).
  ClipBox* box = CheckClip(L, 1);
  const int frames = static_cast<int>(CheckIntegerIn(L, 2, 0, kMaxFrames, "frame count"));
  CheckMaxArgs(L, 2);
  CheckClipSize(L, 2, frames, box->clip->num_channels());
  CheckUnlocked(L, box->clip.get(), "clip:resize", "clip");
  catch_exceptions(L, [&] { box->clip->Resize(frames); });
  lua_settop(L, 1);
  return 1;
}

int w_Clip_set_frame_time(lua_State* L) {
  ClipBox* box = CheckClip(L, 1);
  const double seconds = CheckFinite(L, 2);
  CheckMaxArgs(L, 2);
  if (seconds <= 0) luaL_argerror(L, 2, "frame time must be > 0 seconds");
  box->clip->set_frame_time(seconds);
  lua_settop(L, 1);
  return 1;
}

int w_Clip_set_name(lua_State* L) {
  ClipBox* box = CheckClip(L, 1);
  const char* name = luaL_checkstring(L, 2);
  CheckMaxArgs(L, 2);
  catch_exceptions(L, [&] { box->clip->set_name(name); });
  lua_settop(L, 1);
  return 1;
}

int w_Clip_save(lua_State* L) {
  // clip:save(path [, {reduce_keys = true, max_error = mm, virtual_vertex = mm}]): writes the
  // clip with its skeleton, format by extension, atomically; FBX and glTF with reduced keys when
  // asked (returns the keys before and after and the largest error in mm).
  ClipBox* box = CheckClip(L, 1);
  CheckMaxArgs(L, 3);
  KeyReductionOptions reduce;
  const bool reduced = !lua_isnoneornil(L, 3) && ReduceSaveOptions(L, 3, &reduce);
  lua_settop(L, 2);  // the options are read: the path is the last argument
  const char* path = CheckSavePath(L, 2);
  const double unit = SkeletonUnit(L, box->skeleton);
  std::vector<ClipKeys> keys;
  catch_exceptions(L, [&] {
    SaveOptions save = ClipSaveOptions(path, *box->skeleton, *box->clip, unit);
    if (reduced) {
      reduce.metres_per_unit = save.metres_per_unit > 0 ? save.metres_per_unit : 1.0;
      save.reduce = &reduce;
      save.reduced = &keys;
    }
    SaveClips(*box->skeleton, std::span<const Clip>(box->clip.get(), 1), path, save);
  });
  if (keys.empty()) return 0;
  lua_pushinteger(L, keys.front().dense_keys);
  lua_pushinteger(L, keys.front().keys);
  lua_pushnumber(L, keys.front().max_error * 1e3);
  return 3;
}

// clip.<field>: the value of a Clip accessor.
template <auto kAccessor>
int GetClipField(lua_State* L) {
  PushValue(L, (CheckClip(L, 1)->clip.get()->*kAccessor)());
  return 1;
}

void DescribeClip(lua_State* L, const ClipBox& box) {
  lua_pushfstring(L, "Clip: %d frames at %f fps, %d channels", box.clip->num_frames(),
                  box.clip->frame_rate(), box.clip->num_channels());
}

const luaL_Reg kClipMethods[] = {{"pose", w_Clip_pose},
                                 {"set_pose", w_Clip_set_pose},
                                 {"weight", w_Clip_weight},
                                 {"set_weight", w_Clip_set_weight},
                                 {"get", w_Clip_get},
                                 {"set", w_Clip_set},
                                 {"slice", w_Clip_slice},
                                 {"resample", w_Clip_resample},
                                 {"copy", w_Clip_copy},
                                 {"resize", w_Clip_resize},
                                 {"set_frame_time", w_Clip_set_frame_time},
                                 {"set_name", w_Clip_set_name},
                                 {"save", w_Clip_save},
                                 {"reduce", w_Clip_reduce},
                                 {"filter", w_Clip_filter},
                                 {"mirror", w_Clip_mirror},
                                 {"loop", w_Clip_loop},
                                 {"trim", w_Clip_trim},
                                 {"add_joint", w_Clip_add_joint},
                                 {"add_locator", w_Clip_add_locator},
                                 {"rename_joint", w_Clip_rename_joint},
                                 {"reparent", w_Clip_reparent},
                                 {"remove_joint", w_Clip_remove_joint},
                                 {nullptr, nullptr}};
const luaL_Reg kClipGetters[] = {{"num_frames", GetClipField<&Clip::num_frames>},
                                 {"num_channels", GetClipField<&Clip::num_channels>},
                                 {"frame_time", GetClipField<&Clip::frame_time>},
                                 {"frame_rate", GetClipField<&Clip::frame_rate>},
                                 {"duration", GetClipField<&Clip::duration>},
                                 {"name", GetClipField<&Clip::name>},
                                 {"skeleton", GetBoxSkeleton<ClipBox>},
                                 {nullptr, nullptr}};
const luaL_Reg kClipMeta[] = {{"__len", GetClipField<&Clip::num_frames>}, {nullptr, nullptr}};

int w_clip_new(lua_State* L) {
  // rigel.clip(skeleton, frames [, frame_time = 1/30]) -> Clip of rest-pose frames.
  const std::shared_ptr<const Skeleton>* skeleton = CheckSkeletonOf(L, 1, "Skeleton");
  const int frames = static_cast<int>(CheckIntegerIn(L, 2, 0, kMaxFrames, "frame count"));
  const double frame_time = lua_isnoneornil(L, 3) ? 1.0 / 30.0 : CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  CheckClipSize(L, 2, frames, (*skeleton)->num_channels());
  if (frame_time <= 0) luaL_argerror(L, 3, "frame time must be > 0 seconds");
  catch_exceptions(L, [&] {
    PushClip(L, *skeleton, std::make_shared<Clip>(frames, (*skeleton)->num_channels(), frame_time));
  });
  return 1;
}

}  // namespace

void PushClip(lua_State* L, std::shared_ptr<const Skeleton> skeleton, std::shared_ptr<Clip> clip) {
  PushBox<ClipBox>(L, kClipType, ClipBox{std::move(skeleton), std::move(clip)});
}

void OpenClip(lua_State* L) {
  OpenBoxType<ClipBox, DescribeClip>(L, kClipMethods, kClipGetters, kClipMeta, "clip", w_clip_new);
}

}  // namespace rigel::lua
