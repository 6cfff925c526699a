// rigel.Rig: effectors (tasks) on joints with per-frame targets, limits in degrees, locks,
// strength, preferred angles, a solver stack; rig:solve(pose) and the rig:bake(clip, fn) loop.
// Effectors are named (default: the joint's name, "<joint>.<type>" for non-position types).
#include <cmath>
#include <cstring>

#include "bindings/lua/boxes.h"
#include "bindings/lua/rigel_module.h"
#include "bindings/lua/wrap_constraint.h"
#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/bake.h"
#include "core/ik/rig.h"
#include "core/ik/solve.h"

namespace rigel::lua {

namespace {

// Everything a Lua rig owns: the core Rig plus effector names, this frame's targets, the
// solver workspace and the last report.
struct RigState {
  explicit RigState(std::shared_ptr<const Skeleton> skeleton) : rig(std::move(skeleton)) {}
  ik::Rig rig;
  std::vector<std::string> names;
  std::vector<ik::Target> targets;
  ik::Workspace workspace;
  ik::SolveReport report;
  // Constraints in declaration order, and their captured offsets for rig:solve (a bake starts
  // its own).
  constraints::Stack constraints;
  constraints::StackState constraint_state;
};

struct RigBox {
  std::shared_ptr<RigState> state;
  bool alive = true;
};

RigBox* CheckRig(lua_State* L, int arg) {
  auto* box = static_cast<RigBox*>(CheckBox(L, arg, kRigType));
  if (!box->alive || !box->state) luaL_argerror(L, arg, "Rig was released");
  return box;
}

void PushRig(lua_State* L, std::shared_ptr<RigState> state) {
  PushBox<RigBox>(L, kRigType, RigBox{std::move(state)});
}

const char* const kTaskTypes[] = {"position", "orientation", "both", "aim", "pole", nullptr};
const char* const kMethods[] = {"transpose",    "pinv", "svd",      "qr",   "dls",
                                "dls_adaptive", "ccd",  "two_bone", nullptr};
constexpr ik::Method kMethodValues[] = {
    ik::Method::kTranspose, ik::Method::kPseudoInverse, ik::Method::kSvd, ik::Method::kQr,
    ik::Method::kDls,       ik::Method::kDlsAdaptive,   ik::Method::kCcd, ik::Method::kTwoBone};

Eigen::Vector3d Vec3Field(lua_State* L, int arg, const char* field,
                          const Eigen::Vector3d& fallback) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  Eigen::Vector3d v;
  if (!ToVec3(L, -1, &v)) FieldError(L, arg, field, "vec3");
  lua_pop(L, 1);
  return v;
}

Eigen::Quaterniond QuatField(lua_State* L, int arg, const char* field) {
  lua_getfield(L, arg, field);
  const Eigen::Quaterniond q = CheckQuat(L, lua_gettop(L));
  lua_pop(L, 1);
  return q;
}

// A joint named by field `field` (name or 1-based index); -1 when absent.
int JointField(lua_State* L, int arg, const char* field, const Skeleton& s) {
  if (!HasField(L, arg, field)) return -1;
  lua_getfield(L, arg, field);
  const int top = lua_gettop(L);
  if (lua_type(L, top) != LUA_TSTRING && lua_type(L, top) != LUA_TNUMBER) {
    FieldError(L, arg, field, "joint name or index");
  }
  const int j = CheckJoint(L, top, s);
  lua_pop(L, 1);
  return j;
}

// An effector by name or 1-based index. Returns the 0-based task index.
int CheckEffector(lua_State* L, int arg, const RigState& state) {
  const int n = static_cast<int>(state.names.size());
  if (lua_type(L, arg) == LUA_TNUMBER) {
    if (n == 0) luaL_argerror(L, arg, "the rig has no effectors");
    return static_cast<int>(CheckIntegerIn(L, arg, 1, n, "effector")) - 1;
  }
  if (lua_type(L, arg) != LUA_TSTRING) TypeError(L, arg, "effector name or index");
  size_t length = 0;
  const char* name = lua_tolstring(L, arg, &length);
  const std::string_view wanted(name, length);
  for (int i = 0; i < n; ++i) {
    if (state.names[i] == wanted) return i;
  }
  {
    const std::string closest = n > 0 ? ClosestNames(name, state.names) : std::string("none");
    lua_pushfstring(L, "no effector '%s' (closest: %s)", name, closest.c_str());
  }
  luaL_argerror(L, arg, lua_tostring(L, -1));
  return -1;
}

bool IsAncestor(const Skeleton& s, int ancestor, int joint) {
  for (int j = s.parent(joint); j >= 0; j = s.parent(j)) {
    if (j == ancestor) return true;
  }
  return false;
}

// rig:effector(joint [, options]) -> name
const char* const kEffectorOptions[] = {
    "type", "name",   "offset",   "end_site",  "offset_rotation", "axes",        "aim_axis", "root",
    "mid",  "weight", "priority", "alternate", "target",          "orientation", nullptr};

int w_Rig_effector(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int joint = CheckJoint(L, 2, s);
  const int opt = lua_isnoneornil(L, 3) ? 0 : 3;
  if (opt != 0) {
    CheckTable(L, 3);
    CheckOptionKeys(L, 3, kEffectorOptions);
  }
  CheckMaxArgs(L, 3);
  ik::Task task;
  task.joint = joint;
  if (HasField(L, opt, "type")) {
    lua_getfield(L, opt, "type");
    task.type =
        static_cast<ik::TaskType>(CheckOption(L, lua_gettop(L), "effector type", kTaskTypes));
    lua_pop(L, 1);
  }
  task.offset = Vec3Field(L, opt, "offset", Eigen::Vector3d::Zero());
  if (BoolField(L, opt, "end_site", false)) {
    bool found = false;
    for (const EndSite& site : s.end_sites()) {
      if (site.parent == joint && !found) {
        task.offset = site.offset;
        found = true;
      }
    }
    if (!found)
      return luaL_argerror(L, 3,
                           lua_pushfstring(L, "joint '%s' has no End Site", s.name(joint).c_str()));
  }
  if (HasField(L, opt, "offset_rotation"))
    task.offset_rotation = QuatField(L, opt, "offset_rotation");
  if (HasField(L, opt, "axes")) {
    lua_getfield(L, opt, "axes");
    if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, opt, "axes", "string of x, y, z");
    std::uint8_t axes = 0;
    for (const char* c = lua_tostring(L, -1); *c != '\0'; ++c) {
      const char lower = static_cast<char>(*c | 0x20);
      if (lower < 'x' || lower > 'z') {
        luaL_argerror(L, opt, "field 'axes': letters x, y, z expected (e.g. \"xz\")");
      }
      axes = static_cast<std::uint8_t>(axes | (1 << (lower - 'x')));
    }
    lua_pop(L, 1);
    if (axes == 0) luaL_argerror(L, opt, "field 'axes' names no axis");
    task.position_axes = axes;
  }
  if (HasField(L, opt, "aim_axis")) {
    const Eigen::Vector3d axis = Vec3Field(L, opt, "aim_axis", Eigen::Vector3d::UnitX());
    if (axis.norm() < 1e-12) luaL_argerror(L, opt, "field 'aim_axis' must not be zero");
    task.aim_axis = axis.normalized();
  }
  task.pole_root = JointField(L, opt, "root", s);
  task.pole_mid = JointField(L, opt, "mid", s);
  task.weight = NumberField(L, opt, "weight", 1.0);
  if (task.weight < 0) luaL_argerror(L, opt, "field 'weight' must be >= 0");
  task.priority = IntegerField(L, opt, "priority", 0, 0, 1000);
  task.alternate_jacobian = BoolField(L, opt, "alternate", false);
  ik::Target target;
  target.position = Vec3Field(L, opt, "target", Eigen::Vector3d::Zero());
  if (HasField(L, opt, "orientation")) target.orientation = QuatField(L, opt, "orientation");
  if (task.type == ik::TaskType::kPole) {
    // Default chain for a pole on an end joint: its grandparent and parent (hip-knee-ankle).
    if (task.pole_mid < 0) task.pole_mid = s.parent(joint);
    if (task.pole_root < 0 && task.pole_mid >= 0) task.pole_root = s.parent(task.pole_mid);
    if (task.pole_mid < 0 || task.pole_root < 0 || !IsAncestor(s, task.pole_mid, joint) ||
        !IsAncestor(s, task.pole_root, task.pole_mid)) {
      return luaL_argerror(L, 3,
                           "a pole needs root and mid joints that are ancestors of the effector "
                           "joint (root above mid)");
    }
  }
  // Name: options.name, else the joint's name (with the type for non-position effectors).
  const char* given = nullptr;
  if (HasField(L, opt, "name")) {
    lua_getfield(L, opt, "name");
    if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, opt, "name", "string");
    given = lua_tostring(L, -1);  // kept alive on the stack
  }
  if (given == nullptr) {
    given = task.type == ik::TaskType::kPosition
                ? lua_pushstring(L, s.name(joint).c_str())
                : lua_pushfstring(L, "%s.%s", s.name(joint).c_str(),
                                  kTaskTypes[static_cast<int>(task.type)]);
  }
  CheckUnlocked(L, box->state.get(), "rig:effector", "rig");
  for (const std::string& existing : box->state->names) {
    if (existing == given) {
      return luaL_error(L, "effector '%s' already exists (give another with {name = ...})", given);
    }
  }
  catch_exceptions(L, [&] {
    box->state->rig.AddTask(task);
    box->state->names.emplace_back(given);
    box->state->targets.push_back(target);
  });
  lua_pushstring(L, given);
  return 1;
}

