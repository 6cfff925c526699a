// The `rigel run` sandbox. See sandbox.h.
#include "bindings/lua/sandbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "bindings/lua/runtime.h"

namespace rigel::lua {

namespace {

constexpr const char* kSandboxKey = "rigel.sandbox";

const Sandbox* GetSandbox(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kSandboxKey);
  const auto* sandbox = static_cast<const Sandbox*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return sandbox;
}

bool IsUnder(const std::filesystem::path& path, const std::filesystem::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

// A replaced function that always raises: upvalue 1 is its name.
int Disabled(lua_State* L) {
  return luaL_error(L, "%s is disabled by the sandbox (run with --allow-io to allow it)",
                    lua_tostring(L, lua_upvalueindex(1)));
}

// Calls the original function (upvalue 1) with all arguments after checking the path arguments
// listed by the bit mask in upvalue 2 (bit n = argument n + 1 is a path); those also in the mask
// of upvalue 3 (or in `extra_written`) are written. A path must be a string: Lua would turn a
// number into a file name ("1337") behind the check's back.
int CallGuarded(lua_State* L, lua_Integer extra_written) {
  const lua_Integer paths = lua_tointeger(L, lua_upvalueindex(2));
  const lua_Integer written = lua_tointeger(L, lua_upvalueindex(3)) | extra_written;
  const int top = lua_gettop(L);
  for (int arg = 1; arg <= top && arg <= 8; ++arg) {
    const lua_Integer bit = lua_Integer{1} << (arg - 1);
    if (!(paths & bit)) continue;
    if (lua_type(L, arg) == LUA_TNUMBER) TypeError(L, arg, "string");
    if (lua_type(L, arg) != LUA_TSTRING) continue;  // a file handle, nil: the original checks
    if (written & bit) {
      CheckPathWrite(L, arg, lua_tostring(L, arg));
    } else {
      CheckPathAccess(L, arg, lua_tostring(L, arg));
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, top, LUA_MULTRET);
  return lua_gettop(L);
}

int Guarded(lua_State* L) { return CallGuarded(L, 0); }

// __close / __gc of the file handles OpenForWriting makes (liolib's own is static).
int CloseStream(lua_State* L) {
  auto* p = static_cast<luaL_Stream*>(luaL_checkudata(L, 1, LUA_FILEHANDLE));
  const int result = std::fclose(p->f);
  return luaL_fileresult(L, result == 0, nullptr);
}

// Whether `mode` is one io.open accepts: [rwa]%+?b*.
bool ValidMode(const char* mode) {
  if (*mode == '\0' || std::strchr("rwa", *mode) == nullptr) return false;
  ++mode;
  if (*mode == '+') ++mode;
  return std::strspn(mode, "b") == std::strlen(mode);
}

// Opens `path` for writing as io.open would in `mode` (checked), but writes new files only: the
// last component is not followed if it is a symlink (O_NOFOLLOW), and an existing file with more
// than one link is refused before anything is truncated (a hard link in --out to a file
// elsewhere would otherwise be written through, past the sandbox and Landlock). Pushes the file
// handle, or nil, a message naming the file and an errno, like io.open.
int OpenForWriting(lua_State* L, const char* path, const char* mode) {
  const bool plus = std::strchr(mode, '+') != nullptr;
  int flags = (plus ? O_RDWR : O_WRONLY) | O_NOFOLLOW | O_CLOEXEC;
  if (*mode != 'r') flags |= O_CREAT;
  if (*mode == 'a') flags |= O_APPEND;
  luaL_Stream* stream = static_cast<luaL_Stream*>(lua_newuserdatauv(L, sizeof(luaL_Stream), 0));
  stream->closef = nullptr;  // not open yet: __gc leaves it alone
  luaL_setmetatable(L, LUA_FILEHANDLE);
  const int fd = open(path, flags, 0666);
  if (fd < 0) return luaL_fileresult(L, 0, path);
  struct stat st {};
  const char* refusal = nullptr;
  if (fstat(fd, &st) != 0) {
    refusal = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    refusal = "not a regular file: scripts write regular files only";
  } else if (st.st_nlink > 1) {
    refusal = "the file has more than one link (a hard link): scripts write new files only";
  } else if (*mode == 'w' && ftruncate(fd, 0) != 0) {
    refusal = std::strerror(errno);
  }
  std::FILE* f = refusal == nullptr ? fdopen(fd, mode) : nullptr;
  if (f == nullptr) {
    close(fd);
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, refusal != nullptr ? refusal : std::strerror(errno));
    lua_pushinteger(L, st.st_nlink > 1 ? EMLINK : EINVAL);
    return 3;
  }
  stream->f = f;
  stream->closef = CloseStream;
  return 1;
}

// io.open(path [, mode]): a mode that writes ("w", "a", "r+", ...) needs a writable path, and
// writes through OpenForWriting.
int GuardedOpen(lua_State* L) {
  const char* mode = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "r";
  const bool writes = std::strpbrk(mode, "wa+") != nullptr;
  if (!writes || lua_type(L, 1) != LUA_TSTRING) return CallGuarded(L, writes ? 0b1 : 0);
  luaL_argcheck(L, ValidMode(mode), 2, "invalid mode");
  const char* path = lua_tostring(L, 1);
  CheckPathWrite(L, 1, path);
  return OpenForWriting(L, path, mode);
}

// io.output(path): opened for writing by OpenForWriting, then handed to the original.
int GuardedOutput(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING) return CallGuarded(L, 0b1);
  const char* path = lua_tostring(L, 1);
  CheckPathWrite(L, 1, path);
  lua_settop(L, 1);
  if (OpenForWriting(L, path, "w") != 1) return luaL_error(L, "%s", lua_tostring(L, -2));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  return 1;
}

// load(chunk [, chunkname [, mode [, env]]]) with mode forced to "t" (binary chunks can crash
// the VM).
int TextLoad(lua_State* L) {
  if (lua_gettop(L) < 3) lua_settop(L, 3);  // an absent env (argument 4) stays absent
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  return Guarded(L);
}

// loadfile(path [, mode [, env]]) text only.
int TextLoadFile(lua_State* L) {
  if (lua_gettop(L) < 2) lua_settop(L, 2);  // an absent env (argument 3) stays absent
  lua_pushliteral(L, "t");
  lua_replace(L, 2);
  return Guarded(L);
}

// dofile(path): loadfile(path, "t") then call.
int TextDoFile(lua_State* L) {
  if (lua_type(L, 1) == LUA_TNUMBER) TypeError(L, 1, "string");
  const char* path = luaL_optstring(L, 1, nullptr);
  if (path == nullptr) return luaL_error(L, "dofile without a path is disabled by the sandbox");
  CheckPathAccess(L, 1, path);
  lua_settop(L, 1);
  if (luaL_loadfilex(L, path, "t") != LUA_OK) return lua_error(L);
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 1;
}

// os.getenv(name): only variables named RIGEL_* are visible; every other name reads as unset
// (PATH, HOME and the rest describe the machine, not the job).
int SandboxedGetenv(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (std::strncmp(name, "RIGEL_", 6) != 0) {
    lua_pushnil(L);
    return 1;
  }
  const char* value = std::getenv(name);
  if (value == nullptr) {
    lua_pushnil(L);
  } else {
    lua_pushstring(L, value);
  }
  return 1;
}

// package.searchpath(name, path [, sep [, rep]]) that looks only at files the sandbox allows
// (the module folders and the allowed roots): a candidate elsewhere is reported as "no file",
// exactly like a missing one, so the function cannot tell whether /etc/shadow exists.
int SearchPath(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  const char* templates = luaL_checkstring(L, 2);
  const char* sep = luaL_optstring(L, 3, ".");
  const char* rep = luaL_optstring(L, 4, LUA_DIRSEP);
  const Sandbox* sandbox = GetSandbox(L);
  std::string found, tried;
  bool failed = false;
  try {
    std::string module = name;
    if (*sep != '\0') {
      std::string replaced;
      const std::string_view needle(sep);
      for (size_t i = 0; i < module.size();) {
        if (module.compare(i, needle.size(), needle) == 0) {
          replaced += rep;
          i += needle.size();
        } else {
          replaced += module[i++];
        }
      }
      module = replaced;
    }
    const std::string_view all(templates);
    for (size_t start = 0; start <= all.size() && found.empty();) {
      size_t end = all.find(*LUA_PATH_SEP, start);
      if (end == std::string_view::npos) end = all.size();
      std::string candidate(all.substr(start, end - start));
      start = end + 1;
      if (candidate.empty()) continue;
      for (size_t q = candidate.find(*LUA_PATH_MARK); q != std::string::npos;
           q = candidate.find(*LUA_PATH_MARK, q + module.size())) {
        candidate.replace(q, 1, module);
      }
      const bool allowed = sandbox == nullptr || sandbox->AllowsModule(candidate);
      std::FILE* f = allowed ? std::fopen(candidate.c_str(), "r") : nullptr;
      if (f != nullptr) {
        std::fclose(f);
        found = candidate;
      } else {
        tried += (tried.empty() ? "no file '" : "\n\tno file '") + candidate + "'";
      }
    }
  } catch (const std::exception& e) {
    failed = true;
    lua_pushstring(L, e.what());
  }
  if (failed) return luaL_error(L, "%s", lua_tostring(L, -1));
  if (!found.empty()) {
    lua_pushlstring(L, found.data(), found.size());
    return 1;
  }
  lua_pushnil(L);
  lua_pushlstring(L, tried.data(), tried.size());
  return 2;
}

// package.searchers[2] replacement: Lua files on package.path, under the module roots only.
int SearchLua(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushstring(L, name);
  lua_getfield(L, -3, "path");
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1;  // the "no file ..." message
  const char* path = lua_tostring(L, -2);
  const Sandbox* sandbox = GetSandbox(L);
  bool allowed = true;
  { allowed = sandbox == nullptr || sandbox->AllowsModule(path); }
  if (!allowed) {
    lua_pushfstring(L, "\n\tmodule file '%s' is outside the sandbox's module folders", path);
    return 1;
  }
  if (luaL_loadfilex(L, path, "t") != LUA_OK) {
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
                      lua_tostring(L, -1));
  }
  lua_pushstring(L, path);
  return 2;
}

