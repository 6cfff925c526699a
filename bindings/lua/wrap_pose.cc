// rigel.Pose: one frame's channel values and world transforms. Rotation channels are read and
// written in degrees, position channels in file units. World transforms refresh lazily.
#include <cmath>
#include <vector>

#include "bindings/lua/boxes.h"
#include "core/channel.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/pose_edit.h"

namespace rigel::lua {

namespace {

// The up-to-date world transform of `joint` (refreshes only its chain).
const Eigen::Isometry3d& World(PoseBox* box, int joint) {
  return box->state->World(*box->skeleton, joint);
}

// Raises unless `joint` has three rotation channels; returns its order.
EulerOrder CheckThreeRotations(lua_State* L, const Skeleton& s, int joint) {
  const std::optional<EulerOrder> order = s.rotation_order(joint);
  if (!order) {
    luaL_error(L, "joint '%s' has %d rotation channel(s); this needs three", s.name(joint).c_str(),
               static_cast<int>(s.rotation_channels(joint).size()));
  }
  return *order;
}

// Writes the channel rotation `r_channels` (parent-space rotation without the rest orientation)
// into a three-rotation joint, choosing the Euler angles nearest the current ones.
void SetChannelRotation(PoseBox* box, int joint, const Eigen::Quaterniond& r_channels) {
  SetJointChannelRotation(*box->skeleton, joint, r_channels, box->state->pose.channels);
  box->state->MarkStale(joint);
}

// How every pose setter ends: the world transforms of `joint` and below are stale; returns the
// pose (chainable).
int Changed(lua_State* L, PoseBox* box, int joint) {
  box->state->MarkStale(joint);
  lua_settop(L, 1);
  return 1;
}

int w_Pose_get(lua_State* L) {
  // pose:get(joint, channel) -> value (degrees for rotations).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int c = CheckChannel(L, 2, s);
  CheckMaxArgs(L, 3);
  lua_pushnumber(L, ChannelToLua(s, c, box->state->pose.channels[c]));
  return 1;
}

int w_Pose_set(lua_State* L) {
  // pose:set(joint, channel, value) -> pose
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int c = CheckChannel(L, 2, s);
  const double value = CheckFinite(L, 4);
  CheckMaxArgs(L, 4);
  box->state->pose.channels[c] = ChannelFromLua(s, c, value);
  return Changed(L, box, s.channel_joint(c));
}

int w_Pose_angles(lua_State* L) {
  // pose:angles(joint) -> vec3 of the X, Y, Z rotation channels in degrees (0 where absent).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  Eigen::Vector3d xyz = Eigen::Vector3d::Zero();
  for (int c : s.rotation_channels(j)) {
    xyz[ChannelAxis(s.channels()[c])] = box->state->pose.channels[c] * kDegPerRad;
  }
  PushVec3(L, xyz);
  return 1;
}

int w_Pose_set_angles(lua_State* L) {
  // pose:set_angles(joint, vec3 degrees) -> pose; axes the joint lacks must be 0.
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  const Eigen::Vector3d xyz = CheckVec3(L, 3);
  bool present[3] = {false, false, false};
  for (int c : s.rotation_channels(j)) present[ChannelAxis(s.channels()[c])] = true;
  for (int a = 0; a < 3; ++a) {
    if (!present[a] && xyz[a] != 0.0) {
      return luaL_error(L, "joint '%s' has no %c rotation channel", s.name(j).c_str(), 'X' + a);
    }
  }
  for (int c : s.rotation_channels(j)) {
    box->state->pose.channels[c] = xyz[ChannelAxis(s.channels()[c])] * kRadPerDeg;
  }
  return Changed(L, box, j);
}

int w_Pose_scale(lua_State* L) {
  // pose:scale(joint) -> vec3: the joint's own scale per axis (1 where it has no scale channel).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  CheckMaxArgs(L, 2);
  PushVec3(L, LocalScale(s, j, box->state->pose.channels));
  return 1;
}

int w_Pose_set_scale(lua_State* L) {
  // pose:set_scale(joint, vec3 | number) -> pose: the joint's own scale (a number: uniform);
  // axes without a scale channel must stay 1.
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  const Eigen::Vector3d xyz = lua_type(L, 3) == LUA_TNUMBER
                                  ? Eigen::Vector3d::Constant(CheckFinite(L, 3))
                                  : CheckVec3(L, 3);
  CheckMaxArgs(L, 3);
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(xyz[a]) || xyz[a] <= 0) {
      return luaL_error(L, "scale of joint '%s' must be positive and finite", s.name(j).c_str());
    }
    if (s.scale_channel(j, a) < 0 && xyz[a] != 1.0) {
      return luaL_error(L, "joint '%s' has no %c scale channel", s.name(j).c_str(), 'X' + a);
    }
  }
  for (int a = 0; a < 3; ++a) {
    const int c = s.scale_channel(j, a);
    if (c >= 0) box->state->pose.channels[c] = xyz[a] - 1.0;
  }
  return Changed(L, box, j);
}