int w_Rig_target(lua_State* L) {
  // rig:target(effector, position [, orientation]) -> rig. position may be nil (orientation
  // effectors) or a quat (then it is the orientation).
  // rig:target(effector, x, y, z [, orientation]) -> rig: the position as three numbers (no vec3
  // needed in per-frame loops).
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  ik::Target& target = box->state->targets[e];
  Eigen::Vector3d position = target.position;
  Eigen::Quaterniond orientation = target.orientation;
  if (lua_type(L, 3) == LUA_TNUMBER) {
    position.x() = CheckFinite(L, 3);
    position.y() = CheckFinite(L, 4);
    position.z() = CheckFinite(L, 5);
    if (!lua_isnoneornil(L, 6)) orientation = CheckQuat(L, 6);
    CheckMaxArgs(L, 6);
  } else {
    if (auto* vec3 = static_cast<const Vec3Box*>(TestBox(L, 3, kVec3Type))) {
      position = vec3->v;  // the common case first: one metatable check
    } else if (TestBox(L, 3, kQuatType) != nullptr) {
      orientation = CheckQuat(L, 3);
    } else if (!lua_isnoneornil(L, 3)) {
      position = CheckVec3(L, 3);
    }
    if (!lua_isnoneornil(L, 4)) orientation = CheckQuat(L, 4);
    CheckMaxArgs(L, 4);
  }
  target.position = position;
  target.orientation = orientation;
  lua_settop(L, 1);
  return 1;
}

