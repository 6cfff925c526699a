// Shared glue for the `rigel` Lua module: userdata boxes, one metatable per type, argument checks
// that raise "bad argument #n to 'fn' (X expected, got Y)", and catch_exceptions, which turns a
// C++ exception into a Lua error *after* the catch block (luaL_error longjmps, so no C++ object
// may be alive when it runs).
//
// Rule for every w_ function: check all arguments first (only trivially destructible locals:
// pointers, numbers, const char*), then do the C++ work inside catch_exceptions.
#ifndef RIGEL_BINDINGS_LUA_RUNTIME_H_
#define RIGEL_BINDINGS_LUA_RUNTIME_H_

#include <Eigen/Geometry>
#include <exception>
#include <lua.hpp>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace rigel {
class Skeleton;
}

namespace rigel::lua {

// Registry name of each metatable; the short name (after "rigel.") is what error messages show.
inline constexpr const char* kSkeletonType = "rigel.Skeleton";
inline constexpr const char* kClipType = "rigel.Clip";
inline constexpr const char* kPoseType = "rigel.Pose";
inline constexpr const char* kSceneType = "rigel.Scene";
inline constexpr const char* kVec3Type = "rigel.vec3";
inline constexpr const char* kQuatType = "rigel.quat";
inline constexpr const char* kRigType = "rigel.Rig";
inline constexpr const char* kBakeSummaryType = "rigel.BakeSummary";
inline constexpr const char* kBakeRecordsType = "rigel.BakeRecords";

// Describes one userdata type for RegisterType.
struct TypeSpec {
  const char* name;             // registry name, "rigel.Clip"
  const luaL_Reg* methods;      // obj:method(...)
  const luaL_Reg* getters;      // obj.field (read-only properties); may be nullptr
  const luaL_Reg* metamethods;  // __add, __tostring, ... (besides __index); may be nullptr
  lua_CFunction gc;             // destructor of the box (__gc); may be nullptr
  lua_CFunction close;          // __close and obj:release(): drops the C++ objects; may be nullptr
  lua_CFunction setter;         // __newindex(obj, key, value); nullptr = read-only object
};

// Creates the metatable `spec.name` with __index dispatching to methods then getters (an unknown
// key raises "Clip has no field 'foo'"), __name, __gc, __close (also the method release, listed
// last), __newindex, __metatable. Leaves nothing on the stack.
void RegisterType(lua_State* L, const TypeSpec& spec);

// Points the state's extra space at its type cache (or at nothing when the module was never
// opened in it). luaopen_rigel calls it first, so the module works in any lua_State, including
// ones whose extra space was never initialised.
void AttachTypeCache(lua_State* L);

// Sets the metatable of the value on top of the stack to the registered type `type` (one of the
// k*Type constants).
void SetTypeMetatable(lua_State* L, const char* type);

// Constructs a T in a new userdata with metatable `type` and leaves it on the stack.
template <class T, class... Args>
T* PushBox(lua_State* L, const char* type, Args&&... args) {
  void* memory = lua_newuserdatauv(L, sizeof(T), 0);
  T* box = new (memory) T(std::forward<Args>(args)...);
  SetTypeMetatable(L, type);
  return box;
}

// __gc / __close for a box of type T: runs its destructor once.
template <class T>
int DestroyBox(lua_State* L) {
  T* box = static_cast<T*>(lua_touserdata(L, 1));
  if (box != nullptr && box->alive) {
    box->alive = false;
    box->~T();
  }
  return 0;
}

// Locks: a C++ call that runs Lua code (a rig:bake callback, a metamethod of an options table)
// while it works on an object locks that object, so the Lua code cannot resize or free it.
// PushLock marks `object` (the Clip, Scene or rig state worked on) as in use, and pushes a guard
// marked to-be-closed (lua_toclose): the lock ends when the calling C function returns or
// raises. `activity` ("baked", "retargeted") goes into the error of CheckUnlocked.
void PushLock(lua_State* L, const void* object, const char* activity);
// Raises "<call>: <what> is being <activity>" (e.g. "clip:resize: clip is being baked") when
// `object` is locked.
void CheckUnlocked(lua_State* L, const void* object, const char* call, const char* what);

// "Pose", "number", "nil": the short type name of the value at `idx`.
const char* TypeName(lua_State* L, int idx);

// Raises "bad argument #arg to 'fn' (expected expected, got <type>)".
[[noreturn]] void TypeError(lua_State* L, int arg, const char* expected);

// The box at `arg` if it has metatable `type`, else raises a type error naming `short_name`.
void* CheckBox(lua_State* L, int arg, const char* type);
// The box at `idx` if it has metatable `type`, else nullptr.
void* TestBox(lua_State* L, int idx, const char* type);

// luaL_checkinteger, but also rejects values outside [lo, hi] with "out of range" messages.
lua_Integer CheckIntegerIn(lua_State* L, int arg, lua_Integer lo, lua_Integer hi, const char* what);
// A finite number.
double CheckFinite(lua_State* L, int arg);
// Pushes `value` as Lua sees it: an integer, a number or a string.
inline void PushValue(lua_State* L, int value) { lua_pushinteger(L, value); }
inline void PushValue(lua_State* L, double value) { lua_pushnumber(L, value); }
inline void PushValue(lua_State* L, const std::string& value) { lua_pushstring(L, value.c_str()); }
// A boolean (true/false only).
bool CheckBoolean(lua_State* L, int arg);
// A function.
void CheckFunction(lua_State* L, int arg);
// A table.
void CheckTable(lua_State* L, int arg);
// Raises "wrong number of arguments to 'fn' (expected at most n, got m)" when there are more.
void CheckMaxArgs(lua_State* L, int max);

// The index of `given` in `options` (a nullptr-terminated list), or -1 when it is not there.
int FindOption(const char* given, const char* const* options);
// One of `options` (a nullptr-terminated list); raises "invalid <what> 'x', expected one of: a,
// b, c" otherwise. Returns the index in `options`.
int CheckOption(lua_State* L, int arg, const char* what, const char* const* options);
// Raises an argument error for `arg`: `prefix` (e.g. "invalid order 'QXZ', ") followed by
// "expected one of: " and the options. Does not return.
[[noreturn]] void OptionError(lua_State* L, int arg, const char* prefix,
                              const char* const* options);

// A joint of `skeleton`: a name (exact) or a 1-based index. A wrong name raises an argument
// error listing the closest names. Returns the 0-based joint index.
int CheckJoint(lua_State* L, int arg, const Skeleton& skeleton);
// Channel name ("Xrotation", case-insensitive) of a joint that has it. Returns the row index.
int CheckJointChannel(lua_State* L, int arg, const Skeleton& skeleton, int joint);
// A channel given as two arguments: a joint at `arg` (CheckJoint) and its channel name at
// `arg + 1` (CheckJointChannel). Returns the row index.
int CheckChannel(lua_State* L, int arg, const Skeleton& skeleton);

// Reads the table at absolute index `idx` as `count` finite numbers, number i from field keys[i]
// or, when that is nil, from array slot i + 1 (so {x = 1, ...} and {1, ...} both work). Returns
// false at the first one missing or not finite; out[0..count) is then partly written.
bool TableNumbers(lua_State* L, int idx, const char* const* keys, int count, double* out);

// Up to `count` names from `names` closest to `wanted` (edit distance, case-insensitive),
// joined by ", ".
std::string ClosestNames(std::string_view wanted, std::span<const std::string> names,
                         int count = 3);

// Runs `body`; a C++ exception becomes a Lua error raised after the catch block.
template <class F>
int catch_exceptions(lua_State* L, const F& body) {
  bool failed = false;
  try {
    body();
  } catch (const std::bad_alloc&) {
    failed = true;
    lua_pushliteral(L, "out of memory");
  } catch (const std::exception& e) {
    failed = true;
    lua_pushstring(L, e.what());
  } catch (...) {
    failed = true;
    lua_pushliteral(L, "unknown C++ exception");
  }
  if (failed) return luaL_error(L, "%s", lua_tostring(L, -1));
  return 0;
}

// vec3 / quat values (defined in wrap_vec3.cc, wrap_quat.cc): plain data without __gc, kept as
// small as the value (a userdata block per result, so size is GC pressure).
struct Vec3Box {
  Eigen::Vector3d v;
};
struct QuatBox {
  Eigen::Quaterniond q;
};
void PushVec3(lua_State* L, const Eigen::Vector3d& v);
void PushQuat(lua_State* L, const Eigen::Quaterniond& q);
// A vec3, or a table {x, y, z} / {x=, y=, z=} of finite numbers.
Eigen::Vector3d CheckVec3(lua_State* L, int arg);
// Three finite numbers at `arg`, `arg + 1` and `arg + 2` (x, y, z).
Eigen::Vector3d CheckXyz(lua_State* L, int arg);
// True (and sets *out) if the value at idx converts to a vec3.
bool ToVec3(lua_State* L, int idx, Eigen::Vector3d* out);
// A quat, or a table {w, x, y, z} / {w=, x=, y=, z=}; normalised.
Eigen::Quaterniond CheckQuat(lua_State* L, int arg);

// Module pieces: each adds its functions to the table on top of the stack and registers its
// metatables.
void OpenVec3(lua_State* L);
void OpenQuat(lua_State* L);
void OpenSkeleton(lua_State* L);
void OpenClip(lua_State* L);
void OpenPose(lua_State* L);
void OpenScene(lua_State* L);
void OpenRig(lua_State* L);
void OpenBakeSummary(lua_State* L);
void OpenRetarget(lua_State* L);
// rigel.check (wrap_check.cc).
void OpenCheck(lua_State* L);
void OpenFootRoll(lua_State* L);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_RUNTIME_H_
