// libFuzzer harness: the Lua API surface. The input bytes drive a small grammar that writes a Lua
// script: calls of every method of every bound type (scene, skeleton, clip, pose, vec3, quat, rig)
// and every module function, with arguments drawn from a pool of values (the objects, results of
// earlier calls, nil, huge numbers, NaN, infinities, wrong types, names, paths, functions),
// operators, field reads and writes, garbage collections, to-be-closed variables, and rig:bake
// calls whose callbacks run more such statements (also on the pose and clip being baked). The
// script runs in a fresh sandboxed state (as `rigel bake` makes it) with a 64 MiB Lua heap and a
// cap of 2 million VM instructions. Every statement runs under pcall: any Lua error is fine; a
// sanitizer report, an abort or an escaped C++ exception is a finding.
//
// RIGEL_FUZZ_PRINT=1 prints each generated script to stderr (to read a reproducer).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bindings/lua/rigel_module.h"
#include "bindings/lua/sandbox.h"
#include "fuzz_check.h"

namespace {

// Objects created by the prelude, in slots 1..7; constants follow, then results, then shapes.
const char* const kKinds[] = {"scene", "skeleton", "clip", "pose", "vec3", "quat", "rig"};
constexpr int kNumKinds = 7;

// The pool of constant argument values (slots 8 ... 8 + count - 1).
const char* const kConstants[] = {
    "false",
    "true",
    "0",
    "-1",
    "1",
    "2",
    "3",
    "4",
    "0.5",
    "-0.0",
    "1e308",
    "-1e308",
    "0/0",
    "math.huge",
    "-math.huge",
    "math.maxinteger",
    "math.mininteger",
    "2^53",
    "1e9",
    "100",
    "1000",
    "200000",
    "2^31",
    "-2^31",
    "\"\"",
    "\"Root\"",
    "\"Upper\"",
    "\"Lower\"",
    "\"Tip\"",
    "\"Side\"",
    "\"Zrotation\"",
    "\"Xposition\"",
    "\"ZXY\"",
    "\"XYZ\"",
    "\"position\"",
    "\"orientation\"",
    "\"both\"",
    "\"aim\"",
    "\"dls\"",
    "\"ccd\"",
    "\"two_bone\"",
    "\"\\xff\\xfe\"",
    "string.rep('x', 300)",
    "{}",
    "{1, 2, 3}",
    "{x = 1, y = 2, z = 3}",
    "{w = 1, x = 0, y = 0, z = 0}",
    "{1, 2}",
    "{Root = 'Root'}",
    "{type = 'both'}",
    "{weight = 1e308}",
    "{'Root', 'Tip'}",
    "function() end",
    "function() error('boom') end",
    "function() return 1e308 end",
    "OUT .. '/f.bvh'",
    "OUT .. '/f.glb'",
    "OUT .. '/f.fbx'",
    "OUT .. '/../escape.bvh'",
    "FIXTURE",
    "'/etc/passwd'",
    "coroutine.create(function() end)",
    "setmetatable({}, {__index = function() error('x') end})",
};
constexpr int kNumConstants = sizeof(kConstants) / sizeof(kConstants[0]);
constexpr int kFirstConstant = kNumKinds + 1;
constexpr int kFirstResult = kFirstConstant + kNumConstants;
constexpr int kNumResults = 16;
constexpr int kNumSlots = kFirstResult + kNumResults - 1;

// Shapes that once crashed the binding (issue 25): long lists, __len that changes or raises,
// __index that raises or answers once, option tables holding them. Reached by argument bytes of
// 240 and up only (Slot), so that the committed seeds and reproducers (bytes below 240) keep
// making the same scripts. Slots kFirstShape ... kFirstShape + kNumShapes - 1.
const char* const kShapes[] = {
    "(function() local t = {} for i = 1, 1000 do t[i] = 'Tip' end return t end)()",
    "(function() local t = {} for i = 1, 1000 do t[i] = {} end return t end)()",
    "setmetatable({'Tip', {}, {}, {}}, {__len = (function() local n = 0 return function() n = n "
    "+ 1 return n == 1 and 1 or 4 end end)()})",
    "setmetatable({}, {__len = function() return 2^40 end})",
    "setmetatable({}, {__len = function() error('len') end})",
    "setmetatable({}, {__index = (function() local n = 0 return function() n = n + 1 return n <= "
    "2 and 'Tip' or nil end end)()})",
    "{effectors = (function() local t = {} for i = 1, 1000 do t[i] = 'Tip' end return t end)()}",
    "{map = {Tip = setmetatable({'Tip', {}, {}}, {__len = (function() local n = 0 return "
    "function() n = n + 1 return n == 1 and 1 or 3 end end)()})}}",
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);
constexpr unsigned kShapeByte = 240;

const char* const kBinary[] = {"+", "-", "*", "/", "==", "<", "..", "//", "%", "^"};

struct Surface {
  std::vector<std::string> methods[kNumKinds];
  std::vector<std::string> fields[kNumKinds];
  std::vector<std::string> functions;  // "rigel.load", "rigel.quat.euler", ...
};

std::string g_out;      // the sandbox's output folder
std::string g_fixture;  // a small BVH the sandbox allows
Surface g_surface;
std::unique_ptr<rigel::lua::Sandbox> g_sandbox;

// Reads the fuzz bytes; zeros once they run out.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  unsigned Next() { return pos_ < size_ ? data_[pos_++] : 0u; }
  unsigned Pick(std::size_t n) { return n == 0 ? 0u : static_cast<unsigned>(Next() % n); }
  bool empty() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

struct Heap {
  std::size_t used = 0;
  std::size_t limit = 64u << 20;
};

void* LimitedAlloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto* heap = static_cast<Heap*>(ud);
  if (ptr == nullptr) old_size = 0;
  if (new_size == 0) {
    std::free(ptr);
    heap->used -= old_size;
    return nullptr;
  }
  if (new_size > old_size && heap->used - old_size + new_size > heap->limit) return nullptr;
  void* p = std::realloc(ptr, new_size);
  if (p != nullptr) heap->used = heap->used - old_size + new_size;
  return p;
}

