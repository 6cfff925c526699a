// rigel.retarget in Lua gives exactly what the C++ API gives (core/retarget Retargeter) on real
// mocap: CMU 01_01 (240 frames) onto the Motion Analysis rig of Boxing_Toes.bvh with foot pinning.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "bindings/lua/boxes.h"
#include "bindings/lua/rigel_module.h"
#include "core/clip_ops.h"
#include "core/retarget/retarget.h"
#include "importers/bone_map.h"
#include "importers/load_scene.h"
#include "test_util.h"

namespace rigel {
namespace {

struct LuaState {
  lua_State* L = lua::NewState(lua::StateOptions{});
  ~LuaState() { lua_close(L); }
};

void ExpectSame(const std::string& map_option, const retarget::BoneMap& map) {
  const std::string data = testing::SharedData();
  const std::string src = data + "/cmu_cgspeed/01_01.bvh";
  const std::string tgt = data + "/assimp_misc/Boxing_Toes.bvh";
  LuaState state;
  lua_State* L = state.L;
  const std::string script =
      "local rigel = require('rigel')\n"
      "local src = rigel.load('" +
      src +
      "')\n"
      "local tgt = rigel.load('" +
      tgt +
      "')\n"
      "return rigel.retarget(src:clip():slice(1, 240), tgt, "
      "{pin_feet = true" +
      map_option + "})\n";
  ASSERT_EQ(luaL_dostring(L, script.c_str()), LUA_OK) << lua_tostring(L, -1);
  const auto* box = static_cast<lua::ClipBox*>(lua_touserdata(L, -2));
  ASSERT_NE(box, nullptr);
  lua_getfield(L, -1, "bone_direction_mean_deg");
  const double lua_mean = lua_tonumber(L, -1);
  lua_getfield(L, -2, "foot_slide_max_mm");
  const double lua_slide = lua_tonumber(L, -1);
  lua_getfield(L, -3, "contacts");
  const lua_Integer lua_contacts = lua_tointeger(L, -1);

  const Scene source = LoadScene(src);
  const Scene target = LoadScene(tgt);
  const Clip slice = SliceClip(source.clips.front(), 0, 239);
  retarget::RetargetOptions options;
  options.pin_feet = true;
  std::string error;
  auto r = retarget::Retargeter::Create(source.skeleton, target.skeleton, map, options, &error,
                                        &slice, &target.clips.front());
  ASSERT_TRUE(r) << error;
  const retarget::RetargetResult cpp = r->Run(slice);
  ASSERT_EQ(box->clip->num_frames(), cpp.clip.num_frames());
  EXPECT_TRUE(
      std::equal(cpp.clip.values().begin(), cpp.clip.values().end(), box->clip->values().begin()))
      << "clip values differ";
  EXPECT_EQ(lua_mean, cpp.metrics.bone_direction_mean_deg);
  EXPECT_EQ(lua_slide, cpp.metrics.foot_slide_max_mm);
  EXPECT_EQ(lua_contacts, cpp.metrics.contacts);
  EXPECT_LT(lua_mean, 2.0);
  EXPECT_LT(lua_slide, 5.0);
  EXPECT_GT(lua_contacts, 0);
}

TEST(LuaRetarget, AutomaticMapSameAsCpp) {
  RIGEL_REQUIRE_SHARED_DATA();
  ExpectSame("", {});
}

TEST(LuaRetarget, SampleMapFileSameAsCpp) {
  RIGEL_REQUIRE_SHARED_DATA();
  const std::string map =
      std::string(RIGEL_SOURCE_DIR) + "/samples/retarget/cmu_to_motion_analysis.xml";
  ExpectSame(", map = '" + map + "'", ReadBoneMap(map));
}

}  // namespace
}  // namespace rigel
