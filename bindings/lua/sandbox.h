// The `rigel run` sandbox: what a rig script may touch when --allow-io is not given.
//   - no os.execute, io.popen, package.loadlib, os.tmpname, os.exit, no debug library (but
//     debug.traceback), no binary chunks (load/loadfile/dofile read text only);
//   - require finds Lua modules only (no C modules) and only under the module folders (the
//     script's folder and rigel's scripts/ folder);
//   - io.open, io.lines, io.input, loadfile, dofile and rigel.load read only under the allowed
//     roots (the paths named on the command line and the output folder); io.open in a writing
//     mode, io.output, os.remove, os.rename and every rigel save function write only under the
//     writable roots (the output folder);
//   - paths are strings: a number (io.open(1337)) is refused, not turned into "1337";
//   - symlinks are resolved all the way, dangling ones included, before the check;
//   - os.getenv sees only RIGEL_* variables; package.searchpath looks only at allowed files.
// These are the Lua-level checks (clear messages, and the only line of defence when the kernel
// has no Landlock). `rigel run` also confines the script's process in the kernel
// (importers/confine.h); docs/security.md describes both.
#ifndef RIGEL_BINDINGS_LUA_SANDBOX_H_
#define RIGEL_BINDINGS_LUA_SANDBOX_H_

#include <filesystem>
#include <lua.hpp>
#include <string>
#include <vector>

namespace rigel::lua {

class Sandbox {
 public:
  // `roots`: files or folders (existing or not) under which reading and writing are allowed.
  // `module_roots`: folders `require` may load Lua modules from.
  Sandbox(const std::vector<std::string>& roots, const std::vector<std::string>& module_roots);
  // `read_roots`: readable files or folders; `write_roots`: readable and writable ones.
  Sandbox(const std::vector<std::string>& read_roots, const std::vector<std::string>& write_roots,
          const std::vector<std::string>& module_roots);

  // True when `path` (symlinks resolved) is a root, read or write, or lies under one.
  bool Allows(const std::string& path) const;
  // True when `path` (symlinks resolved) is a write root or lies under one.
  bool AllowsWrite(const std::string& path) const;
  // True when `path` lies under a root or a module root.
  bool AllowsModule(const std::string& path) const;

  // The roots, canonical, for messages.
  std::string Describe() const;
  // The write roots, canonical, for messages.
  std::string DescribeWritable() const;

 private:
  std::vector<std::filesystem::path> roots_;
  std::vector<std::filesystem::path> write_roots_;
  std::vector<std::filesystem::path> module_roots_;
};

// Replaces the unsafe functions of an opened state (luaL_openlibs done) and records `sandbox`
// (which must outlive the state) for CheckPathAccess.
void InstallSandbox(lua_State* L, const Sandbox* sandbox);

// Raises "bad argument #arg to 'fn' (access to 'path' denied by the sandbox ...)" when a sandbox
// is installed and does not allow `path`. No-op without a sandbox.
void CheckPathAccess(lua_State* L, int arg, const char* path);

// The path argument at `arg`: a string, never a number turned into one ("1337"); raises "bad
// argument #arg to 'fn' (string expected, got number)" otherwise.
const char* CheckPathString(lua_State* L, int arg);

// Raises "bad argument #arg to 'fn' (writing 'path' denied by the sandbox ...)" when a sandbox is
// installed and `path` is not under a write root. No-op without a sandbox.
void CheckPathWrite(lua_State* L, int arg, const char* path);

// The path of obj:save(path) at `arg`, the last argument: a string (CheckPathString), no more
// arguments after it (CheckMaxArgs), writable under the sandbox (CheckPathWrite).
const char* CheckSavePath(lua_State* L, int arg);

// Absolute form of `path` with every symlink resolved, dangling ones too (where open() would
// create or read), "." and ".." applied after resolution. Empty for a symlink loop.
std::filesystem::path CanonicalPath(const std::string& path);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_SANDBOX_H_
