// The `rigel` Lua module and the script runner. See rigel_module.h.
#include "bindings/lua/rigel_module.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>

#include "bindings/lua/boxes.h"
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
  OpenBakeSummary(L);
  OpenRetarget(L);
  OpenCheck(L);
  OpenFootRoll(L);
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

// The allocator of every state rigel makes, and what the state owns besides its Lua heap.
// Blocks of up to kMaxPooled bytes freed by the state go to a free list per exact size and are
// reused for the next block of that size, so short-lived values (a vec3 per operation in rig
// callbacks) do not go through malloc/free each time. `used` counts the bytes the state holds
// (pooled free blocks excluded) against `limit`. The lists, the sandbox and this object are
// released when the state frees its main block, the last thing lua_close does (after every __gc).
struct StateHeap {
  static constexpr size_t kMaxPooled = 256;
  void* main_block = nullptr;  // the state's global block (lua_getextraspace of the main thread)
  void* lists[kMaxPooled + 1] = {};
  size_t used = 0;
  size_t limit = 0;  // 0 = none
  std::chrono::steady_clock::time_point deadline;
  std::string timeout_message;
  std::unique_ptr<Sandbox> sandbox;
};

void* StateAlloc(void* ud, void* ptr, size_t osize, size_t nsize) noexcept {
  auto* heap = static_cast<StateHeap*>(ud);
  const size_t old_size = ptr != nullptr ? osize : 0;  // for a new block osize is its kind
  if (nsize == 0) {
    if (ptr == nullptr) return nullptr;
    if (ptr == heap->main_block) {  // lua_close is done: release everything
      std::free(ptr);
      for (void* head : heap->lists) {
        while (head != nullptr) {
          void* next = *static_cast<void**>(head);
          std::free(head);
          head = next;
        }
      }
      delete heap;
      return nullptr;
    }
    heap->used -= old_size;
    if (osize >= sizeof(void*) && osize <= StateHeap::kMaxPooled) {
      *static_cast<void**>(ptr) = heap->lists[osize];
      heap->lists[osize] = ptr;
      return nullptr;
    }
    std::free(ptr);
    return nullptr;
  }
  if (heap->limit != 0 && nsize > old_size && heap->used - old_size + nsize > heap->limit) {
    return nullptr;  // Lua raises "not enough memory"
  }
  if (ptr == nullptr && nsize <= StateHeap::kMaxPooled && heap->lists[nsize] != nullptr) {
    void* block = heap->lists[nsize];
    heap->lists[nsize] = *static_cast<void**>(block);
    heap->used += nsize;
    return block;
  }
  void* block = std::realloc(ptr, nsize);
  if (block != nullptr) heap->used = heap->used - old_size + nsize;
  return block;
}

int Panic(lua_State* L) {
  const char* message = lua_tostring(L, -1);
  std::fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n",
               message != nullptr ? message : "error object is not a string");
  return 0;  // lua_error then aborts
}

// Count hook of states with a deadline.
void DeadlineHook(lua_State* L, lua_Debug*) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  const auto* heap = static_cast<const StateHeap*>(ud);
  if (std::chrono::steady_clock::now() > heap->deadline) {
    luaL_error(L, "%s", heap->timeout_message.c_str());
  }
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

lua_State* NewState(const StateOptions& options) {
  auto* heap = new (std::nothrow) StateHeap();
  if (heap == nullptr) return nullptr;
  heap->limit = options.memory_limit;
  lua_State* L = lua_newstate(StateAlloc, heap);
  if (L == nullptr) {
    delete heap;
    return nullptr;
  }
  heap->main_block = lua_getextraspace(L);  // from here on lua_close frees `heap`
  ClearExtraSpace(L);
  lua_atpanic(L, Panic);
  bool ok = true;
  try {
    if (options.sandbox) {
      heap->sandbox = std::make_unique<Sandbox>(options.allowed_paths, options.writable_paths,
                                                options.module_folders);
    }
    heap->timeout_message = options.timeout_message;
  } catch (...) {
    ok = false;
  }
  // The rest may raise a Lua memory error: run it protected.
  struct Setup {
    const StateOptions* options;
    const Sandbox* sandbox;
  } setup{&options, heap->sandbox.get()};
  lua_pushcfunction(L, [](lua_State* state) {
    const auto* given = static_cast<const Setup*>(lua_touserdata(state, 1));
    luaL_openlibs(state);
    SetPackagePath(state, given->options->module_folders, given->options->default_module_path);
    PreloadRigel(state);
    if (given->sandbox != nullptr) InstallSandbox(state, given->sandbox);
    return 0;
  });
  lua_pushlightuserdata(L, &setup);
  if (!ok || lua_pcall(L, 1, 0, 0) != LUA_OK) {
    lua_close(L);
    return nullptr;
  }
  lua_gc(L, LUA_GCGEN, 0, 0);  // rig scripts make many short-lived vec3/quat values
  if (options.timeout > 0) {
    heap->deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(options.timeout));
    lua_sethook(L, DeadlineHook, LUA_MASKCOUNT, 100000);
  }
  return L;
}

bool ToClip(lua_State* L, int idx, std::shared_ptr<const Skeleton>* skeleton,
            std::shared_ptr<const Clip>* clip) {
  const auto* box = static_cast<const ClipBox*>(TestBox(L, idx, kClipType));
  if (box == nullptr || !box->alive || !box->clip || !box->skeleton) return false;
  *skeleton = box->skeleton;
  *clip = box->clip;
  return true;
}

std::string ScriptFolder(const RunOptions& options) {
  return CanonicalPath(options.script).parent_path().string();
}

int RunScript(const RunOptions& options, std::FILE* err) {
  std::error_code ec;
  if (!options.out_dir.empty()) std::filesystem::create_directories(options.out_dir, ec);
  const std::string script_dir = ScriptFolder(options);
  StateOptions state_options;
  state_options.module_folders = {script_dir, options.scripts_dir};
  state_options.default_module_path = options.allow_io;
  state_options.sandbox = !options.allow_io;
  state_options.allowed_paths = options.args;
  state_options.allowed_paths.push_back(options.script);
  if (!options.out_dir.empty()) state_options.writable_paths.push_back(options.out_dir);
  std::unique_ptr<lua_State, StateCloser> state(NewState(state_options));
  lua_State* L = state.get();
  if (L == nullptr) {
    std::fprintf(err, "rigel run: cannot create a Lua state (out of memory)\n");
    return 1;
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
  // One stack slot per argument: a long file list needs the stack grown first (Lua guarantees
  // only LUA_MINSTACK free slots).
  if (!lua_checkstack(L, static_cast<int>(std::min<size_t>(options.args.size(), 1u << 24)) + 1)) {
    std::fprintf(err, "rigel run: %zu arguments are more than a Lua call takes\n",
                 options.args.size());
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
