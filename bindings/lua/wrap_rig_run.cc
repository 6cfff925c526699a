// Running a rigel.Rig: rig:solve(pose [, frame]) solves one pose in place (constraints before,
// between and after the stages: ik::ConstrainedFrame), rig:bake(clip [, fn]) runs ik::BakeJob
// over a clip with a per-frame Lua callback.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include "bindings/lua/rig_box.h"
#include "bindings/lua/rigel_module.h"
#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/constrained_solve.h"

namespace rigel::lua {

namespace {

// Pushes the report table of the last solve.
void PushReport(lua_State* L, const RigState& state) {
  const ik::SolveReport& r = state.report;
  const Skeleton& s = state.rig.skeleton();
  lua_createtable(L, 0, 8);
  lua_pushstring(L, ik::StatusName(r.status).data());
  lua_setfield(L, -2, "status");
  lua_pushboolean(L, r.status == ik::Status::kConverged);
  lua_setfield(L, -2, "converged");
  lua_pushinteger(L, r.iterations);
  lua_setfield(L, -2, "iterations");
  lua_pushstring(L, r.message.c_str());
  lua_setfield(L, -2, "message");
  double worst_position = 0, worst_angle = 0;
  lua_createtable(L, 0, static_cast<int>(state.names.size()));
  for (size_t i = 0; i < state.names.size() && i < r.position_error.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, r.position_error[i]);
    lua_setfield(L, -2, "position");
    lua_pushnumber(L, r.angle_error[i] * kDegPerRad);
    lua_setfield(L, -2, "angle");
    lua_setfield(L, -2, state.names[i].c_str());
    worst_position = std::max(worst_position, r.position_error[i]);
    worst_angle = std::max(worst_angle, r.angle_error[i] * kDegPerRad);
  }
  lua_setfield(L, -2, "residuals");
  lua_pushnumber(L, worst_position);
  lua_setfield(L, -2, "max_position_error");
  lua_pushnumber(L, worst_angle);
  lua_setfield(L, -2, "max_angle_error");
  lua_createtable(L, static_cast<int>(r.channels_on_limit.size()), 0);
  for (size_t i = 0; i < r.channels_on_limit.size(); ++i) {
    const int c = r.channels_on_limit[i];
    lua_createtable(L, 0, 2);
    lua_pushstring(L, s.name(s.channel_joint(c)).c_str());
    lua_setfield(L, -2, "joint");
    lua_pushstring(L, ChannelName(s.channels()[c]).data());
    lua_setfield(L, -2, "channel");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "on_limit");
}

// Runs one frame of `state` on `pose` in place: constraints and solve in their declared order
// (ik::ConstrainedFrame). Returns false (message on the Lua stack) for invalid input or a failing
// constraint. The frame brings every world transform up to date; they are marked stale until it
// returns, whatever happens.
bool SolveInPlace(lua_State* L, RigState& state, PoseState& pose, int frame) {
  pose.MarkStale(0);
  bool ok = false;
  catch_exceptions(L, [&] {
    const ik::ConstrainedFrame job{.rig = &state.rig,
                                   .targets = state.targets,
                                   .constraints = &state.constraints,
                                   .state = &state.constraint_state,
                                   .foot_rolls = state.foot_rolls,
                                   .workspace = &state.workspace};
    bool solved = false;
    std::string error;
    ok = job.Run(frame, pose.pose, &state.report, &solved, &error);
    if (ok) pose.MarkFresh();
    if (!ok) lua_pushstring(L, error.c_str());
  });
  return ok;
}

// The bake of w_Rig_bake, with its anchors at fixed stack slots: 1 the rig, 3 the callback or nil,
// 4 the rig's state, 5 the source clip, 6 the baked clip, 7 and 8 the pose (8 is given to the
// callback). Runs ik::BakeJob; the callback calls the Lua function with lua_pcall, never lua_call
// (a Lua error must not unwind through the C++ loop). Returns false with the error value on the
// stack; *script_error says whether it is the callback's (to raise as is).
bool RunBake(lua_State* L, ik::BakeSummary* summary, ik::BakeRecords* records, bool* script_error) {
  RigState* rig = static_cast<RigBox*>(lua_touserdata(L, 4))->state.get();
  PoseState* pose = static_cast<PoseBox*>(lua_touserdata(L, 7))->state.get();
  bool ok = false;
  catch_exceptions(L, [&] {
    ik::BakeJob job;
    job.character = rig;
    job.clip = static_cast<ClipBox*>(lua_touserdata(L, 5))->clip.get();
    job.output = static_cast<ClipBox*>(lua_touserdata(L, 6))->clip.get();
    job.pose = &pose->pose;
    job.forward_kinematics = false;  // world transforms refresh lazily, as the script queries
    job.summary = summary;
    records->effector_names = rig->names;
    records->effector_joints.clear();
    for (const ik::Task& t : rig->rig.tasks) records->effector_joints.push_back(t.joint);
    job.records = &records->frames;
    if (!lua_isnil(L, 3)) {
      job.on_frame = [L, pose, script_error](int frame, Pose&, std::string*) {
        pose->MarkStale(0);  // the loop copied the clip's row into the channels
        lua_pushvalue(L, 3);
        lua_pushinteger(L, frame + 1);
        lua_pushvalue(L, 8);
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
          *script_error = true;
          return ik::FrameAction::kFail;
        }
        const bool skip = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
        lua_pop(L, 1);
        return skip ? ik::FrameAction::kSkip : ik::FrameAction::kSolve;
      };
    }
    ok = job.Run();
    pose->MarkStale(0);
    if (!ok && !*script_error) lua_pushstring(L, job.error.c_str());
  });
  return ok;
}

}  // namespace

