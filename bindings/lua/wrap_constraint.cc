// rig:constraint(kind, options): reads the options into a core constraint job, through the kinds
// table (core/constraints/kinds.h) and one reader per row. Angles are
// degrees, positions in skeleton units, frames 1-based (docs/constraints.md).
#include "bindings/lua/wrap_constraint.h"

#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/constraints/kinds.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

// CheckOption's and CheckOptionKeys' lists (null-terminated) of the constraint kinds table
// (core/constraints/kinds.h): the kind names, and each kind's option names.
using constraints::kConstraintKinds;
constexpr std::size_t kMaxOptions = 16;
constexpr auto kKinds = [] {
  std::array<const char*, kConstraintKinds.size() + 1> list{};
  for (std::size_t i = 0; i < kConstraintKinds.size(); ++i) {
    list[i] = kConstraintKinds[i].name.data();  // literals: NUL-terminated
  }
  return list;
}();
constexpr auto kOptionsByKind = [] {
  std::array<std::array<const char*, kMaxOptions + 1>, kConstraintKinds.size()> lists{};
  for (std::size_t k = 0; k < kConstraintKinds.size(); ++k) {
    const auto& options = kConstraintKinds[k].options;
    for (std::size_t i = 0; i < options.size() && i < kMaxOptions; ++i) {
      lists[k][i] = options[i].name.data();
    }
  }
  return lists;
}();
static_assert([] {
  for (const constraints::ConstraintKind& kind : kConstraintKinds) {
    if (kind.options.size() > kMaxOptions) return false;
  }
  return true;
}());

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