int w_Rig_get_target(lua_State* L) {
  // rig:get_target(effector) -> position (vec3), orientation (quat), blend weight
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const ik::Target& target = box->state->targets[e];
  PushVec3(L, target.position);
  PushQuat(L, target.orientation);
  lua_pushnumber(L, target.weight);
  return 3;
}

int w_Rig_blend(lua_State* L) {
  // rig:blend(effector, w) -> rig: this frame's weight factor (0 switches the effector off).
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const double w = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (w < 0) luaL_argerror(L, 3, "blend weight must be >= 0");
  box->state->targets[e].weight = w;
  lua_settop(L, 1);
  return 1;
}

int w_Rig_set_weight(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const double w = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (w < 0) luaL_argerror(L, 3, "weight must be >= 0");
  box->state->rig.tasks[e].weight = w;
  lua_settop(L, 1);
  return 1;
}

int w_Rig_set_priority(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const int p = static_cast<int>(CheckIntegerIn(L, 3, 0, 1000, "priority"));
  CheckMaxArgs(L, 3);
  box->state->rig.tasks[e].priority = p;
  lua_settop(L, 1);
  return 1;
}

double ToRig(const Skeleton& s, int c, double v) {
  return IsRotation(s.channels()[c]) ? v * kRadPerDeg : v;
}
double FromRig(const Skeleton& s, int c, double v) {
  return IsRotation(s.channels()[c]) ? v * kDegPerRad : v;
}

int w_Rig_limit(lua_State* L) {
  // rig:limit(joint, channel, min, max) -> rig (degrees for rotations)
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const int c = CheckJointChannel(L, 3, s, j);
  const double lo = lua_type(L, 4) == LUA_TNUMBER && std::isinf(lua_tonumber(L, 4))
                        ? static_cast<double>(lua_tonumber(L, 4))
                        : CheckFinite(L, 4);
  const double hi = lua_type(L, 5) == LUA_TNUMBER && std::isinf(lua_tonumber(L, 5))
                        ? static_cast<double>(lua_tonumber(L, 5))
                        : CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  if (lo > hi) {
    return luaL_argerror(L, 5, lua_pushfstring(L, "max %f is below min %f", hi, lo));
  }
  box->state->rig.SetLimits(c, ToRig(s, c, lo), ToRig(s, c, hi));
  lua_settop(L, 1);
  return 1;
}

int w_Rig_get_limit(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const int c = CheckJointChannel(L, 3, s, j);
  lua_pushnumber(L, FromRig(s, c, box->state->rig.min[c]));
  lua_pushnumber(L, FromRig(s, c, box->state->rig.max[c]));
  return 2;
}

int LockImpl(lua_State* L, bool lock) {
  // rig:lock(joint [, channel]) / rig:unlock(joint [, channel]) -> rig
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const int c = lua_isnoneornil(L, 3) ? -1 : CheckJointChannel(L, 3, s, j);
  CheckMaxArgs(L, 3);
  if (c >= 0) {
    box->state->rig.Lock(c, lock);
  } else {
    for (int k = 0; k < s.channel_count(j); ++k) box->state->rig.Lock(s.channel_begin(j) + k, lock);
  }
  lua_settop(L, 1);
  return 1;
}
int w_Rig_lock(lua_State* L) { return LockImpl(L, true); }
int w_Rig_unlock(lua_State* L) { return LockImpl(L, false); }

int w_Rig_is_locked(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const int c = CheckJointChannel(L, 3, s, j);
  lua_pushboolean(L, box->state->rig.locked[c] != 0);
  return 1;
}

