// The `rigel run` sandbox: what a rig script may touch when --allow-io is not given.
//   - no os.execute, io.popen, package.loadlib, os.tmpname, os.exit, no debug library (but
//     debug.traceback), no binary chunks (load/loadfile/dofile read text only);
//   - require finds Lua modules only (no C modules) and only under the module folders (the
//     script's folder and rigel's scripts/ folder);
//   - io.open, io.lines, io.input, io.output, os.remove, os.rename, loadfile, dofile, rigel.load
//     and every rigel save function accept only paths under the allowed roots: the paths named
//     on the command line and the output folder.
#ifndef RIGEL_BINDINGS_LUA_SANDBOX_H_
#define RIGEL_BINDINGS_LUA_SANDBOX_H_

#include <filesystem>
#include <lua.hpp>
#include <string>
#include <vector>

namespace rigel::lua {

class Sandbox {
 public:
  // `roots`: files or folders (existing or not) under which file access is allowed.
  // `module_roots`: folders `require` may load Lua modules from.
  Sandbox(const std::vector<std::string>& roots, const std::vector<std::string>& module_roots);

  // True when `path` is one of the roots or lies under one.
  bool Allows(const std::string& path) const;
  // True when `path` lies under a root or a module root.
  bool AllowsModule(const std::string& path) const;

  // The roots, canonical, for messages.
  std::string Describe() const;

 private:
  std::vector<std::filesystem::path> roots_;
  std::vector<std::filesystem::path> module_roots_;
};

// Replaces the unsafe functions of an opened state (luaL_openlibs done) and records `sandbox`
// (which must outlive the state) for CheckPathAccess.
void InstallSandbox(lua_State* L, const Sandbox* sandbox);

// Raises "bad argument #arg to 'fn' (access to 'path' denied by the sandbox ...)" when a sandbox
// is installed and does not allow `path`. No-op without a sandbox.
void CheckPathAccess(lua_State* L, int arg, const char* path);

// Lexically normal absolute form of `path` with symlinks of its existing prefix resolved.
std::filesystem::path CanonicalPath(const std::string& path);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_SANDBOX_H_
