// rigel.retarget(source, target [, options]) -> clip, metrics, rigel.suggest_map(src, tgt),
// rigel.contacts(clip, joints [, options]) -> windows, info and rigel.up_axis(clip) -> axis,
// height: core/retarget (Retargeter, AutoMap, DetectContacts), core/skeleton_utils (GuessUpAxis)
// and importers/bone_map (XML maps) for rig scripts.
// Maps come as a path to an XML map, XML text, or a table source -> target; joint names are
// checked against both skeletons first, a wrong one lists the closest names.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "bindings/lua/sandbox.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/retarget/contacts.h"
#include "core/retarget/retarget.h"
#include "core/skeleton_utils.h"
#include "importers/bone_map.h"

namespace rigel::lua {

namespace {

const char* const kRetargetOptions[] = {"map",
                                        "root_motion",
                                        "root_motion_bone",
                                        "pin_feet",
                                        "pin_hands",
                                        "follow_source",
                                        "source_reference_frame",
                                        "target_reference_frame",
                                        "source_up",
                                        "target_up",
                                        "source_unit",
                                        "target_unit",
                                        "contact_height",
                                        "contact_speed",
                                        "contact_min_frames",
                                        "contact_blend",
                                        "knee_hyperextension",
                                        nullptr};
const char* const kRootMotions[] = {"scale", "keep", "in-place", "extract", nullptr};
constexpr retarget::RootMotion kRootMotionValues[] = {
    retarget::RootMotion::kScale, retarget::RootMotion::kKeep, retarget::RootMotion::kInPlace,
    retarget::RootMotion::kExtract};
const char* const kUpAxes[] = {"y", "z", "Y", "Z", nullptr};
const char* const kContactOptions[] = {"up", "scale", "height", "speed", "min_frames", nullptr};
const char* const kAxes[] = {"x", "y", "z", nullptr};
const char* const kAxisNames[] = {"x", "y", "z"};
const char* const kEntryFields[] = {"target", "role", "rotate", "order", nullptr};
const char* const kOrders[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", nullptr};

// Metres per unit of a scene when its file states it, else 0 (estimated by the retargeter).
double UnitOf(const Scene& scene) { return MetresPerUnit(scene); }

// Raises "bad argument #arg to 'fn' (map: <message>)".
[[noreturn]] void MapError(lua_State* L, int arg, const char* message) {
  luaL_argerror(L, arg, lua_pushfstring(L, "map: %s", message));
  std::abort();
}

// "no source joint 'X' (closest: ...)" pushed on the stack when `name` is not in `skeleton`.
bool PushMissingJoint(lua_State* L, const Skeleton& skeleton, const char* side,
                      const std::string& name, const std::string& where) {
  if (skeleton.FindJoint(name) >= 0) return false;
  const std::string closest = ClosestNames(name, skeleton.names());
  lua_pushfstring(L, "%sno %s joint '%s' (closest: %s)", where.c_str(), side, name.c_str(),
                  closest.c_str());
  return true;
}

bool IsRole(const char* name) { return retarget::ParseRole(name).has_value(); }
bool IsOrder(const char* name) { return FindOption(name, kOrders) >= 0; }

// Field `field` of the map entry at `v`, read once: absent (pushes false) or a string `valid`
// accepts (pushes it); else raises MapError with `format` filled with the value and `source`.
void PushEntryName(lua_State* L, int arg, int v, const char* field, bool (*valid)(const char*),
                   const char* source, const char* format) {
  if (lua_getfield(L, v, field) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushboolean(L, 0);
    return;
  }
  if (lua_type(L, -1) != LUA_TSTRING || !valid(lua_tostring(L, -1))) {
    MapError(L, arg, lua_pushfstring(L, format, luaL_tolstring(L, -1, nullptr), source));
  }
}

// Field slots of a checked entry (a plain array the binding makes, read raw in pass 2).
enum EntrySlot { kSource = 1, kTarget, kRole, kOrder, kRotateX, kRotateY, kRotateZ };

// Checks one target entry of a map table at the top of the stack (a string or {target = ...,
// role = ..., rotate = {x, y, z}, order = ...}; `source` names the key in messages) and appends
// what it read, each field read once, to the plain list at `checked` as {source, target, role or
// false, order or false [, rx, ry, rz]}. Leaves the stack as it found it.
void CheckEntry(lua_State* L, int arg, const char* source, int checked) {
  const int v = lua_gettop(L);
  lua_createtable(L, 7, 0);
  const int out = lua_gettop(L);
  lua_pushstring(L, source);
  lua_rawseti(L, out, kSource);
  if (lua_type(L, v) == LUA_TSTRING) {
    lua_pushvalue(L, v);
    lua_rawseti(L, out, kTarget);
    lua_pushboolean(L, 0);
    lua_rawseti(L, out, kRole);
    lua_pushboolean(L, 0);
    lua_rawseti(L, out, kOrder);
    lua_rawseti(L, checked, static_cast<lua_Integer>(lua_rawlen(L, checked)) + 1);
    return;
  }
  if (lua_type(L, v) != LUA_TTABLE) {
    MapError(L, arg,
             lua_pushfstring(L,
                             "'%s' must map to a joint name, a list of them or {target = ...}, "
                             "got %s",
                             source, TypeName(L, v)));
  }
  lua_pushnil(L);
  while (lua_next(L, v) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING || FindOption(lua_tostring(L, -1), kEntryFields) < 0) {
      MapError(L, arg,
               lua_pushfstring(L,
                               "unknown field '%s' in the entry of '%s' (expected one of: target, "
                               "role, rotate, order)",
                               luaL_tolstring(L, -1, nullptr), source));
    }
  }
  if (lua_getfield(L, v, "target") != LUA_TSTRING) {
    MapError(L, arg, lua_pushfstring(L, "the entry of '%s' needs target = joint name", source));
  }
  lua_rawseti(L, out, kTarget);
  PushEntryName(L, arg, v, "role", IsRole, source,
                "invalid role '%s' for '%s' (e.g. Hips, Chest, LeftUpperLeg)");
  lua_rawseti(L, out, kRole);
  PushEntryName(L, arg, v, "order", IsOrder, source,
                "invalid order '%s' for '%s', expected one of: XYZ, XZY, YXZ, YZX, ZXY, ZYX");
  lua_rawseti(L, out, kOrder);
  if (lua_getfield(L, v, "rotate") != LUA_TNIL) {
    Eigen::Vector3d xyz;
    if (!ToVec3(L, -1, &xyz)) {
      MapError(L, arg, lua_pushfstring(L, "rotate of '%s' must be {x, y, z} in degrees", source));
    }
    for (int k = 0; k < 3; ++k) {
      lua_pushnumber(L, xyz[k]);
      lua_rawseti(L, out, kRotateX + k);
    }
  }
  lua_pop(L, 1);
  lua_rawseti(L, checked, static_cast<lua_Integer>(lua_rawlen(L, checked)) + 1);
}

// Pass 1 over a map table at `map` (types only, no C++ objects): string keys, entries valid.
// Every value is read once, through whatever metamethods it has, into a plain list of checked
// entries that it pushes (pass 2 reads only that list, raw).
void CheckMapTable(lua_State* L, int arg, int map) {
  lua_newtable(L);
  const int checked = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, map) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      MapError(L, arg,
               lua_pushfstring(L, "keys must be source joint names, got %s", luaL_typename(L, -2)));
    }
    const char* source = lua_tostring(L, -2);
    const int value = lua_gettop(L);
    if (lua_type(L, value) == LUA_TTABLE && lua_getfield(L, value, "target") == LUA_TNIL) {
      lua_pop(L, 1);
      const lua_Integer n = luaL_len(L, value);
      if (n == 0) MapError(L, arg, lua_pushfstring(L, "'%s' maps to an empty list", source));
      if (n < 0 || n > kMaxListLength) {
        MapError(L, arg, lua_pushfstring(L, "'%s' maps to a list of %I entries", source, n));
      }
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, value, i);
        CheckEntry(L, arg, source, checked);
        lua_pop(L, 1);
      }
    } else {
      if (lua_type(L, value) == LUA_TTABLE) lua_pop(L, 1);
      CheckEntry(L, arg, source, checked);
    }
    lua_pop(L, 1);
  }
}

