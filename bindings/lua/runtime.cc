// Shared glue for the `rigel` Lua module. See runtime.h.
#include "bindings/lua/runtime.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/channel.h"
#include "core/skeleton.h"

namespace rigel::lua {

namespace {

// __index(obj, key): methods (upvalue 1), then getters (upvalue 2: name -> light userdata of
// the luaL_Reg, called directly with obj alone on the stack), else an error.
int IndexDispatch(lua_State* L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING && lua_type(L, lua_upvalueindex(2)) == LUA_TTABLE) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(2)) == LUA_TLIGHTUSERDATA) {
      const auto* getter = static_cast<const luaL_Reg*>(lua_touserdata(L, -1));
      lua_settop(L, 1);
      return getter->func(L);
    }
    lua_pop(L, 1);
  }
  if (lua_type(L, 2) == LUA_TSTRING) {
    return luaL_error(L, "%s has no field '%s'", TypeName(L, 1), lua_tostring(L, 2));
  }
  return luaL_error(L, "%s has no field of type %s", TypeName(L, 1), luaL_typename(L, 2));
}

// __newindex for read-only types.
int ReadOnly(lua_State* L) {
  return luaL_error(L, "%s is read-only (cannot set field '%s')", TypeName(L, 1),
                    lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

// Default __tostring: "Clip: 0x...".
int DefaultToString(lua_State* L) {
  lua_pushfstring(L, "%s: %p", TypeName(L, 1), lua_topointer(L, 1));
  return 1;
}

int Lower(int c) { return std::tolower(static_cast<unsigned char>(c)); }

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Per-state cache of the metatables (registry refs and addresses), reached through the state's
// extra space, so type checks and pushes avoid string lookups in the registry. Allocated as a
// userdata anchored in the registry; coroutines created later inherit the pointer.
struct TypeCache {
  static constexpr int kMax = 16;
  const char* names[kMax] = {};
  const void* metatables[kMax] = {};
  int refs[kMax] = {};
  int count = 0;
  // Joint-name lookups (CheckJoint), direct-mapped by the Lua string's address. A hit is only
  // trusted after comparing the joint's name with the string (names are unique in a skeleton),
  // so a reused address or a freed skeleton cannot give a wrong joint.
  struct JointHit {
    const char* text = nullptr;
    const Skeleton* skeleton = nullptr;
    int joint = -1;
  };
  static constexpr int kJointSlots = 64;
  JointHit joints[kJointSlots];
  // Objects locked by PushLock (nested bakes add entries; each guard removes its own).
  struct Lock {
    const void* object = nullptr;
    const char* activity = nullptr;
  };
  static constexpr int kMaxLocks = 64;
  Lock locks[kMaxLocks];
  int num_locks = 0;
};

TypeCache* GetCache(lua_State* L) { return *static_cast<TypeCache**>(lua_getextraspace(L)); }

int CacheIndex(const TypeCache* cache, const char* type) {
  for (int i = 0; cache != nullptr && i < cache->count; ++i) {
    if (cache->names[i] == type) return i;
  }
  return -1;
}

TypeCache* EnsureCache(lua_State* L);

void CacheMetatable(lua_State* L, const char* type) {
  TypeCache* cache = EnsureCache(L);
  if (CacheIndex(cache, type) >= 0 || cache->count == TypeCache::kMax) return;
  luaL_getmetatable(L, type);
  cache->names[cache->count] = type;
  cache->metatables[cache->count] = lua_topointer(L, -1);
  cache->refs[cache->count] = luaL_ref(L, LUA_REGISTRYINDEX);
  ++cache->count;
}

TypeCache* EnsureCache(lua_State* L) {
  TypeCache* cache = GetCache(L);
  if (cache == nullptr) {
    cache = static_cast<TypeCache*>(lua_newuserdatauv(L, sizeof(TypeCache), 0));
    new (cache) TypeCache();
    lua_setfield(L, LUA_REGISTRYINDEX, "rigel.typecache");  // anchor
    *static_cast<TypeCache**>(lua_getextraspace(L)) = cache;
  }
  return cache;
}

// The lock guard: a userdata holding the locked object's address; __close unlocks it.
constexpr const char* kLockGuardType = "rigel.LockGuard";

int CloseLockGuard(lua_State* L) {
  const void* const* object = static_cast<const void* const*>(lua_touserdata(L, 1));
  TypeCache* cache = GetCache(L);
  if (object == nullptr || *object == nullptr || cache == nullptr) return 0;
  for (int i = cache->num_locks - 1; i >= 0; --i) {
    if (cache->locks[i].object == *object) {
      for (int k = i + 1; k < cache->num_locks; ++k) cache->locks[k - 1] = cache->locks[k];
      --cache->num_locks;
      break;
    }
  }
  *const_cast<const void**>(object) = nullptr;  // closed once
  return 0;
}

}  // namespace

void PushLock(lua_State* L, const void* object, const char* activity) {
  TypeCache* cache = EnsureCache(L);
  if (cache->num_locks == TypeCache::kMaxLocks) {
    luaL_error(L, "too many nested bakes or retargets (at most %d objects locked)",
               TypeCache::kMaxLocks);
  }
  auto* guard = static_cast<const void**>(lua_newuserdatauv(L, sizeof(void*), 0));
  *guard = nullptr;
  if (luaL_newmetatable(L, kLockGuardType)) {
    lua_pushcfunction(L, CloseLockGuard);
    lua_setfield(L, -2, "__close");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);  // may raise (stack overflow) before anything is locked
  *guard = object;
  cache->locks[cache->num_locks++] = {object, activity};
}

void CheckUnlocked(lua_State* L, const void* object, const char* call, const char* what) {
  const TypeCache* cache = GetCache(L);
  if (cache == nullptr || object == nullptr) return;
  for (int i = cache->num_locks - 1; i >= 0; --i) {
    if (cache->locks[i].object == object) {
      luaL_error(L, "%s: %s is being %s", call, what, cache->locks[i].activity);
    }
  }
}

void AttachTypeCache(lua_State* L) {
  // The extra space is uninitialised in states made by a plain lua_newstate: trust only the
  // registry anchor.
  lua_getfield(L, LUA_REGISTRYINDEX, "rigel.typecache");
  *static_cast<void**>(lua_getextraspace(L)) = lua_touserdata(L, -1);  // nullptr when absent
  lua_pop(L, 1);
}

void SetTypeMetatable(lua_State* L, const char* type) {
  const TypeCache* cache = GetCache(L);
  const int i = CacheIndex(cache, type);
  if (i >= 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, cache->refs[i]);
    lua_setmetatable(L, -2);
  } else {
    luaL_setmetatable(L, type);
  }
}

