#include "exporters/bvh_writer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ranges>
#include <span>
#include <string_view>
#include <vector>

#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton_builder.h"
#include "exporters/export_check.h"
#include "io/exact_decimal.h"

namespace rigel {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
// Longest text of one number (WriteDecimal writes at most 24 characters) and its separator.
constexpr size_t kMaxValueChars = 26;

// Appends `v` in its shortest exact form ("0", "12.5", "1.87e-05"): re-reading gives `v`.
void AppendNumber(std::string* out, double v) {
  char buf[kMaxDecimalChars];
  out->append(buf, WriteDecimal(buf, v));
}

void CheckExportable(const Skeleton& skeleton, const Clip& clip, const std::string& target) {
  CheckClipsForExport(skeleton, std::span<const Clip>(&clip, 1), target);
}

// The joints of `raw` in the builder's joint order (depth first, as ToRawSkeleton gives it back),
// so that index j is the skeleton's joint j.
std::vector<RawSkeleton::Joint*> JointsInBuildOrder(RawSkeleton& raw) {
  std::vector<RawSkeleton::Joint*> joints;
  std::vector<RawSkeleton::Joint*> stack;
  for (auto it = raw.roots.rbegin(); it != raw.roots.rend(); ++it) stack.push_back(&*it);
  while (!stack.empty()) {
    RawSkeleton::Joint* j = stack.back();
    stack.pop_back();
    joints.push_back(j);
    for (auto it = j->children.rbegin(); it != j->children.rend(); ++it) stack.push_back(&*it);
  }
  return joints;
}

bool IsIdentity(const Eigen::Quaterniond& q) {
  return q.isApprox(Eigen::Quaterniond::Identity(), 1e-12);
}

// The HIERARCHY section and the MOTION header (frame count and frame time).
std::string HierarchyText(const Skeleton& skeleton, const Clip& clip) {
  std::string out;
  auto indent = [&out](int depth) { out.append(static_cast<size_t>(depth), '\t'); };
  auto offset = [&out](const Eigen::Vector3d& v) {
    out += "OFFSET";
    for (int k = 0; k < 3; ++k) {
      out += ' ';
      AppendNumber(&out, v[k]);
    }
    out += '\n';
  };
  out += "HIERARCHY\n";
  // Depth of each joint (parents come first).
  std::vector<int> depth(skeleton.num_joints(), 0);
  const std::span<const EndSite> end_sites = skeleton.end_sites();
  std::vector<std::vector<int>> end_sites_of(skeleton.num_joints());
  for (size_t e = 0; e < end_sites.size(); ++e) {
    end_sites_of[end_sites[e].parent].push_back(static_cast<int>(e));
  }
  auto close_joint = [&](int j) {
    // End Sites of j (after its child joints), then its closing brace.
    for (const int e : end_sites_of[j]) {
      indent(depth[j] + 1);
      out += "End Site\n";
      indent(depth[j] + 1);
      out += "{\n";
      indent(depth[j] + 2);
      offset(end_sites[e].offset);
      indent(depth[j] + 1);
      out += "}\n";
    }
    indent(depth[j]);
    out += "}\n";
  };
  std::vector<int> open;  // stack of joints whose brace is open
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const int p = skeleton.parent(j);
    while (!open.empty() && open.back() != p) {
      close_joint(open.back());
      open.pop_back();
    }
    depth[j] = p < 0 ? 0 : depth[p] + 1;
    indent(depth[j]);
    out += p < 0 ? "ROOT " : "JOINT ";
    out += skeleton.name(j);
    out += '\n';
    indent(depth[j]);
    out += "{\n";
    indent(depth[j] + 1);
    offset(skeleton.rest_translation(j));
    indent(depth[j] + 1);
    out += "CHANNELS ";
    out += std::to_string(skeleton.channel_count(j));
    for (const ChannelType c : skeleton.joint_channels(j)) {
      out += ' ';
      out += ChannelName(c);
    }
    out += '\n';
    open.push_back(j);
  }
  while (!open.empty()) {
    close_joint(open.back());
    open.pop_back();
  }
  out += "MOTION\nFrames: ";
  out += std::to_string(clip.num_frames());
  out += "\nFrame Time: ";
  AppendNumber(&out, clip.frame_time());
  out += '\n';
  return out;
}