// Instruction cap: the hook runs every 1000 instructions and raises an error past the budget.
constexpr int kHookEvery = 1000;
constexpr int kMaxHooks = 2000;
int g_hooks = 0;
void CountHook(lua_State* L, lua_Debug*) {
  if (++g_hooks > kMaxHooks) luaL_error(L, "instruction limit");
}

struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

// A fresh state set up as `rigel bake` sets up a clip's state: standard libraries, the module,
// the sandbox, OUT and FIXTURE globals, print silenced.
std::unique_ptr<lua_State, StateCloser> NewState(Heap* heap) {
  std::unique_ptr<lua_State, StateCloser> state(lua_newstate(LimitedAlloc, heap));
  lua_State* L = state.get();
  FUZZ_CHECK(L != nullptr, "no Lua state");
  luaL_openlibs(L);
  luaL_requiref(L, "rigel", luaopen_rigel, 0);
  lua_pop(L, 1);
  rigel::lua::InstallSandbox(L, g_sandbox.get());
  lua_pushstring(L, g_out.c_str());
  lua_setglobal(L, "OUT");
  lua_pushstring(L, g_fixture.c_str());
  lua_setglobal(L, "FIXTURE");
  lua_pushcfunction(L, [](lua_State*) { return 0; });
  lua_setglobal(L, "print");
  return state;
}

// Runs `source`; returns the error message or "".
std::string Run(lua_State* L, const std::string& source) {
  if (luaL_loadbufferx(L, source.data(), source.size(), "=fuzz", "t") != LUA_OK) {
    return lua_tostring(L, -1);
  }
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    const char* m = lua_tostring(L, -1);
    return m ? m : "(non-string error)";
  }
  return "";
}

const char* const kPrelude =
    "local rigel = require('rigel')\n"
    "local V = {}\n"
    "local P = pcall\n"
    "P(function()\n"
    "  V[1] = rigel.load(FIXTURE)\n"
    "  V[2] = V[1].skeleton\n"
    "  V[3] = V[1]:clip()\n"
    "  V[4] = V[3]:pose(2)\n"
    "  V[5] = rigel.vec3(1, 2, 3)\n"
    "  V[6] = rigel.quat.euler('ZXY', 10, 20, 30)\n"
    "  V[7] = rigel.rig(V[2])\n"
    "  V[7]:effector('Tip', {type = 'both'})\n"
    "end)\n";

