// luaopen_rigel: the entry point of the `rigel` Lua module, for rigel's own states (rigel run,
// rigel bake, the preload of NewRigelState) and for any other Lua 5.4 host, such as the stock
// lua5.4 interpreter loading the C module rigel.so (see docs/install.md):
//
//   package.cpath = "/opt/rigel/lib/lua/5.4/?.so;" .. package.cpath
//   local rigel = require("rigel")
//
// In a host's state the host's rules apply: no rigel sandbox, its own allocator, package.path
// and memory limits.
#ifndef RIGEL_BINDINGS_LUA_LUA_MODULE_H_
#define RIGEL_BINDINGS_LUA_LUA_MODULE_H_

#include <lua.hpp>

// Pushes the `rigel` module table (the lua_CFunction behind require("rigel")). Works on any
// lua_State of Lua 5.4 (it checks the version): it prepares what the binding keeps per state (the
// type cache reached through the extra space of the calling thread and of the main thread, which
// a state made by a plain lua_newstate leaves uninitialised) before opening the module. Threads
// created before the first require("rigel") of a foreign state do not see the type cache: require
// it before starting coroutines that use it.
extern "C" int luaopen_rigel(lua_State* L);

namespace rigel::lua {

// Opens the module in `L` whose per-state set-up is done (luaopen_rigel calls it): registers the
// types and pushes the module table. Defined in rigel_module.cc.
int OpenRigel(lua_State* L);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_LUA_MODULE_H_