void ReplaceWithDisabled(lua_State* L, const char* table, const char* field) {
  lua_getglobal(L, table);
  if (lua_istable(L, -1)) {
    lua_pushfstring(L, "%s.%s", table, field);
    lua_pushcclosure(L, Disabled, 1);
    lua_setfield(L, -2, field);
  }
  lua_pop(L, 1);
}

// Replaces t[field] (t = global `table`, or _G when table is nullptr) by a guarded closure:
// `paths` is the mask of path arguments, `written` the mask of those written.
void Guard(lua_State* L, const char* table, const char* field, lua_Integer paths,
           lua_Integer written = 0, lua_CFunction wrapper = Guarded) {
  if (table != nullptr) {
    lua_getglobal(L, table);
  } else {
    lua_pushglobaltable(L);
  }
  lua_getfield(L, -1, field);
  lua_pushinteger(L, paths);
  lua_pushinteger(L, written);
  lua_pushcclosure(L, wrapper, 3);
  lua_setfield(L, -2, field);
  lua_pop(L, 1);
}

}  // namespace

std::filesystem::path CanonicalPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) absolute = path;
  // Components still to walk, last first; `done` is resolved (no symlinks in it).
  std::vector<fs::path> pending;
  for (const fs::path& part : absolute.relative_path()) pending.push_back(part);
  std::reverse(pending.begin(), pending.end());
  fs::path done = absolute.root_path();
  int links = 0;
  while (!pending.empty()) {
    const fs::path part = pending.back();
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      done = done.parent_path();
      continue;
    }
    const fs::path next = done / part;
    const fs::file_status status = fs::symlink_status(next, ec);
    if (ec || !fs::is_symlink(status)) {  // a file, a folder, or nothing (yet): take it as is
      done = next;
      continue;
    }
    // A symlink, dangling or not: continue from its target, as open() would.
    if (++links > 40) return fs::path();  // a loop: matches no root
    const fs::path target = fs::read_symlink(next, ec);
    if (ec) return fs::path();
    if (target.is_absolute()) done = target.root_path();
    std::vector<fs::path> parts;
    for (const fs::path& p : target.relative_path()) parts.push_back(p);
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  }
  return done;
}

