// Full-body bake: 4 effectors (feet and hands; position, or position + orientation) solved by one
// adaptive-DLS stage on every frame of a CMU clip, targets = the source frame's joint positions
// moved by a per-frame offset.
//   BM_BakeCpp:     the loop in C++ (ik::Solve, targets computed in C++).
//   BM_BakeLua:     rig:bake(clip, fn) with the same rig built in Lua and the targets set by a Lua
//                   callback written with vec3/quat values and effector names:
//                   rig:target(name, pose:world_position(name) + vec3(...) [, turn * rotation]).
//   BM_BakeLuaFast: the same callback written with the allocation-free forms: effector handles
//                   (1-based indices), pose:world_xyz(joint) and rig:target(e, x, y, z [, q]).
// The Lua overhead is BakeLua / BakeCpp - 1 (goal: <= 10 %).
//   BM_TargetsCpp / BM_TargetsLua / BM_TargetsLuaFast: the same loops without solving (Lua: the
//   callback returns false), i.e. the fixed per-frame cost of the binding itself.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "bindings/lua/rigel_module.h"
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

void RunCpp(benchmark::State& state, bool solve) {
  const bool six_d = state.range(0) != 0;
  const rigel::Scene scene = rigel::LoadScene(ClipPath());
  const rigel::Skeleton& s = *scene.skeleton;
  const rigel::Clip& source = scene.clips.front();
  const int frames = std::min(kFrames, source.num_frames());
  rigel::ik::Rig rig(scene.skeleton);
  int joints[4];
  for (int e = 0; e < 4; ++e) {
    joints[e] = s.FindJoint(kJoints[e]);
    rigel::ik::Task task;
    task.type = six_d ? rigel::ik::TaskType::kPose : rigel::ik::TaskType::kPosition;
    task.joint = joints[e];
    rig.AddTask(task);
  }
  rigel::ik::Workspace ws;
  rigel::ik::SolveReport report;
  std::vector<rigel::ik::Target> targets(4);
  rigel::Clip baked = source;
  rigel::Pose pose(s);
  long iterations = 0;
  for (auto _ : state) {
    for (int f = 0; f < frames; ++f) {
      pose.SetFromRow(s, source.frame(f));
      for (int e = 0; e < 4; ++e) {
        targets[e].position = pose.world[joints[e]].translation() + Offset(e, f + 1);
        if (six_d) {
          targets[e].orientation =
              Turn(f + 1) * Eigen::Quaterniond(pose.world[joints[e]].rotation());
        }
      }
      benchmark::DoNotOptimize(targets.data());
      benchmark::ClobberMemory();
      if (solve) {
        rigel::ik::Solve(rig, targets, pose, ws, &report);
        iterations += report.iterations;
      }
      std::copy(pose.channels.begin(), pose.channels.end(), baked.frame(f).begin());
    }
    benchmark::DoNotOptimize(baked.values().data());
  }
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["solver_iters/frame"] =
      static_cast<double>(iterations) /
      (static_cast<double>(frames) * static_cast<double>(state.iterations()));
}

void BM_BakeCpp(benchmark::State& state) { RunCpp(state, true); }
void BM_TargetsCpp(benchmark::State& state) { RunCpp(state, false); }

constexpr const char* kScript = R"lua(
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
function bake()
  local iterations = 0
  local baked, summary = rig:bake(clip, function(f, pose)
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
  end)
  return summary.iterations
end
)lua";

// The same callback with effector handles, pose:world_xyz and rig:target(e, x, y, z [, q]).
constexpr const char* kFastScript = R"lua(
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
function bake()
  local iterations = 0
  local baked, summary = rig:bake(clip, function(f, pose)
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
  end)
  return summary.iterations
end
)lua";

void RunLua(benchmark::State& state, const char* script, bool targets_only) {
  lua_State* L = rigel::lua::NewRigelState(RIGEL_SCRIPTS_DIR);
  lua_pushstring(L, ClipPath().c_str());
  lua_setglobal(L, "PATH");
  lua_pushinteger(L, kFrames);
  lua_setglobal(L, "FRAMES");
  lua_pushboolean(L, state.range(0) != 0);
  lua_setglobal(L, "SIX_D");
  lua_pushboolean(L, targets_only);
  lua_setglobal(L, "TARGETS_ONLY");
  if (luaL_dostring(L, script) != LUA_OK) {
    state.SkipWithError(lua_tostring(L, -1));
    lua_close(L);
    return;
  }
  long iterations = 0;
  for (auto _ : state) {
    lua_getglobal(L, "bake");
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
      state.SkipWithError(lua_tostring(L, -1));
      break;
    }
    iterations += lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  const int frames = kFrames;
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["solver_iters/frame"] =
      static_cast<double>(iterations) /
      (static_cast<double>(frames) * static_cast<double>(std::max<long>(1, state.iterations())));
  lua_close(L);
}

void BM_BakeLua(benchmark::State& state) { RunLua(state, kScript, false); }
void BM_BakeLuaFast(benchmark::State& state) { RunLua(state, kFastScript, false); }
void BM_TargetsLua(benchmark::State& state) { RunLua(state, kScript, true); }
void BM_TargetsLuaFast(benchmark::State& state) { RunLua(state, kFastScript, true); }

// Arg 0: position effectors (3-D); arg 1: position + orientation effectors (6-D, as in the bake
// benchmark's Blender yardstick).
BENCHMARK(BM_BakeCpp)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_BakeLua)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_BakeLuaFast)->Unit(benchmark::kMillisecond)->MinTime(2.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsCpp)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsLua)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);
BENCHMARK(BM_TargetsLuaFast)->Unit(benchmark::kMillisecond)->MinTime(1.0)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
