// The public C++ API of the `rigel` Lua binding: the one Lua state factory (NewState), the script
// runner behind `rigel run`, and the few conversions a host (the `rigel bake` command, tests,
// benchmarks) needs between Lua values and core objects. Everything else in bindings/lua is
// private to the binding.
#ifndef RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_
#define RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_

#include <cstddef>
#include <cstdio>
#include <lua.hpp>
#include <memory>
#include <string>
#include <vector>

#include "bindings/lua/lua_module.h"  // luaopen_rigel, the module's entry
#include "core/clip.h"
#include "core/ik/bake.h"
#include "core/scene.h"
#include "core/skeleton.h"

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

// The folder of `options.script`, every symlink resolved: where its own modules are found and
// what the sandbox and the kernel confinement let it read.
std::string ScriptFolder(const RunOptions& options);

// How NewState sets up a state.
struct StateOptions {
  // Folders `require` searches (each folder's ?.lua and ?/init.lua), in order; empty entries are
  // skipped. Typically the script's folder, then rigel's scripts/.
  std::vector<std::string> module_folders;
  // Also search Lua's default package.path after them (off for sandboxed states).
  bool default_module_path = true;
  // true: the sandbox of sandbox.h (no os.execute, io.popen, C modules; files only under
  // `allowed_paths`, modules only under `module_folders`).
  bool sandbox = false;
  // Files or folders a sandboxed script may read (inputs, the script).
  std::vector<std::string> allowed_paths;
  // Files or folders a sandboxed script may also write (--out).
  std::vector<std::string> writable_paths;
  // Lua heap cap in bytes (an allocation past it fails with "not enough memory"); 0 = none.
  size_t memory_limit = 0;
  // Seconds of wall-clock time from NewState after which running Lua code raises
  // `timeout_message` (checked every 100k VM instructions); 0 = none.
  double timeout = 0;
  std::string timeout_message = "script timed out";
};

// The one way rigel makes a Lua state (rigel run, rigel bake, the Lua tests and benchmarks): the
// standard libraries, generational GC, rigel's pooled allocator (with the memory cap), the
// deadline, package.path and the sandbox as `options` say, and require("rigel") preloaded. The
// state owns everything it was given (lua_close frees the sandbox and the allocator last).
// Returns nullptr when out of memory.
lua_State* NewState(const StateOptions& options);

// Pushes a rigel.Scene, and a rigel.Clip (on `skeleton`) that keeps `clip` alive. Raise a Lua
// memory error when out of memory (call them where a Lua error is acceptable).
void PushScene(lua_State* L, std::shared_ptr<Scene> scene);
void PushClip(lua_State* L, std::shared_ptr<const Skeleton> skeleton, std::shared_ptr<Clip> clip);

// The clip and its skeleton when the value at `idx` is a live rigel.Clip; false otherwise.
// Never raises.
bool ToClip(lua_State* L, int idx, std::shared_ptr<const Skeleton>* skeleton,
            std::shared_ptr<const Clip>* clip);

// The solver statistics at `idx`: a rigel.BakeSummary (what rig:bake returns) or a table of its
// fields, checked as rigel.bake_summary{...} checks them. Returns false with `error` set when the
// value is neither or a field is wrong. Never raises.
bool ToBakeSummary(lua_State* L, int idx, ik::BakeSummary* summary, std::string* error);

// The per-frame records behind the rigel.BakeSummary (or rigel.BakeRecords) at `idx`: those of
// the rig:bake that returned it; nullptr for anything else (a table of statistics has none).
std::shared_ptr<const ik::BakeRecords> ToBakeRecords(lua_State* L, int idx);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_RIGEL_MODULE_H_
