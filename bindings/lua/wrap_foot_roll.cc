// rigel.foot_roll(ankle_position, ankle_rotation, options) -> position, rotation, toe_angle:
// the reverse-foot rig (core/constraints/foot_roll.h) as a function a bake callback calls to turn
// a planted foot and one roll value into a leg effector's goal and the toe joint's angle.
// Options (pivots and axes in the ankle's frame, angles in degrees): heel, ball, toe, inner,
// outer (vec3), side (default x), forward (default z), roll, break (default 30), bank, toe_tap.
#include <string>

#include "bindings/lua/fields.h"
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

int w_foot_roll(lua_State* L) {
  const Eigen::Vector3d position = CheckVec3(L, 1);
  const Eigen::Quaterniond rotation = CheckQuat(L, 2);
  CheckTable(L, 3);
  CheckMaxArgs(L, 3);
  static const char* const kKeys[] = {"heel",    "ball", "toe",   "inner", "outer",   "side",
                                      "forward", "roll", "break", "bank",  "toe_tap", nullptr};
  CheckOptionKeys(L, 3, kKeys);
  constraints::FootRoll foot;
  foot.heel = VecOption(L, 3, "heel", foot.heel);
  foot.ball = VecOption(L, 3, "ball", foot.ball);
  foot.toe = VecOption(L, 3, "toe", foot.toe);
  foot.inner = VecOption(L, 3, "inner", foot.inner);
  foot.outer = VecOption(L, 3, "outer", foot.outer);
  foot.side = VecOption(L, 3, "side", foot.side);
  foot.forward = VecOption(L, 3, "forward", foot.forward);
  foot.roll = AngleOption(L, 3, "roll", 0);
  foot.break_angle = AngleOption(L, 3, "break", 30);
  foot.bank = AngleOption(L, 3, "bank", 0);
  foot.toe_tap = AngleOption(L, 3, "toe_tap", 0);
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

void OpenFootRoll(lua_State* L) {
  lua_pushcfunction(L, w_foot_roll);
  lua_setfield(L, -2, "foot_roll");
}

}  // namespace rigel::lua
