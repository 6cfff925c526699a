// rig:constraint(kind, options): reads the options into a core constraint job. Angles are
// degrees, positions in skeleton units, frames 1-based (docs/constraints.md).
#include "bindings/lua/wrap_constraint.h"

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

const char* const kKinds[] = {"parent",        "point",         "orient",         "aim",
                              "copy_location", "copy_rotation", "limit_rotation", "limit_distance",
                              nullptr};

// Accepted options per kind (common ones first).
#define RIGEL_COMMON "joint", "target", "influence", "after_stage"
const char* const kParentOptions[] = {RIGEL_COMMON, "maintain_offset", "switch", nullptr};
const char* const kPointOptions[] = {RIGEL_COMMON, "maintain_offset", "axes", nullptr};
const char* const kAimOptions[] = {RIGEL_COMMON, "aim_axis", "up_axis", "up_type",
                                   "up_target",  "up",       nullptr};
const char* const kCopyOptions[] = {RIGEL_COMMON, "mode", "axes", nullptr};
const char* const kLimitRotationOptions[] = {"joint", "influence", "after_stage", "axes",
                                             "min",   "max",       nullptr};
const char* const kLimitDistanceOptions[] = {RIGEL_COMMON, "distance", "limit", nullptr};
#undef RIGEL_COMMON
const char* const* const kOptionsByKind[] = {
    kParentOptions, kPointOptions, kPointOptions,         kAimOptions,
    kCopyOptions,   kCopyOptions,  kLimitRotationOptions, kLimitDistanceOptions};

const char* const kUpTypes[] = {"world", "object", "object_rotation", nullptr};
const char* const kModes[] = {"replace", "add", nullptr};
const char* const kLimits[] = {"inside", "outside", "surface", nullptr};

// A required joint field.
int RequiredJoint(lua_State* L, int arg, const char* field, const Skeleton& s) {
  if (!HasField(L, arg, field)) FieldError(L, arg, field, "joint name or index");
  return JointField(L, arg, field, s);
}

double InfluenceField(lua_State* L, int arg) {
  const double w = NumberField(L, arg, "influence", 1.0);
  if (w < 0 || w > 1) luaL_argerror(L, arg, "field 'influence' must be in [0, 1]");
  return w;
}

// A constraint of kind C with the fields every kind has (a kind without a target ignores it).
template <class C>
C Common(int joint, int target, double influence) {
  C c;
  c.joint = joint;
  if constexpr (requires { c.target; }) c.target = target;
  c.influence = influence;
  return c;
}

// The options of the point and orient kinds: maintain_offset (default false), axes.
template <class C>
C ReadOffsetAxes(lua_State* L, int opt, C c) {
  c.maintain_offset = BoolField(L, opt, "maintain_offset", false);
  c.axes = AxesField(L, opt, constraints::kAllAxes);
  return c;
}

// The options of the copy kinds: mode ("replace" or "add"), axes.
template <class C>
C ReadModeAxes(lua_State* L, int opt, C c) {
  c.mix = static_cast<constraints::Mix>(OptionField(L, opt, "mode", kModes, 0));
  c.axes = AxesField(L, opt, constraints::kAllAxes);
  return c;
}

// Field "switch": { {frame = 1, target = "RightHand"}, ... } by increasing frame. Checks every
// entry and pushes its 0-based frame and target index on the Lua stack (no C++ container is alive
// while a check may raise); returns the number of switches.
int PushSwitches(lua_State* L, int arg, const Skeleton& s) {
  if (!HasField(L, arg, "switch")) return 0;
  lua_getfield(L, arg, "switch");
  const int list = lua_gettop(L);
  if (lua_type(L, list) != LUA_TTABLE) FieldError(L, arg, "switch", "table of {frame, target}");
  const int n = static_cast<int>(luaL_len(L, list));
  if (n == 0) luaL_argerror(L, arg, "field 'switch' is empty");
  luaL_checkstack(L, 2 * n + 4, "too many switches");
  int previous = -1;
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, list, i);
    const int entry = lua_gettop(L);
    if (lua_type(L, entry) != LUA_TTABLE || !HasField(L, entry, "frame") ||
        !HasField(L, entry, "target")) {
      luaL_argerror(
          L, arg,
          lua_pushfstring(L, "field 'switch'[%d]: {frame = n, target = joint} expected", i));
    }
    const int frame = IntegerField(L, entry, "frame", 1, 1, 1 << 30) - 1;
    const int target = JointField(L, entry, "target", s);
    if (frame <= previous) {
      luaL_argerror(L, arg, lua_pushfstring(L, "field 'switch'[%d]: frames must increase", i));
    }
    previous = frame;
    lua_pop(L, 1);
    lua_pushinteger(L, frame);
    lua_pushinteger(L, target);
  }
  lua_remove(L, list);
  return n;
}

}  // namespace

