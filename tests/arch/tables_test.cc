// Every row of each extension-point table is named where users look: the CLI --help (formats),
// the Lua module (the names it accepts and lists in its errors) and the docs. A new row that is
// not wired or documented fails here, naming the row and the place.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "bindings/lua/rigel_module.h"
#include "core/constraints/kinds.h"
#include "core/ik/methods.h"
#include "core/ik/validate.h"
#include "io/file_format.h"
#include "test_util.h"

namespace rigel {
namespace {

std::string Doc(const std::string& name) {
  return rigel::testing::FileBytes(std::string(RIGEL_SOURCE_DIR) + "/docs/" + name);
}

// stdout and stderr of `rigel ARGS`.
std::string RunRigel(const std::string& args) {
  const std::string command = std::string(RIGEL_CLI) + " " + args + " 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  pclose(pipe);
  return out;
}

// The error message (or "ok") of `chunk` run in a fresh rigel Lua state, with `rig` a rig on the
// planar chain sample's skeleton.
std::string LuaError(const std::string& chunk) {
  lua_State* L = lua::NewState(lua::StateOptions{});
  const std::string script =
      "local rigel = require('rigel')\n"
      "local scene = rigel.load('" +
      std::string(RIGEL_SOURCE_DIR) +
      "/samples/planar_chain/planar.bvh')\n"
      "local rig = rigel.rig(scene.skeleton)\n" +
      chunk + "\nreturn 'ok'";
  const int status = luaL_dostring(L, script.c_str());
  std::string result = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "";
  if (status == LUA_OK) result = "ok";
  lua_close(L);
  return result;
}

bool Quoted(const std::string& text, std::string_view name) {
  const std::string n(name);
  return text.find('`' + n + '`') != std::string::npos ||
         text.find('"' + n + '"') != std::string::npos;
}

TEST(Tables, EveryFileFormatIsNamedByTheCliTheLuaModuleAndTheDocs) {
  const std::string formats_doc = Doc("formats.md");
  const std::string bake_help = RunRigel("bake --help");
  const std::string retarget_help = RunRigel("retarget --help");
  const std::string convert_help = RunRigel("convert --help");
  const std::string writable = LuaError("error(table.concat(rigel.writable_formats(), ' '))");
  const std::string readable = LuaError("error(table.concat(rigel.readable_formats(), ' '))");
  for (const FileFormat& format : FileFormats()) {
    SCOPED_TRACE(std::string(format.name));
    ASSERT_FALSE(format.extensions.empty());
    for (std::string_view ext : format.extensions) {
      EXPECT_NE(formats_doc.find(ext), std::string::npos) << "docs/formats.md";
      if (format.read != nullptr) {
        EXPECT_NE(readable.find(ext), std::string::npos) << "rigel.readable_formats()";
        EXPECT_NE(convert_help.find(ext), std::string::npos) << "rigel convert --help (IN)";
      }
      if (format.write != nullptr) {
        EXPECT_NE(writable.find(ext), std::string::npos) << "rigel.writable_formats()";
        EXPECT_NE(convert_help.find(ext), std::string::npos) << "rigel convert --help (OUT)";
      }
    }
    if (format.write != nullptr) {
      EXPECT_NE(bake_help.find(format.name), std::string::npos) << "rigel bake --help";
      EXPECT_NE(retarget_help.find(format.name), std::string::npos) << "rigel retarget --help";
    }
  }
}

TEST(Tables, EverySolverMethodIsNamedByTheLuaModuleAndTheDocs) {
  const std::string lua_api = Doc("lua-api.md");
  const std::string stubs = Doc("lua/rigel.lua");
  // The Lua module's list of methods: its error on a method it does not know.
  const std::string listed = LuaError("rig:stage{method = 'none'}");
  ASSERT_NE(listed.find("invalid solver method 'none'"), std::string::npos) << listed;
  for (const ik::MethodRow& row : ik::kMethodTable) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_EQ(ik::MethodName(row.method), row.name);
    EXPECT_EQ(ik::FindMethod(row.name), &row);
    EXPECT_NE(listed.find(row.name), std::string::npos) << "the Lua module's method list";
    EXPECT_TRUE(Quoted(lua_api, row.name)) << "docs/lua-api.md";
    EXPECT_TRUE(Quoted(stubs, row.name)) << "docs/lua/rigel.lua";
    EXPECT_EQ(ik::internal::IsIterative(row.method), row.iterative);
  }
}

TEST(Tables, EveryEffectorTypeIsNamedByTheLuaModuleAndTheDocs) {
  const std::string lua_api = Doc("lua-api.md");
  const std::string listed = LuaError("rig:effector(1, {type = 'none'})");
  ASSERT_NE(listed.find("invalid effector type 'none'"), std::string::npos) << listed;
  for (std::size_t i = 0; i < ik::kTaskTypeNames.size(); ++i) {
    const std::string_view name = ik::kTaskTypeNames[i];
    SCOPED_TRACE(std::string(name));
    EXPECT_EQ(ik::TaskTypeName(static_cast<ik::TaskType>(i)), name);
    EXPECT_NE(listed.find(name), std::string::npos) << "the Lua module's effector types";
    EXPECT_TRUE(Quoted(lua_api, name)) << "docs/lua-api.md";
  }
}

TEST(Tables, EveryConstraintKindAndOptionIsNamedByTheLuaModuleAndTheDocs) {
  const std::string doc = Doc("constraints.md");
  const std::string listed = LuaError("rig:constraint('none', {})");
  ASSERT_NE(listed.find("invalid constraint kind 'none'"), std::string::npos) << listed;
  for (const constraints::ConstraintKind& kind : constraints::kConstraintKinds) {
    SCOPED_TRACE(std::string(kind.name));
    EXPECT_NE(listed.find(kind.name), std::string::npos) << "the Lua module's kind list";
    EXPECT_TRUE(Quoted(doc, kind.name)) << "docs/constraints.md";
    // The Lua module lists the kind's options on an unknown one.
    const std::string options =
        LuaError("rig:constraint('" + std::string(kind.name) + "', {none = 1})");
    for (const constraints::KindOption& option : kind.options) {
      EXPECT_NE(options.find(option.name), std::string::npos) << option.name << ": " << options;
      EXPECT_NE(doc.find('`' + std::string(option.name)), std::string::npos)
          << option.name << ": docs/constraints.md";
    }
  }
}

}  // namespace
}  // namespace rigel
