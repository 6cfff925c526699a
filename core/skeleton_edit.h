// Skeleton editing: add a joint or a locator, rename, reparent or remove a joint, each giving a
// new skeleton and the clip carried onto it. Skeletons stay immutable: an edit builds a new one
// (which remembers its source, EditOf) and maps every channel of the clip onto it.
//
// World motion is kept: a reparented joint, and the children of a removed joint, get the rest
// transform and channel values that reproduce their world transform on every frame (so their
// descendants move as before). When the joint's channels cannot express its new local motion,
// the channels it needs are added: position channels (Xposition Yposition Zposition, first) when
// its offset from the new parent changes over the clip, a full set of rotation channels when it
// had fewer than three, scale channels when its new local scale is not 1.
#ifndef RIGEL_CORE_SKELETON_EDIT_H_
#define RIGEL_CORE_SKELETON_EDIT_H_

#include <Eigen/Geometry>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/channel.h"
#include "core/clip.h"
#include "core/mesh.h"
#include "core/skeleton.h"

namespace rigel {

// Where an edited skeleton came from: the skeleton it was edited from and, per joint, the index
// of the same joint there (-1: added by the edit). Carried by the edited skeleton's shared_ptr
// (its deleter), so whoever holds the pointer can ask (EditOf) without any registry.
struct SkeletonEdit {
  std::shared_ptr<const Skeleton> source;
  std::vector<int> source_joint;
};

// The edit that made `skeleton`, or nullptr when it was not made by one of the functions below.
const SkeletonEdit* EditOf(const std::shared_ptr<const Skeleton>& skeleton);

// Whether `edited` is `source` or was made from it by edits (a chain of EditOf).
bool EditedFrom(const std::shared_ptr<const Skeleton>& edited, const Skeleton& source);

// The index in `source` of joint `joint` of `edited` (EditedFrom), or -1 (added by an edit).
int SourceJoint(const std::shared_ptr<const Skeleton>& edited, const Skeleton& source, int joint);

// A skeleton and a clip in its layout: what every edit returns.
struct EditedClip {
  std::shared_ptr<const Skeleton> skeleton;
  Clip clip;
};

// A joint to add.
struct NewJoint {
  // Unique, non-empty name.
  std::string name;
  // Name of the parent joint; empty for a new root.
  std::string parent;
  // Rest translation in the parent's space (file units).
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();
  // Rest orientation in the parent's space (unit quaternion).
  Eigen::Quaterniond rest_orientation = Eigen::Quaterniond::Identity();
  // Channel layout, in order (at most one of each).
  std::vector<ChannelType> channels;
  // End-site offsets in the joint's space: the bone's length as exporters draw it. Empty for a
  // locator (a joint with no bone length: a target or a pivot).
  std::vector<Eigen::Vector3d> end_sites;
};

// Adds `joint` as the last child of its parent; its channels are zero on every frame (the rest
// pose). Fails (false, `*error` set, `*out` untouched) when the name is empty or already used,
// the parent does not exist, the clip does not fit the skeleton, or the result is not a valid
// skeleton (SkeletonBuilder's rules: channels listed twice, non-unit orientation, ...).
bool AddJoint(const std::shared_ptr<const Skeleton>& skeleton, const Clip& clip,
              const NewJoint& joint, EditedClip* out, std::string* error);

// Renames joint `name` to `new_name`. Fails when `name` does not exist or `new_name` is empty or
// used by another joint.
bool RenameJoint(const std::shared_ptr<const Skeleton>& skeleton, const Clip& clip,
                 std::string_view name, std::string_view new_name, EditedClip* out,
                 std::string* error);

// Moves joint `name` (with its subtree) under `new_parent` (empty: it becomes a root), last
// among the parent's children, keeping its world motion on every frame. Fails when a joint is
// missing, when `new_parent` is the joint or one of its descendants (a cycle), or when the
// joint's new local motion would need a shear (non-uniform parent scale).
bool ReparentJoint(const std::shared_ptr<const Skeleton>& skeleton, const Clip& clip,
                   std::string_view name, std::string_view new_parent, EditedClip* out,
                   std::string* error);

// Removes joint `name`; its children take its place under its parent (or become roots), keeping
// their world motion. Its End Sites go with it. Fails when the joint is missing, when it is the
// only joint, or as ReparentJoint.
bool RemoveJoint(const std::shared_ptr<const Skeleton>& skeleton, const Clip& clip,
                 std::string_view name, EditedClip* out, std::string* error);

// The motion of `source`'s own joints in `clip` (on `edited`, EditedFrom `source`), as a clip on
// `source`: possible (true) when every joint of `source` is in `edited` with the same parent, rest
// transform and channel layout (edits that only added or renamed joints), so that checks of a
// bake can pair the output with its source joint for joint. False otherwise (`*out` untouched).
bool ClipOnSource(const std::shared_ptr<const Skeleton>& edited, const Clip& clip,
                  const Skeleton& source, Clip* out);

// `meshes` of a scene on `source`, carried onto `edited` (EditedFrom): each joint index a mesh
// names is mapped to the same joint in `edited`. Bind transforms are world transforms, so they
// hold as they are. Fails (naming the joint) when an edit removed a joint a mesh uses.
bool MeshesOnEdit(std::span<const Mesh> meshes, const Skeleton& source,
                  const std::shared_ptr<const Skeleton>& edited, std::vector<Mesh>* out,
                  std::string* error);

}  // namespace rigel

#endif  // RIGEL_CORE_SKELETON_EDIT_H_
