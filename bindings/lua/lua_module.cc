// The Lua C module entry. See lua_module.h.
#include "bindings/lua/lua_module.h"

#include "bindings/lua/runtime.h"

extern "C" int luaopen_rigel(lua_State* L) {
  // Refuses a host of another Lua version, or one built with other number types.
  luaL_checkversion(L);
  // The type cache lives in the extra space of each thread. require may run in a coroutine: the
  // main thread (from which later coroutines copy their extra space) must point at it too.
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State* main_thread = lua_tothread(L, -1);
  lua_pop(L, 1);
  rigel::lua::AttachTypeCache(L);
  const int results = rigel::lua::OpenRigel(L);
  if (main_thread != nullptr && main_thread != L) {
    *static_cast<void**>(lua_getextraspace(main_thread)) =
        *static_cast<void**>(lua_getextraspace(L));
  }
  return results;
}
