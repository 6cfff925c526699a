// rig:constraint(kind, options): reads the options into a core constraint job. Angles are
// degrees, positions in skeleton units, frames 1-based (docs/constraints.md).
#include "bindings/lua/wrap_constraint.h"

#include <cmath>
#include <limits>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

const char* const kKinds[] = {"parent",        "point",          "orient",         "aim",
                              "copy_location", "copy_rotation",  "limit_rotation", "limit_distance",
                              "twist",         "limit_location", "spline_ik",      nullptr};
constexpr int kLimitRotationKind = 6;
constexpr int kTwistKind = 8;
constexpr int kLimitLocationKind = 9;
constexpr int kSplineIkKind = 10;

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
const char* const kTwistOptions[] = {"driver",    "joints",    "weights",     "axis",
                                     "reference", "influence", "after_stage", nullptr};
const char* const kLimitLocationOptions[] = {"joint", "influence", "after_stage", "min",
                                             "max",   "space",     nullptr};
const char* const kSplineIkOptions[] = {"joints",    "root",        "tip",     "points",   "curve",
                                        "stretch",   "twist",       "up_axis", "up_start", "up_end",
                                        "influence", "after_stage", nullptr};
#undef RIGEL_COMMON
const char* const* const kOptionsByKind[] = {
    kParentOptions, kPointOptions,         kPointOptions,         kAimOptions,
    kCopyOptions,   kCopyOptions,          kLimitRotationOptions, kLimitDistanceOptions,
    kTwistOptions,  kLimitLocationOptions, kSplineIkOptions};

const char* const kUpTypes[] = {"world", "object", "object_rotation", nullptr};
const char* const kModes[] = {"replace", "add", nullptr};
const char* const kLimits[] = {"inside", "outside", "surface", nullptr};
const char* const kSpaces[] = {"world", "local", nullptr};
const char* const kCurves[] = {"catmull_rom", "bezier", nullptr};
const char* const kSplineTwists[] = {"keep", "ends", nullptr};

// Field `field` of limit_location: per-axis bounds as {x = ..., y = ..., z = ...} or {x, y, z};
// an absent axis (or field) is unbounded, i.e. `fallback` (-inf for min, +inf for max).
Eigen::Vector3d BoundsField(lua_State* L, int arg, const char* field, double fallback) {
  Eigen::Vector3d v = Eigen::Vector3d::Constant(fallback);
  if (!HasField(L, arg, field)) return v;
  lua_getfield(L, arg, field);
  const int table = lua_gettop(L);
  if (lua_type(L, table) != LUA_TTABLE) FieldError(L, arg, field, "table of x, y, z bounds");
  static const char* const kXyz[] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    lua_getfield(L, table, kXyz[a]);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_rawgeti(L, table, a + 1);
    }
    if (!lua_isnil(L, -1)) {
      if (lua_type(L, -1) != LUA_TNUMBER || !std::isfinite(lua_tonumber(L, -1))) {
        luaL_argerror(L, arg,
                      lua_pushfstring(L, "field '%s'.%s: finite number expected", field, kXyz[a]));
      }
      v[a] = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

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
  const int n = CheckListLength(L, arg, list, "switch", 2);
  if (n == 0) luaL_argerror(L, arg, "field 'switch' is empty");
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

// The twist options: driver, joints (a list), weights (a list, default i / (n + 1) in list order),
// axis, reference, influence. The lists are checked and pushed on the Lua stack (joint, weight
// pairs) before any C++ container holds them; returns the twist with its lists still empty and
// the number of pairs pushed in *count.
constraints::TwistConstraint PushTwist(lua_State* L, int opt, const Skeleton& s, int* count) {
  constraints::TwistConstraint c;
  c.driver = RequiredJoint(L, opt, "driver", s);
  c.influence = InfluenceField(L, opt);
  c.reference = JointField(L, opt, "reference", s);
  c.axis = Vec3Field(L, opt, "axis", Eigen::Vector3d::Zero());
  if (!HasField(L, opt, "joints")) FieldError(L, opt, "joints", "list of joints");
  lua_getfield(L, opt, "joints");
  const int joints = lua_gettop(L);
  if (lua_type(L, joints) != LUA_TTABLE) FieldError(L, opt, "joints", "list of joints");
  const int n = CheckListLength(L, opt, joints, "joints", 2);
  if (n == 0) luaL_argerror(L, opt, "field 'joints' is empty");
  int weights = 0;
  if (HasField(L, opt, "weights")) {
    lua_getfield(L, opt, "weights");
    weights = lua_gettop(L);
    if (lua_type(L, weights) != LUA_TTABLE) FieldError(L, opt, "weights", "list of numbers");
    const int w = CheckListLength(L, opt, weights, "weights", 0);
    if (w != n) {
      luaL_argerror(L, opt,
                    lua_pushfstring(L, "field 'weights' has %d entries for %d joints", w, n));
    }
  }
  const int base = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, joints, i);
    const int item = lua_gettop(L);
    if (lua_type(L, item) != LUA_TSTRING && lua_type(L, item) != LUA_TNUMBER) {
      luaL_argerror(L, opt,
                    lua_pushfstring(L, "field 'joints'[%d]: joint name or index expected", i));
    }
    const int joint = CheckJoint(L, item, s);
    double weight = static_cast<double>(i) / (n + 1);
    if (weights != 0) {
      lua_rawgeti(L, weights, i);
      if (lua_type(L, -1) != LUA_TNUMBER) {
        luaL_argerror(L, opt, lua_pushfstring(L, "field 'weights'[%d]: number expected", i));
      }
      weight = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_pushinteger(L, joint);
    lua_pushnumber(L, weight);
  }
  // Keep only the pairs: drop the lists below them.
  for (int k = base; k >= joints; --k) lua_remove(L, joints);
  *count = n;
  return c;
}