// The method and field names of each kind, and the module's functions, read from a live state
// with rigel.members, so new bindings are fuzzed without editing this list.
void DiscoverSurface() {
  Heap heap;
  auto state = NewState(&heap);
  lua_State* L = state.get();
  std::string script = kPrelude;
  script +=
      "SURFACE = {}\n"
      "for i = 1, 7 do SURFACE[i] = rigel.members(V[i]) end\n"
      "FUNCTIONS = {}\n"
      "for k, v in pairs(rigel) do if type(v) == 'function' then FUNCTIONS[#FUNCTIONS + 1] = "
      "'rigel.' .. k end end\n"
      "for k, v in pairs(rigel.quat) do if type(v) == 'function' then FUNCTIONS[#FUNCTIONS + 1] "
      "= 'rigel.quat.' .. k end end\n"
      "table.sort(FUNCTIONS)\n";
  const std::string error = Run(L, script);
  FUZZ_CHECK(error.empty(), error.c_str());
  auto strings = [L](int table, std::vector<std::string>* out) {
    const lua_Integer n = luaL_len(L, table);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, table, i);
      out->push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  };
  lua_getglobal(L, "SURFACE");
  for (int k = 0; k < kNumKinds; ++k) {
    lua_rawgeti(L, -1, k + 1);
    lua_getfield(L, -1, "methods");
    strings(lua_gettop(L), &g_surface.methods[k]);
    lua_pop(L, 1);
    lua_getfield(L, -1, "fields");
    strings(lua_gettop(L), &g_surface.fields[k]);
    lua_pop(L, 2);
    FUZZ_CHECK(!g_surface.methods[k].empty(), kKinds[k]);
  }
  lua_pop(L, 1);
  lua_getglobal(L, "FUNCTIONS");
  strings(lua_gettop(L), &g_surface.functions);
  lua_pop(L, 1);
  FUZZ_CHECK(g_surface.functions.size() >= 8, "module functions");
}

// Writes the script the bytes describe. Every byte is read in a fixed order (never two reads in
// one expression, whose order the compiler chooses), so an input gives the same script in the
// libFuzzer build and in the replay build.
class Generator {
 public:
  explicit Generator(Bytes* bytes) : bytes_(bytes) {}

  std::string Script() {
    std::string out = kPrelude;
    for (int i = 0; i < kNumConstants; ++i) {
      out += "V[" + std::to_string(kFirstConstant + i) + "] = " + kConstants[i] + "\n";
    }
    for (int i = 0; i < kNumShapes; ++i) {
      out += "V[" + std::to_string(kNumSlots + 1 + i) + "] = " + kShapes[i] + "\n";
    }
    for (int n = 0; n < 48 && !bytes_->empty(); ++n) Statement(&out, 0);
    return out;
  }

 private:
  // A slot of the pool (as Pick(kNumSlots) for bytes below kShapeByte), or a shape.
  std::string Slot() {
    const unsigned b = bytes_->Next();
    if (b >= kShapeByte) {
      return "V[" + std::to_string(kNumSlots + 1 + static_cast<int>(b - kShapeByte) % kNumShapes) +
             "]";
    }
    return "V[" + std::to_string(1 + static_cast<int>(b % kNumSlots)) + "]";
  }
  // Mostly one of the prelude's objects (where methods are), sometimes anything.
  int ObjectSlot() {
    const unsigned b = bytes_->Next();
    return (b & 3) != 0 ? 1 + static_cast<int>(b >> 2) % kNumKinds
                        : 1 + static_cast<int>(b >> 2) % kNumSlots;
  }
  std::string Target() {
    const unsigned b = bytes_->Next();
    const int slot = (b & 1) ? 1 + static_cast<int>(b >> 1) % kNumKinds
                             : kFirstResult + static_cast<int>(b >> 1) % kNumResults;
    return "V[" + std::to_string(slot) + "]";
  }
  std::string Args(int max) {
    const int n = static_cast<int>(bytes_->Pick(max + 1));
    std::string a;
    for (int i = 0; i < n; ++i) a += (i ? ", " : "") + Slot();
    return a;
  }
  // A method name for the object in `slot` (the kind the prelude put there, or any kind).
  const std::string& MethodFor(int slot) {
    const int kind = slot <= kNumKinds ? slot - 1 : static_cast<int>(bytes_->Pick(kNumKinds));
    const auto& list = g_surface.methods[kind];
    return list[bytes_->Pick(list.size())];
  }