Sandbox::Sandbox(const std::vector<std::string>& roots,
                 const std::vector<std::string>& module_roots)
    : Sandbox(roots, roots, module_roots) {}

Sandbox::Sandbox(const std::vector<std::string>& read_roots,
                 const std::vector<std::string>& write_roots,
                 const std::vector<std::string>& module_roots) {
  for (const std::string& r : read_roots) {
    if (!r.empty()) roots_.push_back(CanonicalPath(r));
  }
  for (const std::string& r : write_roots) {
    if (!r.empty()) write_roots_.push_back(CanonicalPath(r));
  }
  for (const std::string& r : module_roots) {
    if (!r.empty()) module_roots_.push_back(CanonicalPath(r));
  }
}

namespace {
bool UnderAny(const std::filesystem::path& p, const std::vector<std::filesystem::path>& roots) {
  return !p.empty() && std::any_of(roots.begin(), roots.end(),
                                   [&](const std::filesystem::path& r) { return IsUnder(p, r); });
}

std::string Join(const std::vector<std::filesystem::path>& paths) {
  std::string out;
  for (const auto& r : paths) {
    if (!out.empty()) out += ", ";
    out += r.string();
  }
  return out.empty() ? std::string("nothing") : out;
}
}  // namespace

bool Sandbox::Allows(const std::string& path) const {
  const std::filesystem::path p = CanonicalPath(path);
  return UnderAny(p, roots_) || UnderAny(p, write_roots_);
}

bool Sandbox::AllowsWrite(const std::string& path) const {
  return UnderAny(CanonicalPath(path), write_roots_);
}