// The spline IK options. The chain (`joints`, root to tip, or `root` and `tip`) and the control
// points (`points`: vec3s and joints) are checked and pushed on the Lua stack before any C++
// container holds them: the chain's joint indices (*chain_count of them, root first), then four
// values per point (joint index or -1, x, y, z; *point_count of them). Returns the job with its
// lists still empty.
constraints::SplineIkConstraint PushSplineIk(lua_State* L, int opt, const Skeleton& s,
                                             int* chain_count, int* point_count) {
  constraints::SplineIkConstraint c;
  c.influence = InfluenceField(L, opt);
  c.curve = OptionField(L, opt, "curve", kCurves, 0) == 1 ? constraints::CurveType::kBezier
                                                          : constraints::CurveType::kCatmullRom;
  c.stretch = BoolField(L, opt, "stretch", false);
  c.twist = static_cast<constraints::SplineTwist>(OptionField(L, opt, "twist", kSplineTwists, 0));
  c.up_axis = UnitField(L, opt, "up_axis", Eigen::Vector3d::UnitZ());
  for (const char* field : {"up_start", "up_end"}) {
    constraints::UpSource& up = field[3] == 's' ? c.up_start : c.up_end;
    if (!HasField(L, opt, field)) continue;
    lua_getfield(L, opt, field);
    Eigen::Vector3d v;
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
      up.joint = CheckJoint(L, lua_gettop(L), s);
    } else if (ToVec3(L, -1, &v)) {
      if (v.squaredNorm() == 0) {
        luaL_argerror(L, opt, lua_pushfstring(L, "field '%s' must not be zero", field));
      }
      up.vector = v;
    } else {
      FieldError(L, opt, field, "joint name or index, or vec3");
    }
    lua_pop(L, 1);
  }
  const bool has_list = HasField(L, opt, "joints");
  const bool has_ends = HasField(L, opt, "root") || HasField(L, opt, "tip");
  if (has_list == has_ends) {
    luaL_argerror(L, opt, "give the chain as 'joints' (root to tip) or as 'root' and 'tip'");
  }
  int n = 0;
  if (has_list) {
    lua_getfield(L, opt, "joints");
    const int list = lua_gettop(L);
    if (lua_type(L, list) != LUA_TTABLE) FieldError(L, opt, "joints", "list of joints");
    n = CheckListLength(L, opt, list, "joints", 1);
    if (n < 2) luaL_argerror(L, opt, "field 'joints' needs at least two joints");
    for (int i = 1; i <= n; ++i) {
      lua_rawgeti(L, list, i);
      if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
        luaL_argerror(L, opt,
                      lua_pushfstring(L, "field 'joints'[%d]: joint name or index expected", i));
      }
      const int joint = CheckJoint(L, lua_gettop(L), s);
      lua_pop(L, 1);
      lua_pushinteger(L, joint);
    }
    lua_remove(L, list);
  } else {
    const int root = RequiredJoint(L, opt, "root", s);
    const int tip = RequiredJoint(L, opt, "tip", s);
    // The path from the tip up to the root, pushed root first.
    int depth = 0;
    for (int j = tip; j != root; j = s.parent(j)) {
      if (j < 0) {
        luaL_argerror(L, opt,
                      lua_pushfstring(L, "tip '%s' is not below root '%s'", s.name(tip).c_str(),
                                      s.name(root).c_str()));
      }
      ++depth;
    }
    n = depth + 1;
    luaL_checkstack(L, n + 8, "too many chain joints");
    const int base = lua_gettop(L);
    for (int i = 0; i < n; ++i) lua_pushnil(L);
    int k = n - 1;
    for (int j = tip; k >= 0; j = s.parent(j), --k) {
      lua_pushinteger(L, j);
      lua_replace(L, base + 1 + k);
    }
  }
  if (!HasField(L, opt, "points")) FieldError(L, opt, "points", "list of vec3s and joints");
  lua_getfield(L, opt, "points");
  const int points = lua_gettop(L);
  if (lua_type(L, points) != LUA_TTABLE) FieldError(L, opt, "points", "list of vec3s and joints");
  const int m = CheckListLength(L, opt, points, "points", 4);
  for (int i = 1; i <= m; ++i) {
    lua_rawgeti(L, points, i);
    const int item = lua_gettop(L);
    Eigen::Vector3d v = Eigen::Vector3d::Zero();
    int joint = -1;
    if (lua_type(L, item) == LUA_TSTRING || lua_type(L, item) == LUA_TNUMBER) {
      joint = CheckJoint(L, item, s);
    } else if (!ToVec3(L, item, &v)) {
      luaL_argerror(L, opt,
                    lua_pushfstring(L, "field 'points'[%d]: vec3 or joint name expected", i));
    }
    lua_pop(L, 1);
    lua_pushinteger(L, joint);
    lua_pushnumber(L, v.x());
    lua_pushnumber(L, v.y());
    lua_pushnumber(L, v.z());
  }
  lua_remove(L, points);
  *chain_count = n;
  *point_count = m;
  return c;
}

}  // namespace

