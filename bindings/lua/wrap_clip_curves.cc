// rigel.Clip curve methods (core/curves): clip:reduce, clip:filter, clip:mirror, clip:loop,
// clip:trim. Each checks every argument first, calls core, pushes the result (a new Clip, or the
// reduction's figures).
#include "bindings/lua/wrap_clip_curves.h"

#include <cmath>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/clip_ops.h"
#include "core/curves/filter.h"
#include "core/curves/key_reduction.h"
#include "core/curves/mirror.h"
#include "exporters/fbx_writer.h"
#include "exporters/save_scene.h"

namespace rigel::lua {

namespace {

const char* const kAxisNames[] = {"x", "y", "z", nullptr};

// The joints listed in field `field` of the options at `opt`, pushed on the stack as 0-based
// indices; returns how many.
int PushJointList(lua_State* L, int opt, const char* field, const Skeleton& skeleton) {
  if (!HasField(L, opt, field)) return 0;
  lua_getfield(L, opt, field);
  const int list = lua_gettop(L);
  if (lua_type(L, list) != LUA_TTABLE) FieldError(L, opt, field, "table of joint names");
  const int count = CheckListLength(L, opt, list, field, 1);
  for (int i = 1; i <= count; ++i) {
    lua_rawgeti(L, list, i);
    lua_pushinteger(L, CheckJoint(L, lua_gettop(L), skeleton));
    lua_replace(L, -2);
  }
  return count;
}

// The reduction options of the table at `opt` (max_error and virtual_vertex in millimetres).
KeyReductionOptions ReduceOptionsField(lua_State* L, int opt) {
  KeyReductionOptions reduce;
  const double error_mm = NumberField(L, opt, "max_error", 0.1);
  const double vertex_mm = NumberField(L, opt, "virtual_vertex", 20.0);
  if (!(error_mm > 0)) luaL_argerror(L, opt, "field 'max_error' must be > 0 (millimetres)");
  if (!(vertex_mm >= 0)) luaL_argerror(L, opt, "field 'virtual_vertex' must be >= 0 (mm)");
  reduce.max_error = error_mm * 1e-3;
  reduce.virtual_vertex = vertex_mm * 1e-3;
  return reduce;
}

const char* const kReduceKeys[] = {"max_error", "virtual_vertex", "format", nullptr};
const char* const kReduceFormats[] = {"glb", "fbx", nullptr};

}  // namespace

int w_Clip_reduce(lua_State* L) {
  // clip:reduce{max_error = 0.1, virtual_vertex = 20, format = "glb"} -> {dense_keys, keys,
  // max_error (mm), rotation = {[joint] = {frames}}, translation = {...}} (frames 1-based).
  ClipBox* box = CheckClip(L, 1);
  const int opt = OptionsArg(L, 2, kReduceKeys);
  CheckMaxArgs(L, 2);
  KeyReductionOptions reduce = opt ? ReduceOptionsField(L, opt) : KeyReductionOptions{};
  const bool fbx = opt && OptionField(L, opt, "format", kReduceFormats, 0) == 1;
  if (box->clip->num_frames() == 0) return luaL_argerror(L, 1, "the clip has no frames");
  const double unit = SkeletonUnit(L, box->skeleton);
  ClipKeys keys;
  catch_exceptions(L, [&] {
    const SaveOptions save = ClipSaveOptions("reduce.glb", *box->skeleton, *box->clip, unit);
    reduce.metres_per_unit = save.metres_per_unit > 0 ? save.metres_per_unit : 1.0;
    if (fbx) reduce.euler_curves = FbxEulerCurves(*box->skeleton);
    keys = ReduceKeys(*box->skeleton, *box->clip, reduce);
  });
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, keys.dense_keys);
  lua_setfield(L, -2, "dense_keys");
  lua_pushinteger(L, keys.keys);
  lua_setfield(L, -2, "keys");
  lua_pushnumber(L, keys.max_error * 1e3);
  lua_setfield(L, -2, "max_error");
  for (const bool rotation : {true, false}) {
    lua_createtable(L, 0, box->skeleton->num_joints());
    for (int j = 0; j < box->skeleton->num_joints(); ++j) {
      const std::vector<int>& frames =
          rotation ? keys.joints[j].rotation : keys.joints[j].translation;
      if (frames.empty()) continue;
      lua_createtable(L, static_cast<int>(frames.size()), 0);
      for (std::size_t i = 0; i < frames.size(); ++i) {
        lua_pushinteger(L, frames[i] + 1);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      lua_setfield(L, -2, box->skeleton->name(j).c_str());
    }
    lua_setfield(L, -2, rotation ? "rotation" : "translation");
  }
  return 1;
}

int w_Clip_filter(lua_State* L) {
  // clip:filter{cutoff = 6, order = 2, joints = {...}, positions = true, rotations = true,
  // keep_contacts = true, up = "y"} -> new Clip.
  static const char* const kKeys[] = {"cutoff",    "order",         "joints", "positions",
                                      "rotations", "keep_contacts", "up",     nullptr};
  ClipBox* box = CheckClip(L, 1);
  const int opt = OptionsArg(L, 2, kKeys);
  CheckMaxArgs(L, 2);
  FilterOptions filter;
  int count = 0;
  if (opt) {
    filter.cutoff_hz = NumberField(L, opt, "cutoff", filter.cutoff_hz);
    filter.order = IntegerField(L, opt, "order", filter.order, 1, 8);
    filter.positions = BoolField(L, opt, "positions", true);
    filter.rotations = BoolField(L, opt, "rotations", true);
    filter.keep_contacts = BoolField(L, opt, "keep_contacts", true);
    filter.up_axis = OptionField(L, opt, "up", kAxisNames, 1);
    count = PushJointList(L, opt, "joints", *box->skeleton);
  }
  const double nyquist = box->clip->frame_rate() / 2;
  if (!(filter.cutoff_hz > 0 && filter.cutoff_hz < nyquist)) {
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "field 'cutoff' must be in (0, %f) Hz (half the "
                                         "clip's frame rate)",
                                         nyquist));
  }
  catch_exceptions(L, [&] {
    const int top = lua_gettop(L);
    for (int i = 0; i < count; ++i) {
      filter.joints.push_back(static_cast<int>(lua_tointeger(L, top - count + 1 + i)));
    }
    PushClip(L, box->skeleton,
             std::make_shared<Clip>(FilterClip(*box->skeleton, *box->clip, filter)));
  });
  return 1;
}

