// The readers of options tables. See fields.h.
#include "bindings/lua/fields.h"

#include <cmath>

#include "bindings/lua/runtime.h"

namespace rigel::lua {

// Raises unless every key of the options table at `arg` is in `allowed`.
void CheckOptionKeys(lua_State* L, int arg, const char* const* allowed) {
  lua_pushnil(L);
  while (lua_next(L, arg) != 0) {
    lua_pop(L, 1);
    const bool known =
        lua_type(L, -1) == LUA_TSTRING && FindOption(lua_tostring(L, -1), allowed) >= 0;
    if (!known) {
      // The key stays on the stack, so its text outlives the buffer below (which pushes).
      const char* key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
      const char* key_type = luaL_typename(L, -1);
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      if (key != nullptr) {
        lua_pushfstring(L, "unknown option '%s' (expected one of: ", key);
      } else {
        lua_pushfstring(L, "option keys must be strings, got %s (expected one of: ", key_type);
      }
      luaL_addvalue(&b);
      for (int i = 0; allowed[i] != nullptr; ++i) {
        if (i > 0) luaL_addstring(&b, ", ");
        luaL_addstring(&b, allowed[i]);
      }
      luaL_addstring(&b, ")");
      luaL_pushresult(&b);
      luaL_argerror(L, arg, lua_tostring(L, -1));
    }
  }
}

// Field readers for an options table at `arg`: each pushes the field, checks it, pops it, and
// raises "bad argument #arg to 'fn' (field 'name': X expected, got Y)".
int OptionsArg(lua_State* L, int arg, const char* const* allowed) {
  if (lua_isnoneornil(L, arg)) return 0;
  CheckTable(L, arg);
  CheckOptionKeys(L, arg, allowed);
  return arg;
}

bool HasField(lua_State* L, int arg, const char* field) {
  if (arg == 0) return false;
  const bool has = lua_getfield(L, arg, field) != LUA_TNIL;
  lua_pop(L, 1);
  return has;
}

[[noreturn]] void FieldError(lua_State* L, int arg, const char* field, const char* expected) {
  lua_getfield(L, arg, field);
  luaL_argerror(
      L, arg,
      lua_pushfstring(L, "field '%s': %s expected, got %s", field, expected, TypeName(L, -1)));
  std::abort();
}

int CheckListLength(lua_State* L, int arg, int list, const char* field, int slots_per_entry) {
  const lua_Integer n = luaL_len(L, list);
  if (n < 0 || n > kMaxListLength) {
    luaL_argerror(
        L, arg,
        lua_pushfstring(L, "field '%s' has %I entries (at most %d)", field, n, kMaxListLength));
  }
  luaL_checkstack(L, static_cast<int>(n) * slots_per_entry + LUA_MINSTACK, "list too long");
  return static_cast<int>(n);
}

double NumberField(lua_State* L, int arg, const char* field, double fallback) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  if (lua_type(L, -1) != LUA_TNUMBER || !std::isfinite(lua_tonumber(L, -1))) {
    FieldError(L, arg, field, "finite number");
  }
  const double v = static_cast<double>(lua_tonumber(L, -1));
  lua_pop(L, 1);
  return v;
}

int IntegerField(lua_State* L, int arg, const char* field, int fallback, int lo, int hi) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  int is_integer = 0;
  const lua_Integer v = lua_tointegerx(L, -1, &is_integer);
  if (!is_integer || v < lo || v > hi) {
    lua_pop(L, 1);
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "field '%s': integer in [%d, %d] expected", field, lo, hi));
  }
  lua_pop(L, 1);
  return static_cast<int>(v);
}

bool BoolField(lua_State* L, int arg, const char* field, bool fallback) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  if (lua_type(L, -1) != LUA_TBOOLEAN) FieldError(L, arg, field, "boolean");
  const bool v = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return v;
}

int OptionField(lua_State* L, int arg, const char* field, const char* const* options,
                int fallback) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, arg, field, "string");
  const char* given = lua_tostring(L, -1);
  if (const int i = FindOption(given, options); i >= 0) {
    lua_pop(L, 1);
    return i;
  }
  OptionError(L, arg, lua_pushfstring(L, "field '%s': invalid value '%s', ", field, given),
              options);
}

Eigen::Vector3d Vec3Field(lua_State* L, int arg, const char* field,
                          const Eigen::Vector3d& fallback) {
  if (!HasField(L, arg, field)) return fallback;
  lua_getfield(L, arg, field);
  Eigen::Vector3d v;
  if (!ToVec3(L, -1, &v)) FieldError(L, arg, field, "vec3");
  lua_pop(L, 1);
  return v;
}

Eigen::Vector3d UnitField(lua_State* L, int arg, const char* field,
                          const Eigen::Vector3d& fallback) {
  const Eigen::Vector3d v = Vec3Field(L, arg, field, fallback);
  if (v.norm() < 1e-12) {
    luaL_argerror(L, arg, lua_pushfstring(L, "field '%s' must not be zero", field));
  }
  return v.normalized();
}

Eigen::Quaterniond QuatField(lua_State* L, int arg, const char* field) {
  lua_getfield(L, arg, field);
  const Eigen::Quaterniond q = CheckQuat(L, lua_gettop(L));
  lua_pop(L, 1);
  return q;
}

int JointField(lua_State* L, int arg, const char* field, const Skeleton& skeleton) {
  if (!HasField(L, arg, field)) return -1;
  lua_getfield(L, arg, field);
  const int top = lua_gettop(L);
  if (lua_type(L, top) != LUA_TSTRING && lua_type(L, top) != LUA_TNUMBER) {
    FieldError(L, arg, field, "joint name or index");
  }
  const int j = CheckJoint(L, top, skeleton);
  lua_pop(L, 1);
  return j;
}

std::uint8_t AxesField(lua_State* L, int arg, std::uint8_t fallback) {
  if (!HasField(L, arg, "axes")) return fallback;
  lua_getfield(L, arg, "axes");
  if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, arg, "axes", "string of x, y, z");
  std::uint8_t axes = 0;
  for (const char* c = lua_tostring(L, -1); *c != '\0'; ++c) {
    const char lower = static_cast<char>(*c | 0x20);
    if (lower < 'x' || lower > 'z') {
      luaL_argerror(L, arg, "field 'axes': letters x, y, z expected (e.g. \"xz\")");
    }
    axes = static_cast<std::uint8_t>(axes | (1 << (lower - 'x')));
  }
  lua_pop(L, 1);
  if (axes == 0) luaL_argerror(L, arg, "field 'axes' names no axis");
  return axes;
}

}  // namespace rigel::lua
