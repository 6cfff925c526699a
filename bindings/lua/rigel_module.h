// The `rigel` Lua module and the script runner behind `rigel run`.
#ifndef RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_
#define RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_

#include <cstdio>
#include <lua.hpp>
#include <string>
#include <vector>

#include "bindings/lua/lua_module.h"  // luaopen_rigel, the module's entry

namespace rigel::lua {

// lua_pcall message handler: adds a traceback to string errors ("script.lua:12: message\nstack
// traceback: ..."); other error values are described ("(error object is a table value)").
int MessageHandler(lua_State* L);

// Makes require("rigel") return the module in `L` (package.preload).
void PreloadRigel(lua_State* L);

struct RunOptions {
  // The script to run and the values of its `arg` table (arg[0] = script, arg[1..n] = args).
  std::string script;
  std::vector<std::string> args;
  // Output folder (created when missing), writable by the script and given as arg.out; may be
  // empty.
  std::string out_dir;
  // Folder of rigel's Lua library (scripts/), added to package.path.
  std::string scripts_dir;
  // false: sandboxed (see sandbox.h); true: the full standard library.
  bool allow_io = false;
};

// Runs a script. On error writes "script.lua:LINE: message" and a traceback to `err` and
// returns 1; returns 0 on success.
int RunScript(const RunOptions& options, std::FILE* err);

// A fresh state with the standard libraries, package.path set for `scripts_dir` and the
// module preloaded. The caller owns it (lua_close).
lua_State* NewRigelState(const std::string& scripts_dir);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_