// Appends checked entry `k` of the list at `checked` (made by CheckEntry) to `map`. Raw reads of
// the binding's own plain tables: no metamethod, no Lua error.
void AddEntry(lua_State* L, int checked, lua_Integer k, retarget::BoneMap* map) {
  retarget::BoneMapEntry e;
  lua_rawgeti(L, checked, k);
  const int v = lua_gettop(L);
  const auto text = [&](int slot) -> std::string {
    const bool is_string = lua_rawgeti(L, v, slot) == LUA_TSTRING;
    std::string value = is_string ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    return value;
  };
  e.source = text(kSource);
  e.target = text(kTarget);
  const std::string role = text(kRole);
  if (!role.empty()) e.role = retarget::ParseRole(role);
  const EulerOrder order = ParseEulerOrder(text(kOrder)).value_or(EulerOrder::kXYZ);
  if (lua_rawgeti(L, v, kRotateX) == LUA_TNUMBER) {
    Eigen::Vector3d deg;
    for (int c = 0; c < 3; ++c) {
      lua_rawgeti(L, v, kRotateX + c);
      deg[c] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    e.offset = EulerToQuaternion(order, deg * kRadPerDeg);
  }
  lua_pop(L, 2);
  map->entries.push_back(std::move(e));
}

// Pass 2: the BoneMap of the checked entries at `checked` (CheckMapTable's list), sorted by source
// then target name (table order is not defined).
retarget::BoneMap MapFromTable(lua_State* L, int checked) {
  retarget::BoneMap out;
  out.origin = "map";
  const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, checked));
  for (lua_Integer k = 1; k <= n; ++k) AddEntry(L, checked, k, &out);
  std::sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) {
    return a.source != b.source ? a.source < b.source : a.target < b.target;
  });
  return out;
}

