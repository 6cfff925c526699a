// rigel.Rig, declared: effectors (tasks) on joints with per-frame targets, limits in degrees,
// locks, strength, preferred angles, a solver stack and constraints. Running it (rig:solve,
// rig:bake) is wrap_rig_run.cc. Effectors are named (default: the joint's name,
// "<joint>.<type>" for non-position types).
#include <array>
#include <cmath>
#include <cstring>

#include "bindings/lua/fields.h"
#include "bindings/lua/rig_box.h"
#include "bindings/lua/wrap_constraint.h"
#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/methods.h"

namespace rigel::lua {

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

namespace {

// CheckOption's lists (null-terminated) of the names core/ik/methods.h spells: effector types in
// TaskType order, solver methods in Method order.
template <std::size_t N>
constexpr std::array<const char*, N + 1> OptionList(const std::array<std::string_view, N>& names) {
  std::array<const char*, N + 1> list{};
  for (std::size_t i = 0; i < N; ++i) list[i] = names[i].data();  // literals: NUL-terminated
  return list;
}
constexpr auto kTaskTypes = OptionList(ik::kTaskTypeNames);
constexpr auto kSolverMethods = [] {
  std::array<std::string_view, ik::kMethodTable.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = ik::kMethodTable[i].name;
  return OptionList(names);
}();

// rig:effector(joint [, options]) -> name
const char* const kEffectorOptions[] = {
    "type", "name",   "offset",   "end_site",  "offset_rotation", "axes",        "aim_axis", "root",
    "mid",  "weight", "priority", "alternate", "target",          "orientation", nullptr};

int w_Rig_effector(lua_State* L) {
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int joint = CheckJoint(L, 2, s);
  const int opt = OptionsArg(L, 3, kEffectorOptions);
  CheckMaxArgs(L, 3);
  ik::Task task;
  task.joint = joint;
  if (HasField(L, opt, "type")) {
    lua_getfield(L, opt, "type");
    task.type = static_cast<ik::TaskType>(
        CheckOption(L, lua_gettop(L), "effector type", kTaskTypes.data()));
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
  task.position_axes = AxesField(L, opt, task.position_axes);
  if (HasField(L, opt, "aim_axis")) {
    task.aim_axis = UnitField(L, opt, "aim_axis", Eigen::Vector3d::UnitX());
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
  // Name: options.name, else the core's (the joint's name, with the type for non-position
  // effectors).
  std::string name;
  if (HasField(L, opt, "name")) {
    lua_getfield(L, opt, "name");
    if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, opt, "name", "string");
    name = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  CheckUnlocked(L, box->state.get(), "rig:effector", "rig");
  if (!name.empty() && box->state->FindEffector(name) >= 0) {
    return luaL_error(L, "effector '%s' already exists (give another with {name = ...})",
                      name.c_str());
  }
  int index = -1;
  std::string error;
  catch_exceptions(L, [&] { index = box->state->AddEffector(task, target, name, &error); });
  if (index < 0) {
    // The core names the fault: a pole's chain, or a derived name already taken.
    if (error.rfind("effector '", 0) == 0) {
      return luaL_error(
          L, "%s",
          (error.substr(0, error.find(" (")) + " (give another with {name = ...})").c_str());
    }
    return luaL_argerror(L, 3, lua_pushstring(L, error.c_str()));
  }
  lua_pushstring(L, box->state->names[index].c_str());
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
    position = CheckXyz(L, 3);
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
  // rig:get_target(effector) -> position (vec3), orientation (quat), frame weight, ik blend
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const ik::Target& target = box->state->targets[e];
  PushVec3(L, target.position);
  PushQuat(L, target.orientation);
  lua_pushnumber(L, target.weight);
  lua_pushnumber(L, target.ik_blend);
  return 4;
}

// rig:frame_weight(effector, w) -> rig (alias rig:blend): this frame's weight factor, which
// multiplies the effector's own weight (0 switches the effector off; otherwise only its share
// against the other effectors changes).
// rig:set_weight(effector, w) -> rig: the effector's own weight.
int SetWeight(lua_State* L, bool frame) {
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const double w = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (w < 0) luaL_argerror(L, 3, frame ? "frame weight must be >= 0" : "weight must be >= 0");
  (frame ? box->state->targets[e].weight : box->state->rig.tasks[e].weight) = w;
  lua_settop(L, 1);
  return 1;
}
int w_Rig_frame_weight(lua_State* L) { return SetWeight(L, /*frame=*/true); }
int w_Rig_set_weight(lua_State* L) { return SetWeight(L, /*frame=*/false); }

// An IK/FK blend in [0, 1] at `arg`.
double CheckIkBlend(lua_State* L, int arg) {
  const double w = CheckFinite(L, arg);
  if (w < 0 || w > 1) luaL_argerror(L, arg, "ik blend must be in [0, 1] (0 = FK, 1 = IK)");
  return w;
}

int w_Rig_ik_blend(lua_State* L) {
  // rig:ik_blend(effector, w) -> rig: this frame's IK/FK blend of the effector's chain (Maya's
  // ikBlend): 0 = the animated pose, 1 = the solve, between = rotations slerped per joint.
  RigBox* box = CheckRig(L, 1);
  const int e = CheckEffector(L, 2, *box->state);
  const double w = CheckIkBlend(L, 3);
  CheckMaxArgs(L, 3);
  if (box->state->rig.tasks[e].type == ik::TaskType::kPole) {
    luaL_argerror(L, 2, "a pole follows its limb: blend the limb's position effector");
  }
  box->state->targets[e].ik_blend = w;
  lua_settop(L, 1);
  return 1;
}

int w_Rig_stage_ik_blend(lua_State* L) {
  // rig:stage_ik_blend(stage, w) -> rig: the IK/FK blend of every effector of a stage (1-based),
  // multiplying each effector's own.
  RigBox* box = CheckRig(L, 1);
  const int n = static_cast<int>(box->state->rig.stages.size());
  if (n == 0) luaL_argerror(L, 2, "the rig has no stages");
  const int i = static_cast<int>(CheckIntegerIn(L, 2, 1, n, "stage")) - 1;
  const double w = CheckIkBlend(L, 3);
  CheckMaxArgs(L, 3);
  box->state->rig.stages[i].ik_blend = w;
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

// The rig at 1 and the channel given at 2 and 3 (joint, channel name): the arguments of
// rig:limit, rig:get_limit, rig:is_locked and rig:prefer.
struct RigChannel {
  ik::Rig& rig;
  const Skeleton& skeleton;
  int channel;
};
RigChannel CheckRigChannel(lua_State* L) {
  ik::Rig& rig = CheckRig(L, 1)->state->rig;
  return {rig, rig.skeleton(), CheckChannel(L, 2, rig.skeleton())};
}

// A limit: a finite number, or an infinite one (no limit on that side).
double CheckLimit(lua_State* L, int arg) {
  if (lua_type(L, arg) == LUA_TNUMBER && std::isinf(lua_tonumber(L, arg))) {
    return static_cast<double>(lua_tonumber(L, arg));
  }
  return CheckFinite(L, arg);
}

int w_Rig_limit(lua_State* L) {
  // rig:limit(joint, channel, min, max) -> rig (degrees for rotations)
  const auto [rig, s, c] = CheckRigChannel(L);
  const double lo = CheckLimit(L, 4);
  const double hi = CheckLimit(L, 5);
  CheckMaxArgs(L, 5);
  if (lo > hi) {
    return luaL_argerror(L, 5, lua_pushfstring(L, "max %f is below min %f", hi, lo));
  }
  rig.SetLimits(c, ChannelFromLua(s, c, lo), ChannelFromLua(s, c, hi));
  lua_settop(L, 1);
  return 1;
}

int w_Rig_get_limit(lua_State* L) {
  const auto [rig, s, c] = CheckRigChannel(L);
  lua_pushnumber(L, ChannelToLua(s, c, rig.min[c]));
  lua_pushnumber(L, ChannelToLua(s, c, rig.max[c]));
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
  const auto [rig, s, c] = CheckRigChannel(L);
  lua_pushboolean(L, rig.locked[c] != 0);
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
  const auto [rig, s, c] = CheckRigChannel(L);
  const double value = CheckFinite(L, 4);
  const double gain = lua_isnoneornil(L, 5) ? 1.0 : CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  if (gain < 0) luaL_argerror(L, 5, "gain must be >= 0");
  rig.SetPreferred(c, ChannelFromLua(s, c, value), gain);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_cone(lua_State* L) {
  // rig:cone(joint, max_degrees) -> rig: FABRIK keeps the joint's bone within max_degrees of its
  // rest direction.
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  const double degrees = CheckFinite(L, 3);
  CheckMaxArgs(L, 3);
  if (degrees < 0 || degrees > 180) {
    return luaL_argerror(L, 3,
                         lua_pushfstring(L, "cone of joint '%s': expected 0..180 degrees, got %f",
                                         s.name(j).c_str(), degrees));
  }
  box->state->rig.SetCone(j, degrees * kRadPerDeg);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_hinge(lua_State* L) {
  // rig:hinge(joint, axis, min_degrees, max_degrees) -> rig: for FABRIK the joint turns about
  // `axis` ("x", "y", "z" or a vector, in the frame its rotation channels act in) only, by an
  // angle in [min, max].
  RigBox* box = CheckRig(L, 1);
  const Skeleton& s = box->state->rig.skeleton();
  const int j = CheckJoint(L, 2, s);
  Eigen::Vector3d axis;
  if (lua_type(L, 3) == LUA_TSTRING) {
    const char* const kAxes[] = {"x", "y", "z", nullptr};
    axis = Eigen::Vector3d::Unit(CheckOption(L, 3, "hinge axis", kAxes));
  } else {
    axis = CheckVec3(L, 3);
    if (axis.norm() < 1e-12) {
      return luaL_argerror(
          L, 3,
          lua_pushfstring(L, "hinge of joint '%s': the axis is a zero vector", s.name(j).c_str()));
    }
  }
  const double lo = CheckFinite(L, 4);
  const double hi = CheckFinite(L, 5);
  CheckMaxArgs(L, 5);
  if (lo < -180 || hi > 180 || lo > hi) {
    return luaL_argerror(
        L, lo < -180 ? 4 : 5,
        lua_pushfstring(
            L, "hinge of joint '%s': expected -180 <= min <= max <= 180 degrees, got %f, %f",
            s.name(j).c_str(), lo, hi));
  }
  box->state->rig.SetHinge(j, axis, lo * kRadPerDeg, hi * kRadPerDeg);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_clear_bone_limit(lua_State* L) {
  // rig:clear_bone_limit(joint) -> rig: removes the joint's cone or hinge.
  RigBox* box = CheckRig(L, 1);
  const int j = CheckJoint(L, 2, box->state->rig.skeleton());
  CheckMaxArgs(L, 2);
  box->state->rig.ClearBoneLimit(j);
  lua_settop(L, 1);
  return 1;
}

int w_Rig_get_bone_limit(lua_State* L) {
  // rig:get_bone_limit(joint) -> "none" | "cone", max_degrees | "hinge", axis, min, max
  RigBox* box = CheckRig(L, 1);
  const int j = CheckJoint(L, 2, box->state->rig.skeleton());
  CheckMaxArgs(L, 2);
  const ik::BoneLimit& b = box->state->rig.bone_limits[j];
  switch (b.kind) {
    case ik::BoneLimit::Kind::kCone:
      lua_pushliteral(L, "cone");
      lua_pushnumber(L, b.max_angle * kDegPerRad);
      return 2;
    case ik::BoneLimit::Kind::kHinge:
      lua_pushliteral(L, "hinge");
      PushVec3(L, b.axis);
      lua_pushnumber(L, b.min * kDegPerRad);
      lua_pushnumber(L, b.max * kDegPerRad);
      return 4;
    case ik::BoneLimit::Kind::kNone:
      break;
  }
  lua_pushliteral(L, "none");
  return 1;
}

const char* const kStageOptions[] = {
    "method",          "effectors",      "chain_root",      "upper",          "lower",
    "max_iterations",  "tolerance",      "angle_tolerance", "stall_fraction", "stall_iterations",
    "max_step",        "lambda",         "lambda_min",      "lambda_max",     "svd_threshold",
    "preferred_power", "preferred_step", "restarts",        "ik_blend",       nullptr};

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
    stage.method =
        ik::kMethodTable[CheckOption(L, lua_gettop(L), "solver method", kSolverMethods.data())]
            .method;
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
  stage.ik_blend = NumberField(L, 2, "ik_blend", stage.ik_blend);
  if (!(stage.ik_blend >= 0 && stage.ik_blend <= 1)) {
    luaL_argerror(L, 2, "field 'ik_blend' must be in [0, 1] (0 = FK, 1 = IK)");
  }
  // Effectors by name: validated now, stored as task indices.
  int count = 0;
  if (HasField(L, 2, "effectors")) {
    lua_getfield(L, 2, "effectors");
    const int list = lua_gettop(L);
    if (lua_type(L, list) != LUA_TTABLE) FieldError(L, 2, "effectors", "table of effector names");
    count = CheckListLength(L, 2, list, "effectors", 1);
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
  PushStrings(L, CheckRig(L, 1)->state->names);
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

int w_Rig_twist(lua_State* L) {
  // rig:twist{driver = j, joints = {...}, weights = {...}, axis = v, reference = j} -> handle:
  // rig:constraint("twist", options), the driver's twist shared over twist joints.
  RigBox* box = CheckRig(L, 1);
  CheckMaxArgs(L, 2);
  CheckUnlocked(L, box->state.get(), "rig:twist", "rig");
  RigState& state = *box->state;
  const int handle = AddTwist(L, 2, state.rig.skeleton(),
                              static_cast<int>(state.rig.stages.size()) - 1, &state.constraints);
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

void DescribeRig(lua_State* L, const RigBox& box) {
  lua_pushfstring(
      L, "Rig: %d effector(s), %d stage(s) on '%s'", static_cast<int>(box.state->names.size()),
      static_cast<int>(box.state->rig.stages.size()), box.state->rig.skeleton().name(0).c_str());
}

const luaL_Reg kRigMethods[] = {{"effector", w_Rig_effector},
                                {"target", w_Rig_target},
                                {"get_target", w_Rig_get_target},
                                {"frame_weight", w_Rig_frame_weight},
                                {"blend", w_Rig_frame_weight},
                                {"ik_blend", w_Rig_ik_blend},
                                {"stage_ik_blend", w_Rig_stage_ik_blend},
                                {"set_weight", w_Rig_set_weight},
                                {"set_priority", w_Rig_set_priority},
                                {"limit", w_Rig_limit},
                                {"get_limit", w_Rig_get_limit},
                                {"lock", w_Rig_lock},
                                {"unlock", w_Rig_unlock},
                                {"is_locked", w_Rig_is_locked},
                                {"strength", w_Rig_strength},
                                {"prefer", w_Rig_prefer},
                                {"cone", w_Rig_cone},
                                {"hinge", w_Rig_hinge},
                                {"clear_bone_limit", w_Rig_clear_bone_limit},
                                {"get_bone_limit", w_Rig_get_bone_limit},
                                {"stage", w_Rig_stage},
                                {"clear_stages", w_Rig_clear_stages},
                                {"effectors", w_Rig_effectors},
                                {"solve", w_Rig_solve},
                                {"constraint", w_Rig_constraint},
                                {"constraints", w_Rig_constraints},
                                {"twist", w_Rig_twist},
                                {"foot_roll", w_Rig_foot_roll},
                                {"set_foot_roll", w_Rig_set_foot_roll},
                                {"set_influence", w_Rig_set_influence},
                                {"bake", w_Rig_bake},
                                {nullptr, nullptr}};
const luaL_Reg kRigGetters[] = {{"skeleton", w_Rig_get_skeleton},
                                {"num_effectors", w_Rig_get_num_effectors},
                                {"num_stages", w_Rig_get_num_stages},
                                {"num_constraints", w_Rig_get_num_constraints},
                                {nullptr, nullptr}};

int w_rig_new(lua_State* L) {
  // rigel.rig(skeleton_or_object_with_one) -> Rig
  const std::shared_ptr<const Skeleton>* skeleton = CheckSkeletonOf(L, 1, "Skeleton");
  CheckMaxArgs(L, 1);
  catch_exceptions(L, [&] { PushRig(L, std::make_shared<RigState>(*skeleton)); });
  return 1;
}

}  // namespace

void OpenRig(lua_State* L) {
  OpenBoxType<RigBox, DescribeRig>(L, kRigMethods, kRigGetters, nullptr, "rig", w_rig_new);
}

}  // namespace rigel::lua