void RegisterType(lua_State* L, const TypeSpec& spec) {
  luaL_newmetatable(L, spec.name);  // sets __name
  // __index closure over (methods, getters).
  lua_newtable(L);
  luaL_setfuncs(L, spec.methods, 0);
  if (spec.close != nullptr) {  // obj:release() is __close
    lua_pushcfunction(L, spec.close);
    lua_setfield(L, -2, "release");
  }
  if (spec.getters != nullptr) {
    lua_newtable(L);
    for (const luaL_Reg* reg = spec.getters; reg->name != nullptr; ++reg) {
      lua_pushlightuserdata(L, const_cast<luaL_Reg*>(reg));
      lua_setfield(L, -2, reg->name);
    }
  } else {
    lua_pushnil(L);
  }
  lua_pushcclosure(L, IndexDispatch, 2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, spec.setter != nullptr ? spec.setter : ReadOnly);
  lua_setfield(L, -2, "__newindex");
  if (spec.gc != nullptr) {
    lua_pushcfunction(L, spec.gc);
    lua_setfield(L, -2, "__gc");
  }
  if (spec.close != nullptr) {
    lua_pushcfunction(L, spec.close);
    lua_setfield(L, -2, "__close");
  }
  // __members = {methods = {names}, fields = {names}} for rigel.members().
  lua_createtable(L, 0, 2);
  for (int pass = 0; pass < 2; ++pass) {
    const luaL_Reg* regs = pass == 0 ? spec.methods : spec.getters;
    lua_newtable(L);
    int i = 0;
    for (; regs != nullptr && regs[i].name != nullptr; ++i) {
      lua_pushstring(L, regs[i].name);
      lua_rawseti(L, -2, i + 1);
    }
    if (pass == 0 && spec.close != nullptr) {
      lua_pushliteral(L, "release");
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, pass == 0 ? "methods" : "fields");
  }
  lua_setfield(L, -2, "__members");
  lua_pushcfunction(L, DefaultToString);
  lua_setfield(L, -2, "__tostring");
  if (spec.metamethods != nullptr) luaL_setfuncs(L, spec.metamethods, 0);
  lua_pushliteral(L, "locked");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
  CacheMetatable(L, spec.name);
}

