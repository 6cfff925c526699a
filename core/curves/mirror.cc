// Mirroring, trimming by time, loops. See mirror.h.
#include "core/curves/mirror.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/channel.h"
#include "core/clip_ops.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/retarget/humanoid.h"

namespace rigel {

std::vector<int> MirrorCounterparts(const Skeleton& skeleton,
                                    const std::vector<std::pair<std::string, std::string>>& pairs) {
  const int n = skeleton.num_joints();
  std::vector<int> mate(n, -1);
  for (const auto& [a, b] : pairs) {
    const int ja = skeleton.FindJoint(a), jb = skeleton.FindJoint(b);
    if (ja < 0) throw std::invalid_argument("mirror map: no joint '" + a + "'");
    if (jb < 0) throw std::invalid_argument("mirror map: no joint '" + b + "'");
    mate[ja] = jb;
    mate[jb] = ja;
  }
  using retarget::Side;
  std::map<std::string, int> left, right;
  for (int j = 0; j < n; ++j) {
    if (mate[j] >= 0) continue;
    const retarget::NormalisedName name = retarget::NormaliseJointName(skeleton.name(j));
    if (name.side == Side::kCenter) continue;
    std::string key = name.word + (name.helper ? "|_" : "|");
    for (const std::string& t : name.tokens) key += " " + t;
    (name.side == Side::kLeft ? left : right).emplace(key, j);
  }
  for (const auto& [key, j] : left) {
    const auto it = right.find(key);
    if (it == right.end()) continue;
    mate[j] = it->second;
    mate[it->second] = j;
  }
  for (int j = 0; j < n; ++j) {
    if (mate[j] < 0) mate[j] = j;
  }
  return mate;
}

MirrorPlane CharacterPlane(const Skeleton& skeleton, const std::vector<int>& counterparts) {
  const Pose rest(skeleton);
  Eigen::Vector3d across = Eigen::Vector3d::Zero(), middle = Eigen::Vector3d::Zero();
  int pairs = 0;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const int k = counterparts[j];
    if (k == j) continue;
    const retarget::NormalisedName name = retarget::NormaliseJointName(skeleton.name(j));
    // Left minus right; a pair given by a map whose names carry no side counts in index order.
    const bool left =
        name.side == retarget::Side::kLeft || (name.side == retarget::Side::kCenter && j < k);
    if (!left) continue;
    across += rest.world[j].translation() - rest.world[k].translation();
    middle += 0.5 * (rest.world[j].translation() + rest.world[k].translation());
    ++pairs;
  }
  if (pairs == 0 || across.norm() == 0) {
    throw std::invalid_argument(
        "mirror: no left/right joints found (name them Left*/Right*, *.L/*.R, L*/R*, or give a "
        "map)");
  }
  MirrorPlane plane;
  plane.normal = across.normalized();
  int axis;
  const double largest = plane.normal.cwiseAbs().maxCoeff(&axis);
  if (largest > std::cos(5.0 * kRadPerDeg)) {
    plane.normal = Eigen::Vector3d::Unit(axis) * (plane.normal[axis] > 0 ? 1.0 : -1.0);
  }
  plane.point = middle / pairs;
  return plane;
}

