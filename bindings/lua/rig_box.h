// The userdata box of rigel.Rig, shared by the rig's wrappers: declaring the rig (wrap_rig.cc),
// running it (wrap_rig_run.cc) and its bake statistics (wrap_bake_summary.cc).
#ifndef RIGEL_BINDINGS_LUA_RIG_BOX_H_
#define RIGEL_BINDINGS_LUA_RIG_BOX_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings/lua/boxes.h"
#include "core/ik/bake.h"
#include "core/ik/character_rig.h"

namespace rigel::lua {

// Everything a Lua rig owns: the core character rig (effectors with their names and targets,
// rig, constraints, foot rolls, solver storage).
using RigState = ik::CharacterRig;

// A rigel.Rig (a box as boxes.h describes them).
struct RigBox {
  std::shared_ptr<RigState> state;
  bool alive = true;
  const void* object() const { return state.get(); }
};
template <>
inline constexpr const char* kBoxType<RigBox> = kRigType;

inline RigBox* CheckRig(lua_State* L, int arg) { return CheckLiveBox<RigBox>(L, arg); }

inline void PushRig(lua_State* L, std::shared_ptr<RigState> state) {
  PushBox<RigBox>(L, kRigType, RigBox{std::move(state)});
}

// An effector of `state` by name or 1-based index at `arg`; returns the 0-based task index
// (raises an argument error naming the closest effectors otherwise). wrap_rig.cc.
int CheckEffector(lua_State* L, int arg, const RigState& state);
// rig:foot_roll(effector, options) -> handle; rig:set_foot_roll(handle, options) -> rig
// (wrap_foot_roll.cc).
int w_Rig_foot_roll(lua_State* L);
int w_Rig_set_foot_roll(lua_State* L);
// rig:solve(pose [, frame]) -> report (wrap_rig_run.cc).
int w_Rig_solve(lua_State* L);
// rig:bake(clip [, fn]) -> baked clip, summary (wrap_rig_run.cc).
int w_Rig_bake(lua_State* L);

// Pushes a read-only rigel.BakeSummary holding `summary` (wrap_bake_summary.cc).
void PushBakeSummary(lua_State* L, const ik::BakeSummary& summary);
// Pushes a new, empty rigel.BakeRecords (#records solved frames, records[i] a table) and returns
// its records for the bake to fill. Lua owns them from the start: no C++ owner is left on the
// stack when a Lua error unwinds it (wrap_bake_summary.cc).
ik::BakeRecords* NewBakeRecords(lua_State* L);
// Lets the rigel.BakeSummary at `summary` share the records of the rigel.BakeRecords at `records`
// (summary:records() and `rigel bake --frames-report` read them).
void ShareBakeRecords(lua_State* L, int summary, int records);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_RIG_BOX_H_
