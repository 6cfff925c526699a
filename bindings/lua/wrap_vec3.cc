// rigel.vec3: a 3-vector value (positions, directions) with arithmetic operators.
//   local v = rigel.vec3(1, 2, 3)     rigel.vec3{1, 2, 3}     rigel.vec3{x = 1, y = 2, z = 3}
//   v + w, v - w, v * 2, 2 * v, v / 2, -v, v == w, v.x, v.x = 5, tostring(v)
#include <cmath>

#include "bindings/lua/runtime.h"

namespace rigel::lua {

namespace {

Vec3Box* CheckVec3Box(lua_State* L, int arg) {
  return static_cast<Vec3Box*>(CheckBox(L, arg, kVec3Type));
}

int w_vec3_new(lua_State* L) {
  // rigel.vec3(x, y, z) | rigel.vec3(table) | rigel.vec3(vec3) | rigel.vec3() = zero
  if (lua_gettop(L) <= 1) {
    Eigen::Vector3d v = Eigen::Vector3d::Zero();
    if (lua_gettop(L) == 1) v = CheckVec3(L, 1);
    PushVec3(L, v);
    return 1;
  }
  CheckMaxArgs(L, 3);
  PushVec3(L, CheckXyz(L, 1));
  return 1;
}

int w_vec3_length(lua_State* L) {
  lua_pushnumber(L, CheckVec3Box(L, 1)->v.norm());
  return 1;
}

int w_vec3_normalized(lua_State* L) {
  const Eigen::Vector3d v = CheckVec3Box(L, 1)->v;
  const double n = v.norm();
  if (n < 1e-300) return luaL_error(L, "cannot normalize a zero-length vec3");
  PushVec3(L, v / n);
  return 1;
}

int w_vec3_dot(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3Box(L, 1)->v;
  const Eigen::Vector3d b = CheckVec3(L, 2);
  lua_pushnumber(L, a.dot(b));
  return 1;
}

int w_vec3_cross(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3Box(L, 1)->v;
  const Eigen::Vector3d b = CheckVec3(L, 2);
  PushVec3(L, a.cross(b));
  return 1;
}

int w_vec3_distance(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3Box(L, 1)->v;
  const Eigen::Vector3d b = CheckVec3(L, 2);
  lua_pushnumber(L, (a - b).norm());
  return 1;
}

int w_vec3_lerp(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3Box(L, 1)->v;
  const Eigen::Vector3d b = CheckVec3(L, 2);
  const double t = CheckFinite(L, 3);
  PushVec3(L, a + (b - a) * t);
  return 1;
}

int w_vec3_copy(lua_State* L) {
  PushVec3(L, CheckVec3Box(L, 1)->v);
  return 1;
}

int w_vec3_unpack(lua_State* L) {
  const Eigen::Vector3d v = CheckVec3Box(L, 1)->v;
  for (int i = 0; i < 3; ++i) lua_pushnumber(L, v[i]);
  return 3;
}

int w_vec3_table(lua_State* L) {
  const Eigen::Vector3d v = CheckVec3Box(L, 1)->v;
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; ++i) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

// v.x, v.y, v.z: component I.
template <int I>
int w_vec3_get(lua_State* L) {
  lua_pushnumber(L, CheckVec3Box(L, 1)->v[I]);
  return 1;
}

int w_vec3_setfield(lua_State* L) {
  Vec3Box* box = CheckVec3Box(L, 1);
  static const char* const kFields[] = {"x", "y", "z", nullptr};
  const int axis = CheckOption(L, 2, "vec3 field", kFields);
  box->v[axis] = CheckFinite(L, 3);
  return 0;
}

int w_vec3_add(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3(L, 1);
  const Eigen::Vector3d b = CheckVec3(L, 2);
  PushVec3(L, a + b);
  return 1;
}

int w_vec3_sub(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3(L, 1);
  const Eigen::Vector3d b = CheckVec3(L, 2);
  PushVec3(L, a - b);
  return 1;
}

int w_vec3_mul(lua_State* L) {
  // vec3 * number, number * vec3, vec3 * vec3 (component-wise).
  if (lua_type(L, 1) == LUA_TNUMBER) {
    const double s = CheckFinite(L, 1);
    PushVec3(L, s * CheckVec3(L, 2));
    return 1;
  }
  const Eigen::Vector3d a = CheckVec3(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    PushVec3(L, a * CheckFinite(L, 2));
    return 1;
  }
  const Eigen::Vector3d b = CheckVec3(L, 2);
  PushVec3(L, a.cwiseProduct(b));
  return 1;
}

int w_vec3_div(lua_State* L) {
  const Eigen::Vector3d a = CheckVec3(L, 1);
  const double s = CheckFinite(L, 2);
  if (s == 0.0) luaL_argerror(L, 2, "division by zero");
  PushVec3(L, a / s);
  return 1;
}

int w_vec3_unm(lua_State* L) {
  PushVec3(L, -CheckVec3Box(L, 1)->v);
  return 1;
}

int w_vec3_eq(lua_State* L) {
  Vec3Box* a = static_cast<Vec3Box*>(TestBox(L, 1, kVec3Type));
  Vec3Box* b = static_cast<Vec3Box*>(TestBox(L, 2, kVec3Type));
  lua_pushboolean(L, a != nullptr && b != nullptr && a->v == b->v);
  return 1;
}

int w_vec3_tostring(lua_State* L) {
  const Eigen::Vector3d v = CheckVec3Box(L, 1)->v;
  lua_pushfstring(L, "vec3(%f, %f, %f)", v.x(), v.y(), v.z());
  // %f in lua_pushfstring prints LUAI_NUMFFORMAT ("%.14g"): compact and exact enough.
  return 1;
}

const luaL_Reg kVec3Methods[] = {{"length", w_vec3_length},     {"normalized", w_vec3_normalized},
                                 {"dot", w_vec3_dot},           {"cross", w_vec3_cross},
                                 {"distance", w_vec3_distance}, {"lerp", w_vec3_lerp},
                                 {"copy", w_vec3_copy},         {"unpack", w_vec3_unpack},
                                 {"table", w_vec3_table},       {nullptr, nullptr}};
const luaL_Reg kVec3Getters[] = {
    {"x", w_vec3_get<0>}, {"y", w_vec3_get<1>}, {"z", w_vec3_get<2>}, {nullptr, nullptr}};
const luaL_Reg kVec3Meta[] = {{"__add", w_vec3_add},           {"__sub", w_vec3_sub},
                              {"__mul", w_vec3_mul},           {"__div", w_vec3_div},
                              {"__unm", w_vec3_unm},           {"__eq", w_vec3_eq},
                              {"__tostring", w_vec3_tostring}, {nullptr, nullptr}};

}  // namespace

void PushVec3(lua_State* L, const Eigen::Vector3d& v) {
  PushBox<Vec3Box>(L, kVec3Type, Vec3Box{v});
}

bool ToVec3(lua_State* L, int idx, Eigen::Vector3d* out) {
  if (auto* box = static_cast<Vec3Box*>(TestBox(L, idx, kVec3Type))) {
    *out = box->v;
    return true;
  }
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  idx = lua_absindex(L, idx);
  Eigen::Vector3d v;
  static const char* const kXyz[] = {"x", "y", "z"};
  if (!TableNumbers(L, idx, kXyz, 3, v.data())) return false;
  *out = v;
  return true;
}

Eigen::Vector3d CheckXyz(lua_State* L, int arg) {
  Eigen::Vector3d v;
  for (int i = 0; i < 3; ++i) v[i] = CheckFinite(L, arg + i);
  return v;
}

Eigen::Vector3d CheckVec3(lua_State* L, int arg) {
  Eigen::Vector3d v;
  if (!ToVec3(L, arg, &v)) {
    if (lua_type(L, arg) == LUA_TTABLE) {
      luaL_argerror(L, arg, "vec3 expected, got a table without three finite numbers");
    }
    TypeError(L, arg, "vec3");
  }
  return v;
}

void OpenVec3(lua_State* L) {
  RegisterType(
      L, {kVec3Type, kVec3Methods, kVec3Getters, kVec3Meta, nullptr, nullptr, w_vec3_setfield});
  lua_pushcfunction(L, w_vec3_new);
  lua_setfield(L, -2, "vec3");
}

}  // namespace rigel::lua
