#include "core/retarget/metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/euler.h"
#include "core/pose.h"

namespace rigel::retarget {

namespace {

double AngleBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

// What MeasureRetarget sums over the frames.
struct FrameSums {
  // Per measured bone (Alignment::bones): the direction error's sum and largest, degrees.
  std::vector<double> seg_sum, seg_max;
  // Feet [0] and hands [1]: the distance to the source goal, mm.
  double eff_sum[2] = {0.0, 0.0};
  long eff_count[2] = {0, 0};
  double eff_max[2] = {0.0, 0.0};
  // Per limb and frame: the end joint's position.
  std::vector<std::vector<Eigen::Vector3d>> limb_pos;
};

// Knees bent backwards on one frame (`wt`: its world transforms).
void CountHyperextendedKnees(const Alignment& m, const RetargetOptions& options,
                             const std::vector<Eigen::Isometry3d>& wt, RetargetMetrics& q) {
  const int up = m.target_up;
  if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
    const Eigen::Vector3d right =
        Horizontal(wt[m.right_upper_leg].translation() - wt[m.left_upper_leg].translation(), up);
    const Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(right);
    for (const Limb& l : m.limbs) {
      if (!l.foot || forward.norm() == 0.0) continue;
      const Eigen::Vector3d hip = wt[l.upper].translation();
      const Eigen::Vector3d knee = wt[l.lower].translation();
      const Eigen::Vector3d ankle = wt[l.end].translation();
      const double flexion = AngleBetween(knee - hip, ankle - knee) * kDegPerRad;
      const Eigen::Vector3d axis = (ankle - hip).normalized();
      const Eigen::Vector3d bend = (knee - hip) - axis * axis.dot(knee - hip);
      if (bend.dot(forward) < 0.0 && flexion > options.knee_hyperextension_degrees) {
        ++q.knee_hyperextension_frames;
      }
    }
  }
}

// Frame f: bone directions against the source's, limb ends against their goals, channel limits
// (when `limits`), knees. `wt` ends as the frame's world transforms.
void MeasureFrame(const Skeleton& tgt, const Alignment& m, const RetargetOptions& options,
                  const TransferredMotion& motion, int f, bool limits,
                  std::vector<Eigen::Isometry3d>& wt, FrameSums& sums, RetargetMetrics& q) {
  const Eigen::Matrix3d& c = m.up_from_source;
  const double mm = m.target_unit * 1000.0;
  std::span<const double> row = motion.clip.frame(f);
  ForwardKinematics(tgt, row, wt);
  for (size_t bi = 0; bi < m.bones.size(); ++bi) {
    const Bone& b = m.bones[bi];
    const Eigen::Vector3d dtv = wt[b.target_b].translation() - wt[b.target_a].translation();
    const Eigen::Vector3d dsv =
        c * (motion.source_position(f, b.source_b) - motion.source_position(f, b.source_a));
    const double angle = AngleBetween(dtv, dsv) * kDegPerRad;
    sums.seg_sum[bi] += angle;
    sums.seg_max[bi] = std::max(sums.seg_max[bi], angle);
  }
  for (size_t li = 0; li < m.limbs.size(); ++li) {
    const Limb& l = m.limbs[li];
    sums.limb_pos[li][f] = wt[l.end].translation();
    const double e = (wt[l.end].translation() - SourceGoal(m, motion, f, l.source_end)).norm() * mm;
    sums.eff_sum[l.foot ? 0 : 1] += e;
    ++sums.eff_count[l.foot ? 0 : 1];
    sums.eff_max[l.foot ? 0 : 1] = std::max(sums.eff_max[l.foot ? 0 : 1], e);
  }
  if (limits) {
    for (int ch = 0; ch < tgt.num_channels(); ++ch) {
      if (row[ch] < options.limit_min[ch] || row[ch] > options.limit_max[ch]) {
        ++q.joint_limit_violations;
      }
    }
  }
  CountHyperextendedKnees(m, options, wt, q);
}

// Per segment (bones first, then branches): mean and largest direction error; the bones' and
// branches' means, the worst bone, the limb ends' errors.
void SummariseFrames(const Skeleton& tgt, const Alignment& m, int frames, const FrameSums& sums,
                     RetargetMetrics& q) {
  double bone_sum = 0.0;
  double branch_sum = 0.0;
  int bone_count = 0;
  int branch_count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t bi = 0; bi < m.bones.size(); ++bi) {
      const Bone& b = m.bones[bi];
      if (b.branch != (pass == 1)) continue;
      RetargetMetrics::Segment seg;
      seg.name = tgt.name(b.target_a) + " -> " + tgt.name(b.target_b);
      seg.branch = b.branch;
      seg.mean_deg = frames ? sums.seg_sum[bi] / frames : 0.0;
      seg.max_deg = sums.seg_max[bi];
      if (b.branch) {
        branch_sum += sums.seg_sum[bi];
        ++branch_count;
        q.branch_direction_max_deg = std::max(q.branch_direction_max_deg, seg.max_deg);
      } else {
        bone_sum += sums.seg_sum[bi];
        ++bone_count;
        if (seg.max_deg >= q.bone_direction_max_deg) {
          q.bone_direction_max_deg = seg.max_deg;
          q.bone_direction_worst = seg.name;
        }
      }
      q.segments.push_back(std::move(seg));
    }
  }
  q.bones = bone_count;
  q.bone_direction_mean_deg = bone_count && frames ? bone_sum / (bone_count * frames) : 0.0;
  q.branch_direction_mean_deg = branch_count && frames ? branch_sum / (branch_count * frames) : 0.0;
  q.foot_error_mean_mm =
      sums.eff_count[0] ? sums.eff_sum[0] / static_cast<double>(sums.eff_count[0]) : 0.0;
  q.foot_error_max_mm = sums.eff_max[0];
  q.hand_error_mean_mm =
      sums.eff_count[1] ? sums.eff_sum[1] / static_cast<double>(sums.eff_count[1]) : 0.0;
  q.hand_error_max_mm = sums.eff_max[1];
}