const char* TypeName(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TUSERDATA && lua_getmetatable(L, idx)) {
    // Read __name raw from the metatable (__metatable hides it from getmetatable in Lua only).
    lua_pushliteral(L, "__name");
    lua_rawget(L, -2);
    const char* name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    lua_pop(L, 2);  // the string stays alive: it is referenced by the metatable
    if (name != nullptr) {
      if (std::strncmp(name, "rigel.", 6) == 0) name += 6;
      return name;
    }
  }
  return luaL_typename(L, idx);
}

void TypeError(lua_State* L, int arg, const char* expected) {
  const char* message = lua_pushfstring(L, "%s expected, got %s", expected, TypeName(L, arg));
  luaL_argerror(L, arg, message);
  std::abort();  // unreachable: luaL_argerror does not return
}

void* TestBox(lua_State* L, int idx, const char* type) {
  void* p = lua_touserdata(L, idx);
  if (p == nullptr || lua_islightuserdata(L, idx)) return nullptr;
  const TypeCache* cache = GetCache(L);
  const int i = CacheIndex(cache, type);
  if (i < 0) return luaL_testudata(L, idx, type);
  if (!lua_getmetatable(L, idx)) return nullptr;
  const bool same = lua_topointer(L, -1) == cache->metatables[i];
  lua_pop(L, 1);
  return same ? p : nullptr;
}

void* CheckBox(lua_State* L, int arg, const char* type) {
  void* box = TestBox(L, arg, type);
  if (box == nullptr) TypeError(L, arg, type + 6);
  return box;
}

lua_Integer CheckIntegerIn(lua_State* L, int arg, lua_Integer lo, lua_Integer hi,
                           const char* what) {
  int is_integer = 0;
  const lua_Integer value = lua_tointegerx(L, arg, &is_integer);
  if (!is_integer) {
    if (lua_type(L, arg) == LUA_TNUMBER) {
      luaL_argerror(L, arg, lua_pushfstring(L, "%s must be an integer", what));
    }
    TypeError(L, arg, "integer");
  }
  if (value < lo || value > hi) {
    luaL_argerror(L, arg, lua_pushfstring(L, "%s %I out of range [%I, %I]", what, value, lo, hi));
  }
  return value;
}

double CheckFinite(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TNUMBER) TypeError(L, arg, "number");
  const double value = static_cast<double>(lua_tonumber(L, arg));
  if (!std::isfinite(value)) luaL_argerror(L, arg, "number is not finite");
  return value;
}

bool CheckBoolean(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TBOOLEAN) TypeError(L, arg, "boolean");
  return lua_toboolean(L, arg) != 0;
}

void CheckFunction(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TFUNCTION) TypeError(L, arg, "function");
}

void CheckTable(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TTABLE) TypeError(L, arg, "table");
}

void CheckMaxArgs(lua_State* L, int max) {
  const int n = lua_gettop(L);
  if (n > max) {
    lua_Debug ar;
    const char* name = "?";
    if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name != nullptr) name = ar.name;
    luaL_error(L, "wrong number of arguments to '%s' (expected at most %d, got %d)", name, max, n);
  }
}

int FindOption(const char* given, const char* const* options) {
  for (int i = 0; options[i] != nullptr; ++i) {
    if (std::strcmp(options[i], given) == 0) return i;
  }
  return -1;
}

int CheckOption(lua_State* L, int arg, const char* what, const char* const* options) {
  if (lua_type(L, arg) != LUA_TSTRING) TypeError(L, arg, "string");
  const char* given = lua_tostring(L, arg);
  if (const int i = FindOption(given, options); i >= 0) return i;
  OptionError(L, arg, lua_pushfstring(L, "invalid %s '%s', ", what, given), options);
}

void OptionError(lua_State* L, int arg, const char* prefix, const char* const* options) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, prefix);
  luaL_addstring(&b, "expected one of: ");
  for (int i = 0; options[i] != nullptr; ++i) {
    if (i > 0) luaL_addstring(&b, ", ");
    luaL_addstring(&b, options[i]);
  }
  luaL_pushresult(&b);
  luaL_argerror(L, arg, lua_tostring(L, -1));
  std::abort();  // unreachable: luaL_argerror does not return
}

