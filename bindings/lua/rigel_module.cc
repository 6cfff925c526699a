// The `rigel` Lua module and the script runner. See rigel_module.h.
#include "bindings/lua/rigel_module.h"

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "bindings/lua/runtime.h"
#include "bindings/lua/sandbox.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace {

// rigel.members(obj) -> {methods = {names...}, fields = {names...}} of a rigel object.
int w_members(lua_State* L) {
  if (lua_type(L, 1) != LUA_TUSERDATA || !lua_getmetatable(L, 1)) {
    rigel::lua::TypeError(L, 1, "rigel object");
  }
  lua_pushliteral(L, "__members");
  if (lua_rawget(L, -2) != LUA_TTABLE) rigel::lua::TypeError(L, 1, "rigel object");
  // Copy, so scripts cannot edit the registry's lists.
  lua_createtable(L, 0, 2);
  for (const char* key : {"methods", "fields"}) {
    lua_getfield(L, -2, key);
    const lua_Integer n = luaL_len(L, -1);
    lua_createtable(L, static_cast<int>(n), 0);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -2, i);
      lua_rawseti(L, -2, i);
    }
    lua_setfield(L, -3, key);
    lua_pop(L, 1);
  }
  return 1;
}

}  // namespace

int rigel::lua::OpenRigel(lua_State* L) {
  using namespace rigel::lua;
  AttachTypeCache(L);
  lua_newtable(L);
  lua_pushcfunction(L, w_members);
  lua_setfield(L, -2, "members");
  OpenVec3(L);
  OpenQuat(L);
  OpenSkeleton(L);
  OpenClip(L);
  OpenPose(L);
  OpenScene(L);
  OpenRig(L);
  OpenRetarget(L);
  lua_pushliteral(L, RIGEL_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}

namespace rigel::lua {

int MessageHandler(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  if (message == nullptr) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    message = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

namespace {

void SetPackagePath(lua_State* L, const std::vector<std::string>& folders, bool keep_default) {
  lua_getglobal(L, "package");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const std::string& folder : folders) {
    if (folder.empty()) continue;
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", folder.c_str(), folder.c_str());
    luaL_addvalue(&b);
  }
  if (keep_default) {
    lua_getfield(L, -2, "path");
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

// The module keeps its type cache pointer in the state's extra space, which lua_newstate leaves
// uninitialised for the main thread.
void ClearExtraSpace(lua_State* L) { *static_cast<void**>(lua_getextraspace(L)) = nullptr; }

// Allocator of the states made here: blocks of up to kMaxPooled bytes freed by the state go to a
// free list per exact size and are reused for the next block of that size, so short-lived
// values (a vec3 per operation in rig callbacks) do not go through malloc/free each time. Blocks
// come from malloc, so they are interchangeable with those luaL_newstate's allocator made before
// the switch. The lists (bounded by the state's peak small-block use) are returned to malloc when
// the state frees its main block, the last thing lua_close does.
struct BlockPool {
  static constexpr size_t kMaxPooled = 256;
  void* main_block = nullptr;  // the state's global block (lua_getextraspace of the main thread)
  void* lists[kMaxPooled + 1] = {};
};

void* PooledAlloc(void* ud, void* ptr, size_t osize, size_t nsize) noexcept {
  auto* pool = static_cast<BlockPool*>(ud);
  if (nsize == 0) {
    if (ptr == pool->main_block) {  // lua_close is done: release everything
      std::free(ptr);
      for (void* head : pool->lists) {
        while (head != nullptr) {
          void* next = *static_cast<void**>(head);
          std::free(head);
          head = next;
        }
      }
      delete pool;
      return nullptr;
    }
    if (ptr != nullptr && osize >= sizeof(void*) && osize <= BlockPool::kMaxPooled) {
      *static_cast<void**>(ptr) = pool->lists[osize];
      pool->lists[osize] = ptr;
      return nullptr;
    }
    std::free(ptr);
    return nullptr;
  }
  // For a new block, osize is the kind of object, not a size.
  if (ptr == nullptr && nsize <= BlockPool::kMaxPooled && pool->lists[nsize] != nullptr) {
    void* block = pool->lists[nsize];
    pool->lists[nsize] = *static_cast<void**>(block);
    return block;
  }
  return std::realloc(ptr, nsize);
}

// luaL_newstate (its panic and warning functions) with the pooled allocator.
lua_State* NewPooledState() {
  lua_State* L = luaL_newstate();
  if (L == nullptr) return nullptr;
  auto* pool = new (std::nothrow) BlockPool();
  if (pool != nullptr) {
    pool->main_block = lua_getextraspace(L);
    lua_setallocf(L, PooledAlloc, pool);
  }
  return L;
}

struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

}  // namespace

void PreloadRigel(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_rigel);
  lua_setfield(L, -2, "rigel");
  lua_pop(L, 1);
}

lua_State* NewRigelState(const std::string& scripts_dir) {
  lua_State* L = NewPooledState();
  if (L == nullptr) return nullptr;
  ClearExtraSpace(L);
  luaL_openlibs(L);
  lua_gc(L, LUA_GCGEN, 0, 0);  // rig scripts make many short-lived vec3/quat values
  SetPackagePath(L, {scripts_dir}, true);
  PreloadRigel(L);
  return L;
}

int RunScript(const RunOptions& options, std::FILE* err) {
  // Declared before the state: __gc metamethods run by lua_close may still consult it.
  std::unique_ptr<Sandbox> sandbox;
  std::unique_ptr<lua_State, StateCloser> state(NewPooledState());
  lua_State* L = state.get();
  if (L == nullptr) {
    std::fprintf(err, "rigel run: cannot create a Lua state (out of memory)\n");
    return 1;
  }
  ClearExtraSpace(L);
  luaL_openlibs(L);
  lua_gc(L, LUA_GCGEN, 0, 0);  // rig scripts make many short-lived vec3/quat values
  std::error_code ec;
  if (!options.out_dir.empty()) std::filesystem::create_directories(options.out_dir, ec);
  const std::string script_dir = CanonicalPath(options.script).parent_path().string();
  SetPackagePath(L, {script_dir, options.scripts_dir}, options.allow_io);
  PreloadRigel(L);

  if (!options.allow_io) {
    std::vector<std::string> roots = options.args;  // read only; only --out is written
    roots.push_back(options.script);
    sandbox = std::make_unique<Sandbox>(roots, std::vector<std::string>{options.out_dir},
                                        std::vector<std::string>{script_dir, options.scripts_dir});
    InstallSandbox(L, sandbox.get());
  }

  // arg table: arg[0] = script, arg[1..n] = arguments, arg.out = output folder.
  lua_createtable(L, static_cast<int>(options.args.size()), 2);
  lua_pushstring(L, options.script.c_str());
  lua_rawseti(L, -2, 0);
  for (size_t i = 0; i < options.args.size(); ++i) {
    lua_pushstring(L, options.args[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  if (!options.out_dir.empty()) {
    lua_pushstring(L, options.out_dir.c_str());
    lua_setfield(L, -2, "out");
  }
  lua_setglobal(L, "arg");

  lua_pushcfunction(L, MessageHandler);
  const int handler = lua_gettop(L);
  if (luaL_loadfilex(L, options.script.c_str(), "t") != LUA_OK) {
    std::fprintf(err, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  for (const std::string& a : options.args) lua_pushstring(L, a.c_str());
  if (lua_pcall(L, static_cast<int>(options.args.size()), 0, handler) != LUA_OK) {
    const char* message = lua_tostring(L, -1);
    std::fprintf(err, "%s\n", message != nullptr ? message : "(error object is not a string)");
    return 1;
  }
  return 0;
}

}  // namespace rigel::lua