int w_Pose_world_scale(lua_State* L) {
  // pose:world_scale(joint) -> vec3: the lengths of the joint's world axes (its own scale times
  // what it inherits; 1 1 1 on a skeleton without scale).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  CheckMaxArgs(L, 2);
  if (!s.has_scale()) {
    PushVec3(L, Eigen::Vector3d::Ones());
    return 1;
  }
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  std::vector<Eigen::Matrix3d> linear(s.num_joints());
  ForwardKinematicsScaled(s, box->state->pose.channels, world, linear);
  PushVec3(L, Eigen::Vector3d(linear[j].col(0).norm(), linear[j].col(1).norm(),
                              linear[j].col(2).norm()));
  return 1;
}

int w_Pose_world_position(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  const int j = CheckJoint(L, 2, *box->skeleton);
  PushVec3(L, World(box, j).translation());
  return 1;
}

int w_Pose_world_xyz(lua_State* L) {
  // pose:world_xyz(joint) -> x, y, z: the world position as three numbers (no vec3 allocated).
  PoseBox* box = CheckPose(L, 1);
  const int j = CheckJoint(L, 2, *box->skeleton);
  CheckMaxArgs(L, 2);
  const Eigen::Vector3d p = World(box, j).translation();
  lua_pushnumber(L, p.x());
  lua_pushnumber(L, p.y());
  lua_pushnumber(L, p.z());
  return 3;
}

int w_Pose_world_rotation(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  const int j = CheckJoint(L, 2, *box->skeleton);
  PushQuat(L, Eigen::Quaterniond(World(box, j).rotation()).normalized());
  return 1;
}

int w_Pose_local_position(lua_State* L) {
  // Translation of the joint in its parent's space (rest offset + position channels).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  PushVec3(L, LocalTransform(s, j, box->state->pose.channels).translation());
  return 1;
}

int w_Pose_local_rotation(lua_State* L) {
  // Rotation of the joint in its parent's space (rest orientation * channel rotations).
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  PushQuat(L, Eigen::Quaterniond(LocalRotation(s, j, box->state->pose.channels)).normalized());
  return 1;
}

// pose:set_local_rotation / pose:set_world_rotation(joint, quat): sets the joint's rotation
// channels so its rotation in its parent's space (or, with `world`, in world space) is `quat`.
int SetRotation(lua_State* L, bool world) {
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  const Eigen::Quaterniond q = CheckQuat(L, 3);
  CheckMaxArgs(L, 3);
  CheckThreeRotations(L, s, j);
  if (world) {
    const int p = s.parent(j);
    Eigen::Quaterniond parent_world = Eigen::Quaterniond::Identity();
    if (p >= 0) parent_world = Eigen::Quaterniond(World(box, p).rotation());
    SetJointWorldRotation(s, j, parent_world, q, box->state->pose.channels);
    box->state->MarkStale(j);
  } else {
    SetChannelRotation(box, j, s.rest_orientation(j).conjugate() * q);
  }
  lua_settop(L, 1);
  return 1;
}

int w_Pose_set_local_rotation(lua_State* L) { return SetRotation(L, /*world=*/false); }

int w_Pose_set_world_rotation(lua_State* L) { return SetRotation(L, /*world=*/true); }

// Sets the joint's position channels so its parent-space translation is `local`.
int SetLocalPosition(lua_State* L, PoseBox* box, int j, const Eigen::Vector3d& local) {
  const Skeleton& s = *box->skeleton;
  const Eigen::Vector3d delta = local - s.rest_translation(j);
  for (int a = 0; a < 3; ++a) {
    const int c = s.translation_channel(j, a);
    if (c < 0) {
      if (std::abs(delta[a]) > 1e-9) {
        return luaL_error(L, "joint '%s' has no %c position channel", s.name(j).c_str(), 'X' + a);
      }
      continue;
    }
    box->state->pose.channels[c] = delta[a];
  }
  return Changed(L, box, j);
}

int w_Pose_set_local_position(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  const int j = CheckJoint(L, 2, *box->skeleton);
  const Eigen::Vector3d v = CheckVec3(L, 3);
  CheckMaxArgs(L, 3);
  return SetLocalPosition(L, box, j, v);
}

