// The reverse-foot rig (core/constraints/foot_roll.h) in Lua, two ways:
// - rigel.foot_roll(ankle_position, ankle_rotation, options) -> position, rotation, toe_angle: a
//   function a bake callback calls to turn a planted foot and one roll value into a leg
//   effector's goal and the toe joint's angle;
// - rig:foot_roll(effector, options) -> handle: a rig object. The effector's target (rig:target)
//   is the planted ankle; every solve rolls it and then turns options.toe_joint.
//   rig:set_foot_roll(handle, {roll =, bank =, toe_tap =, break =}) keys the values per frame.
// Options (pivots and axes in the ankle's frame, angles in degrees): heel, ball, toe, inner,
// outer (vec3), side (default x), forward (default z), roll, break (default 30), bank, toe_tap.
#include <string>

#include "bindings/lua/fields.h"
#include "bindings/lua/rig_box.h"
#include "bindings/lua/runtime.h"
#include "core/constraints/foot_roll.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

// options.name as a vec3 (default when absent).
Eigen::Vector3d VecOption(lua_State* L, int arg, const char* name,
                          const Eigen::Vector3d& fallback) {
  lua_getfield(L, arg, name);
  Eigen::Vector3d v = fallback;
  if (!lua_isnil(L, -1) && !ToVec3(L, -1, &v)) {
    luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be a vec3", name));
  }
  lua_pop(L, 1);
  return v;
}

// options.name as finite degrees, returned in radians (default when absent).
double AngleOption(lua_State* L, int arg, const char* name, double fallback_degrees) {
  lua_getfield(L, arg, name);
  double degrees = fallback_degrees;
  if (!lua_isnil(L, -1)) {
    int ok = 0;
    degrees = lua_tonumberx(L, -1, &ok);
    if (!ok || !std::isfinite(degrees)) {
      luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be a finite number", name));
    }
  }
  lua_pop(L, 1);
  return degrees * kRadPerDeg;
}

// The angles of `foot` that may change per frame, from the options at `arg` (absent ones kept).
void ReadAngles(lua_State* L, int arg, constraints::FootRoll* foot) {
  foot->roll = AngleOption(L, arg, "roll", foot->roll * kDegPerRad);
  foot->break_angle = AngleOption(L, arg, "break", foot->break_angle * kDegPerRad);
  foot->bank = AngleOption(L, arg, "bank", foot->bank * kDegPerRad);
  foot->toe_tap = AngleOption(L, arg, "toe_tap", foot->toe_tap * kDegPerRad);
}

// A whole foot from the options at `arg` (their names checked by the caller).
constraints::FootRoll ReadFoot(lua_State* L, int arg) {
  constraints::FootRoll foot;
  foot.heel = VecOption(L, arg, "heel", foot.heel);
  foot.ball = VecOption(L, arg, "ball", foot.ball);
  foot.toe = VecOption(L, arg, "toe", foot.toe);
  foot.inner = VecOption(L, arg, "inner", foot.inner);
  foot.outer = VecOption(L, arg, "outer", foot.outer);
  foot.side = VecOption(L, arg, "side", foot.side);
  foot.forward = VecOption(L, arg, "forward", foot.forward);
  ReadAngles(L, arg, &foot);
  return foot;
}

#define RIGEL_FOOT_KEYS \
  "heel", "ball", "toe", "inner", "outer", "side", "forward", "roll", "break", "bank", "toe_tap"

int w_foot_roll(lua_State* L) {
  const Eigen::Vector3d position = CheckVec3(L, 1);
  const Eigen::Quaterniond rotation = CheckQuat(L, 2);
  CheckTable(L, 3);
  CheckMaxArgs(L, 3);
  static const char* const kKeys[] = {RIGEL_FOOT_KEYS, nullptr};
  CheckOptionKeys(L, 3, kKeys);
  const constraints::FootRoll foot = ReadFoot(L, 3);
  std::string error;
  if (!foot.Validate(&error)) return luaL_error(L, "%s", error.c_str());
  Eigen::Isometry3d planted = Eigen::Isometry3d::Identity();
  planted.linear() = rotation.toRotationMatrix();
  planted.translation() = position;
  const constraints::FootRollResult r = constraints::SolveFootRoll(foot, planted);
  PushVec3(L, r.ankle.translation());
  PushQuat(L, Eigen::Quaterniond(r.ankle.linear()));
  lua_pushnumber(L, r.toe_angle * kDegPerRad);
  return 3;
}

}  // namespace

int w_Rig_foot_roll(lua_State* L) {
  // rig:foot_roll(effector, options) -> handle (1-based). The effector must be a pose effector
  // ("both"): its target is the planted ankle. options: the foot's (above) and toe_joint.
  RigBox* box = CheckRig(L, 1);
  RigState& state = *box->state;
  const int e = CheckEffector(L, 2, state);
  CheckTable(L, 3);
  CheckMaxArgs(L, 3);
  // A bake holds the rig's foot rolls: none may be added under it.
  CheckUnlocked(L, box->state.get(), "rig:foot_roll", "rig");
  static const char* const kKeys[] = {RIGEL_FOOT_KEYS, "toe_joint", nullptr};
  CheckOptionKeys(L, 3, kKeys);
  const Skeleton& s = state.rig.skeleton();
  if (state.rig.tasks[e].type != ik::TaskType::kPose) {
    luaL_argerror(L, 2,
                  "a foot roll drives a pose effector (type = \"both\"): its target is the "
                  "planted ankle's position and rotation");
  }
  for (const constraints::FootRollRig& f : state.foot_rolls) {
    if (f.task == e) luaL_argerror(L, 2, "this effector already has a foot roll");
  }
  constraints::FootRollRig roll;
  roll.task = e;
  roll.ankle = state.rig.tasks[e].joint;
  lua_getfield(L, 3, "toe_joint");
  if (!lua_isnil(L, -1)) roll.toe = CheckJoint(L, lua_gettop(L), s);
  lua_pop(L, 1);
  roll.foot = ReadFoot(L, 3);
  std::string error;
  if (!roll.Validate(s, &error)) return luaL_error(L, "%s", error.c_str());
  state.foot_rolls.push_back(roll);
  lua_pushinteger(L, static_cast<lua_Integer>(state.foot_rolls.size()));
  return 1;
}

int w_Rig_set_foot_roll(lua_State* L) {
  // rig:set_foot_roll(handle, {roll =, bank =, toe_tap =, break =}) -> rig: this frame's values
  // (degrees; absent ones keep theirs).
  RigBox* box = CheckRig(L, 1);
  RigState& state = *box->state;
  const int n = static_cast<int>(state.foot_rolls.size());
  if (n == 0) luaL_argerror(L, 2, "the rig has no foot roll");
  const int h = static_cast<int>(CheckIntegerIn(L, 2, 1, n, "foot roll")) - 1;
  CheckTable(L, 3);
  CheckMaxArgs(L, 3);
  static const char* const kKeys[] = {"roll", "break", "bank", "toe_tap", nullptr};
  CheckOptionKeys(L, 3, kKeys);
  constraints::FootRoll foot = state.foot_rolls[h].foot;
  ReadAngles(L, 3, &foot);
  std::string error;
  if (!foot.Validate(&error)) return luaL_error(L, "%s", error.c_str());
  state.foot_rolls[h].foot = foot;
  lua_settop(L, 1);
  return 1;
}

void OpenFootRoll(lua_State* L) {
  lua_pushcfunction(L, w_foot_roll);
  lua_setfield(L, -2, "foot_roll");
}

}  // namespace rigel::lua
