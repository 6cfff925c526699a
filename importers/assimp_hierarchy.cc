// The Assimp front's node tree (importers/assimp_converter.h): the flattened nodes, `$AssimpFbx$`
// helper chains collapsed into their joints, which nodes are joints, their rest poses and the
// skeleton built from them.
#include <assimp/material.h>
#include <assimp/scene.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_set>

#include "core/raw_skeleton.h"
#include "core/skeleton_builder.h"
#include "importers/assimp_converter.h"
#include "importers/assimp_keys.h"
#include "importers/utf8.h"

namespace rigel::assimp_internal {

Eigen::Affine3d ToEigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d e;
  e << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3,
      m.d4;
  return Eigen::Affine3d(e);
}

Frame ToFrame(const Eigen::Affine3d& t, bool* nonuniform) {
  Frame f;
  f.origin = t.translation();
  Eigen::Matrix3d m = t.linear();
  Eigen::Vector3d norms(m.col(0).norm(), m.col(1).norm(), m.col(2).norm());
  if (norms.minCoeff() <= 0.0 || !std::isfinite(norms.maxCoeff())) {
    *nonuniform = true;
    return f;
  }
  const bool uniform = norms.maxCoeff() - norms.minCoeff() <= 1e-4 * norms.maxCoeff();
  if (!uniform) *nonuniform = true;
  for (int i = 0; i < 3; ++i) m.col(i) /= norms[i];
  // A uniform negative scale (3ds Max "Nub" bones: -1 -1 -1) is a rotation times -s: positions
  // below stay exact because local translations are taken from world positions.
  if (m.determinant() < 0)
    m = uniform ? Eigen::Matrix3d(-m) : Eigen::Matrix3d(m * Eigen::Vector3d(1, 1, -1).asDiagonal());
  f.rotation = Eigen::Quaterniond(m).normalized().toRotationMatrix();
  return f;
}

void Converter::Flatten() {
  if (!scene_.mRootNode) Fail("the file has no node hierarchy");
  std::vector<std::pair<const aiNode*, int>> stack{{scene_.mRootNode, -1}};
  while (!stack.empty()) {
    auto [ai, parent] = stack.back();
    stack.pop_back();
    if (nodes_.size() > 100000) Fail("more than 100000 nodes");
    Node n;
    n.ai = ai;
    n.parent = parent;
    n.name = ai->mName.C_Str();
    n.static_local = ToEigen(ai->mTransformation);
    const int inherit = InheritTypeOf(*ai);
    n.inherit_rrs = inherit == 2;
    n.inherit_componentwise = inherit == 0;
    const std::size_t tag = n.name.find(kHelperTag);
    if (tag != std::string::npos) {
      n.helper = true;
      n.helper_kind = n.name.substr(tag + kHelperTag.size());
    }
    const int index = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(n));
    index_by_name_.emplace(nodes_.back().name, index);  // keeps the first of duplicates
    for (unsigned c = ai->mNumChildren; c-- > 0;) stack.push_back({ai->mChildren[c], index});
  }
  children_.assign(nodes_.size(), {});
  for (int i = 1; i < static_cast<int>(nodes_.size()); ++i) {
    children_[nodes_[i].parent].push_back(i);
  }
}

void Converter::ResolveHelpers() {
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    if (nodes_[i].helper) continue;
    const std::string prefix = nodes_[i].name + std::string(kHelperTag);
    for (int p = nodes_[i].parent; p >= 0 && nodes_[p].helper; p = nodes_[p].parent) {
      if (nodes_[p].name.rfind(prefix, 0) != 0) break;
      nodes_[p].owner = i;
      nodes_[i].helpers.push_back(p);
    }
    if (nodes_[i].inherit_rrs) {
      Node& top = nodes_[i].helpers.empty() ? nodes_[i] : nodes_[nodes_[i].helpers.back()];
      top.drop_parent_scale = true;
      has_rrs_ = true;
    }
  }
}

int InheritTypeOf(const aiNode& node) {
  const aiMetadata* meta = node.mMetaData;
  if (meta == nullptr) return -1;
  for (unsigned i = 0; i < meta->mNumProperties; ++i) {
    if (std::string_view(meta->mKeys[i].C_Str()) != "InheritType") continue;
    const aiMetadataEntry& e = meta->mValues[i];
    if (e.mType == AI_INT32) return *static_cast<const int32_t*>(e.mData);
  }
  return -1;
}