int w_Rig_solve(lua_State* L) {
  // rig:solve(pose [, frame]) -> report; the pose receives the answer. Constraints run where they
  // were declared: before the first stage, between two stages, or after the last
  // (ik::ConstrainedFrame); `frame` (1-based, default 1) selects parent-switch targets. A rig with
  // constraints and no effector is only constrained.
  RigBox* box = CheckRig(L, 1);
  PoseBox* pose = CheckPose(L, 2);
  const int frame =
      lua_isnoneornil(L, 3) ? 0 : static_cast<int>(CheckIntegerIn(L, 3, 1, 1 << 30, "frame")) - 1;
  CheckMaxArgs(L, 3);
  if (pose->skeleton != box->state->rig.skeleton_ptr()) {
    return luaL_argerror(L, 2, "Pose of another skeleton than the rig's");
  }
  if (!SolveInPlace(L, *box->state, *pose->state, frame)) return lua_error(L);
  PushReport(L, *box->state);
  return 1;
}

int w_Rig_bake(lua_State* L) {
  // rig:bake(clip [, fn]) -> baked clip, summary, records. Per frame: the pose is the clip's frame,
  // fn(frame, pose, rig) sets targets (returning false skips solving that frame), then the rig is
  // solved warm-started from the frame and the answer written to the baked clip (ik::BakeJob).
  RigBox* box = CheckRig(L, 1);
  ClipBox* clip = CheckClip(L, 2);
  if (!lua_isnoneornil(L, 3)) CheckFunction(L, 3);
  CheckMaxArgs(L, 3);
  if (clip->skeleton != box->state->rig.skeleton_ptr()) {
    return luaL_argerror(L, 2, "Clip of another skeleton than the rig's");
  }
  lua_settop(L, 3);
  // Anchors owned by Lua (slots 4-8) keep everything alive whatever the callback does; the rig
  // and the source clip are locked (no resize, release or structural change) until this returns.
  PushRig(L, box->state);                   // 4: the rig
  PushClip(L, clip->skeleton, clip->clip);  // 5: the source clip
  // From here on only the anchors are used: a finalizer run by an allocation above may have
  // released the boxes at 1 and 2.
  RigState* rig = static_cast<RigBox*>(lua_touserdata(L, 4))->state.get();
  ClipBox* source = static_cast<ClipBox*>(lua_touserdata(L, 5));
  if (rig == nullptr || !source->clip) return luaL_error(L, "rig:bake: rig or clip was released");
  catch_exceptions(L, [&] {
    PushClip(L, source->skeleton, std::make_shared<Clip>());  // 6: the baked clip
    auto state = std::make_shared<PoseState>();
    state->pose = Pose(*source->skeleton);
    PushPose(L, source->skeleton, state);             // 7: anchor of the pose
    PushPose(L, source->skeleton, std::move(state));  // 8: the pose given to fn
  });
  PushLock(L, rig, "baked");                 // 9
  PushLock(L, source->clip.get(), "baked");  // 10
  // 11: the records, owned by Lua (a Lua error below unwinds no C++ owner of them; the summary is
  // plain data).
  static_assert(std::is_trivially_destructible_v<ik::BakeSummary>);
  ik::BakeRecords* records = NewBakeRecords(L);
  ik::BakeSummary summary;
  bool script_error = false;
  if (!RunBake(L, &summary, records, &script_error)) {
    return script_error ? lua_error(L) : luaL_error(L, "%s", lua_tostring(L, -1));
  }
  lua_pushvalue(L, 6);
  PushBakeSummary(L, summary);
  ShareBakeRecords(L, -1, 11);
  lua_pushvalue(L, 11);
  return 3;
}

}  // namespace rigel::lua