// The reader turns a written number d of channel c into d * from_file[c] - subtract[c] (degrees
// to radians; absolute translations, TranslationMode::kReplace, less their OFFSET). Each value
// x is written as the text that maps back to exactly x (WriteDecimalFor), found from
// x * to_file[c] + add_back[c]. add_back is -0.0 where there is no offset: x + -0.0 is x for
// every x, -0.0 included, so a value read as -0.0 ("-0.000") is written "-0" and stays -0.0.
struct FileScales {
  explicit FileScales(int channels)
      : to_file(channels), from_file(channels), subtract(channels, 0.0), add_back(channels, -0.0) {}
  std::vector<double> to_file, from_file, subtract;
  std::vector<double> add_back;
};

FileScales ChannelFileScales(const Skeleton& skeleton, int channels) {
  FileScales scales(channels);
  for (int c = 0; c < channels; ++c) {
    const ChannelType type = skeleton.channels()[c];
    scales.to_file[c] = IsRotation(type) ? kDegPerRad : 1.0;
    scales.from_file[c] = IsRotation(type) ? kRadPerDeg : 1.0;
    const int j = skeleton.channel_joint(c);
    if (IsTranslation(type) && skeleton.translation_mode(j) == TranslationMode::kReplace) {
      // A zero OFFSET adds -0.0 back, as above: x - 0.0 keeps -0.0, and the guess must too (the
      // exactness check's == does not tell -0.0 from +0.0).
      const double o = skeleton.rest_translation(j)[ChannelAxis(type)];
      scales.subtract[c] = o;
      scales.add_back[c] = o == 0 ? -0.0 : o;
    }
  }
  return scales;
}

// The MOTION rows, in blocks of about kFlushBytes written in place, with no allocation per value.
template <typename Flush>
void EmitMotion(const Clip& clip, const FileScales& scales, Flush&& flush) {
  const int channels = clip.num_channels();
  // Plain pointers: locals the row loop's character stores cannot alias.
  const double* const to_file = scales.to_file.data();
  const double* const from_file = scales.from_file.data();
  const double* const subtract = scales.subtract.data();
  const double* const add_back = scales.add_back.data();
  // Rows go into one large buffer, flushed when the next row might not fit.
  const size_t row_chars = static_cast<size_t>(channels) * kMaxValueChars + kMaxDecimalChars;
  const size_t capacity = kFlushBytes + row_chars;
  const std::unique_ptr<char[]> buffer(new char[capacity]);
  char* const begin = buffer.get();
  char* p = begin;
  // The file values the reader kept where two of them give one clip value (Clip::file_values):
  // written back when they still map to the clip's value, so the file's own number comes back.
  const std::vector<Clip::FileValue>& hints = clip.file_values();
  size_t next_hint = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    const double* row = clip.frame(f).data();
    const size_t row_index = static_cast<size_t>(f) * channels;
    for (int c = 0; c < channels; ++c) {
      const double s = from_file[c];
      const double o = subtract[c];
      while (next_hint < hints.size() && hints[next_hint].index < row_index + c) ++next_hint;
      if (next_hint < hints.size() && hints[next_hint].index == row_index + c &&
          std::isfinite(hints[next_hint].value) && hints[next_hint].value * s - o == row[c]) {
        p = WriteDecimal(p, hints[next_hint].value);
      } else {
        p = WriteDecimalFor(p, row[c], row[c] * to_file[c] + add_back[c],
                            [s, o](double d) { return d * s - o; });
      }
      *p++ = ' ';
    }
    if (channels) --p;
    *p++ = '\n';
    if (static_cast<size_t>(p - begin) + row_chars > capacity) {
      flush(std::string_view(begin, p - begin));
      p = begin;
    }
  }
  flush(std::string_view(begin, p - begin));
}

