// Full-body bake: 4 effectors (feet and hands; position, or position + orientation) solved by one
// adaptive-DLS stage on every frame of a CMU clip, targets = the source frame's joint positions
// moved by a per-frame offset.
//   BM_BakeCpp:     the loop in C++ (ik::BakeJob, targets computed in a C++ callback).
//   BM_BakeLua:     rig:bake(clip, fn) with the same rig built in Lua and the targets set by a Lua
//                   callback written with vec3/quat values and effector names:
//                   rig:target(name, pose:world_position(name) + vec3(...) [, turn * rotation]).
//   BM_BakeLuaFast: the same callback written with the allocation-free forms: effector handles
//                   (1-based indices), pose:world_xyz(joint) and rig:target(e, x, y, z [, q]).
// The Lua overhead is BakeLua / BakeCpp - 1 (goal: <= 10 %); BM_OverheadLua(Fast) measure it
// on the whole clip with the C++ and Lua bakes interleaved (the figure to quote).
//   BM_TargetsCpp / BM_TargetsLua / BM_TargetsLuaFast: the same loops without solving (Lua: the
//   callback returns false), i.e. the fixed per-frame cost of the binding itself.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bindings/lua/rigel_module.h"
#include "core/ik/bake.h"
#include "core/ik/solve.h"
#include "core/pose.h"
#include "importers/load_scene.h"

namespace {

constexpr int kFrames = 240;
const char* const kJoints[] = {"LeftFoot", "RightFoot", "LeftHand", "RightHand"};

std::string ClipPath() {
  const std::string shared = std::string(RIGEL_SHARED_DATA) + "/cmu_cgspeed/01_01.bvh";
  if (std::filesystem::exists(shared)) return shared;
  return std::string(RIGEL_SOURCE_DIR) + "/samples/cmu_walk/walk.bvh";
}

// Offset of effector `e` at frame `f` (1-based, as in Lua).
Eigen::Vector3d Offset(int e, int f) {
  return Eigen::Vector3d(0.5 * std::sin(0.1 * f + e), 0.3, 0.2 * std::cos(0.07 * f));
}

// Orientation target of effector `e` at frame `f`: a small turn about X.
Eigen::Quaterniond Turn(int f) {
  return Eigen::Quaterniond(Eigen::AngleAxisd(0.002 * f, Eigen::Vector3d::UnitX()));
}

// The C++ bake: rig, targets and loop as in the Lua scripts below.
class CppBake {
 public:
  CppBake(bool six_d, bool solve, int max_frames)
      : six_d_(six_d), solve_(solve), scene_(rigel::LoadScene(ClipPath())) {
    const rigel::Skeleton& s = *scene_.skeleton;
    const rigel::Clip& full = scene_.clips.front();
    frames_ = std::min(max_frames, full.num_frames());
    source_ = rigel::Clip(frames_, full.num_channels(), full.frame_time());
    for (int f = 0; f < frames_; ++f) {
      std::copy(full.frame(f).begin(), full.frame(f).end(), source_.frame(f).begin());
    }
    rig_ = rigel::ik::Rig(scene_.skeleton);
    for (int e = 0; e < 4; ++e) {
      joints_[e] = s.FindJoint(kJoints[e]);
      rigel::ik::Task task;
      task.type = six_d ? rigel::ik::TaskType::kPose : rigel::ik::TaskType::kPosition;
      task.joint = joints_[e];
      rig_.AddTask(task);
    }
    targets_.resize(4);
  }

  int frames() const { return frames_; }

  // One bake of every frame into a new clip (as rig:bake returns one); returns the solver
  // iterations.
  long Run() {
    auto baked = std::make_shared<rigel::Clip>();
    rigel::ik::BakeSummary summary;
    rigel::ik::BakeJob job;
    job.rig = &rig_;
    job.targets = &targets_;
    job.clip = &source_;
    job.output = baked.get();
    job.workspace = &ws_;
    job.report = &report_;
    job.summary = &summary;
    job.on_frame = [this](int f, rigel::Pose& pose, std::string*) {
      for (int e = 0; e < 4; ++e) {
        targets_[e].position = pose.world[joints_[e]].translation() + Offset(e, f + 1);
        if (six_d_) {
          targets_[e].orientation =
              Turn(f + 1) * Eigen::Quaterniond(pose.world[joints_[e]].rotation());
        }
      }
      benchmark::DoNotOptimize(targets_.data());
      benchmark::ClobberMemory();
      return solve_ ? rigel::ik::FrameAction::kSolve : rigel::ik::FrameAction::kSkip;
    };
    if (!job.Run()) return -1;
    benchmark::DoNotOptimize(baked->values().data());
    return static_cast<long>(summary.iterations);
  }

