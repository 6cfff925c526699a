// rigel.Skeleton: the joint hierarchy, read-only. Joints are given by name or 1-based index.
#include <string>

#include "bindings/lua/boxes.h"
#include "core/channel.h"

namespace rigel::lua {

namespace {

const Skeleton& Skel(lua_State* L, int arg) { return *CheckSkeleton(L, arg)->skeleton; }

int w_Skeleton_joint(lua_State* L) {
  // skel:joint(name_or_index) -> 1-based index; raises with the closest names.
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  CheckMaxArgs(L, 2);
  lua_pushinteger(L, j + 1);
  return 1;
}

int w_Skeleton_find(lua_State* L) {
  // skel:find(name) -> 1-based index or nil.
  const Skeleton& s = Skel(L, 1);
  size_t length = 0;
  const char* name = luaL_checklstring(L, 2, &length);
  CheckMaxArgs(L, 2);
  const int j = s.FindJoint(std::string_view(name, length));
  if (j < 0) {
    lua_pushnil(L);
  } else {
    lua_pushinteger(L, j + 1);
  }
  return 1;
}

int w_Skeleton_name(lua_State* L) {
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  lua_pushstring(L, s.name(j).c_str());
  return 1;
}

int w_Skeleton_parent(lua_State* L) {
  // skel:parent(joint) -> parent name, parent index; nil for a root.
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  const int p = s.parent(j);
  if (p < 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushstring(L, s.name(p).c_str());
  lua_pushinteger(L, p + 1);
  return 2;
}

int w_Skeleton_children(lua_State* L) {
  // skel:children(joint) -> { names... } in file order.
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  const std::span<const int> children = s.children(j);
  lua_createtable(L, static_cast<int>(children.size()), 0);
  for (size_t i = 0; i < children.size(); ++i) {
    lua_pushstring(L, s.name(children[i]).c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int w_Skeleton_joints(lua_State* L) {
  // skel:joints() -> { names... } in skeleton order (parents before children).
  const Skeleton& s = Skel(L, 1);
  lua_createtable(L, s.num_joints(), 0);
  for (int j = 0; j < s.num_joints(); ++j) {
    lua_pushstring(L, s.name(j).c_str());
    lua_rawseti(L, -2, j + 1);
  }
  return 1;
}

int w_Skeleton_chain(lua_State* L) {
  // skel:chain(from, to) -> { names from `from` down to `to` }; `from` must be an ancestor.
  const Skeleton& s = Skel(L, 1);
  const int from = CheckJoint(L, 2, s);
  const int to = CheckJoint(L, 3, s);
  int count = 1;
  int j = to;
  while (j != from && j >= 0) {
    j = s.parent(j);
    ++count;
  }
  if (j != from) {
    return luaL_error(L, "'%s' is not an ancestor of '%s'", s.name(from).c_str(),
                      s.name(to).c_str());
  }
  lua_createtable(L, count, 0);
  j = to;
  for (int i = count; i >= 1; --i) {
    lua_pushstring(L, s.name(j).c_str());
    lua_rawseti(L, -2, i);
    j = s.parent(j);
  }
  return 1;
}

int w_Skeleton_rest_offset(lua_State* L) {
  // skel:rest_offset(joint) -> vec3, in the parent's space (BVH OFFSET).
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  PushVec3(L, s.rest_translation(j));
  return 1;
}

int w_Skeleton_rest_orientation(lua_State* L) {
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  PushQuat(L, s.rest_orientation(j));
  return 1;
}

int w_Skeleton_channels(lua_State* L) {
  // skel:channels(joint) -> { "Xposition", ..., "Zrotation", ... } in file order.
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  const std::span<const ChannelType> channels = s.joint_channels(j);
  lua_createtable(L, static_cast<int>(channels.size()), 0);
  for (size_t i = 0; i < channels.size(); ++i) {
    lua_pushstring(L, ChannelName(channels[i]).data());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int w_Skeleton_channel_index(lua_State* L) {
  // skel:channel_index(joint, "Xrotation") -> 1-based column in a clip row.
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  const int c = CheckJointChannel(L, 3, s, j);
  lua_pushinteger(L, c + 1);
  return 1;
}

int w_Skeleton_rotation_order(lua_State* L) {
  // skel:rotation_order(joint) -> "ZXY" or nil (joint without three rotation channels).
  const Skeleton& s = Skel(L, 1);
  const int j = CheckJoint(L, 2, s);
  const std::optional<EulerOrder> order = s.rotation_order(j);
  if (order) {
    lua_pushstring(L, EulerOrderName(*order).data());
  } else {
    lua_pushnil(L);
  }
  return 1;
}

int w_Skeleton_end_sites(lua_State* L) {
  // skel:end_sites() -> { {parent = name, offset = vec3}, ... }
  const Skeleton& s = Skel(L, 1);
  const std::span<const EndSite> sites = s.end_sites();
  lua_createtable(L, static_cast<int>(sites.size()), 0);
  for (size_t i = 0; i < sites.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, s.name(sites[i].parent).c_str());
    lua_setfield(L, -2, "parent");
    PushVec3(L, sites[i].offset);
    lua_setfield(L, -2, "offset");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int w_Skeleton_release(lua_State* L) {
  auto* box = static_cast<SkeletonBox*>(CheckBox(L, 1, kSkeletonType));
  if (box->alive) box->skeleton.reset();
  return 0;
}

int w_Skeleton_get_num_joints(lua_State* L) {
  lua_pushinteger(L, Skel(L, 1).num_joints());
  return 1;
}

int w_Skeleton_get_num_channels(lua_State* L) {
  lua_pushinteger(L, Skel(L, 1).num_channels());
  return 1;
}

int w_Skeleton_get_root(lua_State* L) {
  lua_pushstring(L, Skel(L, 1).name(0).c_str());
  return 1;
}

int w_Skeleton_len(lua_State* L) { return w_Skeleton_get_num_joints(L); }

int w_Skeleton_eq(lua_State* L) {
  auto* a = static_cast<SkeletonBox*>(TestBox(L, 1, kSkeletonType));
  auto* b = static_cast<SkeletonBox*>(TestBox(L, 2, kSkeletonType));
  lua_pushboolean(
      L, a != nullptr && b != nullptr && a->skeleton != nullptr && a->skeleton == b->skeleton);
  return 1;
}

int w_Skeleton_tostring(lua_State* L) {
  auto* box = static_cast<SkeletonBox*>(CheckBox(L, 1, kSkeletonType));
  if (!box->alive || !box->skeleton) {
    lua_pushliteral(L, "Skeleton (released)");
  } else {
    lua_pushfstring(L, "Skeleton: %d joints, %d channels, root '%s'", box->skeleton->num_joints(),
                    box->skeleton->num_channels(), box->skeleton->name(0).c_str());
  }
  return 1;
}

const luaL_Reg kMethods[] = {{"joint", w_Skeleton_joint},
                             {"find", w_Skeleton_find},
                             {"name", w_Skeleton_name},
                             {"parent", w_Skeleton_parent},
                             {"children", w_Skeleton_children},
                             {"joints", w_Skeleton_joints},
                             {"chain", w_Skeleton_chain},
                             {"rest_offset", w_Skeleton_rest_offset},
                             {"rest_orientation", w_Skeleton_rest_orientation},
                             {"channels", w_Skeleton_channels},
                             {"channel_index", w_Skeleton_channel_index},
                             {"rotation_order", w_Skeleton_rotation_order},
                             {"end_sites", w_Skeleton_end_sites},
                             {"release", w_Skeleton_release},
                             {nullptr, nullptr}};
const luaL_Reg kGetters[] = {{"num_joints", w_Skeleton_get_num_joints},
                             {"num_channels", w_Skeleton_get_num_channels},
                             {"root", w_Skeleton_get_root},
                             {nullptr, nullptr}};
const luaL_Reg kMeta[] = {{"__len", w_Skeleton_len},
                          {"__eq", w_Skeleton_eq},
                          {"__tostring", w_Skeleton_tostring},
                          {nullptr, nullptr}};

}  // namespace

SkeletonBox* CheckSkeleton(lua_State* L, int arg) {
  auto* box = static_cast<SkeletonBox*>(CheckBox(L, arg, kSkeletonType));
  if (!box->alive || !box->skeleton) luaL_argerror(L, arg, "Skeleton was released");
  return box;
}

void PushSkeleton(lua_State* L, std::shared_ptr<const Skeleton> skeleton) {
  PushBox<SkeletonBox>(L, kSkeletonType, SkeletonBox{std::move(skeleton)});
}

const std::shared_ptr<const Skeleton>* SkeletonOf(lua_State* L, int idx) {
  const std::shared_ptr<const Skeleton>* out = nullptr;
  if (auto* s = static_cast<SkeletonBox*>(TestBox(L, idx, kSkeletonType))) {
    if (s->alive) out = &s->skeleton;
  }
  if (auto* c = static_cast<ClipBox*>(TestBox(L, idx, kClipType))) {
    if (c->alive) out = &c->skeleton;
  }
  if (auto* p = static_cast<PoseBox*>(TestBox(L, idx, kPoseType))) {
    if (p->alive) out = &p->skeleton;
  }
  if (auto* sc = static_cast<SceneBox*>(TestBox(L, idx, kSceneType))) {
    if (sc->alive && sc->scene) out = &sc->scene->skeleton;
  }
  return (out != nullptr && *out != nullptr) ? out : nullptr;
}

void OpenSkeleton(lua_State* L) {
  RegisterType(L, {kSkeletonType, kMethods, kGetters, kMeta, DestroyBox<SkeletonBox>,
                   w_Skeleton_release, nullptr});
}

}  // namespace rigel::lua