int w_Rig_strength(lua_State* L) {
  // rig:strength(joint, s) -> rig; 0 relaxes the joint (it drops out of the solve).
  RigBox* box = CheckRig(L, 1);
  const int j = CheckJoint(L, 2, box->state->rig.skeleton());
  const double v = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (v < 0) luaL_argerror(L, 3, "strength must be >= 0");
  box->state->rig.SetStrength(j, v);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_prefer(lua_State* L) {
  // rig:prefer(joint, channel, value [, gain = 1]) -> rig (degrees for rotations)
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const int c = CheckJointChannel(L, 3, s, j);
  const double value = CheckFinite(L, 4);
  const double gain = lua_isnoneornil(L, 5) ? 1.0 : CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  if (gain < 0) luaL_argerror(L, 5, "gain must be >= 0");
  box->state->rig.SetPreferred(c, ToRig(s, c, value), gain);
  lua_settop(L, 1);
  return 1;
}

const char* const kStageOptions[] = {
    "method",          "effectors",      "chain_root",      "upper",          "lower",
    "max_iterations",  "tolerance",      "angle_tolerance", "stall_fraction", "stall_iterations",
    "max_step",        "lambda",         "lambda_min",      "lambda_max",     "svd_threshold",
    "preferred_power", "preferred_step", "restarts",        nullptr};

int w_Rig_stage(lua_State* L) {
  // rig:stage{method = "dls_adaptive", effectors = {...}, chain_root = joint, ...} -> index
  RigBox* box = CheckRig(L, 1);
  CheckTable(L, 2);
  CheckMaxArgs(L, 2);
  CheckOptionKeys(L, 2, kStageOptions);
  const Skeleton& s = box->state->rig.skeleton();
  ik::Stage stage;
  if (HasField(L, 2, "method")) {
    lua_getfield(L, 2, "method");
    stage.method = kMethodValues[CheckOption(L, lua_gettop(L), "solver method", kMethods)];
    lua_pop(L, 1);
  }
  stage.chain_root = JointField(L, 2, "chain_root", s);
  stage.upper = JointField(L, 2, "upper", s);
  stage.lower = JointField(L, 2, "lower", s);
  ik::Settings& st = stage.settings;
  st.max_iterations = IntegerField(L, 2, "max_iterations", st.max_iterations, 1, 1000000);
  st.position_tolerance = NumberField(L, 2, "tolerance", st.position_tolerance);
  st.angle_tolerance =
      NumberField(L, 2, "angle_tolerance", st.angle_tolerance * kDegPerRad) * kRadPerDeg;
  st.stall_fraction = NumberField(L, 2, "stall_fraction", st.stall_fraction);
  st.stall_iterations = IntegerField(L, 2, "stall_iterations", st.stall_iterations, 1, 1000000);
  st.max_step = NumberField(L, 2, "max_step", st.max_step * kDegPerRad) * kRadPerDeg;
  st.lambda = NumberField(L, 2, "lambda", st.lambda);
  st.lambda_min = NumberField(L, 2, "lambda_min", st.lambda_min);
  st.lambda_max = NumberField(L, 2, "lambda_max", st.lambda_max);
  st.svd_threshold = NumberField(L, 2, "svd_threshold", st.svd_threshold);
  st.preferred_power = IntegerField(L, 2, "preferred_power", st.preferred_power, 2, 64);
  st.preferred_step = NumberField(L, 2, "preferred_step", st.preferred_step);
  st.restarts = IntegerField(L, 2, "restarts", st.restarts, 0, 1000000);
  // Effectors by name: validated now, stored as task indices.
  int count = 0;
  if (HasField(L, 2, "effectors")) {
    lua_getfield(L, 2, "effectors");
    const int list = lua_gettop(L);
    if (lua_type(L, list) != LUA_TTABLE) FieldError(L, 2, "effectors", "table of effector names");
    count = static_cast<int>(luaL_len(L, list));
    if (count == 0) luaL_argerror(L, 2, "field 'effectors' is empty (omit it for every effector)");
    for (int i = 1; i <= count; ++i) {
      lua_rawgeti(L, list, i);
      lua_pushinteger(L, CheckEffector(L, lua_gettop(L), *box->state));
      lua_replace(L, -2);  // leave the index on the stack
    }
  }
  CheckUnlocked(L, box->state.get(), "rig:stage", "rig");
  catch_exceptions(L, [&] {
    const int top = lua_gettop(L);
    for (int i = 0; i < count; ++i) {
      stage.tasks.push_back(static_cast<int>(lua_tointeger(L, top - count + 1 + i)));
    }
    box->state->rig.stages.push_back(stage);
  });
  lua_pushinteger(L, static_cast<lua_Integer>(box->state->rig.stages.size()));
  return 1;
}

int w_Rig_clear_stages(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  CheckMaxArgs(L, 1);
  CheckUnlocked(L, box->state.get(), "rig:clear_stages", "rig");
  box->state->rig.stages.clear();
  lua_settop(L, 1);
  return 1;
}

int w_Rig_effectors(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const std::vector<std::string>& names = box->state->names;
  lua_createtable(L, static_cast<int>(names.size()), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    lua_pushstring(L, names[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// Pushes the report table of the last solve.
void PushReport(lua_State* L, const RigState& state) {
  const ik::SolveReport& r = state.report;
  const Skeleton& s = state.rig.skeleton();
  lua_createtable(L, 0, 8);
  lua_pushstring(L, ik::StatusName(r.status).data());
  lua_setfield(L, -2, "status");
  lua_pushboolean(L, r.status == ik::Status::kConverged);
  lua_setfield(L, -2, "converged");
  lua_pushinteger(L, r.iterations);
  lua_setfield(L, -2, "iterations");
  lua_pushstring(L, r.message.c_str());
  lua_setfield(L, -2, "message");
  double worst_position = 0, worst_angle = 0;
  lua_createtable(L, 0, static_cast<int>(state.names.size()));
  for (size_t i = 0; i < state.names.size() && i < r.position_error.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, r.position_error[i]);
    lua_setfield(L, -2, "position");
    lua_pushnumber(L, r.angle_error[i] * kDegPerRad);
    lua_setfield(L, -2, "angle");
    lua_setfield(L, -2, state.names[i].c_str());
    worst_position = std::max(worst_position, r.position_error[i]);
    worst_angle = std::max(worst_angle, r.angle_error[i] * kDegPerRad);
  }
  lua_setfield(L, -2, "residuals");
  lua_pushnumber(L, worst_position);
  lua_setfield(L, -2, "max_position_error");
  lua_pushnumber(L, worst_angle);
  lua_setfield(L, -2, "max_angle_error");
  lua_createtable(L, static_cast<int>(r.channels_on_limit.size()), 0);
  for (size_t i = 0; i < r.channels_on_limit.size(); ++i) {
    const int c = r.channels_on_limit[i];
    lua_createtable(L, 0, 2);
    lua_pushstring(L, s.name(s.channel_joint(c)).c_str());
    lua_setfield(L, -2, "joint");
    lua_pushstring(L, ChannelName(s.channels()[c]).data());
    lua_setfield(L, -2, "channel");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "on_limit");
}

// Solves `state` on `pose` in place. Returns false (message on the Lua stack) for invalid input.
// Solve reads only pose.channels (docs/ik.md: channels in = warm start) and updates every world
// transform, so stale world transforms are not refreshed first (they are marked stale until
// Solve returns, whatever happens).
bool SolveInPlace(lua_State* L, RigState& state, PoseState& pose) {
  pose.MarkStale(0);
  bool ok = false;
  catch_exceptions(L, [&] {
    ok = ik::Solve(state.rig, state.targets, pose.pose, state.workspace, &state.report);
  });
  if (ok) pose.MarkFresh();
  if (!ok) lua_pushfstring(L, "invalid rig: %s", state.report.message.c_str());
  return ok;
}

// Runs the constraints of `state` whose after_stage lies in [first, last] on `pose` at `frame`,
// refreshing its world transforms first. Returns false (message on the Lua stack) on failure.
bool ConstrainInPlace(lua_State* L, RigState& state, PoseState& pose, int frame, int first,
                      int last) {
  if (!state.constraints.Any(first, last)) return true;
  const Skeleton& s = state.rig.skeleton();
  bool ok = false;
  catch_exceptions(L, [&] {
    pose.Refresh(s);
    std::string error;
    ok = state.constraints.Evaluate(s, pose.pose, frame, first, last, state.constraint_state,
                                    &error);
    pose.MarkStale(0);
    if (!ok) lua_pushstring(L, error.c_str());
  });
  return ok;
}

int w_Rig_solve(lua_State* L) {
  // rig:solve(pose [, frame]) -> report; the pose receives the answer. Constraints declared
  // before the first stage run before the solve, the others after it; `frame` (1-based, default
  // 1) selects parent-switch targets. A rig with constraints and no effector is only constrained.
  RigBox* box = CheckRig(L, 1);
  PoseBox* pose = CheckPose(L, 2);
  const int frame =
      lua_isnoneornil(L, 3) ? 0 : static_cast<int>(CheckIntegerIn(L, 3, 1, 1 << 30, "frame")) - 1;
  CheckMaxArgs(L, 3);
  if (pose->skeleton != box->state->rig.skeleton_ptr()) {
    return luaL_argerror(L, 2, "Pose of another skeleton than the rig's");
  }
  RigState& state = *box->state;
  constexpr int kAfterAny = 1 << 30;
  if (!ConstrainInPlace(L, state, *pose->state, frame, -1, -1)) return lua_error(L);
  if (!state.rig.tasks.empty() || state.constraints.entries.empty()) {
    if (!SolveInPlace(L, state, *pose->state)) return lua_error(L);
  } else {
    state.report = ik::SolveReport();
    state.report.status = ik::Status::kConverged;
  }
  if (!ConstrainInPlace(L, state, *pose->state, frame, 0, kAfterAny)) return lua_error(L);
  PushReport(L, state);
  return 1;
}

int w_Rig_constraint(lua_State* L) {
  // rig:constraint(kind, options) -> handle (1-based index). Runs after the stages declared so
  // far (before any when none), unless options.after_stage says otherwise.
  RigBox* box = CheckRig(L, 1);
  CheckMaxArgs(L, 3);
  CheckUnlocked(L, box->state.get(), "rig:constraint", "rig");
  RigState& state = *box->state;
  const int handle =
      AddConstraint(L, 2, 3, state.rig.skeleton(), static_cast<int>(state.rig.stages.size()) - 1,
                    &state.constraints);
  state.constraint_state.Reset();
  lua_pushinteger(L, handle);
  return 1;
}

int w_Rig_set_influence(lua_State* L) {
  // rig:set_influence(handle, w) -> rig: a constraint's influence (0..1), e.g. keyed per frame.
  RigBox* box = CheckRig(L, 1);
  const int n = static_cast<int>(box->state->constraints.entries.size());
  if (n == 0) luaL_argerror(L, 2, "the rig has no constraints");
  const int i = static_cast<int>(CheckIntegerIn(L, 2, 1, n, "constraint")) - 1;
  const double w = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (w < 0 || w > 1) luaL_argerror(L, 3, "influence must be in [0, 1]");
  std::visit([w](auto& c) { c.influence = w; }, box->state->constraints.entries[i].constraint);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_constraints(lua_State* L) {
  // rig:constraints() -> { {kind = "parent", joint = "Prop", after_stage = 0}, ... }: after_stage
  // is the 1-based stage the constraint follows (0: before any stage).
  RigBox* box = CheckRig(L, 1);
  CheckMaxArgs(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const std::vector<constraints::Entry>& entries = box->state->constraints.entries;
  lua_createtable(L, static_cast<int>(entries.size()), 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, constraints::KindName(entries[i].constraint).data());
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, s.name(constraints::ConstrainedJoint(entries[i].constraint)).c_str());
    lua_setfield(L, -2, "joint");
    lua_pushinteger(L, entries[i].after_stage + 1);
    lua_setfield(L, -2, "after_stage");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// rig:bake's summary: a read-only rigel.BakeSummary (fields as in docs/lua/rigel.lua).
struct BakeSummaryBox {
  ik::BakeSummary summary;
};

void PushBakeSummary(lua_State* L, const ik::BakeSummary& summary) {
  PushBox<BakeSummaryBox>(L, kBakeSummaryType, BakeSummaryBox{summary});
}

// The bake of w_Rig_bake, with its anchors at fixed stack slots: 1 the rig, 3 the callback or nil,
// 4 the rig's state, 5 the source clip, 6 the baked clip, 7 and 8 the pose (8 is given to the
// callback). Runs ik::BakeJob; the callback calls the Lua function with lua_pcall, never lua_call
// (a Lua error must not unwind through the C++ loop). Returns false with the error value on the
// stack; *script_error says whether it is the callback's (to raise as is).
bool RunBake(lua_State* L, ik::BakeSummary* summary, bool* script_error) {
  RigState* rig = static_cast<RigBox*>(lua_touserdata(L, 4))->state.get();
  PoseState* pose = static_cast<PoseBox*>(lua_touserdata(L, 7))->state.get();
  bool ok = false;
  catch_exceptions(L, [&] {
    ik::BakeJob job;
    job.rig = &rig->rig;
    job.targets = &rig->targets;
    job.clip = static_cast<ClipBox*>(lua_touserdata(L, 5))->clip.get();
    job.output = static_cast<ClipBox*>(lua_touserdata(L, 6))->clip.get();
    job.workspace = &rig->workspace;
    job.pose = &pose->pose;
    job.forward_kinematics = false;  // world transforms refresh lazily, as the script queries
    job.report = &rig->report;
    job.summary = summary;
    job.constraints = &rig->constraints;
    if (!lua_isnil(L, 3)) {
      job.on_frame = [L, pose, script_error](int frame, Pose&, std::string*) {
        pose->MarkStale(0);  // the loop copied the clip's row into the channels
        lua_pushvalue(L, 3);
        lua_pushinteger(L, frame + 1);
        lua_pushvalue(L, 8);
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
          *script_error = true;
          return ik::FrameAction::kFail;
        }
        const bool skip = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
        lua_pop(L, 1);
        return skip ? ik::FrameAction::kSkip : ik::FrameAction::kSolve;
      };
    }
    ok = job.Run();
    pose->MarkStale(0);
    if (!ok && !*script_error) lua_pushstring(L, job.error.c_str());
  });
  return ok;
}

int w_Rig_bake(lua_State* L) {
  // rig:bake(clip [, fn]) -> baked clip, summary. Per frame: the pose is the clip's frame,
  // fn(frame, pose, rig) sets targets (returning false skips solving that frame), then the rig is
  // solved warm-started from the frame and the answer written to the baked clip (ik::BakeJob).
  RigBox* box = CheckRig(L, 1);
  ClipBox* clip = CheckClip(L, 2);
  if (!lua_isnoneornil(L, 3)) CheckFunction(L, 3);
  CheckMaxArgs(L, 3);
  if (clip->skeleton != box->state->rig.skeleton_ptr()) {
    return luaL_argerror(L, 2, "Clip of another skeleton than the rig's");
  }
  lua_settop(L, 3);
  // Anchors owned by Lua (slots 4-8) keep everything alive whatever the callback does; the rig
  // and the source clip are locked (no resize, release or structural change) until this returns.
  PushRig(L, box->state);                   // 4: the rig
  PushClip(L, clip->skeleton, clip->clip);  // 5: the source clip
  // From here on only the anchors are used: a finalizer run by an allocation above may have
  // released the boxes at 1 and 2.
  RigState* rig = static_cast<RigBox*>(lua_touserdata(L, 4))->state.get();
  ClipBox* source = static_cast<ClipBox*>(lua_touserdata(L, 5));
  if (rig == nullptr || !source->clip) return luaL_error(L, "rig:bake: rig or clip was released");
  catch_exceptions(L, [&] {
    PushClip(L, source->skeleton, std::make_shared<Clip>());  // 6: the baked clip
    auto state = std::make_shared<PoseState>();
    state->pose = Pose(*source->skeleton);
    PushPose(L, source->skeleton, state);             // 7: anchor of the pose
    PushPose(L, source->skeleton, std::move(state));  // 8: the pose given to fn
  });
  PushLock(L, rig, "baked");                 // 9
  PushLock(L, source->clip.get(), "baked");  // 10
  ik::BakeSummary summary;
  bool script_error = false;
  if (!RunBake(L, &summary, &script_error)) {
    return script_error ? lua_error(L) : luaL_error(L, "%s", lua_tostring(L, -1));
  }
  lua_pushvalue(L, 6);
  PushBakeSummary(L, summary);
  return 2;
}

const ik::BakeSummary& CheckSummary(lua_State* L, int arg) {
  return static_cast<BakeSummaryBox*>(CheckBox(L, arg, kBakeSummaryType))->summary;
}

// Fields of a rigel.BakeSummary: each reads one value of the C++ struct.
int w_Summary_frames(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).frames);
  return 1;
}
int w_Summary_converged(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).converged);
  return 1;
}
int w_Summary_not_converged(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).not_converged);
  return 1;
}
int w_Summary_unreachable(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).unreachable);
  return 1;
}
int w_Summary_skipped(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).skipped);
  return 1;
}
int w_Summary_iterations(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckSummary(L, 1).iterations));
  return 1;
}
int w_Summary_iterations_max(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).iterations_max);
  return 1;
}
int w_Summary_iterations_mean(lua_State* L) {
  lua_pushnumber(L, CheckSummary(L, 1).iterations_mean);
  return 1;
}
int w_Summary_residual_max(lua_State* L) {
  lua_pushnumber(L, CheckSummary(L, 1).residual_max);
  return 1;
}
int w_Summary_residual_mean(lua_State* L) {
  lua_pushnumber(L, CheckSummary(L, 1).residual_mean);
  return 1;
}
int w_Summary_max_angle_error(lua_State* L) {
  lua_pushnumber(L, CheckSummary(L, 1).max_angle_error * kDegPerRad);
  return 1;
}
int w_Summary_worst_frame(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).worst_frame + 1);  // 1-based; 0 = none
  return 1;
}
int w_Summary_frames_with_limit_hits(lua_State* L) {
  lua_pushinteger(L, CheckSummary(L, 1).frames_with_limit_hits);
  return 1;
}