bool LooksLikeXml(const char* text) {
  while (std::isspace(static_cast<unsigned char>(*text))) ++text;
  return *text == '<';
}

// Pushes the metrics table of a retargeted clip.
void PushMetrics(lua_State* L, const retarget::RetargetMetrics& q,
                 const std::vector<std::string>& warnings) {
  lua_createtable(L, 0, 32);
  const auto integer = [&](const char* k, int v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
  };
  const auto number = [&](const char* k, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
  };
  const auto boolean = [&](const char* k, bool v) {
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
  };
  integer("frames", q.frames);
  integer("mapped_joints", q.mapped_joints);
  integer("bones", q.bones);
  number("hip_height_ratio", q.hip_height_ratio);
  number("source_unit_metres", q.source_unit_metres);
  number("target_unit_metres", q.target_unit_metres);
  boolean("source_unit_estimated", q.source_unit_estimated);
  boolean("target_unit_estimated", q.target_unit_estimated);
  lua_pushstring(L, q.source_up_axis == 2 ? "z" : "y");
  lua_setfield(L, -2, "source_up");
  lua_pushstring(L, q.target_up_axis == 2 ? "z" : "y");
  lua_setfield(L, -2, "target_up");
  number("bone_direction_mean_deg", q.bone_direction_mean_deg);
  number("bone_direction_max_deg", q.bone_direction_max_deg);
  lua_pushstring(L, q.bone_direction_worst.c_str());
  lua_setfield(L, -2, "bone_direction_worst");
  number("branch_direction_mean_deg", q.branch_direction_mean_deg);
  number("branch_direction_max_deg", q.branch_direction_max_deg);
  integer("contacts", q.contacts);
  integer("contact_frames", q.contact_frames);
  number("foot_slide_mean_mm", q.foot_slide_mean_mm);
  number("foot_slide_max_mm", q.foot_slide_max_mm);
  number("foot_error_mean_mm", q.foot_error_mean_mm);
  number("foot_error_max_mm", q.foot_error_max_mm);
  number("hand_error_mean_mm", q.hand_error_mean_mm);
  number("hand_error_max_mm", q.hand_error_max_mm);
  integer("joint_limit_violations", q.joint_limit_violations);
  integer("knee_hyperextension_frames", q.knee_hyperextension_frames);
  integer("ik_unreached", q.ik_unreached);
  boolean("ik_applied", q.ik_applied);
  lua_createtable(L, static_cast<int>(q.segments.size()), 0);
  for (size_t i = 0; i < q.segments.size(); ++i) {
    const auto& s = q.segments[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, s.name.c_str());
    lua_setfield(L, -2, "name");
    boolean("branch", s.branch);
    number("mean_deg", s.mean_deg);
    number("max_deg", s.max_deg);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "segments");
  lua_createtable(L, static_cast<int>(warnings.size()), 0);
  for (size_t i = 0; i < warnings.size(); ++i) {
    lua_pushstring(L, warnings[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "warnings");
}

// The source and target of rigel.retarget: a Clip or Scene, and a Skeleton, Scene or Clip (its
// skeleton, and the clip of a Clip or the first of a Scene as the reference pose).
struct RetargetArgs {
  ClipBox* source_clip = nullptr;
  SceneBox* source_scene = nullptr;
  const std::shared_ptr<const Skeleton>* target = nullptr;
  const ClipBox* target_clip = nullptr;
  const SceneBox* target_scene = nullptr;
};

// Checks the arguments' types and the options' keys; returns the options' index (0: none).
int CheckRetargetArgs(lua_State* L, RetargetArgs& a) {
  a.source_clip = static_cast<ClipBox*>(TestBox(L, 1, kClipType));
  a.source_scene = static_cast<SceneBox*>(TestBox(L, 1, kSceneType));
  if (a.source_clip == nullptr && a.source_scene == nullptr) TypeError(L, 1, "Clip or Scene");
  if (a.source_clip != nullptr) a.source_clip = CheckClip(L, 1);
  if (a.source_scene != nullptr) {
    a.source_scene = CheckScene(L, 1);
    if (a.source_scene->scene->clips.empty()) luaL_argerror(L, 1, "the source scene has no clip");
  }
  a.target = CheckSkeletonOf(L, 2, "Skeleton, Scene or Clip");
  a.target_clip = static_cast<ClipBox*>(TestBox(L, 2, kClipType));
  a.target_scene = static_cast<SceneBox*>(TestBox(L, 2, kSceneType));
  const int opt = lua_isnoneornil(L, 3) ? 0 : 3;
  if (opt != 0) {
    CheckTable(L, 3);
    CheckOptionKeys(L, 3, kRetargetOptions);
  }
  CheckMaxArgs(L, 3);
  return opt;
}

// Options and map tables may run Lua code (metamethods): everything read after this comes from
// anchors on the stack, which the script cannot reach, and the source and target clips or
// scenes are locked (no resize, no release) until rigel.retarget returns.
void AnchorRetargetArgs(lua_State* L, RetargetArgs& a) {
  if (a.source_clip != nullptr) {
    PushClip(L, a.source_clip->skeleton, a.source_clip->clip);
    a.source_clip = static_cast<ClipBox*>(lua_touserdata(L, -1));
    PushLock(L, a.source_clip->clip.get(), "retargeted");
  } else {
    PushScene(L, a.source_scene->scene);
    a.source_scene = static_cast<SceneBox*>(lua_touserdata(L, -1));
    PushLock(L, a.source_scene->scene.get(), "retargeted");
  }
  PushSkeleton(L, *a.target);
  a.target = &static_cast<SkeletonBox*>(lua_touserdata(L, -1))->skeleton;
  if (a.target_clip != nullptr) {
    PushClip(L, a.target_clip->skeleton, a.target_clip->clip);
    a.target_clip = static_cast<ClipBox*>(lua_touserdata(L, -1));
    PushLock(L, a.target_clip->clip.get(), "retargeted");
  } else if (a.target_scene != nullptr) {
    PushScene(L, a.target_scene->scene);
    a.target_scene = static_cast<SceneBox*>(lua_touserdata(L, -1));
    PushLock(L, a.target_scene->scene.get(), "retargeted");
  }
}

// root_motion and root_motion_bone: the bone's name is a string kept alive by the options table
// (copied inside catch_exceptions), or nullptr.
const char* ReadRootMotion(lua_State* L, int opt, retarget::RetargetOptions& o) {
  if (HasField(L, opt, "root_motion")) {
    o.root_motion = kRootMotionValues[OptionField(L, opt, "root_motion", kRootMotions, -1)];
  }
  const char* root_bone = nullptr;
  if (HasField(L, opt, "root_motion_bone")) {
    lua_getfield(L, opt, "root_motion_bone");
    if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, opt, "root_motion_bone", "joint name");
    root_bone = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (o.root_motion != retarget::RootMotion::kExtract) {
      luaL_argerror(L, opt, "root_motion_bone needs root_motion = \"extract\"");
    }
  }
  return root_bone;
}

// The remaining options: IK clean-up, reference frames, up axes, units and contact detection.
void ReadRetargetOptions(lua_State* L, int opt, const RetargetArgs& a, const Clip& clip,
                         const Clip* reference_target, retarget::RetargetOptions& o) {
  o.pin_feet = BoolField(L, opt, "pin_feet", false);
  o.pin_hands = BoolField(L, opt, "pin_hands", false);
  o.follow_source_between_contacts = BoolField(L, opt, "follow_source", false);
  o.source_reference_frame =
      IntegerField(L, opt, "source_reference_frame", 0, 1, clip.num_frames()) - 1;
  if (HasField(L, opt, "target_reference_frame")) {
    if (reference_target == nullptr || reference_target->num_frames() == 0) {
      luaL_argerror(L, opt,
                    "field 'target_reference_frame' needs a target with a clip (a Scene or Clip)");
    }
    o.target_reference_frame =
        IntegerField(L, opt, "target_reference_frame", 0, 1, reference_target->num_frames()) - 1;
  }
  const char* const up_fields[] = {"source_up", "target_up"};
  int* const up_values[] = {&o.source_up_axis, &o.target_up_axis};
  // Scenes give theirs (stated, given to rigel.load or inferred from the body), as on the CLI.
  const SceneBox* const up_scenes[] = {a.source_scene, a.target_scene};
  for (int i = 0; i < 2; ++i) {
    if (HasField(L, opt, up_fields[i])) {
      *up_values[i] = 1 + OptionField(L, opt, up_fields[i], kUpAxes, -1) % 2;
    } else if (up_scenes[i] != nullptr) {
      *up_values[i] = RetargetUpAxis(up_scenes[i]->scene->axes.up);
    }
  }
  o.source_unit_metres = NumberField(
      L, opt, "source_unit", a.source_scene != nullptr ? UnitOf(*a.source_scene->scene) : 0.0);
  o.target_unit_metres = NumberField(
      L, opt, "target_unit", a.target_scene != nullptr ? UnitOf(*a.target_scene->scene) : 0.0);
  if (o.source_unit_metres < 0 || o.target_unit_metres < 0) {
    luaL_argerror(L, opt, "units are metres per unit and must be > 0 (0 = estimate)");
  }
  o.contact_height = NumberField(L, opt, "contact_height", o.contact_height);
  o.contact_speed = NumberField(L, opt, "contact_speed", o.contact_speed);
  o.contact_min_frames = IntegerField(L, opt, "contact_min_frames", o.contact_min_frames, 1, 1000);
  o.contact_blend_seconds = NumberField(L, opt, "contact_blend", o.contact_blend_seconds);
  o.knee_hyperextension_degrees =
      NumberField(L, opt, "knee_hyperextension", o.knee_hyperextension_degrees);
  if (o.contact_height < 0 || o.contact_speed < 0 || o.contact_blend_seconds < 0) {
    luaL_argerror(L, opt, "contact_height, contact_speed and contact_blend must be >= 0");
  }
}

// The map: nil (automatic), a path or XML text, or a table checked here. Returns the checked
// table's index (0: none); *map_text is the path or XML text, or nullptr. The map stays on the
// stack.
int ReadMapOption(lua_State* L, int opt, const char** map_text) {
  int map_table = 0;
  if (HasField(L, opt, "map")) {
    lua_getfield(L, opt, "map");  // stays on the stack
    const int m = lua_gettop(L);
    if (lua_type(L, m) == LUA_TTABLE) {
      CheckMapTable(L, opt, m);
      map_table = lua_gettop(L);  // the checked entries
    } else if (lua_type(L, m) == LUA_TSTRING) {
      *map_text = lua_tostring(L, m);
      if (!LooksLikeXml(*map_text)) CheckPathAccess(L, opt, *map_text);
    } else {
      FieldError(L, opt, "map", "path, XML text or table");
    }
  }
  return map_table;
}

int w_retarget(lua_State* L) {
  // rigel.retarget(source_clip_or_scene, target [, options]) -> clip, metrics
  RetargetArgs a;
  const int opt = CheckRetargetArgs(L, a);
  AnchorRetargetArgs(L, a);
  const std::shared_ptr<const Skeleton>* target = a.target;
  const std::shared_ptr<const Skeleton>& source_skeleton =
      a.source_clip != nullptr ? a.source_clip->skeleton : a.source_scene->scene->skeleton;
  const Clip& clip =
      a.source_clip != nullptr ? *a.source_clip->clip : a.source_scene->scene->clips.front();
  const Clip* reference_target =
      a.target_clip != nullptr ? a.target_clip->clip.get()
                               : (a.target_scene != nullptr && !a.target_scene->scene->clips.empty()
                                      ? &a.target_scene->scene->clips.front()
                                      : nullptr);
  if (clip.num_frames() == 0) luaL_argerror(L, 1, "the source clip has no frames");

  retarget::RetargetOptions o;
  const char* root_bone = ReadRootMotion(L, opt, o);
  ReadRetargetOptions(L, opt, a, clip, reference_target, o);
  const char* map_text = nullptr;
  const int map_table = ReadMapOption(L, opt, &map_text);

  bool bad_map = false;
  bool failed = false;
  const double target_unit = SkeletonUnit(L, *target);
  catch_exceptions(L, [&] {
    if (root_bone != nullptr) o.root_motion_bone = root_bone;
    retarget::BoneMap map;
    if (map_table != 0) {
      map = MapFromTable(L, map_table);
    } else if (map_text != nullptr) {
      map = LooksLikeXml(map_text) ? ParseBoneMap(map_text, "map") : ReadBoneMap(map_text);
    }
    for (const retarget::BoneMapEntry& e : map.entries) {
      const std::string where =
          e.line > 0 ? map.origin + ":" + std::to_string(e.line) + ": " : std::string();
      if (PushMissingJoint(L, *source_skeleton, "source", e.source, where) ||
          PushMissingJoint(L, **target, "target", e.target, where)) {
        bad_map = true;
        return;
      }
    }
    std::string error;
    auto r = retarget::Retargeter::Create(source_skeleton, *target, map, o, &error, &clip,
                                          reference_target);
    if (!r) {
      lua_pushstring(L, error.c_str());
      failed = true;
      return;
    }
    retarget::RetargetResult result = r->Run(clip);
    // The output skeleton: the target, or (extract onto a new root bone) the target plus that
    // bone, which keeps the target's length unit for saving.
    if (r->added_root()) RegisterSkeletonUnit(L, r->target_ptr(), target_unit);
    PushClip(L, r->target_ptr(), std::make_shared<Clip>(std::move(result.clip)));
    PushMetrics(L, result.metrics, result.warnings);
  });
  if (bad_map) return luaL_argerror(L, opt, lua_pushfstring(L, "map: %s", lua_tostring(L, -1)));
  if (failed) return luaL_error(L, "%s", lua_tostring(L, -1));
  return 2;
}

int w_suggest_map(lua_State* L) {
  // rigel.suggest_map(source, target) -> map {source = target | {targets}}, notes, xml
  const std::shared_ptr<const Skeleton>* source =
      CheckSkeletonOf(L, 1, "Skeleton, Scene, Clip or Pose");
  const std::shared_ptr<const Skeleton>* target =
      CheckSkeletonOf(L, 2, "Skeleton, Scene, Clip or Pose");
  CheckMaxArgs(L, 2);
  catch_exceptions(L, [&] {
    std::vector<std::string> notes;
    const retarget::BoneMap map = retarget::AutoMap(**source, **target, &notes);
    lua_createtable(L, 0, static_cast<int>(map.entries.size()));
    const int t = lua_gettop(L);
    for (const retarget::BoneMapEntry& e : map.entries) {
      const int existing = lua_getfield(L, t, e.source.c_str());
      if (existing == LUA_TNIL) {
        lua_pop(L, 1);
        lua_pushstring(L, e.target.c_str());
      } else if (existing == LUA_TSTRING) {  // a second target: make a list
        lua_createtable(L, 2, 0);
        lua_insert(L, -2);
        lua_rawseti(L, -2, 1);
        lua_pushstring(L, e.target.c_str());
        lua_rawseti(L, -2, 2);
      } else {
        lua_pushstring(L, e.target.c_str());
        lua_rawseti(L, -2, luaL_len(L, -2) + 1);
      }
      lua_setfield(L, t, e.source.c_str());
    }
    lua_createtable(L, static_cast<int>(notes.size()), 0);
    for (size_t i = 0; i < notes.size(); ++i) {
      lua_pushstring(L, notes[i].c_str());
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_pushstring(L, FormatBoneMap(map, notes).c_str());
  });
  return 3;
}

// The up axis guessed from a clip's first frame (rest pose for an empty clip) by GuessUpAxis, and
// the world transforms of that pose in *world.
int FirstFrameUpAxis(const Skeleton& skeleton, const Clip& clip,
                     std::vector<Eigen::Isometry3d>* world) {
  std::vector<double> row(skeleton.num_channels(), 0.0);
  if (clip.num_frames() > 0) row.assign(clip.frame(0).begin(), clip.frame(0).end());
  world->resize(skeleton.num_joints());
  ForwardKinematics(skeleton, row, *world);
  return GuessUpAxis(JointBounds(*world));
}

int w_up_axis(lua_State* L) {
  // rigel.up_axis(clip) -> "y" | "z", height
  const ClipBox* box = CheckClip(L, 1);
  CheckMaxArgs(L, 1);
  catch_exceptions(L, [&] {
    std::vector<Eigen::Isometry3d> world;
    const int up = FirstFrameUpAxis(*box->skeleton, *box->clip, &world);
    const Eigen::AlignedBox3d bounds = JointBounds(world);
    lua_pushstring(L, kAxisNames[up]);
    lua_pushnumber(L, bounds.isEmpty() ? 0.0 : bounds.sizes()[up]);
  });
  return 2;
}

// Checks the joint list item at the top of the stack (a name or a 1-based index); raises
// "bad argument #arg to 'fn' (joint list item i: ...)" otherwise.
int CheckJointItem(lua_State* L, int arg, lua_Integer item, const Skeleton& skeleton) {
  const int v = lua_gettop(L);
  if (lua_type(L, v) == LUA_TNUMBER) {
    int is_integer = 0;
    const lua_Integer j = lua_tointegerx(L, v, &is_integer);
    if (is_integer && j >= 1 && j <= skeleton.num_joints()) return static_cast<int>(j) - 1;
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "joint list item %d: joint index in [1, %d] expected",
                                  static_cast<int>(item), skeleton.num_joints()));
  }
  if (lua_type(L, v) != LUA_TSTRING) {
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "joint list item %d: joint name or index expected, got %s",
                                  static_cast<int>(item), TypeName(L, v)));
  }
  const char* name = lua_tostring(L, v);
  if (const int j = skeleton.FindJoint(name); j >= 0) return j;
  {
    const std::string closest = ClosestNames(name, skeleton.names());
    lua_pushfstring(L, "joint list item %d: no joint '%s' (closest: %s)", static_cast<int>(item),
                    name, closest.c_str());
  }  // no C++ object alive past this point
  luaL_argerror(L, arg, lua_tostring(L, -1));
  return -1;
}