int w_Clip_mirror(lua_State* L) {
  // clip:mirror{map = {{"LeftArm", "RightArm"}, ...}} -> new Clip mirrored left to right.
  static const char* const kKeys[] = {"map", nullptr};
  ClipBox* box = CheckClip(L, 1);
  const int opt = OptionsArg(L, 2, kKeys);
  CheckMaxArgs(L, 2);
  int pairs = 0;
  if (opt && HasField(L, opt, "map")) {
    lua_getfield(L, opt, "map");
    const int list = lua_gettop(L);
    if (lua_type(L, list) != LUA_TTABLE) FieldError(L, opt, "map", "table of joint name pairs");
    pairs = CheckListLength(L, opt, list, "map", 2);
    for (int i = 1; i <= pairs; ++i) {
      lua_rawgeti(L, list, i);
      const int pair = lua_gettop(L);
      if (lua_type(L, pair) != LUA_TTABLE) FieldError(L, opt, "map", "table of {left, right}");
      for (int k = 1; k <= 2; ++k) {
        lua_rawgeti(L, pair, k);
        lua_pushinteger(L, CheckJoint(L, lua_gettop(L), *box->skeleton));
        lua_replace(L, -2);
      }
      lua_remove(L, pair);
    }
  }
  catch_exceptions(L, [&] {
    const int top = lua_gettop(L);
    std::vector<std::pair<std::string, std::string>> map;
    for (int i = 0; i < pairs; ++i) {
      const int base = top - 2 * pairs + 1 + 2 * i;
      map.push_back({box->skeleton->name(static_cast<int>(lua_tointeger(L, base))),
                     box->skeleton->name(static_cast<int>(lua_tointeger(L, base + 1)))});
    }
    const std::vector<int> mates = MirrorCounterparts(*box->skeleton, map);
    const MirrorPlane plane = CharacterPlane(*box->skeleton, mates);
    PushClip(L, box->skeleton,
             std::make_shared<Clip>(MirrorClip(*box->skeleton, *box->clip, mates, plane)));
  });
  return 1;
}

