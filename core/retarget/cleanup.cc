#include "core/retarget/cleanup.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/pose.h"

namespace rigel::retarget {

CleanUpReport IkCleanUp(const Skeleton& tgt, const Alignment& m, const RetargetOptions& options,
                        std::span<const FootContact> contacts, TransferredMotion* motion,
                        std::vector<std::string>* warnings) {
  CleanUpReport report;
  const int frames = motion->clip.num_frames();
  const int up = m.target_up;
  const double dt = motion->clip.frame_time() > 0 ? motion->clip.frame_time() : 1.0 / 30.0;
  std::vector<Eigen::Isometry3d> wt(tgt.num_joints());
  const bool ik_on = options.pin_feet || options.pin_hands;
  report.applied = ik_on && !m.limbs.empty();
  if (options.pin_feet && options.root_motion == RootMotion::kInPlace) {
    warnings->push_back(
        "feet pinned with in-place root motion: the hips do not travel, so pinned feet stretch "
        "the legs; use scale or keep with --pin-feet");
  }
  const int blend = std::max(0, static_cast<int>(std::lround(options.contact_blend_seconds / dt)));
  std::vector<int> unreached(m.limbs.size(), 0);
  if (report.applied) {
    // Per foot and frame: the pin (if any) and its weight.
    std::vector<std::vector<std::pair<double, Eigen::Vector3d>>> pins(
        m.limbs.size(),
        std::vector<std::pair<double, Eigen::Vector3d>>(frames, {0.0, Eigen::Vector3d::Zero()}));
    if (options.pin_feet) {
      for (const FootContact& k : contacts) {
        for (int f = std::max(0, k.first - blend); f <= std::min(frames - 1, k.last + blend); ++f) {
          const int dist = f < k.first ? k.first - f : (f > k.last ? f - k.last : 0);
          const double w = 1.0 - static_cast<double>(dist) / (blend + 1);
          if (w > pins[k.limb][f].first) pins[k.limb][f] = {w, k.pin};
        }
      }
    }
    for (int f = 0; f < frames; ++f) {
      std::span<double> row = motion->clip.frame(f);
      ForwardKinematics(tgt, row, wt);
      Eigen::Vector3d right = Eigen::Vector3d::Zero();
      if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
        right = wt[m.right_upper_leg].translation() - wt[m.left_upper_leg].translation();
      }
      Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(Horizontal(right, up));
      if (forward.norm() > 0) forward.normalize();
      for (int li = 0; li < static_cast<int>(m.limbs.size()); ++li) {
        const Limb& l = m.limbs[li];
        if (l.foot ? !options.pin_feet : !options.pin_hands) continue;
        // Feet: pinned during contacts (blending from the FK position, or from the scaled source
        // position with follow_source_between_contacts); hands: the scaled source position.
        const auto& [w, pin] = pins[li][f];
        const Eigen::Vector3d source_goal = SourceGoal(m, *motion, f, l.source_end);
        const bool follow = !l.foot || options.follow_source_between_contacts;
        if (w <= 0.0 && !follow) continue;
        const Eigen::Vector3d free_goal = follow ? source_goal : wt[l.end].translation();
        Eigen::Vector3d goal = free_goal;
        if (w > 0.0) {
          goal = (1.0 - w) * Horizontal(free_goal, up) + w * Horizontal(pin, up);
          goal[up] = (1.0 - w) * free_goal[up] + w * source_goal[up];
        }
        const Eigen::Vector3d hip = wt[l.upper].translation();
        const Eigen::Vector3d knee = wt[l.lower].translation();
        const Eigen::Vector3d ankle = wt[l.end].translation();
        const double length = (knee - hip).norm() + (ankle - knee).norm();
        const Eigen::Vector3d bend = knee - 0.5 * (hip + ankle);
        Eigen::Vector3d pole =
            bend.norm() > 1e-3 * length
                ? Eigen::Vector3d(knee + bend.normalized() * length)
                : Eigen::Vector3d(knee + (l.foot ? 1.0 : -1.0) * forward * length);
        const Eigen::Matrix3d end_rot = wt[l.end].linear();
        bool reached = true;
        ik::TwoBoneJob job = LimbJob(tgt, l, row, wt);
        job.target = goal;
        job.pole = pole;
        job.use_pole = true;
        job.reached = &reached;
        if (!job.Run()) continue;
        if (!reached) ++unreached[li];
        ForwardKinematics(tgt, row, wt, l.upper);
        // Keep the hand/foot's world orientation.
        const int p = tgt.parent(l.end);
        const Eigen::Matrix3d channel_rot =
            tgt.rest_orientation(l.end).toRotationMatrix().transpose() *
            wt[p].linear().transpose() * end_rot;
        SetRotationChannels(tgt, l.end, channel_rot, row, row);
        ForwardKinematics(tgt, row, wt, l.end);
      }
    }
  }
  for (int u : unreached) report.unreached += u;
  return report;
}

}  // namespace rigel::retarget
