#include "core/skeleton_edit.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/fail.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"

namespace rigel {

namespace {

// A joint of the skeleton being edited: the built joint's data (children not used), its parent
// and children as node indices, and its index in the source skeleton (-1: added).
struct Node {
  RawSkeleton::Joint joint;
  int parent = Skeleton::kNoParent;
  std::vector<int> children;
  int source = -1;
};

// The editable flat copy of a skeleton: node i is joint i.
struct Tree {
  std::vector<Node> nodes;
  std::vector<int> roots;
};

Tree TreeOf(const Skeleton& skeleton) {
  Tree tree;
  const int n = skeleton.num_joints();
  tree.nodes.resize(n);
  for (int j = 0; j < n; ++j) {
    Node& node = tree.nodes[j];
    node.joint.name = skeleton.name(j);
    node.joint.rest_translation = skeleton.rest_translation(j);
    node.joint.rest_orientation = skeleton.rest_orientation(j);
    node.joint.translation_mode = skeleton.translation_mode(j);
    node.joint.scale_inheritance = skeleton.scale_inheritance(j);
    const auto channels = skeleton.joint_channels(j);
    node.joint.channels.assign(channels.begin(), channels.end());
    node.parent = skeleton.parent(j);
    node.children.assign(skeleton.children(j).begin(), skeleton.children(j).end());
    node.source = j;
    if (node.parent == Skeleton::kNoParent) tree.roots.push_back(j);
  }
  for (const EndSite& e : skeleton.end_sites()) {
    tree.nodes[e.parent].joint.end_sites.push_back(e.offset);
    tree.nodes[e.parent].joint.end_site_names.push_back(e.name);  // the leaf bones' names
  }
  return tree;
}

RawSkeleton RawOf(const Tree& tree) {
  std::function<RawSkeleton::Joint(int)> make = [&](int i) {
    RawSkeleton::Joint joint = tree.nodes[i].joint;
    joint.children.clear();
    for (const int c : tree.nodes[i].children) joint.children.push_back(make(c));
    return joint;
  };
  RawSkeleton raw;
  for (const int r : tree.roots) raw.roots.push_back(make(r));
  return raw;
}

// The local motion a moved joint needs under its new parent, frame by frame.
struct LocalMotion {
  int node = -1;
  Eigen::Vector3d rest_translation = Eigen::Vector3d::Zero();
  Eigen::Quaterniond rest_orientation = Eigen::Quaterniond::Identity();
  std::vector<Eigen::Vector3d> translation;  // deltas from rest_translation
  std::vector<Eigen::Matrix3d> rotation;     // channel rotation (after the rest orientation)
  std::vector<Eigen::Vector3d> scale;
};

// The local transform of joint `j` under `parent` (-1: world) from world frames and linear parts.
bool LocalUnder(const Skeleton& s, int j, int parent, const std::vector<Eigen::Isometry3d>& world,
                const std::vector<Eigen::Matrix3d>& linear, Eigen::Vector3d* t, Eigen::Matrix3d* r,
                Eigen::Vector3d* scale) {
  Eigen::Matrix3d m;
  if (parent == Skeleton::kNoParent) {
    *t = world[j].translation();
    *r = world[j].linear();
    m = linear[j];
  } else {
    *t = linear[parent].inverse() * (world[j].translation() - world[parent].translation());
    *r = world[parent].linear().transpose() * world[j].linear();
    const Eigen::Matrix3d frame = s.scale_inheritance(j) == ScaleInheritance::kCompensate
                                      ? Eigen::Matrix3d(world[parent].linear())
                                      : linear[parent];
    m = frame.inverse() * linear[j];
  }
  const Eigen::Matrix3d sm = r->transpose() * m;
  *scale = sm.diagonal();
  const double off = (sm - Eigen::Matrix3d(scale->asDiagonal())).cwiseAbs().maxCoeff();
  return off <= 1e-6 * std::max(1.0, scale->cwiseAbs().maxCoeff());
}

// Computes the local motion of each (joint, new parent) pair of `moves` over the clip.
bool MeasureMoves(const Skeleton& s, const Clip& clip,
                  const std::vector<std::pair<int, int>>& moves, std::vector<LocalMotion>* out,
                  std::string* error) {
  const int n = s.num_joints();
  std::vector<Eigen::Isometry3d> world(n);
  std::vector<Eigen::Matrix3d> linear(n);
  const std::vector<double> zeros(s.num_channels(), 0.0);
  ForwardKinematicsScaled(s, zeros, world, linear);
  out->assign(moves.size(), LocalMotion());
  for (size_t k = 0; k < moves.size(); ++k) {
    LocalMotion& m = (*out)[k];
    m.node = moves[k].first;
    Eigen::Matrix3d r;
    Eigen::Vector3d scale;
    LocalUnder(s, moves[k].first, moves[k].second, world, linear, &m.rest_translation, &r, &scale);
    m.rest_orientation = Eigen::Quaterniond(r).normalized();
  }
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematicsScaled(s, clip.frame(f), world, linear);
    for (size_t k = 0; k < moves.size(); ++k) {
      LocalMotion& m = (*out)[k];
      Eigen::Vector3d t, scale;
      Eigen::Matrix3d r;
      if (!LocalUnder(s, moves[k].first, moves[k].second, world, linear, &t, &r, &scale)) {
        return Fail(error, "joint '" + s.name(moves[k].first) + "': under its new parent its " +
                               "motion would need a shear at frame " + std::to_string(f + 1) +
                               " (non-uniform scale above it)");
      }
      m.translation.push_back(t - m.rest_translation);
      m.rotation.push_back(m.rest_orientation.toRotationMatrix().transpose() * r);
      m.scale.push_back(scale);
    }
  }
  return true;
}

bool HasChannel(const std::vector<ChannelType>& channels, ChannelType c) {
  return std::find(channels.begin(), channels.end(), c) != channels.end();
}

// Whether rotation `r` is about the single axis `axis` (what one rotation channel can hold).
bool AboutAxis(const Eigen::Matrix3d& r, int axis) {
  return (r.col(axis) - Eigen::Vector3d::Unit(axis)).cwiseAbs().maxCoeff() < 1e-9;
}

// Gives the moved joint the rest transform of `m` and the channels its motion needs.
void FitChannels(const LocalMotion& m, RawSkeleton::Joint* joint) {
  std::vector<ChannelType>& ch = joint->channels;
  joint->rest_translation = m.rest_translation;
  joint->rest_orientation = m.rest_orientation;
  // A moved joint's position channels are deltas on its new offset; the file's convention for
  // them no longer applies.
  joint->translation_mode = TranslationMode::kAdd;
  const double tol = 1e-9 * std::max(1.0, m.rest_translation.norm());
  std::vector<ChannelType> add_position;
  for (int axis = 0; axis < 3; ++axis) {
    const auto c = static_cast<ChannelType>(axis);
    bool moves = false;
    for (const Eigen::Vector3d& t : m.translation) moves = moves || std::abs(t[axis]) > tol;
    if (moves && !HasChannel(ch, c)) add_position.push_back(c);
  }
  ch.insert(ch.begin(), add_position.begin(), add_position.end());
  std::vector<int> axes;
  for (const ChannelType c : ch) {
    if (IsRotation(c)) axes.push_back(ChannelAxis(c));
  }
  bool fits = axes.size() == 3;
  if (!fits) {
    fits = true;
    for (const Eigen::Matrix3d& r : m.rotation) {
      fits = fits &&
             (axes.size() == 1 ? AboutAxis(r, axes[0])
                               : (r - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() < 1e-9);
    }
  }
  if (!fits) {
    // Keep the axes it had, first, and complete the set (Z X Y when it had none).
    const int order[3] = {2, 0, 1};
    for (const int a : order) {
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
    }
    auto first = std::find_if(ch.begin(), ch.end(), [](ChannelType c) { return IsRotation(c); });
    size_t at = first == ch.end()
                    ? static_cast<size_t>(std::count_if(ch.begin(), ch.end(), IsTranslation))
                    : static_cast<size_t>(first - ch.begin());
    ch.erase(std::remove_if(ch.begin(), ch.end(), [](ChannelType c) { return IsRotation(c); }),
             ch.end());
    for (int k = 0; k < 3; ++k)
      ch.insert(ch.begin() + at + k, static_cast<ChannelType>(3 + axes[k]));
  }
  for (int axis = 0; axis < 3; ++axis) {
    const auto c = static_cast<ChannelType>(6 + axis);
    bool scaled = false;
    for (const Eigen::Vector3d& s : m.scale) scaled = scaled || std::abs(s[axis] - 1.0) > 1e-9;
    if (scaled && !HasChannel(ch, c)) ch.push_back(c);
  }
}

// Builds the edited skeleton from `tree` and carries the clip onto it: unmoved joints keep their
// values (by channel type), moved joints get `moves`' motion, added joints zeros.
// The deleter of an edited skeleton's shared_ptr: it carries the edit (EditOf).
struct EditDeleter {
  std::shared_ptr<const SkeletonEdit> edit;
  void operator()(const Skeleton* skeleton) const { delete skeleton; }
};

bool Finish(const std::shared_ptr<const Skeleton>& source_ptr, const Clip& clip, Tree tree,
            const std::vector<LocalMotion>& moves, EditedClip* out, std::string* error) {
  for (const LocalMotion& m : moves) FitChannels(m, &tree.nodes[m.node].joint);
  std::string why;
  const Skeleton& source = *source_ptr;
  std::unique_ptr<Skeleton> built = SkeletonBuilder().Build(RawOf(tree), &why);
  if (!built) return Fail(error, why);
  const Skeleton& s = *built;
  Clip result(clip.num_frames(), s.num_channels(), clip.frame_time());
  result.set_name(clip.name());
  result.CopyWeightsFrom(clip);
  std::vector<int> node_of(s.num_joints());
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const int j = s.FindJoint(tree.nodes[i].joint.name);
    if (j >= 0) node_of[j] = static_cast<int>(i);
  }
  std::vector<const LocalMotion*> motion_of(tree.nodes.size(), nullptr);
  for (const LocalMotion& m : moves) motion_of[m.node] = &m;
  for (int j = 0; j < s.num_joints(); ++j) {
    const Node& node = tree.nodes[node_of[j]];
    const LocalMotion* m = motion_of[node_of[j]];
    const int c0 = s.channel_begin(j);
    for (int k = 0; k < s.channel_count(j); ++k) {
      const ChannelType c = s.channels()[c0 + k];
      if (m != nullptr) {
        if (IsTranslation(c)) {
          for (int f = 0; f < clip.num_frames(); ++f) {
            result.at(f, c0 + k) = m->translation[f][ChannelAxis(c)];
          }
        } else if (IsScale(c)) {
          for (int f = 0; f < clip.num_frames(); ++f) {
            result.at(f, c0 + k) = m->scale[f][ChannelAxis(c)] - 1.0;
          }
        }
        continue;
      }
      if (node.source < 0) continue;
      const auto old = source.joint_channels(node.source);
      const auto it = std::find(old.begin(), old.end(), c);
      if (it == old.end()) continue;
      const int from = source.channel_begin(node.source) + static_cast<int>(it - old.begin());
      for (int f = 0; f < clip.num_frames(); ++f) result.at(f, c0 + k) = clip.at(f, from);
    }
    if (m != nullptr) {
      for (int f = 0; f < clip.num_frames(); ++f) {
        const std::span<const double> near = f > 0 ? result.frame(f - 1) : result.frame(f);
        SetRotationChannels(s, j, m->rotation[f], result.frame(f), near);
      }
    }
  }
  auto edit = std::make_shared<SkeletonEdit>();
  edit->source = source_ptr;
  edit->source_joint.resize(s.num_joints());
  for (int j = 0; j < s.num_joints(); ++j) edit->source_joint[j] = tree.nodes[node_of[j]].source;
  const Skeleton* raw = built.release();
  out->skeleton = std::shared_ptr<const Skeleton>(raw, EditDeleter{std::move(edit)});
  out->clip = std::move(result);
  return true;
}

bool CheckFits(const Skeleton& skeleton, const Clip& clip, std::string* error) {
  if (clip.matches(skeleton)) return true;
  return Fail(error, "the clip has " + std::to_string(clip.num_channels()) +
                         " channels, the skeleton " + std::to_string(skeleton.num_channels()));
}

bool FindOrFail(const Skeleton& skeleton, std::string_view name, int* joint, std::string* error) {
  *joint = skeleton.FindJoint(name);
  if (*joint >= 0) return true;
  return Fail(error, "no joint '" + std::string(name) + "'");
}

void Detach(Tree* tree, int node) {
  const int p = tree->nodes[node].parent;
  std::vector<int>& siblings = p == Skeleton::kNoParent ? tree->roots : tree->nodes[p].children;
  siblings.erase(std::find(siblings.begin(), siblings.end(), node));
}

}  // namespace