int w_Summary_tostring(lua_State* L) {
  const ik::BakeSummary& s = CheckSummary(L, 1);
  lua_pushfstring(L, "BakeSummary: %d frame(s), %d converged, %d unreachable, residual max %f",
                  s.frames, s.converged, s.unreachable, s.residual_max);
  return 1;
}

const luaL_Reg kSummaryMethods[] = {{nullptr, nullptr}};
// max_position_error and frames_unreachable are the older names of residual_max and
// unreachable.
const luaL_Reg kSummaryGetters[] = {{"frames", w_Summary_frames},
                                    {"converged", w_Summary_converged},
                                    {"not_converged", w_Summary_not_converged},
                                    {"unreachable", w_Summary_unreachable},
                                    {"frames_unreachable", w_Summary_unreachable},
                                    {"skipped", w_Summary_skipped},
                                    {"iterations", w_Summary_iterations},
                                    {"iterations_max", w_Summary_iterations_max},
                                    {"iterations_mean", w_Summary_iterations_mean},
                                    {"residual_max", w_Summary_residual_max},
                                    {"max_position_error", w_Summary_residual_max},
                                    {"residual_mean", w_Summary_residual_mean},
                                    {"max_angle_error", w_Summary_max_angle_error},
                                    {"worst_frame", w_Summary_worst_frame},
                                    {"frames_with_limit_hits", w_Summary_frames_with_limit_hits},
                                    {nullptr, nullptr}};
