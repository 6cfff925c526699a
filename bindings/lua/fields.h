// Options tables (`{pin_feet = true, ...}` at argument `arg`; arg 0 = none given): the one set of
// readers every binding uses for them. CheckOptionKeys raises "unknown option 'x' (expected one
// of: a, b, c)" unless every key is in `allowed` (nullptr-terminated). The field readers return
// `fallback` when the field is nil and raise "bad argument #arg to 'fn' (field 'name': X
// expected, got Y)" otherwise.
#ifndef RIGEL_BINDINGS_LUA_FIELDS_H_
#define RIGEL_BINDINGS_LUA_FIELDS_H_

#include <Eigen/Geometry>
#include <cstdint>
#include <lua.hpp>

namespace rigel {
class Skeleton;
}

namespace rigel::lua {

void CheckOptionKeys(lua_State* L, int arg, const char* const* allowed);
// The options argument at `arg`: 0 when it is none or nil, else `arg`, checked to be a table whose
// keys are all in `allowed` (CheckOptionKeys).
int OptionsArg(lua_State* L, int arg, const char* const* allowed);
bool HasField(lua_State* L, int arg, const char* field);
[[noreturn]] void FieldError(lua_State* L, int arg, const char* field, const char* expected);
double NumberField(lua_State* L, int arg, const char* field, double fallback);
int IntegerField(lua_State* L, int arg, const char* field, int fallback, int lo, int hi);
bool BoolField(lua_State* L, int arg, const char* field, bool fallback);

// The index in `options` (nullptr-terminated) of string field `field`; `fallback` when absent.
// Raises "field 'f': invalid value 'x', expected one of: a, b" otherwise.
int OptionField(lua_State* L, int arg, const char* field, const char* const* options, int fallback);

// A vec3 field (a vec3 or a table of three finite numbers).
Eigen::Vector3d Vec3Field(lua_State* L, int arg, const char* field,
                          const Eigen::Vector3d& fallback);
// A non-zero vec3 field, normalised; raises "field 'f' must not be zero".
Eigen::Vector3d UnitField(lua_State* L, int arg, const char* field,
                          const Eigen::Vector3d& fallback);
// A quat field (normalised), which must be present.
Eigen::Quaterniond QuatField(lua_State* L, int arg, const char* field);
// A joint of `skeleton` named by field `field` (name or 1-based index); -1 when absent.
int JointField(lua_State* L, int arg, const char* field, const Skeleton& skeleton);
// Field "axes": a string of x, y, z letters ("xz") read as a mask (bit 0 = x).
std::uint8_t AxesField(lua_State* L, int arg, std::uint8_t fallback);

// The length of the list table at `list` (field `field` of the options at `arg`), read once
// (its __len runs once) and checked: 0 .. kMaxListLength, else "field 'f' has N entries (at most
// M)". Also makes room on the Lua stack for `slots_per_entry` values per entry (the binding
// pushes per-entry values there so that no C++ container is alive while a check may raise).
inline constexpr int kMaxListLength = 100000;
int CheckListLength(lua_State* L, int arg, int list, const char* field, int slots_per_entry);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_FIELDS_H_