// The spline IK's up_start and up_end: a joint (name or index) or a non-zero vec3 each.
void ReadUpSources(lua_State* L, int opt, const Skeleton& s, constraints::SplineIkConstraint& c) {
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
  ReadUpSources(L, opt, s, c);
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

// The joint, target (for the kinds that take one) and influence of constraint kind C, read in
// that order (so the first bad field is the one named).
template <class C>
C ReadCommon(lua_State* L, int opt, const Skeleton& s, bool has_target) {
  const int joint = RequiredJoint(L, opt, "joint", s);
  const int target = has_target ? RequiredJoint(L, opt, "target", s) : -1;
  const double influence = InfluenceField(L, opt);
  return Common<C>(joint, target, influence);
}

// One reader per kinds-table row: reads the kind's options (after after_stage) into entry.
using KindReader = void (*)(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry);

void ReadParent(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::ParentConstraint>(L, opt, s, true);
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
}

void ReadPoint(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  entry.constraint =
      ReadOffsetAxes(L, opt, ReadCommon<constraints::PointConstraint>(L, opt, s, true));
}

void ReadOrient(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  entry.constraint =
      ReadOffsetAxes(L, opt, ReadCommon<constraints::OrientConstraint>(L, opt, s, true));
}

void ReadAim(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::AimConstraint>(L, opt, s, true);
  c.aim_axis = UnitField(L, opt, "aim_axis", Eigen::Vector3d::UnitX());
  c.up_axis = UnitField(L, opt, "up_axis", Eigen::Vector3d::UnitY());
  c.up_type = static_cast<constraints::UpType>(OptionField(L, opt, "up_type", kUpTypes, 0));
  c.up = Vec3Field(L, opt, "up", Eigen::Vector3d::UnitY());
  c.up_target = JointField(L, opt, "up_target", s);
  entry.constraint = c;
}

void ReadCopyLocation(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  entry.constraint =
      ReadModeAxes(L, opt, ReadCommon<constraints::CopyLocationConstraint>(L, opt, s, true));
}

void ReadCopyRotation(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  entry.constraint =
      ReadModeAxes(L, opt, ReadCommon<constraints::CopyRotationConstraint>(L, opt, s, true));
}

void ReadLimitRotation(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::LimitRotationConstraint>(L, opt, s, false);
  c.axes = AxesField(L, opt, constraints::kAllAxes);
  c.min = Vec3Field(L, opt, "min", Eigen::Vector3d::Zero()) * kRadPerDeg;
  c.max = Vec3Field(L, opt, "max", Eigen::Vector3d::Zero()) * kRadPerDeg;
  entry.constraint = c;
}

void ReadLimitDistance(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::LimitDistanceConstraint>(L, opt, s, true);
  c.distance = NumberField(L, opt, "distance", -1.0);
  if (HasField(L, opt, "distance") && c.distance < 0) {
    luaL_argerror(L, opt, "field 'distance' must be >= 0 (omit it to keep the first frame's)");
  }
  c.mode = static_cast<constraints::DistanceMode>(OptionField(L, opt, "limit", kLimits, 0));
  entry.constraint = c;
}

void ReadTwist(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
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
}

void ReadLimitLocation(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::LimitLocationConstraint>(L, opt, s, false);
  c.min = BoundsField(L, opt, "min", -std::numeric_limits<double>::infinity());
  c.max = BoundsField(L, opt, "max", std::numeric_limits<double>::infinity());
  c.space = static_cast<constraints::Space>(OptionField(L, opt, "space", kSpaces, 0));
  entry.constraint = c;
}

void ReadCopyScale(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  entry.constraint =
      ReadModeAxes(L, opt, ReadCommon<constraints::CopyScaleConstraint>(L, opt, s, true));
}

void ReadLimitScale(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
  auto c = ReadCommon<constraints::LimitScaleConstraint>(L, opt, s, false);
  c.min = BoundsField(L, opt, "min", -std::numeric_limits<double>::infinity());
  c.max = BoundsField(L, opt, "max", std::numeric_limits<double>::infinity());
  entry.constraint = c;
}

void ReadSplineIk(lua_State* L, int opt, const Skeleton& s, constraints::Entry& entry) {
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
}

// The readers, one per row of the kinds table and in its order (checked below).
struct KindReaderRow {
  std::string_view kind;
  KindReader read;
};
constexpr std::array<KindReaderRow, kConstraintKinds.size()> kReaders{{
    {"parent", ReadParent},
    {"point", ReadPoint},
    {"orient", ReadOrient},
    {"aim", ReadAim},
    {"copy_location", ReadCopyLocation},
    {"copy_rotation", ReadCopyRotation},
    {"limit_rotation", ReadLimitRotation},
    {"limit_distance", ReadLimitDistance},
    {"twist", ReadTwist},
    {"limit_location", ReadLimitLocation},
    {"spline_ik", ReadSplineIk},
    {"copy_scale", ReadCopyScale},
    {"limit_scale", ReadLimitScale},
}};
static_assert(
    [] {
      for (std::size_t i = 0; i < kReaders.size(); ++i) {
        if (kReaders[i].kind != kConstraintKinds[i].name) return false;
      }
      return true;
    }(),
    "one reader per kinds-table row, in its order");

}  // namespace

int AddConstraint(lua_State* L, int kind_arg, int opt, const Skeleton& s, int default_after_stage,
                  constraints::Stack* stack) {
  return AddConstraintOfKind(L, CheckOption(L, kind_arg, "constraint kind", kKinds.data()), opt, s,
                             default_after_stage, stack);
}

int AddTwist(lua_State* L, int opt, const Skeleton& s, int default_after_stage,
             constraints::Stack* stack) {
  constexpr int kTwistKind = constraints::KindIndex("twist");
  static_assert(kTwistKind >= 0);
  return AddConstraintOfKind(L, kTwistKind, opt, s, default_after_stage, stack);
}

int AddConstraintOfKind(lua_State* L, int kind, int opt, const Skeleton& s, int default_after_stage,
                        constraints::Stack* stack) {
  CheckTable(L, opt);
  CheckOptionKeys(L, opt, kOptionsByKind[kind].data());
  constraints::Entry entry;
  entry.after_stage = IntegerField(L, opt, "after_stage", default_after_stage + 1, 0, 1 << 20) - 1;
  kReaders[kind].read(L, opt, s, entry);
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