int w_Pose_set_world_position(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  const Eigen::Vector3d v = CheckVec3(L, 3);
  CheckMaxArgs(L, 3);
  const int p = s.parent(j);
  Eigen::Vector3d local = p >= 0 ? Eigen::Vector3d(World(box, p).inverse() * v) : v;
  if (p >= 0 && s.has_scale()) {
    // The offset is in the parent's scaled space.
    std::vector<Eigen::Isometry3d> world(s.num_joints());
    std::vector<Eigen::Matrix3d> linear(s.num_joints());
    ForwardKinematicsScaled(s, box->state->pose.channels, world, linear);
    local = linear[p].inverse() * (v - world[p].translation());
  }
  return SetLocalPosition(L, box, j, local);
}

int w_Pose_end_position(lua_State* L) {
  // pose:end_position(joint) -> vec3: world position of the joint's first End Site.
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const int j = CheckJoint(L, 2, s);
  const std::span<const EndSite> sites = s.end_sites();
  for (size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].parent == j) {
      World(box, j);
      PushVec3(L, EndSitePosition(s, box->state->pose.world, static_cast<int>(i)));
      return 1;
    }
  }
  return luaL_error(L, "joint '%s' has no End Site", s.name(j).c_str());
}

int w_Pose_values(lua_State* L) {
  // pose:values() -> { one value per channel, clip-row order, degrees for rotations }
  PoseBox* box = CheckPose(L, 1);
  const Skeleton& s = *box->skeleton;
  const std::vector<double>& ch = box->state->pose.channels;
  lua_createtable(L, static_cast<int>(ch.size()), 0);
  for (size_t c = 0; c < ch.size(); ++c) {
    lua_pushnumber(L, ChannelToLua(s, static_cast<int>(c), ch[c]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(c + 1));
  }
  return 1;
}

int w_Pose_set_values(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  CheckTable(L, 2);
  const Skeleton& s = *box->skeleton;
  const lua_Integer n = luaL_len(L, 2);
  if (n != s.num_channels()) {
    return luaL_argerror(L, 2,
                         lua_pushfstring(L, "expected %d values, got %I", s.num_channels(), n));
  }
  for (int c = 0; c < s.num_channels(); ++c) {
    lua_rawgeti(L, 2, c + 1);
    if (lua_type(L, -1) != LUA_TNUMBER || !std::isfinite(lua_tonumber(L, -1))) {
      return luaL_argerror(L, 2, lua_pushfstring(L, "value %d is not a finite number", c + 1));
    }
    lua_pop(L, 1);
  }
  for (int c = 0; c < s.num_channels(); ++c) {
    lua_rawgeti(L, 2, c + 1);
    box->state->pose.channels[c] = ChannelFromLua(s, c, static_cast<double>(lua_tonumber(L, -1)));
    lua_pop(L, 1);
  }
  return Changed(L, box, 0);
}

int w_Pose_reset(lua_State* L) {
  // pose:reset() -> pose: every channel back to 0 (the rest pose).
  PoseBox* box = CheckPose(L, 1);
  std::fill(box->state->pose.channels.begin(), box->state->pose.channels.end(), 0.0);
  return Changed(L, box, 0);
}

int w_Pose_copy(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  CheckMaxArgs(L, 1);
  catch_exceptions(L,
                   [&] { PushPose(L, box->skeleton, std::make_shared<PoseState>(*box->state)); });
  return 1;
}

int w_Pose_copy_from(lua_State* L) {
  PoseBox* box = CheckPose(L, 1);
  PoseBox* other = CheckPose(L, 2);
  if (other->skeleton != box->skeleton) {
    return luaL_argerror(L, 2, "Pose of another skeleton");
  }
  if (other != box) *box->state = *other->state;
  lua_settop(L, 1);
  return 1;
}

int w_Pose_weight(lua_State* L) {
  // pose:weight(mesh, target) -> the blend shape's weight in this frame (mesh nil: the first mesh
  // with that target).
  PoseBox* box = CheckPose(L, 1);
  CheckMaxArgs(L, 3);
  const Pose& pose = box->state->pose;
  const std::vector<int> columns = CheckWeightColumns(L, 2, 3, pose.weight_channels);
  lua_pushnumber(L, pose.weights[columns.front()]);
  return 1;
}

int w_Pose_set_weight(lua_State* L) {
  // pose:set_weight(mesh, target, weight) -> pose (mesh nil: every mesh with that target). A bake
  // writes the pose's weights into the baked clip.
  PoseBox* box = CheckPose(L, 1);
  const double weight = CheckFinite(L, 4);
  CheckMaxArgs(L, 4);
  Pose& pose = box->state->pose;
  const std::vector<int> columns = CheckWeightColumns(L, 2, 3, pose.weight_channels);
  for (const int c : columns) pose.weights[c] = weight;
  lua_settop(L, 1);
  return 1;
}

int w_Pose_get_num_weights(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(CheckPose(L, 1)->state->pose.weights.size()));
  return 1;
}