bool AddJoint(const std::shared_ptr<const Skeleton>& source, const Clip& clip,
              const NewJoint& joint, EditedClip* out, std::string* error) {
  const Skeleton& skeleton = *source;
  if (!CheckFits(skeleton, clip, error)) return false;
  if (joint.name.empty()) return Fail(error, "a new joint needs a name");
  if (skeleton.FindJoint(joint.name) >= 0) {
    return Fail(error, "a joint named '" + joint.name + "' already exists");
  }
  int parent = Skeleton::kNoParent;
  if (!joint.parent.empty() && !FindOrFail(skeleton, joint.parent, &parent, error)) return false;
  Tree tree = TreeOf(skeleton);
  Node node;
  node.joint.name = joint.name;
  node.joint.rest_translation = joint.offset;
  node.joint.rest_orientation = joint.rest_orientation;
  node.joint.channels = joint.channels;
  node.joint.end_sites = joint.end_sites;
  node.parent = parent;
  const int index = static_cast<int>(tree.nodes.size());
  tree.nodes.push_back(std::move(node));
  (parent == Skeleton::kNoParent ? tree.roots : tree.nodes[parent].children).push_back(index);
  return Finish(source, clip, std::move(tree), {}, out, error);
}

bool RenameJoint(const std::shared_ptr<const Skeleton>& source, const Clip& clip,
                 std::string_view name, std::string_view new_name, EditedClip* out,
                 std::string* error) {
  const Skeleton& skeleton = *source;
  if (!CheckFits(skeleton, clip, error)) return false;
  int joint;
  if (!FindOrFail(skeleton, name, &joint, error)) return false;
  if (new_name.empty()) return Fail(error, "a joint needs a non-empty name");
  const int other = skeleton.FindJoint(new_name);
  if (other >= 0 && other != joint) {
    return Fail(error, "a joint named '" + std::string(new_name) + "' already exists");
  }
  Tree tree = TreeOf(skeleton);
  tree.nodes[joint].joint.name = std::string(new_name);
  return Finish(source, clip, std::move(tree), {}, out, error);
}