int AddConstraint(lua_State* L, int kind_arg, int opt, const Skeleton& s, int default_after_stage,
                  constraints::Stack* stack) {
  const int kind = CheckOption(L, kind_arg, "constraint kind", kKinds);
  CheckTable(L, opt);
  CheckOptionKeys(L, opt, kOptionsByKind[kind]);
  constraints::Entry entry;
  entry.after_stage = IntegerField(L, opt, "after_stage", default_after_stage + 1, 0, 1 << 20) - 1;
  const int joint = RequiredJoint(L, opt, "joint", s);
  const int target = kind == 6 ? -1 : RequiredJoint(L, opt, "target", s);
  const double influence = InfluenceField(L, opt);
  switch (kind) {
    case 0: {
      auto c = Common<constraints::ParentConstraint>(joint, target, influence);
      c.maintain_offset = BoolField(L, opt, "maintain_offset", true);
      const int n = PushSwitches(L, opt, s);
      entry.constraint = c;
      catch_exceptions(L, [&] {
        auto& switches = std::get<constraints::ParentConstraint>(entry.constraint).switches;
        const int top = lua_gettop(L);
        for (int i = 0; i < n; ++i) {
          switches.push_back({static_cast<int>(lua_tointeger(L, top - 2 * n + 1 + 2 * i)),
                              static_cast<int>(lua_tointeger(L, top - 2 * n + 2 + 2 * i))});
        }
      });
      lua_pop(L, 2 * n);
      break;
    }
    case 1:
      entry.constraint =
          ReadOffsetAxes(L, opt, Common<constraints::PointConstraint>(joint, target, influence));
      break;
    case 2:
      entry.constraint =
          ReadOffsetAxes(L, opt, Common<constraints::OrientConstraint>(joint, target, influence));
      break;
    case 3: {
      auto c = Common<constraints::AimConstraint>(joint, target, influence);
      c.aim_axis = UnitField(L, opt, "aim_axis", Eigen::Vector3d::UnitX());
      c.up_axis = UnitField(L, opt, "up_axis", Eigen::Vector3d::UnitY());
      c.up_type = static_cast<constraints::UpType>(OptionField(L, opt, "up_type", kUpTypes, 0));
      c.up = Vec3Field(L, opt, "up", Eigen::Vector3d::UnitY());
      c.up_target = JointField(L, opt, "up_target", s);
      entry.constraint = c;
      break;
    }
    case 4:
      entry.constraint = ReadModeAxes(
          L, opt, Common<constraints::CopyLocationConstraint>(joint, target, influence));
      break;
    case 5:
      entry.constraint = ReadModeAxes(
          L, opt, Common<constraints::CopyRotationConstraint>(joint, target, influence));
      break;
    case 6: {
      auto c = Common<constraints::LimitRotationConstraint>(joint, target, influence);
      c.axes = AxesField(L, opt, constraints::kAllAxes);
      c.min = Vec3Field(L, opt, "min", Eigen::Vector3d::Zero()) * kRadPerDeg;
      c.max = Vec3Field(L, opt, "max", Eigen::Vector3d::Zero()) * kRadPerDeg;
      entry.constraint = c;
      break;
    }
    default: {
      auto c = Common<constraints::LimitDistanceConstraint>(joint, target, influence);
      c.distance = NumberField(L, opt, "distance", -1.0);
      if (HasField(L, opt, "distance") && c.distance < 0) {
        luaL_argerror(L, opt, "field 'distance' must be >= 0 (omit it to keep the first frame's)");
      }
      c.mode = static_cast<constraints::DistanceMode>(OptionField(L, opt, "limit", kLimits, 0));
      entry.constraint = c;
      break;
    }
  }
  // Validated, then appended; the C++ objects are gone before an error is raised.
  bool ok = false;
  catch_exceptions(L, [&] {
    std::string error;
    ok = std::visit([&](const auto& c) { return c.Validate(s, &error); }, entry.constraint);
    if (ok) {
      stack->entries.push_back(std::move(entry));
    } else {
      lua_pushstring(L, error.c_str());
    }
    entry = constraints::Entry();
  });
  if (!ok) luaL_argerror(L, opt, lua_tostring(L, -1));
  return static_cast<int>(stack->entries.size());
}

}  // namespace rigel::lua