int w_Clip_loop(lua_State* L) {
  // clip:loop{frames = 10, up = "y"} -> new Clip whose end blends into its start.
  static const char* const kKeys[] = {"frames", "up", nullptr};
  ClipBox* box = CheckClip(L, 1);
  const int opt = OptionsArg(L, 2, kKeys);
  CheckMaxArgs(L, 2);
  LoopOptions loop;
  const int frames = box->clip->num_frames();
  if (frames < 3) return luaL_argerror(L, 1, "the clip needs at least 3 frames to loop");
  if (opt) {
    loop.blend_frames = IntegerField(L, opt, "frames", std::min(10, frames - 1), 1, frames - 1);
    loop.up_axis = OptionField(L, opt, "up", kAxisNames, 1);
  } else {
    loop.blend_frames = std::min(10, frames - 1);
  }
  catch_exceptions(L, [&] {
    PushClip(L, box->skeleton, std::make_shared<Clip>(LoopClip(*box->skeleton, *box->clip, loop)));
  });
  return 1;
}

int w_Clip_trim(lua_State* L) {
  // clip:trim{first = 1, last = n} (frames, 1-based, inclusive) or clip:trim{start = s, stop = s}
  // (seconds) -> new Clip.
  static const char* const kKeys[] = {"first", "last", "start", "stop", nullptr};
  ClipBox* box = CheckClip(L, 1);
  CheckTable(L, 2);
  CheckOptionKeys(L, 2, kKeys);
  CheckMaxArgs(L, 2);
  const int frames = box->clip->num_frames();
  if (frames == 0) return luaL_argerror(L, 1, "the clip has no frames");
  const bool by_time = HasField(L, 2, "start") || HasField(L, 2, "stop");
  if (by_time && (HasField(L, 2, "first") || HasField(L, 2, "last"))) {
    return luaL_argerror(L, 2, "give frames (first, last) or seconds (start, stop), not both");
  }
  if (by_time) {
    const double start = NumberField(L, 2, "start", 0.0);
    const double stop = NumberField(L, 2, "stop", box->clip->duration());
    if (!(start < stop)) return luaL_argerror(L, 2, "field 'start' must be before 'stop'");
    catch_exceptions(L, [&] {
      PushClip(L, box->skeleton, std::make_shared<Clip>(TrimClipSeconds(*box->clip, start, stop)));
    });
    return 1;
  }
  const int first = IntegerField(L, 2, "first", 1, 1, frames);
  const int last = IntegerField(L, 2, "last", frames, first, frames);
  catch_exceptions(L, [&] {
    PushClip(L, box->skeleton, std::make_shared<Clip>(SliceClip(*box->clip, first - 1, last - 1)));
  });
  return 1;
}

bool ReduceSaveOptions(lua_State* L, int opt, KeyReductionOptions* reduce) {
  static const char* const kKeys[] = {"reduce_keys", "max_error", "virtual_vertex", nullptr};
  CheckTable(L, opt);
  CheckOptionKeys(L, opt, kKeys);
  if (!BoolField(L, opt, "reduce_keys", false)) return false;
  *reduce = ReduceOptionsField(L, opt);
  return true;
}

}  // namespace rigel::lua