bool ReparentJoint(const std::shared_ptr<const Skeleton>& source, const Clip& clip,
                   std::string_view name, std::string_view new_parent, EditedClip* out,
                   std::string* error) {
  const Skeleton& skeleton = *source;
  if (!CheckFits(skeleton, clip, error)) return false;
  int joint;
  if (!FindOrFail(skeleton, name, &joint, error)) return false;
  int parent = Skeleton::kNoParent;
  if (!new_parent.empty() && !FindOrFail(skeleton, new_parent, &parent, error)) return false;
  for (int p = parent; p != Skeleton::kNoParent; p = skeleton.parent(p)) {
    if (p == joint) {
      return Fail(error, "cannot parent '" + std::string(name) + "' under '" +
                             std::string(new_parent) + "': a cycle (" +
                             (parent == joint ? "the joint itself" : "one of its descendants") +
                             ")");
    }
  }
  std::vector<LocalMotion> moves;
  if (!MeasureMoves(skeleton, clip, {{joint, parent}}, &moves, error)) return false;
  Tree tree = TreeOf(skeleton);
  Detach(&tree, joint);
  tree.nodes[joint].parent = parent;
  (parent == Skeleton::kNoParent ? tree.roots : tree.nodes[parent].children).push_back(joint);
  return Finish(source, clip, std::move(tree), moves, out, error);
}