const luaL_Reg kSummaryMeta[] = {{"__tostring", w_Summary_tostring}, {nullptr, nullptr}};

const char* const kSummaryFields[] = {"frames",
                                      "converged",
                                      "not_converged",
                                      "unreachable",
                                      "frames_unreachable",
                                      "skipped",
                                      "iterations",
                                      "iterations_max",
                                      "iterations_mean",
                                      "residual_max",
                                      "max_position_error",
                                      "residual_mean",
                                      "max_angle_error",
                                      "worst_frame",
                                      "frames_with_limit_hits",
                                      nullptr};

int w_bake_summary(lua_State* L) {
  // rigel.bake_summary{frames = n, residual_max = r, ...} -> BakeSummary: solver statistics of a
  // bake a script did its own way (for `rigel bake`'s report). Absent fields are 0;
  // iterations_mean defaults to iterations over the solved frames (or over frames).
  CheckTable(L, 1);
  CheckMaxArgs(L, 1);
  CheckOptionKeys(L, 1, kSummaryFields);
  constexpr int kMax = 1 << 30;
  ik::BakeSummary s;
  s.frames = IntegerField(L, 1, "frames", 0, 0, kMax);
  s.converged = IntegerField(L, 1, "converged", 0, 0, kMax);
  s.not_converged = IntegerField(L, 1, "not_converged", 0, 0, kMax);
  s.unreachable = IntegerField(L, 1, "unreachable",
                               IntegerField(L, 1, "frames_unreachable", 0, 0, kMax), 0, kMax);
  s.skipped = IntegerField(L, 1, "skipped", 0, 0, kMax);
  s.iterations = IntegerField(L, 1, "iterations", 0, 0, kMax);
  s.iterations_max = IntegerField(L, 1, "iterations_max", 0, 0, kMax);
  const int per = s.solved() > 0 ? s.solved() : s.frames;
  s.iterations_mean =
      NumberField(L, 1, "iterations_mean", per > 0 ? static_cast<double>(s.iterations) / per : 0.0);
  s.residual_max = NumberField(L, 1, "residual_max", NumberField(L, 1, "max_position_error", 0.0));
  s.residual_mean = NumberField(L, 1, "residual_mean", 0.0);
  s.max_angle_error = NumberField(L, 1, "max_angle_error", 0.0) * kRadPerDeg;
  s.worst_frame = IntegerField(L, 1, "worst_frame", 0, 0, kMax) - 1;
  s.frames_with_limit_hits = IntegerField(L, 1, "frames_with_limit_hits", 0, 0, kMax);
  PushBakeSummary(L, s);
  return 1;
}