Clip MirrorClip(const Skeleton& skeleton, const Clip& clip, const std::vector<int>& counterparts,
                const MirrorPlane& plane) {
  if (!clip.matches(skeleton) || static_cast<int>(counterparts.size()) != skeleton.num_joints()) {
    throw std::invalid_argument("mirror: the clip or the counterparts do not match the skeleton");
  }
  const int n = skeleton.num_joints();
  const Eigen::Matrix3d m =
      Eigen::Matrix3d::Identity() - 2.0 * plane.normal * plane.normal.transpose();
  const Pose rest(skeleton);
  Clip out = clip;
  std::vector<Eigen::Isometry3d> world(n), mirrored(n);
  // With scale channels: the mirrored joints' world linear parts (core/pose.h), in which their
  // children's translations are stated; each joint takes its counterpart's scale on each axis.
  const bool scaled = skeleton.has_scale();
  std::vector<Eigen::Matrix3d> mirrored_linear(scaled ? n : 0);
  // Which Euler solution each joint takes: the one nearest its counterpart's angles with those
  // about the axes in the plane negated (what a reflection does to a joint whose axes are the
  // world's), so the angles stay continuous with the input and mirroring twice gives them back.
  int normal_axis = -1;
  for (int a = 0; a < 3; ++a) {
    if (std::abs(std::abs(plane.normal[a]) - 1.0) < 1e-12) normal_axis = a;
  }
  const auto layout = skeleton.channels();
  std::vector<double> near(clip.num_channels());
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematics(skeleton, clip.frame(f), world);
    const std::span<double> row = out.frame(f);
    const std::span<const double> in = clip.frame(f);
    for (int j = 0; j < n; ++j) {
      const int k = counterparts[j];
      const std::span<const ChannelType> mine = skeleton.joint_channels(j);
      const std::span<const ChannelType> theirs = skeleton.joint_channels(k);
      const bool same = std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end());
      for (int i = 0; i < skeleton.channel_count(j); ++i) {
        const int c = skeleton.channel_begin(j) + i;
        const int ck = skeleton.channel_begin(k) + i;
        if (!same || normal_axis < 0) {
          near[c] = f == 0 ? in[c] : out.at(f - 1, c);
        } else {
          const bool flip = IsRotation(layout[c]) && ChannelAxis(layout[c]) != normal_axis;
          near[c] = flip ? -in[ck] : in[ck];
        }
      }
    }
    for (int j = 0; j < n; ++j) {
      const int k = counterparts[j];
      const int p = skeleton.parent(j);
      // World rotation: rest turned by the mirrored turn of the counterpart.
      const Eigen::Matrix3d turn = world[k].linear() * rest.world[k].linear().transpose();
      const Eigen::Matrix3d rotation = m * turn * m * rest.world[j].linear();
      const Eigen::Isometry3d parent =
          p == Skeleton::kNoParent ? Eigen::Isometry3d::Identity() : mirrored[p];
      // Position channels: the reflection of the counterpart's position.
      bool has_translation = false;
      for (int a = 0; a < 3; ++a) has_translation |= skeleton.translation_channel(j, a) >= 0;
      if (scaled) {
        for (int a = 0; a < 3; ++a) {
          const int c = skeleton.scale_channel(j, a), ck = skeleton.scale_channel(k, a);
          if (c >= 0) row[c] = ck >= 0 ? in[ck] : 0.0;
        }
      }
      if (has_translation) {
        const Eigen::Vector3d position = plane.point + m * (world[k].translation() - plane.point);
        const Eigen::Vector3d local =
            (scaled && p != Skeleton::kNoParent
                 ? Eigen::Vector3d(mirrored_linear[p].inverse() * (position - parent.translation()))
                 : Eigen::Vector3d(parent.inverse() * position)) -
            skeleton.rest_translation(j);
        for (int a = 0; a < 3; ++a) {
          const int c = skeleton.translation_channel(j, a);
          if (c >= 0) row[c] = local[a];
        }
      }
      const Eigen::Matrix3d local_rotation = parent.linear().transpose() * rotation;
      const Eigen::Matrix3d channel_rotation =
          skeleton.rest_orientation(j).toRotationMatrix().transpose() * local_rotation;
      SetRotationChannels(skeleton, j, channel_rotation, row, near);
      UpdateJointWorld(skeleton, row, mirrored, j);
      if (scaled) {
        const Eigen::Matrix3d base =
            p == Skeleton::kNoParent ? Eigen::Matrix3d::Identity()
            : skeleton.scale_inheritance(j) == ScaleInheritance::kCompensate
                ? Eigen::Matrix3d(mirrored[p].linear())
                : mirrored_linear[p];
        mirrored_linear[j] =
            base * LocalRotation(skeleton, j, row) * LocalScale(skeleton, j, row).asDiagonal();
      }
    }
  }
  return out;
}