bool Sandbox::AllowsModule(const std::string& path) const {
  return Allows(path) || UnderAny(CanonicalPath(path), module_roots_);
}

std::string Sandbox::Describe() const {
  std::vector<std::filesystem::path> all = roots_;
  for (const auto& r : write_roots_) {
    if (std::find(all.begin(), all.end(), r) == all.end()) all.push_back(r);
  }
  return Join(all);
}

std::string Sandbox::DescribeWritable() const { return Join(write_roots_); }

const char* CheckPathString(lua_State* L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING) TypeError(L, arg, "string");
  return lua_tostring(L, arg);
}

namespace {

// Raises a Lua argument error on `arg` unless the sandbox (if any) lets `path` be read or, with
// `write`, written; a failure inside the sandbox's check is raised as a plain Lua error.
void CheckSandboxed(lua_State* L, int arg, const char* path, bool write) {
  const Sandbox* sandbox = GetSandbox(L);
  if (sandbox == nullptr) return;
  bool allowed = false;
  bool failed = false;
  try {
    allowed = write ? sandbox->AllowsWrite(path) : sandbox->Allows(path);
    if (!allowed) {
      const std::string roots = write ? sandbox->DescribeWritable() : sandbox->Describe();
      lua_pushfstring(L,
                      write ? "writing '%s' denied by the sandbox (writable: %s; write under "
                              "--out, or run with --allow-io)"
                            : "access to '%s' denied by the sandbox (allowed: %s; name the path "
                              "on the command line, write under --out, or run with --allow-io)",
                      path, roots.c_str());
    }
  } catch (const std::exception& e) {
    failed = true;
    lua_pushstring(L, e.what());
  }
  if (failed) luaL_error(L, "%s", lua_tostring(L, -1));
  if (!allowed) luaL_argerror(L, arg, lua_tostring(L, -1));
}

}  // namespace

void CheckPathAccess(lua_State* L, int arg, const char* path) {
  CheckSandboxed(L, arg, path, /*write=*/false);
}

void CheckPathWrite(lua_State* L, int arg, const char* path) {
  CheckSandboxed(L, arg, path, /*write=*/true);
}

void InstallSandbox(lua_State* L, const Sandbox* sandbox) {
  lua_pushlightuserdata(L, const_cast<Sandbox*>(sandbox));
  lua_setfield(L, LUA_REGISTRYINDEX, kSandboxKey);

  ReplaceWithDisabled(L, "os", "execute");
  ReplaceWithDisabled(L, "os", "exit");
  ReplaceWithDisabled(L, "os", "tmpname");
  ReplaceWithDisabled(L, "io", "popen");
  ReplaceWithDisabled(L, "io", "tmpfile");
  ReplaceWithDisabled(L, "package", "loadlib");

  Guard(L, "io", "open", 0b1, 0, GuardedOpen);
  Guard(L, "io", "lines", 0b1);
  Guard(L, "io", "input", 0b1);
  Guard(L, "io", "output", 0b1, 0b1, GuardedOutput);
  Guard(L, "os", "remove", 0b1, 0b1);
  Guard(L, "os", "rename", 0b11, 0b11);
  Guard(L, nullptr, "loadfile", 0b1, 0, TextLoadFile);
  Guard(L, nullptr, "load", 0, 0, TextLoad);
  lua_getglobal(L, "os");
  lua_pushcfunction(L, SandboxedGetenv);
  lua_setfield(L, -2, "getenv");
  lua_pop(L, 1);
  lua_pushcfunction(L, TextDoFile);
  lua_setglobal(L, "dofile");

  // debug: keep traceback only (getupvalue/setlocal/sethook could reach the originals).
  lua_getglobal(L, "debug");
  lua_getfield(L, -1, "traceback");
  lua_createtable(L, 0, 1);
  lua_insert(L, -2);
  lua_setfield(L, -2, "traceback");
  lua_pushvalue(L, -1);
  lua_setglobal(L, "debug");
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "debug");
  lua_pop(L, 4);

  // require: Lua modules only, from the module folders; no C modules.
  lua_getglobal(L, "package");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");
  lua_pushcfunction(L, SearchPath);
  lua_setfield(L, -2, "searchpath");
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, SearchLua);
  lua_rawseti(L, -2, 2);
  lua_pushnil(L);
  lua_rawseti(L, -2, 4);
  lua_pushnil(L);
  lua_rawseti(L, -2, 3);
  lua_pop(L, 2);
}

const char* CheckSavePath(lua_State* L, int arg) {
  const char* path = CheckPathString(L, arg);
  CheckMaxArgs(L, arg);
  CheckPathWrite(L, arg, path);
  return path;
}

}  // namespace rigel::lua
