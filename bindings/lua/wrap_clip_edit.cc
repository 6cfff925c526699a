// The rigel.Clip methods that edit its skeleton (core/skeleton_edit.h): each returns a new clip on
// a new skeleton and leaves the clip it was called on as it was. Check the arguments, call core,
// push the result; core's refusals become Lua errors naming the script line.
#include "bindings/lua/wrap_clip_edit.h"

#include <array>
#include <stdexcept>

#include "bindings/lua/boxes.h"
#include "bindings/lua/fields.h"
#include "core/euler.h"
#include "core/skeleton_edit.h"

namespace rigel::lua {

namespace {

// The channel layout of an added joint, from field "channels" of the options at `arg`: "rotation"
// (the three rotation channels in `order`), "position" (Xposition Yposition Zposition), "all"
// (position then rotation), "none", or a list of channel names. Returns the count.
int ChannelsField(lua_State* L, int arg, const char* fallback, EulerOrder order,
                  std::array<ChannelType, 9>* out) {
  static const char* const kKinds[] = {"rotation", "position", "all", "none", nullptr};
  lua_getfield(L, arg, "channels");
  const int top = lua_gettop(L);
  int count = 0;
  if (lua_istable(L, top)) {
    const lua_Integer n = luaL_len(L, top);
    if (n > 9) luaL_argerror(L, arg, "field 'channels': at most 9 channels");
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, top, i);
      const char* name = lua_tostring(L, -1);
      const std::optional<ChannelType> c =
          name != nullptr ? ParseAnyChannelName(name) : std::nullopt;
      if (!c) {
        luaL_argerror(L, arg,
                      lua_pushfstring(L,
                                      "field 'channels': invalid channel '%s' (Xposition .. "
                                      "Zrotation, Xscale .. Zscale)",
                                      name != nullptr ? name : luaL_typename(L, -1)));
      }
      (*out)[count++] = *c;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return count;
  }
  const char* kind = lua_isnil(L, top) ? fallback : lua_tostring(L, top);
  const int k = kind != nullptr ? FindOption(kind, kKinds) : -1;
  if (k < 0) OptionError(L, arg, "field 'channels': invalid value, ", kKinds);
  lua_pop(L, 1);
  if (k == 1 || k == 2) {
    for (int axis = 0; axis < 3; ++axis) (*out)[count++] = static_cast<ChannelType>(axis);
  }
  if (k == 0 || k == 2) {
    const std::string_view name = EulerOrderName(order);
    for (const char letter : name) (*out)[count++] = static_cast<ChannelType>(3 + (letter - 'X'));
  }
  return count;
}

EulerOrder OrderField(lua_State* L, int arg) {
  static const char* const kOrders[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", nullptr};
  const int k = OptionField(L, arg, "order", kOrders, 4);
  return *ParseEulerOrder(kOrders[k]);
}

// A string field that must be present (name) or may be absent (parent: nullptr).
const char* StringField(lua_State* L, int arg, const char* field, bool required) {
  lua_getfield(L, arg, field);
  const bool absent = lua_isnil(L, -1);
  lua_pop(L, 1);
  if (absent && !required) return nullptr;
  lua_getfield(L, arg, field);
  if (lua_type(L, -1) != LUA_TSTRING) FieldError(L, arg, field, "string");
  const char* s = lua_tostring(L, -1);
  lua_pop(L, 1);  // the options table keeps the string alive
  return s;
}

// Pushes the edited clip; its skeleton has the unit of the clip's (same lengths).
void PushEdited(lua_State* L, const std::shared_ptr<const Skeleton>& from, EditedClip edited) {
  const double unit = SkeletonUnit(L, from);
  if (unit > 0) RegisterSkeletonUnit(L, edited.skeleton, unit);
  PushClip(L, edited.skeleton, std::make_shared<Clip>(std::move(edited.clip)));
}

int AddJointWith(lua_State* L, const char* fallback_channels, bool locator) {
  static const char* const kKeys[] = {"name",  "parent",   "offset", "rotation",
                                      "order", "channels", "length", nullptr};
  static const char* const kLocatorKeys[] = {"name",  "parent",   "offset", "rotation",
                                             "order", "channels", nullptr};
  ClipBox* box = CheckClip(L, 1);
  CheckTable(L, 2);
  CheckMaxArgs(L, 2);
  CheckOptionKeys(L, 2, locator ? kLocatorKeys : kKeys);
  const char* name = StringField(L, 2, "name", true);
  const char* parent = StringField(L, 2, "parent", false);
  const Eigen::Vector3d offset = Vec3Field(L, 2, "offset", Eigen::Vector3d::Zero());
  const Eigen::Quaterniond rotation =
      HasField(L, 2, "rotation") ? QuatField(L, 2, "rotation") : Eigen::Quaterniond::Identity();
  const EulerOrder order = OrderField(L, 2);
  std::array<ChannelType, 9> channels{};
  const int count = ChannelsField(L, 2, fallback_channels, order, &channels);
  const bool has_length = !locator && HasField(L, 2, "length");
  const Eigen::Vector3d length = Vec3Field(L, 2, "length", Eigen::Vector3d::Zero());
  catch_exceptions(L, [&] {
    NewJoint joint;
    joint.name = name;
    joint.parent = parent != nullptr ? parent : "";
    joint.offset = offset;
    joint.rest_orientation = rotation;
    joint.channels.assign(channels.begin(), channels.begin() + count);
    if (has_length) joint.end_sites.push_back(length);
    EditedClip edited;
    std::string error;
    if (!AddJoint(box->skeleton, *box->clip, joint, &edited, &error)) {
      throw std::runtime_error((locator ? "clip:add_locator: " : "clip:add_joint: ") + error);
    }
    PushEdited(L, box->skeleton, std::move(edited));
  });
  return 1;
}

}  // namespace

int w_Clip_add_joint(lua_State* L) {
  // clip:add_joint{name =, parent =, offset = vec3, rotation = quat (rest orientation), order =
  // "ZXY", channels = "rotation" | "position" | "all" | "none" | {names}, length = vec3 (an End
  // Site: the bone's length)} -> a new clip on a skeleton with the joint (zero channels).
  return AddJointWith(L, "rotation", false);
}

int w_Clip_add_locator(lua_State* L) {
  // clip:add_locator{name =, parent =, offset =, rotation =, order =, channels = "all"} -> a new
  // clip with a joint of no bone length (no End Site): a target or a pivot to key or constrain.
  return AddJointWith(L, "all", true);
}

int w_Clip_rename_joint(lua_State* L) {
  // clip:rename_joint(joint, new_name) -> a new clip, the joint renamed.
  ClipBox* box = CheckClip(L, 1);
  const int joint = CheckJoint(L, 2, *box->skeleton);
  const char* name = luaL_checkstring(L, 3);
  CheckMaxArgs(L, 3);
  catch_exceptions(L, [&] {
    EditedClip edited;
    std::string error;
    if (!RenameJoint(box->skeleton, *box->clip, box->skeleton->name(joint), name, &edited,
                     &error)) {
      throw std::runtime_error("clip:rename_joint: " + error);
    }
    PushEdited(L, box->skeleton, std::move(edited));
  });
  return 1;
}

int w_Clip_reparent(lua_State* L) {
  // clip:reparent(joint, new_parent | nil) -> a new clip, the joint (and its subtree) under the
  // new parent (nil: a root), its world motion kept on every frame.
  ClipBox* box = CheckClip(L, 1);
  const int joint = CheckJoint(L, 2, *box->skeleton);
  const int parent = lua_isnoneornil(L, 3) ? -1 : CheckJoint(L, 3, *box->skeleton);
  CheckMaxArgs(L, 3);
  catch_exceptions(L, [&] {
    EditedClip edited;
    std::string error;
    const std::string parent_name = parent < 0 ? "" : box->skeleton->name(parent);
    if (!ReparentJoint(box->skeleton, *box->clip, box->skeleton->name(joint), parent_name, &edited,
                       &error)) {
      throw std::runtime_error("clip:reparent: " + error);
    }
    PushEdited(L, box->skeleton, std::move(edited));
  });
  return 1;
}

int w_Clip_remove_joint(lua_State* L) {
  // clip:remove_joint(joint) -> a new clip without the joint; its children keep their world
  // motion under its parent.
  ClipBox* box = CheckClip(L, 1);
  const int joint = CheckJoint(L, 2, *box->skeleton);
  CheckMaxArgs(L, 2);
  catch_exceptions(L, [&] {
    EditedClip edited;
    std::string error;
    if (!RemoveJoint(box->skeleton, *box->clip, box->skeleton->name(joint), &edited, &error)) {
      throw std::runtime_error("clip:remove_joint: " + error);
    }
    PushEdited(L, box->skeleton, std::move(edited));
  });
  return 1;
}

}  // namespace rigel::lua
