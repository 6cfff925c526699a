#include "core/retarget/transfer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/euler.h"
#include "core/pose.h"

namespace rigel::retarget {

TransferredMotion TransferRotations(const Skeleton& src, const Skeleton& tgt, const Alignment& m,
                                    RootMotion root_motion, const Clip& clip) {
  const int frames = clip.num_frames();
  const int ns = src.num_joints();
  const int nt = tgt.num_joints();
  const int up = m.target_up;
  const Eigen::Matrix3d& c = m.up_from_source;
  TransferredMotion out;
  out.clip = Clip(frames, tgt.num_channels(), clip.frame_time());
  out.clip.set_name(clip.name());
  out.source_joints = ns;
  std::vector<Eigen::Vector3d>& source_pos = out.source_positions;
  std::vector<Eigen::Vector3d>& hips_goal = out.hips_goal;
  source_pos.resize(static_cast<size_t>(frames) * ns);
  hips_goal.resize(frames);
  std::vector<Eigen::Isometry3d> ws(ns);
  std::vector<Eigen::Isometry3d> wt(nt);
  std::vector<Eigen::Matrix3d> wrot(nt);
  std::vector<double> prev = m.target_reference_row;
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(src, clip.frame(f), ws);
    for (int j = 0; j < ns; ++j) source_pos[static_cast<size_t>(f) * ns + j] = ws[j].translation();
    std::span<double> row = out.clip.frame(f);
    std::copy(m.target_reference_row.begin(), m.target_reference_row.end(), row.begin());
    for (int j = 0; j < nt; ++j) {
      const int p = tgt.parent(j);
      const Eigen::Matrix3d parent_rot =
          p < 0 ? Eigen::Matrix3d(Eigen::Matrix3d::Identity()) : wrot[p];
      const int s = m.source_of[j];
      if (s >= 0) {
        Eigen::Matrix3d want = c * ws[s].linear() * m.alignment[j];
        if (m.single_child[j] >= 0) {
          const Eigen::Vector3d now = want * m.child_segment[j];
          const Eigen::Vector3d goal =
              c * (ws[m.source_of[m.single_child[j]]].translation() - ws[s].translation());
          want = Eigen::Quaterniond::FromTwoVectors(now, goal).toRotationMatrix() * want;
        }
        const Eigen::Matrix3d channel_rot =
            tgt.rest_orientation(j).toRotationMatrix().transpose() * parent_rot.transpose() * want;
        SetRotationChannels(tgt, j, channel_rot, row, prev);
      }
      wrot[j] = parent_rot * LocalRotation(tgt, j, row);
    }
    // Hips placement by the root-motion policy.
    const Eigen::Vector3d d = c * (ws[m.source_hips].translation() - m.source_origin);
    Eigen::Vector3d goal = m.target_origin;
    goal[up] += m.target_hips_up + m.scale * (d[up] - m.source_hips_up);
    const Eigen::Vector3d dh = Horizontal(d, up);
    if (root_motion == RootMotion::kScale) goal += m.scale * dh;
    if (root_motion == RootMotion::kKeep) goal += m.unit_ratio * dh;
    hips_goal[f] = goal;
    if (m.translation_joint >= 0) {
      ForwardKinematics(tgt, row, wt);
      const int a = m.translation_joint;
      const Eigen::Vector3d delta = goal - wt[m.target_hips].translation();
      const Eigen::Vector3d local_delta =
          tgt.parent(a) < 0 ? delta
                            : Eigen::Vector3d(wt[tgt.parent(a)].linear().transpose() * delta);
      for (int axis = 0; axis < 3; ++axis) {
        const int ch = tgt.translation_channel(a, axis);
        if (ch >= 0) row[ch] += local_delta[axis];
      }
    }
    std::copy(row.begin(), row.end(), prev.begin());
  }
  return out;
}

}  // namespace rigel::retarget