bool RemoveJoint(const std::shared_ptr<const Skeleton>& source, const Clip& clip,
                 std::string_view name, EditedClip* out, std::string* error) {
  const Skeleton& skeleton = *source;
  if (!CheckFits(skeleton, clip, error)) return false;
  int joint;
  if (!FindOrFail(skeleton, name, &joint, error)) return false;
  if (skeleton.num_joints() == 1) return Fail(error, "cannot remove the only joint");
  const int parent = skeleton.parent(joint);
  std::vector<std::pair<int, int>> pairs;
  for (const int c : skeleton.children(joint)) pairs.push_back({c, parent});
  std::vector<LocalMotion> moves;
  if (!MeasureMoves(skeleton, clip, pairs, &moves, error)) return false;
  Tree tree = TreeOf(skeleton);
  std::vector<int>& siblings =
      parent == Skeleton::kNoParent ? tree.roots : tree.nodes[parent].children;
  const auto at = std::find(siblings.begin(), siblings.end(), joint);
  const std::vector<int> children = tree.nodes[joint].children;
  for (const int c : children) tree.nodes[c].parent = parent;
  siblings.insert(siblings.erase(at), children.begin(), children.end());
  // The removed node stays in the list, unreachable: it is not built.
  tree.nodes[joint].children.clear();
  return Finish(source, clip, std::move(tree), moves, out, error);
}