// Streams the BVH text to `flush(std::string_view)`: the hierarchy, then the motion.
template <typename Flush>
void Emit(const Skeleton& skeleton, const Clip& clip, Flush&& flush) {
  {
    const std::string out = HierarchyText(skeleton, clip);
    flush(std::string_view(out));
  }
  const FileScales scales = ChannelFileScales(skeleton, clip.num_channels());
  EmitMotion(clip, scales, flush);
}

}  // namespace

bool HasRestOrientations(const Skeleton& skeleton) {
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (!IsIdentity(skeleton.rest_orientation(j))) return true;
  }
  return false;
}

void FoldRestOrientations(const Skeleton& skeleton, const Clip& clip,
                          std::unique_ptr<Skeleton>* folded_skeleton, Clip* folded_clip) {
  const int n = skeleton.num_joints();
  // The most used three-channel order, for joints that have no rotation channel.
  std::map<EulerOrder, int> uses;
  for (int j = 0; j < n; ++j) {
    if (const auto order = skeleton.rotation_order(j)) ++uses[*order];
  }
  EulerOrder common = EulerOrder::kZXY;
  int most = 0;
  for (const auto& [order, count] : uses) {
    if (count > most) {
      most = count;
      common = order;
    }
  }
  // New layout, in the builder's joint order (depth first, as ToRawSkeleton gives it back).
  RawSkeleton raw = ToRawSkeleton(skeleton);
  const std::vector<RawSkeleton::Joint*> joints = JointsInBuildOrder(raw);
  std::vector<bool> folded(n, false);
  // Joints with a position channel on every axis (roots, and the hips under an FBX root): their
  // OFFSET goes into the channels (OFFSET 0, absolute values), the one convention every BVH reader
  // agrees on. Blender reads every position channel as absolute, three.js adds it to the OFFSET,
  // rigel decides from the data: with OFFSET 0 all three read the same. (With the OFFSET kept,
  // fbx/assimp/animation_with_skeleton.fbx's armature read 36 m off in Blender.)
  std::vector<bool> root_offset(n, false);
  for (int j = 0; j < n; ++j) {
    bool all_axes = true;
    for (int a = 0; a < 3; ++a) all_axes = all_axes && skeleton.translation_channel(j, a) >= 0;
    if (all_axes && !skeleton.rest_translation(j).isZero(0)) {
      root_offset[j] = true;
      joints[j]->rest_translation.setZero();
    }
  }
  for (int j = 0; j < n; ++j) {
    if (IsIdentity(skeleton.rest_orientation(j))) continue;
    folded[j] = true;
    RawSkeleton::Joint& joint = *joints[j];
    joint.rest_orientation = Eigen::Quaterniond::Identity();
    const std::span<const int> rc = skeleton.rotation_channels(j);
    if (rc.size() == 3) continue;
    std::array<bool, 3> has = {false, false, false};
    for (const int c : rc) has[ChannelAxis(skeleton.channels()[c])] = true;
    const std::array<int, 3> axes = rc.empty() ? EulerAxes(common) : std::array<int, 3>{0, 1, 2};
    for (const int a : axes) {
      if (!has[a]) joint.channels.push_back(static_cast<ChannelType>(3 + a));
    }
  }
  std::string error;
  std::unique_ptr<Skeleton> out = SkeletonBuilder().Build(raw, &error);
  if (!out) throw ExportError("BVH: folding rest orientations: " + error);
  Clip result(clip.num_frames(), out->num_channels(), clip.frame_time());
  result.set_name(clip.name());
  std::vector<Eigen::Vector3d> previous(n, Eigen::Vector3d::Zero());
  for (int f = 0; f < clip.num_frames(); ++f) {
    const std::span<const double> in = clip.frame(f);
    const std::span<double> row = result.frame(f);
    for (int j = 0; j < n; ++j) {
      // Channels the joint had keep their values (translations always; rotations when unfolded).
      const std::span<const ChannelType> old_layout = skeleton.joint_channels(j);
      for (size_t k = 0; k < old_layout.size(); ++k) {
        row[out->channel_begin(j) + k] = in[skeleton.channel_begin(j) + k];
      }
      if (root_offset[j]) {
        for (int a = 0; a < 3; ++a) {
          row[out->translation_channel(j, a)] += skeleton.rest_translation(j)[a];
        }
      }
      if (!folded[j]) continue;
      const Eigen::Matrix3d local = LocalRotation(skeleton, j, in);
      const EulerOrder order = *out->rotation_order(j);
      if (f == 0) {
        // Start from the source's own angles where it had them (zero elsewhere).
        for (const int c : out->rotation_channels(j)) {
          previous[j][ChannelAxis(out->channels()[c])] = row[c];
        }
      }
      const Eigen::Vector3d xyz = MatrixToEulerNear(local, order, previous[j]);
      previous[j] = xyz;
      for (const int c : out->rotation_channels(j)) row[c] = xyz[ChannelAxis(out->channels()[c])];
    }
  }
  *folded_skeleton = std::move(out);
  *folded_clip = std::move(result);
}

