// Retarget pass: rotation transfer and hips placement, frame by frame.
//
// Every frame, target_world_j = up_from_source * source_world_j * alignment_j for each mapped
// target joint j (then swung so its single mapped child's segment follows the source's), written
// as channel values continuous with the previous frame. Unmapped trunk joints between two mapped
// ones (a target spine longer than the source's) take the source's bend by their share of the
// trunk's length (spine correction: the turn spread from the lower mapped joint to the upper, each
// segment along the source's trunk at the same share of its length); other unmapped joints keep
// their reference values. The hips are placed by the root-motion policy, scaled by the hip-height
// ratio.
#ifndef RIGEL_CORE_RETARGET_TRANSFER_H_
#define RIGEL_CORE_RETARGET_TRANSFER_H_

#include <Eigen/Geometry>
#include <span>
#include <vector>

#include "core/clip.h"
#include "core/retarget/alignment.h"
#include "core/retarget/retarget.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// The result of the transfer pass, read by the later passes.
struct TransferredMotion {
  // The retargeted clip in the target's channel layout (source frame count, time and name).
  Clip clip;
  // Source world positions, frames x source joints (source world, source units).
  std::vector<Eigen::Vector3d> source_positions;
  int source_joints = 0;
  // Per frame: where the hips were placed (target world, target units).
  std::vector<Eigen::Vector3d> hips_goal;

  // World position of source joint `joint` in frame `frame`.
  const Eigen::Vector3d& source_position(int frame, int joint) const {
    return source_positions[static_cast<size_t>(frame) * source_joints + joint];
  }
};

// Transfers `clip` (a clip of `source`, row width checked by the caller) onto `target` with the
// set-up `a`; `root_motion` places the hips.
TransferredMotion TransferRotations(const Skeleton& source, const Skeleton& target,
                                    const Alignment& a, RootMotion root_motion, const Clip& clip);

// Position of source joint `joint` in frame `frame`, turned to the target's up axis and scaled
// about the ground points: the source's motion at the target's size (target world). Independent
// of the root-motion policy; contacts are found on it.
inline Eigen::Vector3d ScaledSourcePosition(const Alignment& a, const TransferredMotion& m,
                                            int frame, int joint) {
  return a.target_origin +
         a.scale * (a.up_from_source * (m.source_position(frame, joint) - a.source_origin));
}

// Goal of source joint `joint` in frame `frame` for the target (target world): its scaled
// position relative to the scaled hips, moved to where the hips were placed horizontally, at the
// scaled height above the ground.
inline Eigen::Vector3d SourceGoal(const Alignment& a, const TransferredMotion& m, int frame,
                                  int joint) {
  const int up = a.target_up;
  const Eigen::Matrix3d& c = a.up_from_source;
  Eigen::Vector3d g =
      Horizontal(m.hips_goal[frame] + a.scale * (c * (m.source_position(frame, joint) -
                                                      m.source_position(frame, a.source_hips))),
                 up);
  g[up] =
      a.target_origin[up] + a.scale * (c * (m.source_position(frame, joint) - a.source_origin))[up];
  return g;
}

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_TRANSFER_H_
