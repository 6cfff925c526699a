#include "core/ik/stage_fk.h"

#include <bit>
#include <cstdint>

#include "core/fast_math.h"

namespace rigel::ik::internal {

using Eigen::Vector3d;
using rigel::internal::RotateColumns;

void ChainFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta) {
  const bool scaled = s.has_scale();
  // Every rotation's sine and cosine first, in one vectorized pass (bit for bit SinCos).
  const int nrot = static_cast<int>(st.fk_rotation_channels.size());
  for (int k = 0; k < nrot; ++k) st.fk_angle[k] = theta[st.fk_rotation_channels[k]];
  rigel::internal::SinCosBatch(st.fk_angle.data(), nrot, st.fk_sin.data(), st.fk_cos.data());
  int k = 0;
  for (const FkJoint& f : st.fk) {
    Vector3d local_t = f.rest_t;
    for (int i = f.t_begin; i < f.t_end; ++i) {
      const FkChannel& t = st.fk_channels[i];
      st.fk_theta[i] = theta[t.channel];
      local_t[t.axis] += theta[t.channel];
    }
    Eigen::Matrix3d r;
    Vector3d pos;
    // The parent's world scale: a uniform factor on the joint's offset (1 without scale).
    double ps = 1.0;
    if (scaled) {
      double own = 0;
      for (int axis = 0; axis < 3; ++axis)
        own += f.scale_c[axis] >= 0 ? 1 + theta[f.scale_c[axis]] : 1;
      own /= 3;
      ps = f.parent < 0 ? 1.0 : w.world_scale[f.parent];
      w.world_scale[f.joint] = f.compensate ? own : ps * own;
    }
    if (f.parent < 0) {
      pos = local_t;
      r = f.rest_identity ? Eigen::Matrix3d::Identity() : w.rest_rot[f.joint];
      for (int i = f.t_begin; i < f.t_end; ++i) {
        const FkChannel& t = st.fk_channels[i];
        if (t.col >= 0) st.axis[t.col] = Vector3d::Unit(t.axis);
      }
    } else {
      const Eigen::Matrix3d& pr = w.rot[f.parent];
      if (scaled) {
        pos = w.pos[f.parent] + ps * (pr * local_t);
      } else {
        pos = w.pos[f.parent] + pr * local_t;
      }
      r = f.rest_identity ? pr : Eigen::Matrix3d(pr * w.rest_rot[f.joint]);
      for (int i = f.t_begin; i < f.t_end; ++i) {
        const FkChannel& t = st.fk_channels[i];
        if (t.col >= 0) st.axis[t.col] = ps * pr.col(t.axis);
      }
    }
    w.pos[f.joint] = pos;
    for (int i = f.t_end; i < f.r_end; ++i) {
      const FkChannel& rc = st.fk_channels[i];
      st.fk_theta[i] = theta[rc.channel];
      RotateColumns(r, rc.axis, st.fk_cos[k], st.fk_sin[k]);
      ++k;
      if (rc.col >= 0) {
        st.axis[rc.col] = r.col(rc.axis);
        st.pivot[rc.col] = pos;
      }
    }
    w.rot[f.joint] = r;
  }
  st.frames_valid = true;
}

// Forward kinematics at the start of an iteration: skipped when the joint frames are those of
// these exact channel values (a frame-by-frame solve warm-started from the previous answer).
// Only with one stage: another stage may have overwritten shared joints' frames.
void StartFk(const Skeleton& s, Workspace::Impl& w, StageWork& st, const double* theta) {
  if (st.frames_valid && w.stages.size() == 1) {
    bool same = true;
    for (size_t i = 0; i < st.fk_channels.size() && same; ++i) {
      same = std::bit_cast<std::uint64_t>(theta[st.fk_channels[i].channel]) ==
             std::bit_cast<std::uint64_t>(st.fk_theta[i]);
    }
    if (same) return;
  }
  ChainFk(s, w, st, theta);
}

void UpdateWorldAfterSolve(const Skeleton& s, Workspace::Impl& w, Pose& pose) {
  const StageWork& last = w.stages.back();
  if (!last.frames_valid || s.has_scale()) {
    pose.UpdateWorld(s);
    return;
  }
  const int nj = s.num_joints();
  rigel::internal::SinCosBatch(pose.channels.data(), s.num_channels(), w.channel_sin.data(),
                               w.channel_cos.data());
  for (int j = 0; j < nj; ++j) {
    Eigen::Isometry3d& out = pose.world[j];
    if (last.joint_in_stage[j]) {
      out.linear() = w.rot[j];
      out.translation() = w.pos[j];
      out.makeAffine();
      continue;
    }
    Vector3d t = s.rest_translation(j);
    for (int axis = 0; axis < 3; ++axis) {
      const int c = s.translation_channel(j, axis);
      if (c >= 0) t[axis] += pose.channels[c];
    }
    const int p = s.parent(j);
    Eigen::Matrix3d r;
    if (p == Skeleton::kNoParent) {
      r = w.rest_identity[j] ? Eigen::Matrix3d::Identity() : w.rest_rot[j];
      out.translation() = t;
    } else {
      const Eigen::Isometry3d& pw = pose.world[p];
      r = w.rest_identity[j] ? Eigen::Matrix3d(pw.linear())
                             : Eigen::Matrix3d(pw.linear() * w.rest_rot[j]);
      out.translation() = pw.translation() + pw.linear() * t;
    }
    const std::span<const ChannelType> layout = s.channels();
    for (const int c : s.rotation_channels(j)) {
      RotateColumns(r, ChannelAxis(layout[c]), w.channel_cos[c], w.channel_sin[c]);
    }
    out.linear() = r;
    out.makeAffine();
  }
}

}  // namespace rigel::ik::internal
