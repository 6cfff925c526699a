// The `rigel run` sandbox. See sandbox.h.
#include "bindings/lua/sandbox.h"

#include <algorithm>
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
// listed by the bit mask in upvalue 2 (bit n = argument n + 1 is a path when it is a string).
int Guarded(lua_State* L) {
  const lua_Integer mask = lua_tointeger(L, lua_upvalueindex(2));
  const int top = lua_gettop(L);
  for (int arg = 1; arg <= top && arg <= 8; ++arg) {
    if ((mask & (lua_Integer{1} << (arg - 1))) && lua_type(L, arg) == LUA_TSTRING) {
      CheckPathAccess(L, arg, lua_tostring(L, arg));
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, top, LUA_MULTRET);
  return lua_gettop(L);
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
  const char* path = luaL_optstring(L, 1, nullptr);
  if (path == nullptr) return luaL_error(L, "dofile without a path is disabled by the sandbox");
  CheckPathAccess(L, 1, path);
  lua_settop(L, 1);
  if (luaL_loadfilex(L, path, "t") != LUA_OK) return lua_error(L);
  lua_call(L, 0, LUA_MULTRET);
  return lua_gettop(L) - 1;
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

// Replaces t[field] (t = global `table`, or _G when table is nullptr) by a guarded closure.
void Guard(lua_State* L, const char* table, const char* field, lua_Integer mask,
           lua_CFunction wrapper = Guarded) {
  if (table != nullptr) {
    lua_getglobal(L, table);
  } else {
    lua_pushglobaltable(L);
  }
  lua_getfield(L, -1, field);
  lua_pushinteger(L, mask);
  lua_pushcclosure(L, wrapper, 2);
  lua_setfield(L, -2, field);
  lua_pop(L, 1);
}

}  // namespace

std::filesystem::path CanonicalPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) canonical = absolute.lexically_normal();
  return canonical;
}

Sandbox::Sandbox(const std::vector<std::string>& roots,
                 const std::vector<std::string>& module_roots) {
  for (const std::string& r : roots) {
    if (!r.empty()) roots_.push_back(CanonicalPath(r));
  }
  for (const std::string& r : module_roots) {
    if (!r.empty()) module_roots_.push_back(CanonicalPath(r));
  }
}

bool Sandbox::Allows(const std::string& path) const {
  const std::filesystem::path p = CanonicalPath(path);
  return std::any_of(roots_.begin(), roots_.end(),
                     [&](const std::filesystem::path& r) { return IsUnder(p, r); });
}

bool Sandbox::AllowsModule(const std::string& path) const {
  const std::filesystem::path p = CanonicalPath(path);
  return Allows(path) || std::any_of(module_roots_.begin(), module_roots_.end(),
                                     [&](const std::filesystem::path& r) { return IsUnder(p, r); });
}

std::string Sandbox::Describe() const {
  std::string out;
  for (const auto& r : roots_) {
    if (!out.empty()) out += ", ";
    out += r.string();
  }
  return out.empty() ? std::string("nothing") : out;
}

void CheckPathAccess(lua_State* L, int arg, const char* path) {
  const Sandbox* sandbox = GetSandbox(L);
  if (sandbox == nullptr) return;
  bool allowed = false;
  bool failed = false;
  try {
    allowed = sandbox->Allows(path);
    if (!allowed) {
      const std::string roots = sandbox->Describe();
      lua_pushfstring(L,
                      "access to '%s' denied by the sandbox (allowed: %s; name the path on the "
                      "command line, write under --out, or run with --allow-io)",
                      path, roots.c_str());
    }
  } catch (const std::exception& e) {
    failed = true;
    lua_pushstring(L, e.what());
  }
  if (failed) luaL_error(L, "%s", lua_tostring(L, -1));
  if (!allowed) luaL_argerror(L, arg, lua_tostring(L, -1));
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

  Guard(L, "io", "open", 0b1);
  Guard(L, "io", "lines", 0b1);
  Guard(L, "io", "input", 0b1);
  Guard(L, "io", "output", 0b1);
  Guard(L, "os", "remove", 0b1);
  Guard(L, "os", "rename", 0b11);
  Guard(L, nullptr, "loadfile", 0b1, TextLoadFile);
  Guard(L, nullptr, "load", 0, TextLoad);
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
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, SearchLua);
  lua_rawseti(L, -2, 2);
  lua_pushnil(L);
  lua_rawseti(L, -2, 4);
  lua_pushnil(L);
  lua_rawseti(L, -2, 3);
  lua_pop(L, 2);
}

}  // namespace rigel::lua
