// rigel.Skeleton: the joint hierarchy, read-only. Joints are given by name or 1-based index.
#include <string>

#include "bindings/lua/boxes.h"
#include "core/channel.h"
#include "core/retarget/humanoid.h"

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
  PushList(L, children.size(), [&](size_t i) { lua_pushstring(L, s.name(children[i]).c_str()); });
  return 1;
}

int w_Skeleton_joints(lua_State* L) {
  // skel:joints() -> { names... } in skeleton order (parents before children).
  PushStrings(L, Skel(L, 1).names());
  return 1;
}

int w_Skeleton_humanoid(lua_State* L) {
  // skel:humanoid() -> { Hips = name, LeftUpperArm = name, ..., spine_chain = {names},
  // neck_chain = {names}, warnings = {lines} }: the humanoid roles the automatic bone map finds
  // (names and hierarchy,
  // any "<prefix>:" or rig prefix). Roles the skeleton lacks are absent.
  const Skeleton& s = Skel(L, 1);
  CheckMaxArgs(L, 1);
  const retarget::HumanoidJoints h = retarget::ClassifyHumanoid(s);
  lua_createtable(L, 0, retarget::kRoleCount + 3);
  for (int r = 0; r < retarget::kRoleCount; ++r) {
    if (h.joint[r] < 0) continue;
    const std::string_view role = retarget::RoleName(static_cast<retarget::Role>(r));
    lua_pushstring(L, s.name(h.joint[r]).c_str());
    lua_setfield(L, -2, std::string(role).c_str());
  }
  const auto names = [&](const std::vector<int>& joints) {
    PushList(L, joints.size(), [&](size_t i) { lua_pushstring(L, s.name(joints[i]).c_str()); });
  };
  names(h.spine);
  lua_setfield(L, -2, "spine_chain");
  names(h.neck);
  lua_setfield(L, -2, "neck_chain");
  PushStrings(L, h.warnings);
  lua_setfield(L, -2, "warnings");
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
  PushList(L, channels.size(),
           [&](size_t i) { lua_pushstring(L, ChannelName(channels[i]).data()); });
  return 1;
}

int w_Skeleton_channel_index(lua_State* L) {
  // skel:channel_index(joint, "Xrotation") -> 1-based column in a clip row.
  const Skeleton& s = Skel(L, 1);
  const int c = CheckChannel(L, 2, s);
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
  // skel:end_sites() -> { {parent = name, offset = vec3, name = leaf name or nil}, ... }
  const Skeleton& s = Skel(L, 1);
  const std::span<const EndSite> sites = s.end_sites();
  PushList(L, sites.size(), [&](size_t i) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, s.name(sites[i].parent).c_str());
    lua_setfield(L, -2, "parent");
    PushVec3(L, sites[i].offset);
    lua_setfield(L, -2, "offset");
    if (!sites[i].name.empty()) {
      lua_pushlstring(L, sites[i].name.data(), sites[i].name.size());
      lua_setfield(L, -2, "name");
    }
  });
  return 1;
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

void DescribeSkeleton(lua_State* L, const SkeletonBox& box) {
  lua_pushfstring(L, "Skeleton: %d joints, %d channels, root '%s'", box.skeleton->num_joints(),
                  box.skeleton->num_channels(), box.skeleton->name(0).c_str());
}

const luaL_Reg kSkeletonMethods[] = {{"joint", w_Skeleton_joint},
                                     {"find", w_Skeleton_find},
                                     {"name", w_Skeleton_name},
                                     {"parent", w_Skeleton_parent},
                                     {"children", w_Skeleton_children},
                                     {"joints", w_Skeleton_joints},
                                     {"chain", w_Skeleton_chain},
                                     {"humanoid", w_Skeleton_humanoid},
                                     {"rest_offset", w_Skeleton_rest_offset},
                                     {"rest_orientation", w_Skeleton_rest_orientation},
                                     {"channels", w_Skeleton_channels},
                                     {"channel_index", w_Skeleton_channel_index},
                                     {"rotation_order", w_Skeleton_rotation_order},
                                     {"end_sites", w_Skeleton_end_sites},
                                     {nullptr, nullptr}};
const luaL_Reg kSkeletonGetters[] = {{"num_joints", w_Skeleton_get_num_joints},
                                     {"num_channels", w_Skeleton_get_num_channels},
                                     {"root", w_Skeleton_get_root},
                                     {nullptr, nullptr}};
const luaL_Reg kSkeletonMeta[] = {{"__len", w_Skeleton_len}, {nullptr, nullptr}};

}  // namespace

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

const std::shared_ptr<const Skeleton>* CheckSkeletonOf(lua_State* L, int arg,
                                                       const char* expected) {
  const std::shared_ptr<const Skeleton>* skeleton = SkeletonOf(L, arg);
  if (skeleton == nullptr) TypeError(L, arg, expected);
  return skeleton;
}

void OpenSkeleton(lua_State* L) {
  OpenBoxType<SkeletonBox, DescribeSkeleton>(L, kSkeletonMethods, kSkeletonGetters, kSkeletonMeta);
}

}  // namespace rigel::lua