 private:
  bool six_d_, solve_;
  rigel::Scene scene_;
  rigel::Clip source_;
  int frames_ = 0;
  rigel::ik::Rig rig_;
  int joints_[4] = {};
  rigel::ik::Workspace ws_;
  rigel::ik::SolveReport report_;
  std::vector<rigel::ik::Target> targets_;
};

// The counters of a bake benchmark: frames baked per second, and solver iterations per frame
// (`iterations` summed over the benchmark's runs of `frames` frames each).
void SetRateCounters(benchmark::State& state, int frames, long iterations) {
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["solver_iters/frame"] =
      static_cast<double>(iterations) /
      (static_cast<double>(frames) * static_cast<double>(std::max<long>(1, state.iterations())));
}

void RunCpp(benchmark::State& state, bool solve) {
  CppBake bake(state.range(0) != 0, solve, kFrames);
  long iterations = 0;
  for (auto _ : state) iterations += bake.Run();
  SetRateCounters(state, bake.frames(), iterations);
}

void BM_BakeCpp(benchmark::State& state) { RunCpp(state, true); }
void BM_TargetsCpp(benchmark::State& state) { RunCpp(state, false); }

// The rig both scripts build, the same as the C++ one.
constexpr const char* kSetup = R"lua(
local rigel = require("rigel")
local clip = rigel.load(PATH):clip()
clip = clip:slice(1, math.min(FRAMES, clip.num_frames))
local rig = rigel.rig(clip.skeleton)
local joints = { "LeftFoot", "RightFoot", "LeftHand", "RightHand" }
for _, j in ipairs(joints) do rig:effector(j, { type = SIX_D and "both" or "position", name = j }) end
local sin, cos = math.sin, math.cos
local vec3, quat = rigel.vec3, rigel.quat
local X = vec3(1, 0, 0)
local solve = not TARGETS_ONLY
)lua";

// The callback written with vec3/quat values and effector names.
constexpr const char* kVec3Frame = R"lua(
local function on_frame(f, pose)
  local turn = SIX_D and quat.axis_angle(X, math.deg(0.002 * f))
  for e = 1, 4 do
    local j = joints[e]
    local k = e - 1
    local position = pose:world_position(j) + vec3(0.5 * sin(0.1 * f + k), 0.3, 0.2 * cos(0.07 * f))
    if SIX_D then
      rig:target(j, position, turn * pose:world_rotation(j))
    else
      rig:target(j, position)
    end
  end
  return solve
end
)lua";

// The same callback with effector handles, pose:world_xyz and rig:target(e, x, y, z [, q]).
constexpr const char* kHandleFrame = R"lua(
local function on_frame(f, pose)
  local turn = SIX_D and quat.axis_angle(X, math.deg(0.002 * f))
  local dy, dz = 0.3, 0.2 * cos(0.07 * f)
  for e = 1, 4 do
    local j = joints[e]
    local x, y, z = pose:world_xyz(j)
    if SIX_D then
      rig:target(e, x + 0.5 * sin(0.1 * f + e - 1), y + dy, z + dz, turn * pose:world_rotation(j))
    else
      rig:target(e, x + 0.5 * sin(0.1 * f + e - 1), y + dy, z + dz)
    end
  end
  return solve
end
)lua";

// One bake of the clip with the script's on_frame callback; returns the solver iterations.
constexpr const char* kBake = R"lua(
function bake()
  local baked, summary = rig:bake(clip, on_frame)
  return summary.iterations
end
)lua";

const std::string kScript = std::string(kSetup) + kVec3Frame + kBake;
const std::string kFastScript = std::string(kSetup) + kHandleFrame + kBake;

// The Lua bake: a rigel state with `script` loaded; Run() calls its bake().
class LuaBake {
 public:
  LuaBake(const std::string& script, bool six_d, bool targets_only, int max_frames)
      : L_(rigel::lua::NewState({.module_folders = {RIGEL_SCRIPTS_DIR}})) {
    lua_pushstring(L_, ClipPath().c_str());
    lua_setglobal(L_, "PATH");
    lua_pushinteger(L_, max_frames);
    lua_setglobal(L_, "FRAMES");
    lua_pushboolean(L_, six_d);
    lua_setglobal(L_, "SIX_D");
    lua_pushboolean(L_, targets_only);
    lua_setglobal(L_, "TARGETS_ONLY");
    if (luaL_dostring(L_, script.c_str()) != LUA_OK) error_ = lua_tostring(L_, -1);
  }
  ~LuaBake() { lua_close(L_); }
  LuaBake(const LuaBake&) = delete;
  LuaBake& operator=(const LuaBake&) = delete;