  void Statement(std::string* out, int depth) {
    const std::string indent(2 * depth, ' ');
    std::string s;
    switch (bytes_->Pick(12)) {
      case 0:
      case 1:
      case 2:
      case 3: {  // method call
        const int slot = ObjectSlot();
        const std::string& m = MethodFor(slot);
        const std::string target = Target();
        const std::string args = Args(4);
        s = target + " = V[" + std::to_string(slot) + "]:" + m + "(" + args + ")";
        break;
      }
      case 4: {  // module function
        const auto& f = g_surface.functions[bytes_->Pick(g_surface.functions.size())];
        const std::string target = Target();
        const std::string args = Args(4);
        s = target + " = " + f + "(" + args + ")";
        break;
      }
      case 5: {  // operator
        const unsigned op = bytes_->Pick(13);
        const std::string target = Target();
        const std::string a = Slot();
        if (op < 10) {
          const std::string b = Slot();
          s = target + " = " + a + " " + kBinary[op] + " " + b;
        } else if (op == 10) {
          s = target + " = -" + a;
        } else if (op == 11) {
          s = target + " = #" + a;
        } else {
          s = target + " = tostring(" + a + ")";
        }
        break;
      }
      case 6: {  // field read or write, index with any value
        const int slot = ObjectSlot();
        const int kind = slot <= kNumKinds ? slot - 1 : static_cast<int>(bytes_->Pick(kNumKinds));
        const auto& fields = g_surface.fields[kind];
        const std::string key = (fields.empty() || (bytes_->Next() & 1))
                                    ? "[" + Slot() + "]"
                                    : "." + fields[bytes_->Pick(fields.size())];
        const bool write = (bytes_->Next() & 1) != 0;
        const std::string other = write ? Slot() : Target();
        s = write ? "V[" + std::to_string(slot) + "]" + key + " = " + other
                  : other + " = V[" + std::to_string(slot) + "]" + key;
        break;
      }
      case 7:
      case 8: {  // bake with a callback running nested statements
        const std::string rig = (bytes_->Next() & 3) ? "V[7]" : Slot();
        const std::string clip = (bytes_->Next() & 3) ? "V[3]" : Slot();
        std::string body;
        if (depth < 2) {
          body += indent + "    V[" + std::to_string(kFirstResult) + "] = pose\n";
          body += indent + "    V[" + std::to_string(kFirstResult + 1) + "] = frame\n";
          const int n = static_cast<int>(bytes_->Pick(6));
          for (int i = 0; i < n; ++i) Statement(&body, depth + 2);
        }
        const std::string options = (bytes_->Next() & 1) ? ", " + Slot() : std::string();
        const std::string target = Target();
        s = target + " = " + rig + ":bake(" + clip + ", function(frame, pose)\n" + body + indent +
            "  end" + options + ")";
        break;
      }
      case 9:
        s = (bytes_->Next() & 1) ? "collectgarbage()" : "collectgarbage('step', 100)";
        break;
      case 10:
        s = Target() + " = nil";
        break;
      default:  // to-be-closed variable: __close at the end of the block
        s = "do local c <close> = " + Slot() + " end";
        break;
    }
    *out += indent + "P(function()\n" + indent + "  " + s + "\n" + indent + "end)\n";
  }

  Bytes* bytes_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_out =
      (std::filesystem::temp_directory_path() / ("rigel_lua_fuzz_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(g_out);
  g_fixture = std::string(RIGEL_SOURCE_DIR) + "/tests/lua/fixtures/chain.bvh";
  // The fixture is read-only, the output folder writable: with both as read-write roots a fuzzed
  // script once saved a clip over tests/lua/fixtures/chain.bvh (a source file of the repository).
  g_sandbox = std::make_unique<rigel::lua::Sandbox>(std::vector<std::string>{g_fixture},
                                                    std::vector<std::string>{g_out},
                                                    std::vector<std::string>{});
  DiscoverSurface();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes bytes(data, size);
  const std::string script = Generator(&bytes).Script();
  static const bool print = std::getenv("RIGEL_FUZZ_PRINT") != nullptr;
  if (print) std::fprintf(stderr, "---- script ----\n%s---- end ----\n", script.c_str());
  Heap heap;
  auto state = NewState(&heap);
  g_hooks = 0;
  lua_sethook(state.get(), CountHook, LUA_MASKCOUNT, kHookEvery);
  const std::string error = Run(state.get(), script);
  if (print && !error.empty()) std::fprintf(stderr, "error: %s\n", error.c_str());
  // The script itself must load: statements catch their own errors, only the cap may stop it.
  FUZZ_CHECK(error.empty() || error.find("instruction limit") != std::string::npos ||
                 error.find("not enough memory") != std::string::npos,
             error.c_str());
  return 0;
}
