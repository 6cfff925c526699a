// rigel.check(source, result [, options]) -> findings, info: the plausibility checks of
// core/check/plausibility.h on a result (a bake, retarget or converted clip) against its source,
// the same checks `rigel bake`, `rigel retarget` and `rigel convert` run on every output.
#include <stdexcept>
#include <string>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/check/plausibility.h"
#include "core/skeleton_edit.h"

namespace rigel::lua {

namespace {

const char* const kCheckOptions[] = {"kind",        "travel",    "scale",
                                     "source_up",   "result_up", "source_unit",
                                     "result_unit", "floor",     nullptr};
const char* const kKinds[] = {"convert", "bake", "retarget", nullptr};
const char* const kTravels[] = {"scaled", "kept", "none", nullptr};
const char* const kSignedAxes[] = {"x", "y", "z", "-x", "-y", "-z", nullptr};

// One side given to rigel.check: a Clip (on its skeleton) or a Scene (its first clip), anchored
// by a box of the binding's own pushed on the stack (the script cannot reach or release it) and
// locked while the checks run. Plain pointers only: no C++ object lives across a Lua error.
struct Given {
  const ClipBox* clip = nullptr;
  const SceneBox* scene = nullptr;
};

Given CheckGiven(lua_State* L, int arg) {
  Given g;
  if (TestBox(L, arg, kClipType) != nullptr) {
    const ClipBox* box = CheckClip(L, arg);
    PushClip(L, box->skeleton, box->clip);
    g.clip = static_cast<ClipBox*>(lua_touserdata(L, -1));
    PushLock(L, g.clip->clip.get(), "checked");
  } else if (TestBox(L, arg, kSceneType) != nullptr) {
    const SceneBox* box = CheckScene(L, arg);
    if (box->scene->clips.empty() || !box->scene->skeleton) {
      luaL_argerror(L, arg, "the scene has no clip");
    }
    PushScene(L, box->scene);
    g.scene = static_cast<SceneBox*>(lua_touserdata(L, -1));
    PushLock(L, g.scene->scene.get(), "checked");
  } else {
    TypeError(L, arg, "Clip or Scene");
  }
  return g;
}

// The side of a given Clip or Scene: its axes and unit from the scene (a clip's unit from its
// skeleton's scene, when it came from one; its up axis +Y).
check::CheckSide SideOf(lua_State* L, const Given& g) {
  check::CheckSide side;
  if (g.clip != nullptr) {
    side.skeleton = g.clip->skeleton.get();
    side.clip = g.clip->clip.get();
    side.metres_per_unit = SkeletonUnit(L, g.clip->skeleton);
  } else {
    const Scene& scene = *g.scene->scene;
    side.skeleton = scene.skeleton.get();
    side.clip = &scene.clips.front();
    side.up = scene.axes.up.value;
    side.metres_per_unit = MetresPerUnitOrEstimate(scene);
  }
  return side;
}

// Pushes the findings (a list of {check, reason, frame}) and the info table.
void PushReport(lua_State* L, const check::CheckReport& report) {
  lua_createtable(L, static_cast<int>(report.findings.size()), 0);
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const check::Finding& f = report.findings[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, f.check.c_str());
    lua_setfield(L, -2, "check");
    lua_pushstring(L, f.reason.c_str());
    lua_setfield(L, -2, "reason");
    if (f.frame >= 0) {
      lua_pushinteger(L, f.frame + 1);
      lua_setfield(L, -2, "frame");
    }
    lua_pushnumber(L, f.value);
    lua_setfield(L, -2, "value");
    lua_pushnumber(L, f.limit);
    lua_setfield(L, -2, "limit");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, report.suspect());
  lua_setfield(L, -2, "suspect");
  lua_createtable(L, static_cast<int>(report.ran.size()), 0);
  for (size_t i = 0; i < report.ran.size(); ++i) {
    lua_pushstring(L, report.ran[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "ran");
  lua_pushnumber(L, report.scale);
  lua_setfield(L, -2, "scale");
  lua_pushboolean(L, report.humanoid);
  lua_setfield(L, -2, "humanoid");
  lua_pushinteger(L, report.frames);
  lua_setfield(L, -2, "frames");
}

SignedAxis AxisOption(int index) { return {index % 3, index < 3 ? 1 : -1}; }

int w_check(lua_State* L) {
  // rigel.check(source, result [, options]) -> findings, info
  for (int arg = 1; arg <= 2; ++arg) {
    if (TestBox(L, arg, kClipType) == nullptr && TestBox(L, arg, kSceneType) == nullptr) {
      TypeError(L, arg, "Clip or Scene");
    }
  }
  const int opt = lua_isnoneornil(L, 3) ? 0 : 3;
  CheckMaxArgs(L, 3);
  lua_settop(L, 3);  // slots 1-3 stay the arguments; the anchors go above
  const Given source = CheckGiven(L, 1);
  const Given result = CheckGiven(L, 2);
  if (opt != 0) {
    CheckTable(L, 3);
    CheckOptionKeys(L, 3, kCheckOptions);
  }
  check::PlausibilityJob job;
  job.source = SideOf(L, source);
  job.output = SideOf(L, result);
  // A result clip states no axes: the source's.
  if (result.clip != nullptr) job.output.up = job.source.up;
  // A result on a skeleton edited from the source's (core/skeleton_edit.h) is a bake of it.
  const bool edited =
      result.clip != nullptr && EditedFrom(result.clip->skeleton, *job.source.skeleton);
  const bool same = job.source.skeleton == job.output.skeleton || edited;
  job.kind = static_cast<check::OutputKind>(OptionField(L, opt, "kind", kKinds, same ? 1 : 2));
  job.travel = static_cast<check::TravelRule>(OptionField(L, opt, "travel", kTravels, 0));
  job.scale = NumberField(L, opt, "scale", 1.0);
  if (HasField(L, opt, "source_up")) {
    job.source.up = AxisOption(OptionField(L, opt, "source_up", kSignedAxes, 1));
  }
  if (HasField(L, opt, "result_up")) {
    job.output.up = AxisOption(OptionField(L, opt, "result_up", kSignedAxes, 1));
  }
  job.source.metres_per_unit = NumberField(L, opt, "source_unit", job.source.metres_per_unit);
  job.output.metres_per_unit = NumberField(L, opt, "result_unit", job.output.metres_per_unit);
  if (HasField(L, opt, "floor")) {
    lua_getfield(L, opt, "floor");
    if (TestBox(L, -1, kClipType) == nullptr) FieldError(L, opt, "floor", "Clip");
    const ClipBox* box = CheckClip(L, lua_gettop(L));
    PushClip(L, box->skeleton, box->clip);  // anchored above the field's value
    const ClipBox* floor = static_cast<ClipBox*>(lua_touserdata(L, -1));
    job.output_floor_clip = floor->clip.get();
  }
  catch_exceptions(L, [&] {
    // Checked on the source's joints when the edits only added or renamed joints.
    Clip on_source;
    if (edited &&
        ClipOnSource(result.clip->skeleton, *result.clip->clip, *job.source.skeleton, &on_source)) {
      job.output.skeleton = job.source.skeleton;
      job.output.clip = &on_source;
    }
    const std::string error = job.Validate();
    if (!error.empty()) throw std::invalid_argument(error);
    PushReport(L, job.Run());
  });
  return 2;
}

}  // namespace

void OpenCheck(lua_State* L) {
  lua_pushcfunction(L, w_check);
  lua_setfield(L, -2, "check");
}

}  // namespace rigel::lua
