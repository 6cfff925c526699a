// rigel.Clip: frames x channels of animation on a skeleton. Frames are 1-based; rotation values
// are degrees at this boundary.
#include <cmath>

#include "bindings/lua/boxes.h"
#include "bindings/lua/sandbox.h"
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

double ToLuaUnits(const Skeleton& s, int c, double value) {
  return IsRotation(s.channels()[c]) ? value * kDegPerRad : value;
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
    into->state->SetChannels(box->clip->frame(f));
    lua_settop(L, 3);
    return 1;
  }
  catch_exceptions(L, [&] {
    auto state = std::make_shared<PoseState>();
    state->pose = Pose(*box->skeleton);
    state->SetChannels(box->clip->frame(f));
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
  lua_settop(L, 1);
  return 1;
}

int w_Clip_get(lua_State* L) {
  // clip:get(frame, joint, channel) -> value (degrees for rotations)
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  const int j = CheckJoint(L, 3, *box->skeleton);
  const int c = CheckJointChannel(L, 4, *box->skeleton, j);
  CheckMaxArgs(L, 4);
  lua_pushnumber(L, ToLuaUnits(*box->skeleton, c, box->clip->at(f, c)));
  return 1;
}

int w_Clip_set(lua_State* L) {
  // clip:set(frame, joint, channel, value) -> clip
  ClipBox* box = CheckClip(L, 1);
  const int f = CheckFrame(L, 2, *box->clip);
  const int j = CheckJoint(L, 3, *box->skeleton);
  const int c = CheckJointChannel(L, 4, *box->skeleton, j);
  const double value = CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  box->clip->at(f, c) = IsRotation(box->skeleton->channels()[c]) ? value * kRadPerDeg : value;
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
  // clip:save(path): writes the clip with its skeleton, format by extension, atomically.
  ClipBox* box = CheckClip(L, 1);
  const char* path = CheckPathString(L, 2);
  CheckMaxArgs(L, 2);
  CheckPathWrite(L, 2, path);
  catch_exceptions(L, [&] { SaveClip(*box->skeleton, *box->clip, path); });
  return 0;
}

int w_Clip_release(lua_State* L) {
  auto* box = static_cast<ClipBox*>(CheckBox(L, 1, kClipType));
  if (box->alive) {
    CheckUnlocked(L, box->clip.get(), "clip:release", "clip");
    box->clip.reset();
    box->skeleton.reset();
  }
  return 0;
}

int w_Clip_get_num_frames(lua_State* L) {
  lua_pushinteger(L, CheckClip(L, 1)->clip->num_frames());
  return 1;
}
int w_Clip_get_num_channels(lua_State* L) {
  lua_pushinteger(L, CheckClip(L, 1)->clip->num_channels());
  return 1;
}
int w_Clip_get_frame_time(lua_State* L) {
  lua_pushnumber(L, CheckClip(L, 1)->clip->frame_time());
  return 1;
}
int w_Clip_get_frame_rate(lua_State* L) {
  lua_pushnumber(L, CheckClip(L, 1)->clip->frame_rate());
  return 1;
}
int w_Clip_get_duration(lua_State* L) {
  lua_pushnumber(L, CheckClip(L, 1)->clip->duration());
  return 1;
}
int w_Clip_get_name(lua_State* L) {
  lua_pushstring(L, CheckClip(L, 1)->clip->name().c_str());
  return 1;
}
int w_Clip_get_skeleton(lua_State* L) {
  PushSkeleton(L, CheckClip(L, 1)->skeleton);
  return 1;
}

int w_Clip_len(lua_State* L) { return w_Clip_get_num_frames(L); }

int w_Clip_eq(lua_State* L) {
  auto* a = static_cast<ClipBox*>(TestBox(L, 1, kClipType));
  auto* b = static_cast<ClipBox*>(TestBox(L, 2, kClipType));
  lua_pushboolean(
      L, a != nullptr && b != nullptr && a->alive && a->clip != nullptr && a->clip == b->clip);
  return 1;
}

int w_Clip_tostring(lua_State* L) {
  auto* box = static_cast<ClipBox*>(CheckBox(L, 1, kClipType));
  if (!box->alive || !box->clip) {
    lua_pushliteral(L, "Clip (released)");
  } else {
    lua_pushfstring(L, "Clip: %d frames at %f fps, %d channels", box->clip->num_frames(),
                    box->clip->frame_rate(), box->clip->num_channels());
  }
  return 1;
}

const luaL_Reg kMethods[] = {{"pose", w_Clip_pose},
                             {"set_pose", w_Clip_set_pose},
                             {"get", w_Clip_get},
                             {"set", w_Clip_set},
                             {"slice", w_Clip_slice},
                             {"resample", w_Clip_resample},
                             {"copy", w_Clip_copy},
                             {"resize", w_Clip_resize},
                             {"set_frame_time", w_Clip_set_frame_time},
                             {"set_name", w_Clip_set_name},
                             {"save", w_Clip_save},
                             {"release", w_Clip_release},
                             {nullptr, nullptr}};
const luaL_Reg kGetters[] = {
    {"num_frames", w_Clip_get_num_frames}, {"num_channels", w_Clip_get_num_channels},
    {"frame_time", w_Clip_get_frame_time}, {"frame_rate", w_Clip_get_frame_rate},
    {"duration", w_Clip_get_duration},     {"name", w_Clip_get_name},
    {"skeleton", w_Clip_get_skeleton},     {nullptr, nullptr}};
const luaL_Reg kMeta[] = {{"__len", w_Clip_len},
                          {"__eq", w_Clip_eq},
                          {"__tostring", w_Clip_tostring},
                          {nullptr, nullptr}};

int w_clip_new(lua_State* L) {
  // rigel.clip(skeleton, frames [, frame_time = 1/30]) -> Clip of rest-pose frames.
  const std::shared_ptr<const Skeleton>* skeleton = SkeletonOf(L, 1);
  if (skeleton == nullptr) TypeError(L, 1, "Skeleton");
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

ClipBox* CheckClip(lua_State* L, int arg) {
  auto* box = static_cast<ClipBox*>(CheckBox(L, arg, kClipType));
  if (!box->alive || !box->clip) luaL_argerror(L, arg, "Clip was released");
  return box;
}

void PushClip(lua_State* L, std::shared_ptr<const Skeleton> skeleton, std::shared_ptr<Clip> clip) {
  PushBox<ClipBox>(L, kClipType, ClipBox{std::move(skeleton), std::move(clip)});
}

void OpenClip(lua_State* L) {
  RegisterType(
      L, {kClipType, kMethods, kGetters, kMeta, DestroyBox<ClipBox>, w_Clip_release, nullptr});
  lua_pushcfunction(L, w_clip_new);
  lua_setfield(L, -2, "clip");
}

}  // namespace rigel::lua
