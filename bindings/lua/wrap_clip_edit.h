// The rigel.Clip methods that edit the clip's skeleton (wrap_clip_edit.cc, core/skeleton_edit.h),
// listed in wrap_clip.cc's method table.
#ifndef RIGEL_BINDINGS_LUA_WRAP_CLIP_EDIT_H_
#define RIGEL_BINDINGS_LUA_WRAP_CLIP_EDIT_H_

#include <lua.hpp>

namespace rigel::lua {

int w_Clip_add_joint(lua_State* L);
int w_Clip_add_locator(lua_State* L);
int w_Clip_rename_joint(lua_State* L);
int w_Clip_reparent(lua_State* L);
int w_Clip_remove_joint(lua_State* L);

}  // namespace rigel::lua

#endif  // RIGEL_BINDINGS_LUA_WRAP_CLIP_EDIT_H_