std::vector<Eigen::Affine3d> Converter::StaticGlobals(bool rest_only) const {
  const int n = static_cast<int>(nodes_.size());
  std::vector<Eigen::Affine3d> global(n);
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    Eigen::Affine3d local = node.static_local;
    // The rest leaves out the channel's own rotation; the scaling stays, since it places the
    // children (a joint scaled 0.01 holds children 0.01 as far away as their translations say).
    if (rest_only && node.helper && node.owner >= 0 && node.helper_kind == "Rotation") {
      local.setIdentity();
    }
    global[i] =
        node.parent < 0 ? local : ComposeAffine(global[node.parent], local, node.drop_parent_scale);
  }
  return global;
}

int Converter::ChannelNode(const aiAnimation& anim, const aiNodeAnim& channel) const {
  const auto it = index_by_name_.find(channel.mNodeName.C_Str());
  if (it == index_by_name_.end()) {
    Fail(fmt::format("animation '{}' has a channel for node '{}', which is not in the scene",
                     anim.mName.C_Str(), channel.mNodeName.C_Str()));
  }
  return it->second;
}

std::vector<const aiNodeAnim*> Converter::ChannelMap(const aiAnimation* anim) {
  std::vector<const aiNodeAnim*> map(nodes_.size(), nullptr);
  if (!anim) return map;
  for (unsigned c = 0; c < anim->mNumChannels; ++c) {
    const aiNodeAnim* ch = anim->mChannels[c];
    const int n = ChannelNode(*anim, *ch);
    if (map[n]) {
      warnings_.push_back(
          fmt::format("{}: animation '{}' has two channels for node '{}'; the "
                      "first is used",
                      path_, anim->mName.C_Str(), nodes_[n].name));
      continue;
    }
    map[n] = ch;
  }
  return map;
}

void Converter::CollectAnimated() {
  animated_.assign(nodes_.size(), false);
  maps_.push_back(ChannelMap(nullptr));  // no animation
  for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
    maps_.push_back(ChannelMap(scene_.mAnimations[a]));
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (!maps_.back()[n]) continue;
      animated_[nodes_[n].helper && nodes_[n].owner >= 0 ? nodes_[n].owner : n] = true;
    }
  }
}

bool Converter::IsGeneratedSkeletonMesh(const aiMesh& mesh) const {
  if (!(scene_.mFlags & AI_SCENE_FLAGS_INCOMPLETE) || mesh.mMaterialIndex >= scene_.mNumMaterials)
    return false;
  aiString name;
  if (scene_.mMaterials[mesh.mMaterialIndex]->Get(AI_MATKEY_NAME, name) != AI_SUCCESS) return false;
  return std::string_view(name.C_Str()) == "SkeletonMaterial";
}

void Converter::MarkSkinBones() {
  const int n = static_cast<int>(nodes_.size());
  is_bone_.assign(n, false);
  bind_world_.assign(n, Eigen::Affine3d::Identity());
  const std::vector<Eigen::Affine3d> static_global = StaticGlobals(false);
  // Mesh nodes, to place bind poses in the world.
  std::vector<int> mesh_node(scene_.mNumMeshes, 0);
  for (int i = 0; i < n; ++i) {
    for (unsigned m = 0; m < nodes_[i].ai->mNumMeshes; ++m) {
      const unsigned mesh = nodes_[i].ai->mMeshes[m];
      if (mesh < scene_.mNumMeshes) mesh_node[mesh] = i;
    }
  }
  for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
    const aiMesh* mesh = scene_.mMeshes[m];
    if (IsGeneratedSkeletonMesh(*mesh)) continue;
    for (unsigned b = 0; b < mesh->mNumBones; ++b) {
      const aiBone* bone = mesh->mBones[b];
      const auto it = index_by_name_.find(bone->mName.C_Str());
      if (it == index_by_name_.end() || is_bone_[it->second]) continue;
      is_bone_[it->second] = true;
      bind_world_[it->second] =
          static_global[mesh_node[m]] * ToEigen(bone->mOffsetMatrix).inverse();
    }
  }
}