int w_Pose_get_num_channels(lua_State* L) {
  lua_pushinteger(L, CheckPose(L, 1)->skeleton->num_channels());
  return 1;
}

void DescribePose(lua_State* L, const PoseBox& box) {
  lua_pushfstring(L, "Pose: %d channels of '%s'", box.skeleton->num_channels(),
                  box.skeleton->name(0).c_str());
}

const luaL_Reg kPoseMethods[] = {{"get", w_Pose_get},
                                 {"set", w_Pose_set},
                                 {"angles", w_Pose_angles},
                                 {"set_angles", w_Pose_set_angles},
                                 {"scale", w_Pose_scale},
                                 {"set_scale", w_Pose_set_scale},
                                 {"world_scale", w_Pose_world_scale},
                                 {"world_position", w_Pose_world_position},
                                 {"world_xyz", w_Pose_world_xyz},
                                 {"world_rotation", w_Pose_world_rotation},
                                 {"local_position", w_Pose_local_position},
                                 {"local_rotation", w_Pose_local_rotation},
                                 {"set_local_rotation", w_Pose_set_local_rotation},
                                 {"set_world_rotation", w_Pose_set_world_rotation},
                                 {"set_local_position", w_Pose_set_local_position},
                                 {"set_world_position", w_Pose_set_world_position},
                                 {"end_position", w_Pose_end_position},
                                 {"values", w_Pose_values},
                                 {"set_values", w_Pose_set_values},
                                 {"reset", w_Pose_reset},
                                 {"copy", w_Pose_copy},
                                 {"copy_from", w_Pose_copy_from},
                                 {"weight", w_Pose_weight},
                                 {"set_weight", w_Pose_set_weight},
                                 {nullptr, nullptr}};
const luaL_Reg kPoseGetters[] = {{"skeleton", GetBoxSkeleton<PoseBox>},
                                 {"num_channels", w_Pose_get_num_channels},
                                 {"num_weights", w_Pose_get_num_weights},
                                 {nullptr, nullptr}};

int w_pose_new(lua_State* L) {
  // rigel.pose(skeleton_or_object_with_one) -> the rest pose.
  const std::shared_ptr<const Skeleton>* skeleton = CheckSkeletonOf(L, 1, "Skeleton");
  CheckMaxArgs(L, 1);
  catch_exceptions(L, [&] {
    auto state = std::make_shared<PoseState>();
    state->pose = Pose(**skeleton);
    PushPose(L, *skeleton, std::move(state));
  });
  return 1;
}

}  // namespace

std::vector<int> CheckWeightColumns(lua_State* L, int mesh_arg, int target_arg,
                                    const std::vector<WeightChannel>& channels) {
  const char* mesh = lua_isnoneornil(L, mesh_arg) ? nullptr : luaL_checkstring(L, mesh_arg);
  const char* target = luaL_checkstring(L, target_arg);
  std::vector<int> columns;
  for (std::size_t c = 0; c < channels.size(); ++c) {
    if (channels[c].target == target && (mesh == nullptr || channels[c].mesh == mesh)) {
      columns.push_back(static_cast<int>(c));
    }
  }
  if (!columns.empty()) return columns;
  // The message is built on the Lua stack: no C++ object holds memory when luaL_error unwinds.
  luaL_Buffer known;
  luaL_buffinit(L, &known);
  for (std::size_t c = 0; c < channels.size() && c < 8; ++c) {
    if (c > 0) luaL_addstring(&known, ", ");
    luaL_addstring(&known, channels[c].mesh.c_str());
    luaL_addchar(&known, '/');
    luaL_addstring(&known, channels[c].target.c_str());
  }
  if (channels.size() > 8) luaL_addstring(&known, ", ...");
  if (channels.empty()) luaL_addstring(&known, "none: the clip animates no blend shape");
  luaL_pushresult(&known);
  luaL_error(L, "no blend shape '%s' on %s%s%s (weight channels: %s)", target,
             mesh == nullptr ? "any mesh" : "mesh '", mesh == nullptr ? "" : mesh,
             mesh == nullptr ? "" : "'", lua_tostring(L, -1));
  return columns;
}

void PushPose(lua_State* L, std::shared_ptr<const Skeleton> skeleton,
              std::shared_ptr<PoseState> state) {
  PushBox<PoseBox>(L, kPoseType, PoseBox{std::move(skeleton), std::move(state)});
}

void OpenPose(lua_State* L) {
  OpenBoxType<PoseBox, DescribePose>(L, kPoseMethods, kPoseGetters, nullptr, "pose", w_pose_new);
}

}  // namespace rigel::lua