  const std::string& error() const { return error_; }

  // One bake; returns the solver iterations, or -1 (error() says why).
  long Run() {
    lua_getglobal(L_, "bake");
    if (lua_pcall(L_, 0, 1, 0) != LUA_OK) {
      error_ = lua_tostring(L_, -1);
      lua_pop(L_, 1);
      return -1;
    }
    const long iterations = static_cast<long>(lua_tointeger(L_, -1));
    lua_pop(L_, 1);
    return iterations;
  }

 private:
  lua_State* L_;
  std::string error_;
};

void RunLua(benchmark::State& state, const std::string& script, bool targets_only) {
  LuaBake bake(script, state.range(0) != 0, targets_only, kFrames);
  if (!bake.error().empty()) {
    state.SkipWithError(bake.error().c_str());
    return;
  }
  long iterations = 0;
  for (auto _ : state) {
    const long it = bake.Run();
    if (it < 0) {
      state.SkipWithError(bake.error().c_str());
      break;
    }
    iterations += it;
  }
  SetRateCounters(state, kFrames, iterations);
}

// CPU time of the calling thread, in milliseconds (time the VM's host takes away from this
// thread is not counted).
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

// The overhead figure: C++ and Lua bakes of the whole clip run alternately, `pairs` times; the
// overhead is the median of the per-pair ratios Lua / C++ - 1. Pairing neighbouring runs cancels
// the slow drifts of a shared machine's speed that move separate benchmarks by several percent.
void RunOverhead(benchmark::State& state, const std::string& script) {
  const bool six_d = state.range(0) != 0;
  constexpr int kAllFrames = 1 << 30;
  CppBake cpp(six_d, true, kAllFrames);
  LuaBake lua(script, six_d, false, kAllFrames);
  if (!lua.error().empty()) {
    state.SkipWithError(lua.error().c_str());
    return;
  }
  constexpr int kPairs = 21;
  std::vector<double> ratios, cpp_ms, lua_ms;
  long cpp_iterations = 0, lua_iterations = 0;
  for (auto _ : state) {
    cpp.Run();  // Warm-up: caches, pools and the Lua heap reach their steady state.
    lua.Run();
    for (int i = 0; i < kPairs; ++i) {
      // Alternate which side goes first, so neither always follows the other.
      double t_cpp = 0, t_lua = 0;
      for (int side = 0; side < 2; ++side) {
        const bool run_cpp = (side == 0) == (i % 2 == 0);
        const double t0 = ThreadCpuMs();
        const long it = run_cpp ? cpp.Run() : lua.Run();
        const double ms = ThreadCpuMs() - t0;
        if (it < 0) {
          state.SkipWithError(lua.error().c_str());
          return;
        }
        (run_cpp ? t_cpp : t_lua) = ms;
        (run_cpp ? cpp_iterations : lua_iterations) = it;
      }
      ratios.push_back(t_lua / t_cpp);
      cpp_ms.push_back(t_cpp);
      lua_ms.push_back(t_lua);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double overhead = 100.0 * (median(ratios) - 1.0);
  state.counters["overhead_%"] = overhead;
  state.counters["cpp_ms"] = median(cpp_ms);
  state.counters["lua_ms"] = median(lua_ms);
  state.counters["frames"] = cpp.frames();
  state.counters["same_iterations"] = cpp_iterations == lua_iterations ? 1 : 0;
}

void BM_BakeLua(benchmark::State& state) { RunLua(state, kScript, false); }
void BM_BakeLuaFast(benchmark::State& state) { RunLua(state, kFastScript, false); }
void BM_TargetsLua(benchmark::State& state) { RunLua(state, kScript, true); }
void BM_TargetsLuaFast(benchmark::State& state) { RunLua(state, kFastScript, true); }

void BM_OverheadLua(benchmark::State& state) { RunOverhead(state, kScript); }
void BM_OverheadLuaFast(benchmark::State& state) { RunOverhead(state, kFastScript); }

// Arg 0: position effectors (3-D); arg 1: position + orientation effectors (6-D, as in the bake
// benchmark's Blender yardstick).
BENCHMARK(BM_BakeCpp)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_BakeLua)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_BakeLuaFast)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsCpp)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsLua)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsLuaFast)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);
BENCHMARK(BM_OverheadLua)->Unit(benchmark::kMillisecond)->Iterations(1)->Arg(0)->Arg(1);
BENCHMARK(BM_OverheadLuaFast)->Unit(benchmark::kMillisecond)->Iterations(1)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
