// The rigel.Clip methods of core/curves (wrap_clip_curves.cc), listed in wrap_clip.cc's method
// table.
#ifndef RIGEL_BINDINGS_LUA_WRAP_CLIP_CURVES_H_
#define RIGEL_BINDINGS_LUA_WRAP_CLIP_CURVES_H_

#include <lua.hpp>

#include "core/curves/key_reduction.h"

namespace rigel::lua {

int w_Clip_reduce(lua_State* L);
int w_Clip_filter(lua_State* L);
int w_Clip_mirror(lua_State* L);
int w_Clip_loop(lua_State* L);
int w_Clip_trim(lua_State* L);

// The options table of clip:save at `opt` ({reduce_keys = true, max_error = mm,
// virtual_vertex = mm}): true and `*reduce` filled (metres) when it asks for key reduction.
bool ReduceSaveOptions(lua_State* L, int opt, KeyReductionOptions* reduce);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_WRAP_CLIP_CURVES_H_