int w_Rig_release(lua_State* L) {
  auto* box = static_cast<RigBox*>(CheckBox(L, 1, kRigType));
  if (box->alive) {
    CheckUnlocked(L, box->state.get(), "rig:release", "rig");
    box->state.reset();
  }
  return 0;
}

int w_Rig_get_skeleton(lua_State* L) {
  PushSkeleton(L, CheckRig(L, 1)->state->rig.skeleton_ptr());
  return 1;
}
int w_Rig_get_num_effectors(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckRig(L, 1)->state->names.size()));
  return 1;
}
int w_Rig_get_num_constraints(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckRig(L, 1)->state->constraints.entries.size()));
  return 1;
}
int w_Rig_get_num_stages(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckRig(L, 1)->state->rig.stages.size()));
  return 1;
}

int w_Rig_tostring(lua_State* L) {
  auto* box = static_cast<RigBox*>(CheckBox(L, 1, kRigType));
  if (!box->alive || !box->state) {
    lua_pushliteral(L, "Rig (released)");
  } else {
    lua_pushfstring(L, "Rig: %d effector(s), %d stage(s) on '%s'",
                    static_cast<int>(box->state->names.size()),
                    static_cast<int>(box->state->rig.stages.size()),
                    box->state->rig.skeleton().name(0).c_str());
  }
  return 1;
}