// Foot slide over the source's contacts: each foot's horizontal distance from its mean position.
void MeasureFootSlide(const Alignment& m, std::span<const FootContact> contacts,
                      const std::vector<std::vector<Eigen::Vector3d>>& limb_pos,
                      RetargetMetrics& q) {
  const int up = m.target_up;
  const double mm = m.target_unit * 1000.0;
  double slide_sum = 0.0;
  for (const FootContact& k : contacts) {
    ++q.contacts;
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int f = k.first; f <= k.last; ++f) mean += limb_pos[k.limb][f];
    mean /= (k.last - k.first + 1);
    for (int f = k.first; f <= k.last; ++f) {
      const double d = Horizontal(limb_pos[k.limb][f] - mean, up).norm() * mm;
      slide_sum += d;
      ++q.contact_frames;
      q.foot_slide_max_mm = std::max(q.foot_slide_max_mm, d);
    }
  }
  q.foot_slide_mean_mm = q.contact_frames ? slide_sum / q.contact_frames : 0.0;
}

// The output's own contacts, by the one detector, and the foot slide over them.
void MeasureOutputContacts(const Skeleton& tgt, const Alignment& m, const TransferredMotion& motion,
                           const std::vector<std::vector<Eigen::Vector3d>>& limb_pos,
                           std::vector<Eigen::Isometry3d>& wt, RetargetMetrics& q) {
  const int frames = motion.clip.num_frames();
  const int up = m.target_up;
  const double mm = m.target_unit * 1000.0;
  std::vector<int> foot_limb;
  for (size_t li = 0; li < m.limbs.size(); ++li) {
    if (m.limbs[li].foot) foot_limb.push_back(static_cast<int>(li));
  }
  if (foot_limb.empty() || frames <= 0) return;
  // The feet's positions were found above (limb_pos): frame-major tracks for the detector.
  const int tracks = static_cast<int>(foot_limb.size());
  std::vector<Eigen::Vector3d> positions(static_cast<size_t>(frames) * tracks);
  for (int f = 0; f < frames; ++f) {
    for (int t = 0; t < tracks; ++t)
      positions[static_cast<size_t>(f) * tracks + t] = limb_pos[foot_limb[t]][f];
  }
  ForwardKinematics(tgt, motion.clip.frame(0), wt);
  ContactOptions o;
  o.up_axis = up;
  o.scale = FigureHipHeight(tgt, wt, up);
  double output_sum = 0.0;
  int output_frames = 0;
  for (const ContactWindow& w : DetectContacts(positions, tracks, motion.clip.frame_time(), o)) {
    ++q.output_contacts;
    const std::vector<Eigen::Vector3d>& pos = limb_pos[foot_limb[w.track]];
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int f = w.first; f <= w.last; ++f) mean += pos[f];
    mean /= (w.last - w.first + 1);
    for (int f = w.first; f <= w.last; ++f) {
      const double d = Horizontal(pos[f] - mean, up).norm() * mm;
      output_sum += d;
      ++output_frames;
      q.output_foot_slide_max_mm = std::max(q.output_foot_slide_max_mm, d);
    }
  }
  q.output_foot_slide_mean_mm = output_frames ? output_sum / output_frames : 0.0;
}

}  // namespace

RetargetMetrics MeasureRetarget(const Skeleton& tgt, const Alignment& m,
                                const RetargetOptions& options, const TransferredMotion& motion,
                                std::span<const FootContact> contacts,
                                std::vector<std::string>* warnings) {
  const int frames = motion.clip.num_frames();
  std::vector<Eigen::Isometry3d> wt(tgt.num_joints());
  RetargetMetrics q;
  q.frames = frames;
  q.mapped_joints = m.mapped;
  q.hip_height_ratio = m.scale;
  q.source_unit_metres = m.source_unit;
  q.target_unit_metres = m.target_unit;
  q.source_unit_estimated = m.source_unit_estimated;
  q.target_unit_estimated = m.target_unit_estimated;
  q.source_up_axis = m.source_up;
  q.target_up_axis = m.target_up;
  FrameSums sums;
  sums.seg_sum.assign(m.bones.size(), 0.0);
  sums.seg_max.assign(m.bones.size(), 0.0);
  sums.limb_pos.assign(m.limbs.size(), std::vector<Eigen::Vector3d>(frames));
  const bool limits = static_cast<int>(options.limit_min.size()) == tgt.num_channels() &&
                      static_cast<int>(options.limit_max.size()) == tgt.num_channels();
  if (!options.limit_min.empty() && !limits) {
    warnings->push_back("channel limits ignored: expected " + std::to_string(tgt.num_channels()) +
                        " entries");
  }
  for (int f = 0; f < frames; ++f) MeasureFrame(tgt, m, options, motion, f, limits, wt, sums, q);
  q.joint_limit_violations += q.knee_hyperextension_frames;
  SummariseFrames(tgt, m, frames, sums, q);
  MeasureFootSlide(m, contacts, sums.limb_pos, q);
  MeasureOutputContacts(tgt, m, motion, sums.limb_pos, wt, q);
  return q;
}

}  // namespace rigel::retarget