bool TableNumbers(lua_State* L, int idx, const char* const* keys, int count, double* out) {
  for (int i = 0; i < count; ++i) {
    lua_getfield(L, idx, keys[i]);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_rawgeti(L, idx, i + 1);
    }
    const bool ok = lua_type(L, -1) == LUA_TNUMBER && std::isfinite(lua_tonumber(L, -1));
    if (ok) out[i] = static_cast<double>(lua_tonumber(L, -1));
    lua_pop(L, 1);
    if (!ok) return false;
  }
  return true;
}

std::string ClosestNames(std::string_view wanted, std::span<const std::string> names, int count) {
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, index)
  scored.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) scored.emplace_back(EditDistance(wanted, names[i]), i);
  std::stable_sort(scored.begin(), scored.end());
  std::string out;
  for (int i = 0; i < count && i < static_cast<int>(scored.size()); ++i) {
    if (i > 0) out += ", ";
    out += names[scored[i].second];
  }
  return out;
}

int CheckJoint(lua_State* L, int arg, const Skeleton& skeleton) {
  const int type = lua_type(L, arg);
  if (type == LUA_TNUMBER) {
    return static_cast<int>(CheckIntegerIn(L, arg, 1, skeleton.num_joints(), "joint index")) - 1;
  }
  if (type != LUA_TSTRING) TypeError(L, arg, "joint name or index");
  size_t length = 0;
  const char* name = lua_tolstring(L, arg, &length);
  const std::string_view wanted(name, length);
  TypeCache* cache = GetCache(L);
  TypeCache::JointHit* hit = nullptr;
  if (cache != nullptr) {
    const auto key =
        reinterpret_cast<std::uintptr_t>(name) ^ (reinterpret_cast<std::uintptr_t>(&skeleton) >> 4);
    hit = &cache->joints[(key >> 4) % TypeCache::kJointSlots];
    if (hit->text == name && hit->skeleton == &skeleton && hit->joint < skeleton.num_joints() &&
        skeleton.name(hit->joint) == wanted) {
      return hit->joint;
    }
  }
  const int joint = skeleton.FindJoint(wanted);
  if (joint >= 0) {
    if (hit != nullptr) *hit = {name, &skeleton, joint};
    return joint;
  }
  {
    const std::string closest = ClosestNames(std::string_view(name, length), skeleton.names());
    lua_pushfstring(L, "no joint '%s' (closest: %s)", name, closest.c_str());
  }  // no C++ object alive past this point
  luaL_argerror(L, arg, lua_tostring(L, -1));
  return -1;
}

int CheckJointChannel(lua_State* L, int arg, const Skeleton& skeleton, int joint) {
  if (lua_type(L, arg) != LUA_TSTRING) TypeError(L, arg, "channel name");
  const char* given = lua_tostring(L, arg);
  const std::optional<ChannelType> type = ParseAnyChannelName(given);
  if (!type) {
    luaL_argerror(L, arg,
                  lua_pushfstring(L,
                                  "invalid channel '%s', expected one of: Xposition, Yposition, "
                                  "Zposition, Xrotation, Yrotation, Zrotation, Xscale, Yscale, "
                                  "Zscale",
                                  given));
  }
  const int begin = skeleton.channel_begin(joint);
  const std::span<const ChannelType> channels = skeleton.joint_channels(joint);
  for (size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] == *type) return begin + static_cast<int>(i);
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "joint '%s' has no %s channel (it has: ", skeleton.name(joint).c_str(),
                  ChannelName(*type).data());
  luaL_addvalue(&b);
  for (size_t i = 0; i < channels.size(); ++i) {
    if (i > 0) luaL_addstring(&b, ", ");
    luaL_addstring(&b, ChannelName(channels[i]).data());
  }
  if (channels.empty()) luaL_addstring(&b, "none");
  luaL_addstring(&b, ")");
  luaL_pushresult(&b);
  luaL_argerror(L, arg, lua_tostring(L, -1));
  return -1;
}

int CheckChannel(lua_State* L, int arg, const Skeleton& skeleton) {
  return CheckJointChannel(L, arg + 1, skeleton, CheckJoint(L, arg, skeleton));
}

}  // namespace rigel::lua