void Converter::MarkMorphJoints(std::vector<int>& roots) {
  const int n = static_cast<int>(nodes_.size());
  for (const int i : MorphAnimatedNodes()) {
    for (int p = i; p >= 0 && !is_joint_[p]; p = nodes_[p].parent) {
      if (!nodes_[p].helper && p > 0) is_joint_[p] = true;
    }
    if (i == 0) is_joint_[0] = true;
  }
  for (int i = 1; i < n; ++i) {
    const int p = nodes_[i].parent;
    joint_parent_[i] = is_joint_[p] ? p : joint_parent_[p];
  }
  for (int i = 0; i < n; ++i) {
    if (is_joint_[i] && joint_parent_[i] < 0) roots.push_back(i);
  }
}

void Converter::FailNoSkeleton() const {
  std::vector<std::string> held;
  if (scene_.mNumMeshes > 0) held.push_back(fmt::format("{} mesh(es)", scene_.mNumMeshes));
  if (const std::string shapes = BlendShapeSummary(); !shapes.empty()) held.push_back(shapes);
  if (legacy_shapes_ > 0) {
    held.push_back(fmt::format(
        "{} blend shape(s) in FBX 7.1's older layout (Shape inside Geometry), which rigel does "
        "not read",
        legacy_shapes_));
  }
  if (scene_.mNumCameras > 0) held.push_back(fmt::format("{} camera(s)", scene_.mNumCameras));
  if (scene_.mNumLights > 0) held.push_back(fmt::format("{} light(s)", scene_.mNumLights));
  Fail(
      fmt::format("no skeleton: the file has no skin bones, no skeleton (LimbNode) models and "
                  "no animated nodes{}{}",
                  held.empty() ? "" : "; it holds ", fmt::join(held, ", ")));
}

void Converter::SelectJoints() {
  std::unordered_set<std::string> cameras_lights;
  for (unsigned i = 0; i < scene_.mNumCameras; ++i) {
    cameras_lights.insert(scene_.mCameras[i]->mName.C_Str());
  }
  for (unsigned i = 0; i < scene_.mNumLights; ++i) {
    cameras_lights.insert(scene_.mLights[i]->mName.C_Str());
  }
  const int n = static_cast<int>(nodes_.size());
  MarkSkinBones();
  is_joint_.assign(n, false);
  const std::vector<bool> limb = SkeletonModels();
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    if (node.helper) continue;
    if (!is_bone_[i] && !limb[i] && (!animated_[i] || cameras_lights.count(node.name))) continue;
    is_joint_[i] = true;
    for (int p = node.parent; p > 0 && !is_joint_[p]; p = nodes_[p].parent) {
      if (!nodes_[p].helper) is_joint_[p] = true;
    }
  }
  // Nearest joint ancestor.
  joint_parent_.assign(n, -1);
  for (int i = 1; i < n; ++i) {
    const int p = nodes_[i].parent;
    joint_parent_[i] = is_joint_[p] ? p : joint_parent_[p];
  }
  // Drop lone single-node trees (camera targets, props) when a real skeleton exists.
  std::vector<int> tree_size(n, 0);
  std::vector<bool> tree_has_bone(n, false);
  std::vector<int> root_of(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!is_joint_[i]) continue;
    root_of[i] = joint_parent_[i] < 0 ? i : root_of[joint_parent_[i]];
    ++tree_size[root_of[i]];
    if (is_bone_[i]) tree_has_bone[root_of[i]] = true;
  }
  std::vector<int> roots;
  for (int i = 0; i < n; ++i) {
    if (is_joint_[i] && joint_parent_[i] < 0) roots.push_back(i);
  }
  if (roots.empty()) MarkMorphJoints(roots);
  if (roots.empty()) FailNoSkeleton();
  if (roots.size() > 1) {
    std::vector<std::string> dropped;
    const bool any_big = std::any_of(roots.begin(), roots.end(),
                                     [&](int r) { return tree_size[r] > 1 || tree_has_bone[r]; });
    if (any_big) {
      for (const int r : roots) {
        if (tree_size[r] > 1 || tree_has_bone[r]) continue;
        is_joint_[r] = false;
        dropped.push_back(nodes_[r].name);
      }
    }
    dropped_animated_ = std::move(dropped);  // named by NoteNotCarried
  }
  for (int i = 0; i < n; ++i) {
    if (is_joint_[i]) joints_.push_back(i);
  }
  if (static_cast<int>(joints_.size()) > Skeleton::kMaxJoints) {
    Fail(fmt::format("{} joints, more than the limit of {}", joints_.size(), Skeleton::kMaxJoints));
  }
}