int w_contacts(lua_State* L) {
  // rigel.contacts(clip, joint | {joints...} [, options]) -> windows, info
  const ClipBox* box = CheckClip(L, 1);
  const Skeleton& skeleton = *box->skeleton;
  const bool list = lua_type(L, 2) == LUA_TTABLE;
  CheckMaxArgs(L, 3);
  lua_settop(L, 3);  // slot 3: the options or nil; the checked joints go above
  lua_Integer count = 1;
  int single = -1;
  int ids = 0;  // the joint indices of a list, checked, in a table of the binding's own
  if (list) {
    count = static_cast<lua_Integer>(lua_rawlen(L, 2));
    if (count < 1) luaL_argerror(L, 2, "the joint list is empty");
    lua_createtable(L, static_cast<int>(std::min<lua_Integer>(count, kMaxListLength)), 0);
    ids = lua_gettop(L);
    for (lua_Integer i = 1; i <= count; ++i) {
      lua_rawgeti(L, 2, i);
      const int joint = CheckJointItem(L, 2, i, skeleton);
      lua_pop(L, 1);
      lua_pushinteger(L, joint);
      lua_rawseti(L, ids, i);
    }
  } else {
    if (lua_type(L, 2) != LUA_TSTRING && lua_type(L, 2) != LUA_TNUMBER) {
      TypeError(L, 2, "joint name, index or list");
    }
    single = CheckJoint(L, 2, skeleton);
  }
  const int opt = lua_isnoneornil(L, 3) ? 0 : 3;
  if (opt != 0) {
    CheckTable(L, 3);
    CheckOptionKeys(L, 3, kContactOptions);
  }
  int up = -1;
  if (HasField(L, opt, "up")) up = OptionField(L, opt, "up", kAxes, -1);
  retarget::ContactOptions o;
  o.scale = NumberField(L, opt, "scale", 0.0);
  o.height = NumberField(L, opt, "height", o.height);
  o.speed = NumberField(L, opt, "speed", o.speed);
  o.min_frames = IntegerField(L, opt, "min_frames", o.min_frames, 1, 1000000);
  if (HasField(L, opt, "scale") && o.scale <= 0) {
    luaL_argerror(L, opt, "field 'scale': the figure's hip height must be > 0");
  }
  if (o.height < 0 || o.speed < 0) luaL_argerror(L, opt, "height and speed must be >= 0");

  catch_exceptions(L, [&] {
    std::vector<int> joints;
    if (list) {
      // The indices checked above (an options __index may have changed the list since).
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L, ids, i);
        joints.push_back(static_cast<int>(lua_tointeger(L, -1)));
        lua_pop(L, 1);
      }
    } else {
      joints.push_back(single);
    }
    std::vector<Eigen::Isometry3d> world;
    const int guessed = FirstFrameUpAxis(skeleton, *box->clip, &world);
    o.up_axis = up >= 0 ? up : guessed;
    if (o.scale <= 0) o.scale = retarget::FigureHipHeight(skeleton, world, o.up_axis);
    double ground = 0.0;
    const std::vector<retarget::ContactWindow> windows =
        retarget::DetectContacts(skeleton, *box->clip, joints, o, &ground);
    // windows: one list per joint (list form) or the joint's list.
    const int tracks = static_cast<int>(joints.size());
    if (list) lua_createtable(L, tracks, 0);
    size_t w = 0;
    for (int t = 0; t < tracks; ++t) {
      lua_newtable(L);
      lua_Integer n = 0;
      for (; w < windows.size() && windows[w].track == t; ++w) {
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, windows[w].first + 1);
        lua_setfield(L, -2, "first");
        lua_pushinteger(L, windows[w].last + 1);
        lua_setfield(L, -2, "last");
        lua_pushstring(L, skeleton.name(joints[t]).c_str());
        lua_setfield(L, -2, "joint");
        lua_rawseti(L, -2, ++n);
      }
      if (list) lua_rawseti(L, -2, t + 1);
    }
    lua_createtable(L, 0, 5);
    lua_pushstring(L, kAxisNames[o.up_axis]);
    lua_setfield(L, -2, "up");
    lua_pushnumber(L, o.scale);
    lua_setfield(L, -2, "scale");
    lua_pushnumber(L, o.height * o.scale);
    lua_setfield(L, -2, "height");
    lua_pushnumber(L, o.speed * o.scale);
    lua_setfield(L, -2, "speed");
    lua_pushnumber(L, ground);
    lua_setfield(L, -2, "ground");
  });
  return 2;
}

}  // namespace

void OpenRetarget(lua_State* L) {
  lua_pushcfunction(L, w_retarget);
  lua_setfield(L, -2, "retarget");
  lua_pushcfunction(L, w_suggest_map);
  lua_setfield(L, -2, "suggest_map");
  lua_pushcfunction(L, w_contacts);
  lua_setfield(L, -2, "contacts");
  lua_pushcfunction(L, w_up_axis);
  lua_setfield(L, -2, "up_axis");
}

}  // namespace rigel::lua
