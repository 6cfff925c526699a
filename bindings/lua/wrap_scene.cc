// rigel.Scene: what rigel.load returns: a skeleton, its clips, the source path and warnings.
// Clips taken from a scene are views into it: editing them edits the scene.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <new>
#include <optional>
#include <string>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "bindings/lua/sandbox.h"
#include "exporters/save_scene.h"
#include "importers/bvh_reader.h"
#include "importers/load_scene.h"

namespace rigel::lua {

namespace {

// Skeleton units: a registry table keyed by the skeleton's address, each value a userdata entry
// holding a weak reference (the entry counts only while that very skeleton lives) and the unit.
constexpr const char* kUnitsKey = "rigel.skeleton_units";
constexpr const char* kUnitEntryType = "rigel.SkeletonUnit";
struct UnitEntry {
  std::weak_ptr<const Skeleton> skeleton;
  double metres = 0.0;
};
int UnitEntryGc(lua_State* L) {
  static_cast<UnitEntry*>(lua_touserdata(L, 1))->~UnitEntry();
  return 0;
}

int w_Scene_clip(lua_State* L) {
  // scene:clip([index = 1 | take name]) -> Clip (a view into the scene)
  SceneBox* box = CheckScene(L, 1);
  const int count = static_cast<int>(box->scene->clips.size());
  if (count == 0) return luaL_error(L, "the scene has no clips");
  int i = 0;
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char* name = lua_tostring(L, 2);
    i = -1;
    for (int c = 0; c < count && i < 0; ++c) {
      if (box->scene->clips[c].name() == name) i = c;
    }
    if (i < 0) {
      std::string names;
      for (const Clip& c : box->scene->clips)
        names += (names.empty() ? "'" : ", '") + c.name() + "'";
      return luaL_argerror(L, 2,
                           lua_pushfstring(L, "no take '%s' (takes: %s)", name, names.c_str()));
    }
  } else if (!lua_isnoneornil(L, 2)) {
    i = static_cast<int>(CheckIntegerIn(L, 2, 1, count, "clip")) - 1;
  }
  CheckMaxArgs(L, 2);
  PushClip(L, box->scene->skeleton, std::shared_ptr<Clip>(box->scene, &box->scene->clips[i]));
  return 1;
}

int w_Scene_save(lua_State* L) {
  // scene:save(path [, clip]): writes the scene (format by extension), atomically; with `clip` (on
  // the scene's skeleton, e.g. a baked clip) that clip as the one take, with the scene's meshes
  // and the clip's blend-shape weights. Returns what the format could not keep, a line each
  // (DroppedBy, SkeletonDroppedBy, AxesDroppedBy: the CLI's warnings), an empty table when
  // nothing.
  SceneBox* box = CheckScene(L, 1);
  ClipBox* clip = lua_isnoneornil(L, 3) ? nullptr : CheckClip(L, 3);
  if (clip != nullptr && clip->skeleton != box->scene->skeleton) {
    return luaL_argerror(L, 3, "Clip of another skeleton than the scene's");
  }
  const char* path = CheckPathString(L, 2);
  CheckMaxArgs(L, 3);
  CheckPathWrite(L, 2, path);
  std::vector<std::string> dropped;
  catch_exceptions(L, [&] {
    const Scene& scene = *box->scene;
    const std::span<const Clip> clips = clip == nullptr
                                            ? std::span<const Clip>(scene.clips)
                                            : std::span<const Clip>(clip->clip.get(), 1);
    if (clip == nullptr) {
      SaveScene(scene, path);
    } else {
      Scene one = scene;
      one.clips = {*clip->clip};
      SaveScene(one, path);
    }
    dropped = SceneDroppedBy(path, scene, clips, clips.size());
  });
  lua_createtable(L, static_cast<int>(dropped.size()), 0);
  for (std::size_t i = 0; i < dropped.size(); ++i) {
    lua_pushstring(L, dropped[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int w_Scene_get_clips(lua_State* L) {
  SceneBox* box = CheckScene(L, 1);
  const int count = static_cast<int>(box->scene->clips.size());
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; ++i) {
    PushClip(L, box->scene->skeleton, std::shared_ptr<Clip>(box->scene, &box->scene->clips[i]));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

int w_Scene_get_num_clips(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckScene(L, 1)->scene->clips.size()));
  return 1;
}

int w_Scene_get_source(lua_State* L) {
  lua_pushstring(L, CheckScene(L, 1)->scene->source.c_str());
  return 1;
}

int w_Scene_get_warnings(lua_State* L) {
  PushStrings(L, CheckScene(L, 1)->scene->warnings);
  return 1;
}

int w_Scene_get_axes(lua_State* L) {
  // scene.axes -> {up = "+Y", up_source = "stated"|"inferred"|"user"|"unknown", up_evidence,
  //                forward, forward_source, forward_evidence, right_handed, original_up}
  const SceneAxes& axes = CheckScene(L, 1)->scene->axes;
  lua_createtable(L, 0, 8);
  for (const auto& [key, fact] : {std::pair{"up", &axes.up}, {"forward", &axes.forward}}) {
    const std::string k(key);
    lua_pushstring(L, SignedAxisName(fact->value).c_str());
    lua_setfield(L, -2, k.c_str());
    lua_pushstring(L, std::string(FactSourceKey(fact->source)).c_str());
    lua_setfield(L, -2, (k + "_source").c_str());
    lua_pushstring(L, fact->evidence.c_str());
    lua_setfield(L, -2, (k + "_evidence").c_str());
  }
  lua_pushboolean(L, axes.right_handed);
  lua_setfield(L, -2, "right_handed");
  if (axes.original_up.axis >= 0) {
    lua_pushstring(L, SignedAxisName(axes.original_up).c_str());
    lua_setfield(L, -2, "original_up");
  }
  return 1;
}

void DescribeScene(lua_State* L, const SceneBox& box) {
  lua_pushfstring(L, "Scene: '%s', %d joints, %d clip(s)", box.scene->source.c_str(),
                  box.scene->skeleton ? box.scene->skeleton->num_joints() : 0,
                  static_cast<int>(box.scene->clips.size()));
}

const luaL_Reg kSceneMethods[] = {
    {"clip", w_Scene_clip}, {"save", w_Scene_save}, {nullptr, nullptr}};
const luaL_Reg kSceneGetters[] = {{"skeleton", GetBoxSkeleton<SceneBox>},
                                  {"clips", w_Scene_get_clips},
                                  {"num_clips", w_Scene_get_num_clips},
                                  {"source", w_Scene_get_source},
                                  {"warnings", w_Scene_get_warnings},
                                  {"axes", w_Scene_get_axes},
                                  {nullptr, nullptr}};

// Field "unit" of the options table at `arg`: a unit name or factor as ParseBvhUnit reads it, or
// a number of metres per file unit (finite, > 0). Metres per unit.
double UnitOption(lua_State* L, int arg) {
  lua_getfield(L, arg, "unit");
  double metres = 0;
  if (lua_type(L, -1) == LUA_TNUMBER) {
    metres = static_cast<double>(lua_tonumber(L, -1));
    if (!(metres > 0) || !std::isfinite(metres)) {
      luaL_argerror(L, arg,
                    lua_pushfstring(L,
                                    "field 'unit': %f is not a length unit (metres per file "
                                    "unit must be finite and > 0)",
                                    metres));
    }
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    bool ok = false;
    {
      std::string error;  // gone before a Lua error is raised
      const std::optional<double> parsed = ParseBvhUnit(lua_tostring(L, -1), &error);
      ok = parsed.has_value();
      if (ok)
        metres = *parsed;
      else
        lua_pushstring(L, ("field 'unit': " + error).c_str());
    }
    if (!ok) luaL_argerror(L, arg, lua_tostring(L, -1));
  } else {
    FieldError(L, arg, "unit", "string or number");
  }
  lua_pop(L, 1);
  return metres;
}

int w_load(lua_State* L) {
  // rigel.load(path [, {bvh_translation = "auto"|"add"|"replace", unit = "m"|"dm"|"cm"|"mm"|"in"
  //                     or a factor ("2.54cm", "1e-3", or a number of metres per file unit),
  //                     up = "y"|"+z"|"-y"|..., forward = "z"|"-y"|...}])
  const char* path = CheckPathString(L, 1);
  CheckMaxArgs(L, 2);
  LoadOptions options;
  if (!lua_isnoneornil(L, 2)) {
    CheckTable(L, 2);
    static const char* const kKeys[] = {"bvh_translation", "unit", "up", "forward", nullptr};
    CheckOptionKeys(L, 2, kKeys);
    static const char* const kTranslations[] = {"auto", "add", "replace", nullptr};
    const int t = OptionField(L, 2, "bvh_translation", kTranslations, -1);
    if (t >= 0) options.bvh.translation = *ParseBvhTranslation(kTranslations[t]);
    if (HasField(L, 2, "unit")) options.bvh.unit_metres = UnitOption(L, 2);
    static const char* const kAxes[] = {"x", "y", "z",  "+x", "+y", "+z", "-x", "-y", "-z",   "X",
                                        "Y", "Z", "+X", "+Y", "+Z", "-X", "-Y", "-Z", nullptr};
    const int up = OptionField(L, 2, "up", kAxes, -1);
    if (up >= 0) options.axes.up = ParseSignedAxis(kAxes[up]);
    const int forward = OptionField(L, 2, "forward", kAxes, -1);
    if (forward >= 0) options.axes.forward = ParseSignedAxis(kAxes[forward]);
  }
  CheckPathAccess(L, 1, path);
  catch_exceptions(L, [&] {
    auto scene = std::make_shared<Scene>(LoadScene(path, options));
    if (!scene->skeleton) throw ImportError(std::string(path) + ": no skeleton");
    PushScene(L, std::move(scene));
  });
  return 1;
}

// rigel.save(path, {clip, clip, ...}): several takes of one skeleton in one glTF or FBX file.
void SaveTakes(lua_State* L, const char* path) {
  const int n = static_cast<int>(luaL_len(L, 2));
  if (n == 0) luaL_argerror(L, 2, "an empty table of clips");
  std::vector<ClipBox*> boxes;
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, 2, i);
    ClipBox* box = static_cast<ClipBox*>(TestBox(L, -1, kClipType));
    if (box == nullptr) {
      luaL_argerror(L, 2,
                    lua_pushfstring(L, "clip %d of the table is not a Clip (got %s)", i,
                                    luaL_typename(L, -1)));
    }
    lua_pop(L, 1);
    if (!box->alive) luaL_argerror(L, 2, lua_pushfstring(L, "clip %d of the table is freed", i));
    if (!boxes.empty() && box->skeleton != boxes.front()->skeleton) {
      luaL_argerror(L, 2,
                    lua_pushfstring(L,
                                    "clip %d is on another skeleton than clip 1: a file "
                                    "holds one skeleton",
                                    i));
    }
    boxes.push_back(box);
  }
  CheckPathWrite(L, 1, path);
  const double unit = SkeletonUnit(L, boxes.front()->skeleton);
  catch_exceptions(L, [&] {
    std::vector<Clip> clips;
    for (ClipBox* box : boxes) clips.push_back(*box->clip);
    SaveClips(*boxes.front()->skeleton, clips, path,
              ClipSaveOptions(path, *boxes.front()->skeleton, clips.front(), unit));
  });
}

int w_save(lua_State* L) {
  // rigel.save(path, clip_or_scene_or_clips)
  const char* path = CheckPathString(L, 1);
  if (lua_istable(L, 2) && lua_getmetatable(L, 2) == 0) {
    CheckMaxArgs(L, 2);
    SaveTakes(L, path);
    return 0;
  }
  ClipBox* clip = static_cast<ClipBox*>(TestBox(L, 2, kClipType));
  SceneBox* scene = clip == nullptr ? static_cast<SceneBox*>(TestBox(L, 2, kSceneType)) : nullptr;
  if (clip == nullptr && scene == nullptr) TypeError(L, 2, "Clip, Scene or table of Clips");
  if (clip != nullptr) CheckClip(L, 2);
  if (scene != nullptr) CheckScene(L, 2);
  CheckMaxArgs(L, 2);
  CheckPathWrite(L, 1, path);
  const double unit = clip != nullptr ? SkeletonUnit(L, clip->skeleton) : 0.0;
  catch_exceptions(L, [&] {
    if (clip != nullptr) {
      SaveClips(*clip->skeleton, std::span<const Clip>(clip->clip.get(), 1), path,
                ClipSaveOptions(path, *clip->skeleton, *clip->clip, unit));
    } else {
      SaveScene(*scene->scene, path);
    }
  });
  return 0;
}

int w_readable_formats(lua_State* L) {
  CheckMaxArgs(L, 0);
  catch_exceptions(L, [&] { PushStrings(L, ReadableExtensions()); });
  return 1;
}

int w_writable_formats(lua_State* L) {
  CheckMaxArgs(L, 0);
  catch_exceptions(L, [&] { PushStrings(L, WritableExtensions()); });
  return 1;
}

}  // namespace

void RegisterSkeletonUnit(lua_State* L, const std::shared_ptr<const Skeleton>& skeleton,
                          double metres) {
  if (!skeleton || !(metres > 0)) return;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kUnitsKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kUnitsKey);
  }
  void* memory = lua_newuserdatauv(L, sizeof(UnitEntry), 0);
  new (memory) UnitEntry{skeleton, metres};
  if (luaL_newmetatable(L, kUnitEntryType)) {
    lua_pushcfunction(L, UnitEntryGc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_rawsetp(L, -2, skeleton.get());
  lua_pop(L, 1);
}

void PushScene(lua_State* L, std::shared_ptr<Scene> scene) {
  RegisterSkeletonUnit(L, scene->skeleton, MetresPerUnitOrEstimate(*scene));
  PushBox<SceneBox>(L, kSceneType, SceneBox{std::move(scene)});
}

double SkeletonUnit(lua_State* L, const std::shared_ptr<const Skeleton>& skeleton) {
  double metres = 0.0;
  if (!skeleton) return metres;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kUnitsKey) == LUA_TTABLE) {
    if (lua_rawgetp(L, -1, skeleton.get()) == LUA_TUSERDATA) {
      const auto* entry = static_cast<const UnitEntry*>(lua_touserdata(L, -1));
      if (entry->skeleton.lock() == skeleton) metres = entry->metres;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return metres;
}

SaveOptions ClipSaveOptions(const std::string& path, const Skeleton& skeleton, const Clip& clip,
                            double known_unit) {
  SaveOptions options;
  options.metres_per_unit = known_unit;
  const FileFormat* format = FormatOfPath(path);
  if (options.metres_per_unit > 0 || (format != nullptr && !format->scale)) return options;
  double height = 0.0;
  const double unit =
      clip.num_frames() > 0 ? EstimateUnitFromFrame(skeleton, clip.frame(0), &height) : 0.0;
  if (unit > 0) {
    fmt::print(stderr,
               "rigel: warning: {}: the clip's skeleton has no known length unit; estimated {} "
               "from the figure's height ({:.4g} units)\n",
               path, UnitLabel(unit), height);
  } else {
    fmt::print(stderr,
               "rigel: warning: {}: the clip's skeleton has no known length unit and the figure "
               "has no height to estimate it: written in its own units, as metres\n",
               path);
  }
  options.metres_per_unit = unit;
  return options;
}

void OpenScene(lua_State* L) {
  OpenBoxType<SceneBox, DescribeScene>(L, kSceneMethods, kSceneGetters, nullptr);
  static const luaL_Reg kSceneFunctions[] = {{"load", w_load},
                                             {"save", w_save},
                                             {"readable_formats", w_readable_formats},
                                             {"writable_formats", w_writable_formats},
                                             {nullptr, nullptr}};
  luaL_setfuncs(L, kSceneFunctions, 0);
}

}  // namespace rigel::lua