std::vector<bool> Converter::SkeletonModels() const {
  const int n = static_cast<int>(nodes_.size());
  std::vector<bool> limb(n, false);
  if (skeleton_models_.empty()) return limb;
  const std::unordered_set<std::string> names(skeleton_models_.begin(), skeleton_models_.end());
  bool skinned_or_animated = false;
  for (int i = 0; i < n; ++i) {
    limb[i] = !nodes_[i].helper && names.count(nodes_[i].name) > 0;
    skinned_or_animated = skinned_or_animated || (limb[i] && (is_bone_[i] || animated_[i]));
  }
  // A leaf LimbNode that nothing skins or moves, where other bones are skinned or moved, marks
  // where its parent bone ends (Blender's and rigel's "_end" bones, 3ds Max's "Nub"): an end
  // site. Where the file has neither skin nor animation, its LimbNodes are all it says of the
  // skeleton, and each is a joint (a HumanIK character's Head is a leaf).
  if (skinned_or_animated) {
    for (int i = 0; i < n; ++i) {
      if (limb[i] && children_[i].empty()) limb[i] = false;
    }
  }
  return limb;
}

void Converter::ComputeRest() {
  const int n = static_cast<int>(nodes_.size());
  // Static chain without the helpers' own rotation/scaling: the rest carries translation and
  // pre-/post-rotation, the channels carry the FBX local rotation.
  const std::vector<Eigen::Affine3d> rest_global = StaticGlobals(true);
  rest_world_.assign(n, Eigen::Affine3d::Identity());
  for (const int j : joints_) {
    const int p = joint_parent_[j];
    if (is_bone_[j]) {
      rest_world_[j] = bind_world_[j];
    } else if (p >= 0) {
      rest_world_[j] = rest_world_[p] * (rest_global[p].inverse() * rest_global[j]);
    } else {
      rest_world_[j] = rest_global[j];
    }
  }
  // A skinned joint's rest is its bind pose; where the file's pose scales it otherwise (a joint
  // scaled after binding: maya_dual_quaternion_scale), every take must sample scale, animated or
  // not, or the pose's scale is lost.
  const std::vector<Eigen::Affine3d> pose = StaticGlobals(false);
  for (const int j : joints_) {
    if (!is_bone_[j]) continue;
    const Eigen::Matrix3d& bind = rest_world_[j].linear();
    if (std::abs(bind.determinant()) < 1e-12 * std::pow(bind.norm(), 3)) continue;
    const Eigen::Matrix3d m = bind.inverse() * pose[j].linear();
    pose_scales_rest_ |=
        (m.transpose() * m - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-6;
  }
  // End sites: leaf nodes right below a joint (through helpers), without meshes.
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    if (is_joint_[i] || node.helper || !children_[i].empty() || node.ai->mNumMeshes > 0) continue;
    const int j = joint_parent_[i];
    if (j < 0) continue;
    bool direct = true;
    for (int p = node.parent; p != j; p = nodes_[p].parent) direct = direct && nodes_[p].helper;
    if (!direct) continue;
    const Eigen::Vector3d world =
        (rest_world_[j] * (rest_global[j].inverse() * rest_global[i])).translation();
    end_sites_.push_back({j, world});
    end_site_nodes_.push_back(i);
  }
}

