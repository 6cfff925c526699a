// rigel.Scene: what rigel.load returns: a skeleton, its clips, the source path and warnings.
// Clips taken from a scene are views into it: editing them edits the scene.
#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "bindings/lua/sandbox.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"

namespace rigel::lua {

namespace {

int w_Scene_clip(lua_State* L) {
  // scene:clip([index = 1]) -> Clip (a view into the scene)
  SceneBox* box = CheckScene(L, 1);
  const int count = static_cast<int>(box->scene->clips.size());
  if (count == 0) return luaL_error(L, "the scene has no clips");
  const int i =
      lua_isnoneornil(L, 2) ? 0 : static_cast<int>(CheckIntegerIn(L, 2, 1, count, "clip")) - 1;
  CheckMaxArgs(L, 2);
  PushClip(L, box->scene->skeleton, std::shared_ptr<Clip>(box->scene, &box->scene->clips[i]));
  return 1;
}

int w_Scene_save(lua_State* L) {
  // scene:save(path): writes the scene (format by extension), atomically.
  SceneBox* box = CheckScene(L, 1);
  const char* path = CheckSavePath(L, 2);
  catch_exceptions(L, [&] { SaveScene(*box->scene, path); });
  return 0;
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

void DescribeScene(lua_State* L, const SceneBox& box) {
  lua_pushfstring(L, "Scene: '%s', %d joints, %d clip(s)", box.scene->source.c_str(),
                  box.scene->skeleton ? box.scene->skeleton->num_joints() : 0,
                  static_cast<int>(box.scene->clips.size()));
}

const luaL_Reg kMethods[] = {{"clip", w_Scene_clip}, {"save", w_Scene_save}, {nullptr, nullptr}};
const luaL_Reg kGetters[] = {{"skeleton", GetBoxSkeleton<SceneBox>}, {"clips", w_Scene_get_clips},
                             {"num_clips", w_Scene_get_num_clips},   {"source", w_Scene_get_source},
                             {"warnings", w_Scene_get_warnings},     {nullptr, nullptr}};

int w_load(lua_State* L) {
  // rigel.load(path [, {bvh_translation = "auto"|"add"|"replace", unit = "m"|"dm"|"cm"|"mm"|"in"}])
  const char* path = CheckPathString(L, 1);
  CheckMaxArgs(L, 2);
  LoadOptions options;
  if (!lua_isnoneornil(L, 2)) {
    CheckTable(L, 2);
    static const char* const kKeys[] = {"bvh_translation", "unit", nullptr};
    CheckOptionKeys(L, 2, kKeys);
    static const char* const kTranslations[] = {"auto", "add", "replace", nullptr};
    const int t = OptionField(L, 2, "bvh_translation", kTranslations, -1);
    if (t >= 0) options.bvh.translation = *ParseBvhTranslation(kTranslations[t]);
    static const char* const kUnits[] = {"m", "dm", "cm", "mm", "in", nullptr};
    const int u = OptionField(L, 2, "unit", kUnits, -1);
    if (u >= 0) options.bvh.unit_metres = *ParseBvhUnit(kUnits[u]);
  }
  CheckPathAccess(L, 1, path);
  catch_exceptions(L, [&] {
    auto scene = std::make_shared<Scene>(LoadScene(path, options));
    if (!scene->skeleton) throw ImportError(std::string(path) + ": no skeleton");
    PushScene(L, std::move(scene));
  });
  return 1;
}

int w_save(lua_State* L) {
  // rigel.save(path, clip_or_scene)
  const char* path = CheckPathString(L, 1);
  ClipBox* clip = static_cast<ClipBox*>(TestBox(L, 2, kClipType));
  SceneBox* scene = clip == nullptr ? static_cast<SceneBox*>(TestBox(L, 2, kSceneType)) : nullptr;
  if (clip == nullptr && scene == nullptr) TypeError(L, 2, "Clip or Scene");
  if (clip != nullptr) CheckClip(L, 2);
  if (scene != nullptr) CheckScene(L, 2);
  CheckMaxArgs(L, 2);
  CheckPathWrite(L, 1, path);
  catch_exceptions(L, [&] {
    if (clip != nullptr) {
      SaveClip(*clip->skeleton, *clip->clip, path);
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

void PushScene(lua_State* L, std::shared_ptr<Scene> scene) {
  PushBox<SceneBox>(L, kSceneType, SceneBox{std::move(scene)});
}

void OpenScene(lua_State* L) {
  OpenBoxType<SceneBox, DescribeScene>(L, kMethods, kGetters, nullptr);
  static const luaL_Reg kFunctions[] = {{"load", w_load},
                                        {"save", w_save},
                                        {"readable_formats", w_readable_formats},
                                        {"writable_formats", w_writable_formats},
                                        {nullptr, nullptr}};
  luaL_setfuncs(L, kFunctions, 0);
}

}  // namespace rigel::lua