int w_Rig_eq(lua_State* L) {
  auto* a = static_cast<RigBox*>(TestBox(L, 1, kRigType));
  auto* b = static_cast<RigBox*>(TestBox(L, 2, kRigType));
  lua_pushboolean(
      L, a != nullptr && b != nullptr && a->alive && a->state != nullptr && a->state == b->state);
  return 1;
}

const luaL_Reg kRigMethods[] = {{"effector", w_Rig_effector},
                                {"target", w_Rig_target},
                                {"get_target", w_Rig_get_target},
                                {"blend", w_Rig_blend},
                                {"set_weight", w_Rig_set_weight},
                                {"set_priority", w_Rig_set_priority},
                                {"limit", w_Rig_limit},
                                {"get_limit", w_Rig_get_limit},
                                {"lock", w_Rig_lock},
                                {"unlock", w_Rig_unlock},
                                {"is_locked", w_Rig_is_locked},
                                {"strength", w_Rig_strength},
                                {"prefer", w_Rig_prefer},
                                {"stage", w_Rig_stage},
                                {"clear_stages", w_Rig_clear_stages},
                                {"effectors", w_Rig_effectors},
                                {"solve", w_Rig_solve},
                                {"constraint", w_Rig_constraint},
                                {"constraints", w_Rig_constraints},
                                {"set_influence", w_Rig_set_influence},
                                {"bake", w_Rig_bake},
                                {"release", w_Rig_release},
                                {nullptr, nullptr}};
const luaL_Reg kRigGetters[] = {{"skeleton", w_Rig_get_skeleton},
                                {"num_effectors", w_Rig_get_num_effectors},
                                {"num_stages", w_Rig_get_num_stages},
                                {"num_constraints", w_Rig_get_num_constraints},
                                {nullptr, nullptr}};
const luaL_Reg kRigMeta[] = {
    {"__eq", w_Rig_eq}, {"__tostring", w_Rig_tostring}, {nullptr, nullptr}};

int w_rig_new(lua_State* L) {
  // rigel.rig(skeleton_or_object_with_one) -> Rig
  const std::shared_ptr<const Skeleton>* skeleton = SkeletonOf(L, 1);
  if (skeleton == nullptr) TypeError(L, 1, "Skeleton");
  CheckMaxArgs(L, 1);
  catch_exceptions(L, [&] { PushRig(L, std::make_shared<RigState>(*skeleton)); });
  return 1;
}

}  // namespace

void OpenRig(lua_State* L) {
  RegisterType(L, {kRigType, kRigMethods, kRigGetters, kRigMeta, DestroyBox<RigBox>, w_Rig_release,
                   nullptr});
  lua_pushcfunction(L, w_rig_new);
  lua_setfield(L, -2, "rig");
  RegisterType(L, {kBakeSummaryType, kSummaryMethods, kSummaryGetters, kSummaryMeta, nullptr,
                   nullptr, nullptr});
  lua_pushcfunction(L, w_bake_summary);
  lua_setfield(L, -2, "bake_summary");
}

bool ToBakeSummary(lua_State* L, int idx, ik::BakeSummary* summary, std::string* error) {
  idx = lua_absindex(L, idx);
  if (auto* box = static_cast<BakeSummaryBox*>(TestBox(L, idx, kBakeSummaryType))) {
    *summary = box->summary;
    return true;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    *error =
        std::string("solver statistics: BakeSummary or table expected, got ") + TypeName(L, idx);
    return false;
  }
  // A table: checked by rigel.bake_summary itself, in protected mode.
  lua_pushcfunction(L, w_bake_summary);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    const char* message = lua_tostring(L, -1);
    *error = std::string("solver statistics: ") + (message != nullptr ? message : "?");
    lua_pop(L, 1);
    return false;
  }
  *summary = static_cast<BakeSummaryBox*>(lua_touserdata(L, -1))->summary;
  lua_pop(L, 1);
  return true;
}

}  // namespace rigel::lua