const SkeletonEdit* EditOf(const std::shared_ptr<const Skeleton>& skeleton) {
  const EditDeleter* d = std::get_deleter<EditDeleter>(skeleton);
  return d != nullptr ? d->edit.get() : nullptr;
}

bool EditedFrom(const std::shared_ptr<const Skeleton>& edited, const Skeleton& source) {
  for (std::shared_ptr<const Skeleton> s = edited; s != nullptr;) {
    if (s.get() == &source) return true;
    const SkeletonEdit* edit = EditOf(s);
    s = edit != nullptr ? edit->source : nullptr;
  }
  return false;
}

int SourceJoint(const std::shared_ptr<const Skeleton>& edited, const Skeleton& source, int joint) {
  std::shared_ptr<const Skeleton> s = edited;
  while (joint >= 0 && s != nullptr && s.get() != &source) {
    const SkeletonEdit* edit = EditOf(s);
    if (edit == nullptr) return -1;
    joint = edit->source_joint[joint];
    s = edit->source;
  }
  return s != nullptr ? joint : -1;
}

bool ClipOnSource(const std::shared_ptr<const Skeleton>& edited, const Clip& clip,
                  const Skeleton& source, Clip* out) {
  if (!EditedFrom(edited, source) || !clip.matches(*edited)) return false;
  const Skeleton& e = *edited;
  std::vector<int> in_edited(source.num_joints(), -1);
  for (int k = 0; k < e.num_joints(); ++k) {
    const int j = SourceJoint(edited, source, k);
    if (j >= 0) in_edited[j] = k;
  }
  for (int j = 0; j < source.num_joints(); ++j) {
    const int k = in_edited[j];
    if (k < 0) return false;
    const int p = source.parent(j);
    if ((p < 0 ? -1 : in_edited[p]) != e.parent(k)) return false;
    const auto a = source.joint_channels(j);
    const auto b = e.joint_channels(k);
    if (!std::equal(a.begin(), a.end(), b.begin(), b.end()) ||
        source.rest_translation(j) != e.rest_translation(k) ||
        source.rest_orientation(j).coeffs() != e.rest_orientation(k).coeffs()) {
      return false;
    }
  }
  Clip result(clip.num_frames(), source.num_channels(), clip.frame_time());
  result.set_name(clip.name());
  result.CopyWeightsFrom(clip);
  for (int j = 0; j < source.num_joints(); ++j) {
    const int from = e.channel_begin(in_edited[j]);
    const int to = source.channel_begin(j);
    for (int f = 0; f < clip.num_frames(); ++f) {
      for (int c = 0; c < source.channel_count(j); ++c) result.at(f, to + c) = clip.at(f, from + c);
    }
  }
  *out = std::move(result);
  return true;
}

bool MeshesOnEdit(std::span<const Mesh> meshes, const Skeleton& source,
                  const std::shared_ptr<const Skeleton>& edited, std::vector<Mesh>* out,
                  std::string* error) {
  std::vector<int> to_edited(source.num_joints(), -1);
  for (int k = 0; k < edited->num_joints(); ++k) {
    const int j = SourceJoint(edited, source, k);
    if (j >= 0) to_edited[j] = k;
  }
  const auto map = [&](int j, int* to) {
    *to = to_edited[j];
    if (*to >= 0) return true;
    return Fail(error, "joint '" + source.name(j) + "' moves a mesh and was removed");
  };
  std::vector<Mesh> result(meshes.begin(), meshes.end());
  for (Mesh& mesh : result) {
    for (int& j : mesh.skin_joints) {
      if (!map(j, &j)) return false;
    }
    if (mesh.attach_joint >= 0 && !map(mesh.attach_joint, &mesh.attach_joint)) return false;
  }
  *out = std::move(result);
  return true;
}

}  // namespace rigel