int AddConstraint(lua_State* L, int kind_arg, int opt, const Skeleton& s, int default_after_stage,
                  constraints::Stack* stack) {
  return AddConstraintOfKind(L, CheckOption(L, kind_arg, "constraint kind", kKinds), opt, s,
                             default_after_stage, stack);
}

int AddTwist(lua_State* L, int opt, const Skeleton& s, int default_after_stage,
             constraints::Stack* stack) {
  return AddConstraintOfKind(L, kTwistKind, opt, s, default_after_stage, stack);
}

int AddConstraintOfKind(lua_State* L, int kind, int opt, const Skeleton& s, int default_after_stage,
                        constraints::Stack* stack) {
  CheckTable(L, opt);
  CheckOptionKeys(L, opt, kOptionsByKind[kind]);
  constraints::Entry entry;
  entry.after_stage = IntegerField(L, opt, "after_stage", default_after_stage + 1, 0, 1 << 20) - 1;
  if (kind == kTwistKind) {
    int n = 0;
    entry.constraint = PushTwist(L, opt, s, &n);
    catch_exceptions(L, [&] {
      auto& twist = std::get<constraints::TwistConstraint>(entry.constraint);
      const int top = lua_gettop(L);
      for (int i = 0; i < n; ++i) {
        twist.joints.push_back(static_cast<int>(lua_tointeger(L, top - 2 * n + 1 + 2 * i)));
        twist.weights.push_back(lua_tonumber(L, top - 2 * n + 2 + 2 * i));
      }
    });
    lua_pop(L, 2 * n);
    return Append(L, opt, s, entry, stack);
  }
  if (kind == kSplineIkKind) {
    int n = 0, m = 0;
    entry.constraint = PushSplineIk(L, opt, s, &n, &m);
    catch_exceptions(L, [&] {
      auto& spline = std::get<constraints::SplineIkConstraint>(entry.constraint);
      const int base = lua_gettop(L) - n - 4 * m;
      for (int i = 1; i <= n; ++i)
        spline.joints.push_back(static_cast<int>(lua_tointeger(L, base + i)));
      for (int i = 0; i < m; ++i) {
        const int at = base + n + 4 * i + 1;
        spline.points.push_back({static_cast<int>(lua_tointeger(L, at)),
                                 Eigen::Vector3d(lua_tonumber(L, at + 1), lua_tonumber(L, at + 2),
                                                 lua_tonumber(L, at + 3))});
      }
    });
    lua_pop(L, n + 4 * m);
    return Append(L, opt, s, entry, stack);
  }
  const int joint = RequiredJoint(L, opt, "joint", s);
  const int target = kind == kLimitRotationKind || kind == kLimitLocationKind
                         ? -1
                         : RequiredJoint(L, opt, "target", s);
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
    case kLimitLocationKind: {
      auto c = Common<constraints::LimitLocationConstraint>(joint, target, influence);
      c.min = BoundsField(L, opt, "min", -std::numeric_limits<double>::infinity());
      c.max = BoundsField(L, opt, "max", std::numeric_limits<double>::infinity());
      c.space = static_cast<constraints::Space>(OptionField(L, opt, "space", kSpaces, 0));
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
  return Append(L, opt, s, entry, stack);
}

int Append(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry,
           constraints::Stack* stack) {
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