Clip TrimClipSeconds(const Clip& clip, double start_s, double end_s) {
  if (!(start_s < end_s) || !std::isfinite(start_s) || !std::isfinite(end_s)) {
    throw std::invalid_argument("trim: the start time must be before the end time");
  }
  const int last = clip.num_frames() - 1;
  if (last < 0) throw std::invalid_argument("trim: the clip has no frames");
  const long first_frame = std::lround(start_s / clip.frame_time());
  const long end_frame = std::lround(end_s / clip.frame_time());
  if (first_frame > last || end_frame < 0) {
    throw std::invalid_argument("trim: the range holds no frame of the clip");
  }
  const int first = static_cast<int>(std::max(first_frame, 0L));
  const int end = static_cast<int>(std::min(end_frame, static_cast<long>(last)));
  return SliceClip(clip, first, end);
}

Clip LoopClip(const Skeleton& skeleton, const Clip& clip, const LoopOptions& options) {
  if (!clip.matches(skeleton)) throw std::invalid_argument("loop: the clip does not match");
  const int frames = clip.num_frames();
  if (frames < 3) throw std::invalid_argument("loop: the clip needs at least 3 frames");
  if (options.blend_frames < 1 || options.blend_frames > frames - 1) {
    throw std::invalid_argument("loop: blend frames must be 1.." + std::to_string(frames - 1));
  }
  if (options.up_axis < 0 || options.up_axis > 2) {
    throw std::invalid_argument("loop: up axis must be 0, 1 or 2");
  }
  Clip out = clip;
  const int last = frames - 1;
  const int begin = frames - options.blend_frames;
  auto weight = [&](int f) {
    if (options.blend_frames == 1) return 1.0;
    const double s = static_cast<double>(f - begin) / (options.blend_frames - 1);
    return s * s * (3 - 2 * s);
  };
  int travelling = -1;
  for (int j = 0; j < skeleton.num_joints() && travelling < 0; ++j) {
    for (int a = 0; a < 3; ++a) {
      if (skeleton.translation_channel(j, a) >= 0) travelling = j;
    }
  }
  std::vector<char> done(clip.num_channels(), 0);
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    const std::span<const int> rc = skeleton.rotation_channels(j);
    if (rc.size() == 3) {
      const Eigen::Quaterniond start = LocalQuaternion(skeleton, j, clip.frame(0));
      const Eigen::Quaterniond end = LocalQuaternion(skeleton, j, clip.frame(last));
      const Eigen::Quaterniond error = start * end.conjugate();
      for (int f = begin; f <= last; ++f) {
        const Eigen::Quaterniond q = Eigen::Quaterniond::Identity().slerp(weight(f), error) *
                                     LocalQuaternion(skeleton, j, clip.frame(f));
        SetRotationChannels(skeleton, j, q.toRotationMatrix(), out.frame(f), clip.frame(f));
      }
      for (const int c : rc) done[c] = 1;
    }
    for (int a = 0; a < 3; ++a) {
      const int c = skeleton.translation_channel(j, a);
      if (c < 0) continue;
      done[c] = 1;
      if (j == travelling && a != options.up_axis) continue;  // keeps its travel per cycle
      const double error = clip.at(0, c) - clip.at(last, c);
      for (int f = begin; f <= last; ++f) out.at(f, c) = clip.at(f, c) + weight(f) * error;
    }
  }
  for (int c = 0; c < clip.num_channels(); ++c) {
    if (done[c]) continue;
    const bool rotation = IsRotation(skeleton.channels()[c]);
    const double target = rotation ? WrapNear(clip.at(0, c), clip.at(last, c)) : clip.at(0, c);
    const double error = target - clip.at(last, c);
    for (int f = begin; f <= last; ++f) out.at(f, c) = clip.at(f, c) + weight(f) * error;
  }
  for (int w = 0; w < clip.num_weights(); ++w) {
    const double error = clip.weights(0)[w] - clip.weights(last)[w];
    for (int f = begin; f <= last; ++f) out.weights(f)[w] = clip.weights(f)[w] + weight(f) * error;
  }
  return out;
}

}  // namespace rigel