void Converter::PrepareRest() {
  const int n = static_cast<int>(nodes_.size());
  frame_index_.assign(n, -1);
  rest_.assign(n, Frame());
  for (const int j : joints_) {
    bool nonuniform = false;
    rest_[j] = ToFrame(rest_world_[j], &nonuniform);
    if (nonuniform) NoteNonuniform(j);
  }
  // Joint names must be unique and non-empty.
  std::unordered_set<std::string> used;
  names_.assign(n, {});
  for (const int j : joints_) {
    // FBX stores node names as raw bytes: refuse what glTF and the JSON reports cannot hold.
    if (!IsValidUtf8(nodes_[j].name)) Fail("joint name is not valid UTF-8");
    std::string base = nodes_[j].name.empty() ? std::string("joint") : nodes_[j].name;
    std::string name = base;
    for (int k = 1; used.count(name); ++k) name = fmt::format("{}.{}", base, k);
    if (name != nodes_[j].name) {
      warnings_.push_back(fmt::format("{}: joint '{}' renamed '{}' (names must be unique)", path_,
                                      nodes_[j].name, name));
    }
    used.insert(name);
    names_[j] = name;
  }
  // Characteristic length for "is this translation animated" tests.
  double extent = 0;
  for (const int j : joints_) extent = std::max(extent, rest_[j].origin.norm());
  translation_tolerance_ = 1e-6 * std::max(extent, 1e-3);
  // Which joints get position channels: roots, and joints whose translation moves.
  has_position_.assign(n, false);
  has_scale_.assign(n, false);
  for (const int j : joints_) has_position_[j] = joint_parent_[j] < 0;
  rest_local_.assign(n, Frame());
  for (const int j : joints_) {
    const int p = joint_parent_[j];
    Frame& local = rest_local_[j];
    if (p < 0) {
      local = rest_[j];
    } else {
      local.rotation = rest_[p].rotation.transpose() * rest_[j].rotation;
      local.origin = rest_[p].rotation.transpose() * (rest_[j].origin - rest_[p].origin);
    }
  }
}

void Converter::NoteNonuniform(int node) {
  if (nonuniform_scale_ || record_world_) return;
  nonuniform_scale_ = true;
  nonuniform_name_ = nodes_[node].name;
}

void Converter::BuildSkeleton(Scene& out) {
  const int n = static_cast<int>(nodes_.size());
  const std::vector<Frame>& rest = rest_;
  const std::vector<std::string>& names = names_;
  std::vector<RawSkeleton::Joint> raw(n);
  for (const int j : joints_) {
    RawSkeleton::Joint& joint = raw[j];
    joint.name = names[j];
    joint.rest_translation = rest_local_[j].origin;
    joint.rest_orientation = Eigen::Quaterniond(rest_local_[j].rotation).normalized();
    if (has_position_[j]) {
      joint.channels = {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition};
    }
    joint.channels.insert(joint.channels.end(), {ChannelType::kZrotation, ChannelType::kYrotation,
                                                 ChannelType::kXrotation});
    if (has_scale_[j]) {
      joint.channels.insert(joint.channels.end(),
                            {ChannelType::kXscale, ChannelType::kYscale, ChannelType::kZscale});
    }
    if (nodes_[j].inherit_rrs) joint.scale_inheritance = ScaleInheritance::kCompensate;
  }
  for (std::size_t k = 0; k < end_sites_.size(); ++k) {
    const auto& [j, world] = end_sites_[k];
    raw[j].end_sites.push_back(rest[j].rotation.transpose() * (world - rest[j].origin));
    // The leaf's own name is kept (3ds Max's "Bip01 HeadNub"); "<parent>_end", the name
    // Blender's and rigel's writers give an end site, carries nothing and is left unnamed.
    const std::string& name = nodes_[end_site_nodes_[k]].name;
    raw[j].end_site_names.push_back(name == names_[j] + "_end" || !IsValidUtf8(name) ? std::string()
                                                                                     : name);
  }
  RawSkeleton skeleton;
  for (auto it = joints_.rbegin(); it != joints_.rend(); ++it) {
    const int j = *it;
    const int p = joint_parent_[j];
    if (p >= 0) raw[p].children.insert(raw[p].children.begin(), std::move(raw[j]));
  }
  for (const int j : joints_) {
    if (joint_parent_[j] < 0) skeleton.roots.push_back(std::move(raw[j]));
  }
  std::string error;
  std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(skeleton, &error);
  if (!built) Fail(error);
  for (const int j : joints_) frame_index_[j] = built->FindJoint(names[j]);
  out.skeleton = std::move(built);
}

}  // namespace rigel::assimp_internal
