// rigel.quat: a unit quaternion (rotations). Angles at the Lua boundary are degrees.
//   rigel.quat(w, x, y, z)   rigel.quat.identity()   rigel.quat.euler("ZXY", x, y, z)
//   rigel.quat.axis_angle(axis, degrees)   rigel.quat.between(from_dir, to_dir)
//   q * r (compose), q * v (rotate a vec3), q:inverse(), q:slerp(r, t), q:euler("ZXY")
#include <cmath>

#include "bindings/lua/runtime.h"
#include "core/euler.h"

namespace rigel::lua {

namespace {

QuatBox* CheckQuatBox(lua_State* L, int arg) {
  return static_cast<QuatBox*>(CheckBox(L, arg, kQuatType));
}

const char* const kOrders[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", nullptr};

EulerOrder CheckOrder(lua_State* L, int arg) {
  return static_cast<EulerOrder>(CheckOption(L, arg, "rotation order", kOrders));
}

// The components in (w, x, y, z) order: their names and their slots in Eigen's (x, y, z, w)
// coeffs().
const char* const kWxyz[] = {"w", "x", "y", "z"};
constexpr int kWxyzSlot[] = {3, 0, 1, 2};

int w_quat_new(lua_State* L) {
  // rigel.quat(w, x, y, z) | rigel.quat(table) | rigel.quat() = identity
  if (lua_gettop(L) == 0) {
    PushQuat(L, Eigen::Quaterniond::Identity());
    return 1;
  }
  if (lua_gettop(L) == 1) {
    PushQuat(L, CheckQuat(L, 1));
    return 1;
  }
  CheckMaxArgs(L, 4);
  const double w = CheckFinite(L, 1);
  const Eigen::Vector3d xyz = CheckXyz(L, 2);
  Eigen::Quaterniond q(w, xyz.x(), xyz.y(), xyz.z());
  if (q.norm() < 1e-12) return luaL_error(L, "quat(w, x, y, z) must not be zero");
  PushQuat(L, q.normalized());
  return 1;
}

int w_quat_identity(lua_State* L) {
  CheckMaxArgs(L, 0);
  PushQuat(L, Eigen::Quaterniond::Identity());
  return 1;
}

int w_quat_euler(lua_State* L) {
  // rigel.quat.euler(order, x, y, z) in degrees; x is always the angle about X.
  const EulerOrder order = CheckOrder(L, 1);
  const Eigen::Vector3d xyz = CheckXyz(L, 2);
  CheckMaxArgs(L, 4);
  PushQuat(L, EulerToQuaternion(order, xyz * kRadPerDeg));
  return 1;
}

int w_quat_axis_angle(lua_State* L) {
  const Eigen::Vector3d axis = CheckVec3(L, 1);
  const double degrees = CheckFinite(L, 2);
  CheckMaxArgs(L, 2);
  if (axis.norm() < 1e-12) luaL_argerror(L, 1, "axis must not be zero");
  PushQuat(L, Eigen::Quaterniond(Eigen::AngleAxisd(degrees * kRadPerDeg, axis.normalized())));
  return 1;
}

int w_quat_between(lua_State* L) {
  const Eigen::Vector3d from = CheckVec3(L, 1);
  const Eigen::Vector3d to = CheckVec3(L, 2);
  CheckMaxArgs(L, 2);
  if (from.norm() < 1e-12) luaL_argerror(L, 1, "direction must not be zero");
  if (to.norm() < 1e-12) luaL_argerror(L, 2, "direction must not be zero");
  PushQuat(L, Eigen::Quaterniond::FromTwoVectors(from, to));
  return 1;
}

int w_quat_inverse(lua_State* L) {
  PushQuat(L, CheckQuatBox(L, 1)->q.conjugate());
  return 1;
}

int w_quat_normalized(lua_State* L) {
  PushQuat(L, CheckQuatBox(L, 1)->q.normalized());
  return 1;
}

int w_quat_slerp(lua_State* L) {
  const Eigen::Quaterniond a = CheckQuatBox(L, 1)->q;
  const Eigen::Quaterniond b = CheckQuat(L, 2);
  const double t = CheckFinite(L, 3);
  PushQuat(L, a.slerp(t, b));
  return 1;
}

int w_quat_angle_to(lua_State* L) {
  const Eigen::Quaterniond a = CheckQuatBox(L, 1)->q;
  const Eigen::Quaterniond b = CheckQuat(L, 2);
  lua_pushnumber(L, a.angularDistance(b) * kDegPerRad);
  return 1;
}

int w_quat_euler_angles(lua_State* L) {
  // q:euler(order) -> x, y, z in degrees.
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  const EulerOrder order = luaL_opt(L, CheckOrder, 2, EulerOrder::kXYZ);
  const Eigen::Vector3d xyz = MatrixToEuler(q.toRotationMatrix(), order) * kDegPerRad;
  lua_pushnumber(L, xyz.x());
  lua_pushnumber(L, xyz.y());
  lua_pushnumber(L, xyz.z());
  return 3;
}

int w_quat_axis_angle_of(lua_State* L) {
  // q:axis_angle() -> vec3 axis, degrees.
  const Eigen::AngleAxisd aa(CheckQuatBox(L, 1)->q);
  PushVec3(L, aa.axis());
  lua_pushnumber(L, aa.angle() * kDegPerRad);
  return 2;
}

int w_quat_rotate(lua_State* L) {
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  const Eigen::Vector3d v = CheckVec3(L, 2);
  PushVec3(L, q * v);
  return 1;
}

int w_quat_unpack(lua_State* L) {
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  for (int slot : kWxyzSlot) lua_pushnumber(L, q.coeffs()[slot]);
  return 4;
}

int w_quat_table(lua_State* L) {
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  lua_createtable(L, 0, 4);
  for (int i = 0; i < 4; ++i) {
    lua_pushnumber(L, q.coeffs()[kWxyzSlot[i]]);
    lua_setfield(L, -2, kWxyz[i]);
  }
  return 1;
}

// q.w, q.x, q.y, q.z: component I in (w, x, y, z) order.
template <int I>
int w_quat_get(lua_State* L) {
  lua_pushnumber(L, CheckQuatBox(L, 1)->q.coeffs()[kWxyzSlot[I]]);
  return 1;
}

int w_quat_mul(lua_State* L) {
  // quat * quat -> quat; quat * vec3 -> rotated vec3.
  const Eigen::Quaterniond a = CheckQuatBox(L, 1)->q;
  if (TestBox(L, 2, kQuatType) != nullptr) {
    PushQuat(L, (a * CheckQuatBox(L, 2)->q).normalized());
    return 1;
  }
  Eigen::Vector3d v;
  if (ToVec3(L, 2, &v)) {
    PushVec3(L, a * v);
    return 1;
  }
  TypeError(L, 2, "quat or vec3");
}

int w_quat_eq(lua_State* L) {
  QuatBox* a = static_cast<QuatBox*>(TestBox(L, 1, kQuatType));
  QuatBox* b = static_cast<QuatBox*>(TestBox(L, 2, kQuatType));
  lua_pushboolean(L, a != nullptr && b != nullptr && a->q.coeffs() == b->q.coeffs());
  return 1;
}

int w_quat_unm(lua_State* L) {
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  PushQuat(L, Eigen::Quaterniond(-q.coeffs()));
  return 1;
}

int w_quat_tostring(lua_State* L) {
  const Eigen::Quaterniond q = CheckQuatBox(L, 1)->q;
  lua_pushfstring(L, "quat(%f, %f, %f, %f)", q.w(), q.x(), q.y(), q.z());
  return 1;
}

const luaL_Reg kQuatMethods[] = {
    {"inverse", w_quat_inverse},    {"normalized", w_quat_normalized},
    {"slerp", w_quat_slerp},        {"angle_to", w_quat_angle_to},
    {"euler", w_quat_euler_angles}, {"axis_angle", w_quat_axis_angle_of},
    {"rotate", w_quat_rotate},      {"unpack", w_quat_unpack},
    {"table", w_quat_table},        {nullptr, nullptr}};
const luaL_Reg kQuatGetters[] = {{"w", w_quat_get<0>},
                                 {"x", w_quat_get<1>},
                                 {"y", w_quat_get<2>},
                                 {"z", w_quat_get<3>},
                                 {nullptr, nullptr}};
const luaL_Reg kQuatMeta[] = {{"__mul", w_quat_mul},
                              {"__eq", w_quat_eq},
                              {"__unm", w_quat_unm},
                              {"__tostring", w_quat_tostring},
                              {nullptr, nullptr}};

// rigel.quat is a callable table: rigel.quat(w, x, y, z) and rigel.quat.euler(...).
int w_quat_call(lua_State* L) {
  lua_remove(L, 1);  // the rigel.quat table itself
  return w_quat_new(L);
}

}  // namespace

void PushQuat(lua_State* L, const Eigen::Quaterniond& q) {
  PushBox<QuatBox>(L, kQuatType, QuatBox{q});
}

Eigen::Quaterniond CheckQuat(lua_State* L, int arg) {
  if (auto* box = static_cast<QuatBox*>(TestBox(L, arg, kQuatType))) return box->q;
  if (lua_type(L, arg) != LUA_TTABLE) TypeError(L, arg, "quat");
  const int idx = lua_absindex(L, arg);
  double wxyz[4] = {0, 0, 0, 0};
  if (!TableNumbers(L, idx, kWxyz, 4, wxyz)) {
    luaL_argerror(L, arg, "quat expected, got a table without four finite numbers (w, x, y, z)");
  }
  Eigen::Quaterniond q(wxyz[0], wxyz[1], wxyz[2], wxyz[3]);
  if (q.norm() < 1e-12) luaL_argerror(L, arg, "quat must not be zero");
  return q.normalized();
}

void OpenQuat(lua_State* L) {
  RegisterType(L, {kQuatType, kQuatMethods, kQuatGetters, kQuatMeta, nullptr, nullptr, nullptr});
  static const luaL_Reg kQuatFunctions[] = {{"identity", w_quat_identity},
                                            {"euler", w_quat_euler},
                                            {"axis_angle", w_quat_axis_angle},
                                            {"between", w_quat_between},
                                            {nullptr, nullptr}};
  luaL_newlib(L, kQuatFunctions);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, w_quat_call);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "quat");
}

}  // namespace rigel::lua