namespace {

// The scale of joint j when it is the same on every frame of `clip` and every axis; 0 otherwise.
double StaticUniformScale(const Skeleton& skeleton, const Clip& clip, int j) {
  if (!skeleton.has_scale(j)) return 1.0;
  double s = 0;
  for (int f = 0; f < clip.num_frames(); ++f) {
    const Eigen::Vector3d v = LocalScale(skeleton, j, clip.frame(f));
    if (f == 0) s = v.x();
    for (int a = 0; a < 3; ++a) {
      if (v[a] != s) return 0.0;
    }
  }
  return s > 0 ? s : 0.0;
}

}  // namespace

std::vector<std::string> UnfoldableScaleJoints(const Skeleton& skeleton, const Clip& clip) {
  std::vector<std::string> names;
  if (!skeleton.has_scale()) return names;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (skeleton.has_scale(j) && StaticUniformScale(skeleton, clip, j) == 0) {
      names.push_back(skeleton.name(j));
    }
  }
  return names;
}

namespace {

// Joints whose translation in their parent's rotation frame the static fold cannot give: the
// parent's world linear part is not its rotation frame times one constant on every frame (an
// animated or non-uniform scale above it). `factor` holds the static fold's factors.
std::vector<bool> ScaleMovedJoints(const Skeleton& skeleton, const Clip& clip,
                                   const std::vector<double>& factor) {
  const int n = skeleton.num_joints();
  std::vector<bool> moved(n, false);
  std::vector<Eigen::Isometry3d> world(n);
  std::vector<Eigen::Matrix3d> linear(n);
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematicsScaled(skeleton, clip.frame(f), world, linear);
    for (int j = 0; j < n; ++j) {
      const int p = skeleton.parent(j);
      if (p < 0 || moved[j]) continue;
      const Eigen::Matrix3d m = world[p].linear().transpose() * linear[p];
      moved[j] = !m.isApprox(factor[p] * Eigen::Matrix3d::Identity(), 1e-12);
    }
  }
  return moved;
}

// The static fold's world scale factor per joint (static uniform scales only): what its
// children's offsets grow by.
std::vector<double> StaticFoldFactors(const Skeleton& skeleton, const Clip& clip) {
  std::vector<double> factor(skeleton.num_joints(), 1.0);
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const double own = StaticUniformScale(skeleton, clip, j);
    const int p = skeleton.parent(j);
    const double inherited =
        p < 0 || skeleton.scale_inheritance(j) == ScaleInheritance::kCompensate ? 1.0 : factor[p];
    factor[j] = inherited * (own > 0 ? own : 1.0);
  }
  return factor;
}

}  // namespace

void FoldScale(const Skeleton& skeleton, const Clip& clip,
               std::unique_ptr<Skeleton>* folded_skeleton, Clip* folded_clip) {
  const int n = skeleton.num_joints();
  RawSkeleton raw = ToRawSkeleton(skeleton);
  const std::vector<RawSkeleton::Joint*> joints = JointsInBuildOrder(raw);
  const std::vector<double> factor = StaticFoldFactors(skeleton, clip);
  const std::vector<bool> moved = ScaleMovedJoints(skeleton, clip, factor);
  for (int j = 0; j < n; ++j) {
    RawSkeleton::Joint& joint = *joints[j];
    const int p = skeleton.parent(j);
    joint.rest_translation *= p < 0 ? 1.0 : factor[p];
    for (Eigen::Vector3d& e : joint.end_sites) e *= factor[j];
    std::erase_if(joint.channels, [](ChannelType c) { return IsScale(c); });
    joint.scale_inheritance = ScaleInheritance::kInherit;
    if (moved[j]) {
      // Position channels on the three axes (BVH's order: positions first) keep the joint's
      // world position on every frame.
      std::erase_if(joint.channels, [](ChannelType c) { return IsTranslation(c); });
      joint.channels.insert(
          joint.channels.begin(),
          {ChannelType::kXposition, ChannelType::kYposition, ChannelType::kZposition});
    }
  }
  std::string error;
  std::unique_ptr<Skeleton> out = SkeletonBuilder().Build(raw, &error);
  if (!out) throw ExportError("BVH: folding scale: " + error);
  Clip result(clip.num_frames(), out->num_channels(), clip.frame_time());
  result.set_name(clip.name());
  const bool any_moved = std::ranges::find(moved, true) != moved.end();
  std::vector<Eigen::Isometry3d> world(any_moved ? n : 0);
  std::vector<Eigen::Matrix3d> linear(any_moved ? n : 0);
  for (int f = 0; f < clip.num_frames(); ++f) {
    const std::span<const double> in = clip.frame(f);
    const std::span<double> row = result.frame(f);
    if (any_moved) ForwardKinematicsScaled(skeleton, in, world, linear);
    for (int j = 0; j < n; ++j) {
      const int p = skeleton.parent(j);
      int k = out->channel_begin(j);
      if (moved[j]) {
        // The joint's offset from its parent in the parent's rotation frame, less the OFFSET.
        const Eigen::Vector3d t =
            world[p].linear().transpose() * (world[j].translation() - world[p].translation());
        for (int a = 0; a < 3; ++a) row[k++] = t[a] - out->rest_translation(j)[a];
      }
      const double by = p < 0 ? 1.0 : factor[p];
      // A plain loop: clang 14 cannot compile libstdc++ 12's views::iota (the clang job).
      const int first = skeleton.channel_begin(j);
      for (int c = first; c < first + skeleton.channel_count(j); ++c) {
        const ChannelType type = skeleton.channels()[c];
        if (IsScale(type) || (moved[j] && IsTranslation(type))) continue;
        row[k++] = IsTranslation(type) ? in[c] * by : in[c];
      }
    }
  }
  *folded_skeleton = std::move(out);
  *folded_clip = std::move(result);
}

std::string FormatBvh(const Skeleton& skeleton, const Clip& clip) {
  if (skeleton.has_scale()) {
    std::unique_ptr<Skeleton> s;
    Clip c;
    FoldScale(skeleton, clip, &s, &c);
    return FormatBvh(*s, c);
  }
  CheckExportable(skeleton, clip, "BVH");
  std::string text;
  if (HasRestOrientations(skeleton)) {
    std::unique_ptr<Skeleton> s;
    Clip c;
    FoldRestOrientations(skeleton, clip, &s, &c);
    Emit(*s, c, [&text](std::string_view block) { text += block; });
  } else {
    Emit(skeleton, clip, [&text](std::string_view block) { text += block; });
  }
  return text;
}

void WriteBvh(const Skeleton& skeleton, const Clip& clip, const std::string& path) {
  if (skeleton.has_scale()) {
    CheckExportable(skeleton, clip, path);
    std::unique_ptr<Skeleton> s;
    Clip c;
    FoldScale(skeleton, clip, &s, &c);
    WriteBvh(*s, c, path);
    return;
  }
  CheckExportable(skeleton, clip, path);
  std::unique_ptr<Skeleton> folded_skeleton;
  Clip folded_clip;
  const bool fold = HasRestOrientations(skeleton);
  if (fold) FoldRestOrientations(skeleton, clip, &folded_skeleton, &folded_clip);
  AtomicFile file(path);
  Emit(fold ? *folded_skeleton : skeleton, fold ? folded_clip : clip,
       [&file](std::string_view block) { file.Write(block); });
  file.Commit();
}

}  // namespace rigel
