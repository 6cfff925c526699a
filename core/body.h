// Measures of a figure taken from its body, not from a bounding box: which way is up (head over
// feet), which way it faces, its standing height, and whether it stands upside down in its file's
// frame. Used to infer what a file does not state (BVH axes and unit) and to check what it states.
#ifndef RIGEL_CORE_BODY_H_
#define RIGEL_CORE_BODY_H_

#include <optional>
#include <string>

#include "core/axes.h"
#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

struct BodyMeasure {
  // Head, hips and at least one foot found by the humanoid classification (names confirmed by
  // the hierarchy).
  bool humanoid = false;
  // The up axis the measure used: the body's (up_decided) or the one given to MeasureBody.
  SignedAxis up;
  // The body decides up: for a humanoid, the feet -> head direction averaged over the sampled
  // frames lies within 45 degrees of one axis; for anything else, never (only estimated).
  bool up_decided = false;
  // Direction the figure faces (left x up, from the hips and shoulders), when a humanoid's
  // left-right direction is clear.
  std::optional<SignedAxis> forward;
  // Standing height in scene units: a humanoid's head joint above its lowest foot point (the
  // 95th percentile over the sampled frames, so crouches and falls do not lower it); otherwise
  // the median over the frames of the extent of the body's joints along `up`, carrier roots left
  // out. 0 when there is nothing to measure.
  double height = 0.0;
  // Humanoid only: the lengths of the bones from the head down the spine to the hips and down
  // the longer leg to its lowest joint (frame independent; a straight standing figure's height).
  double chain_height = 0.0;
  // Humanoid whose head is below its feet along `up` in every sampled frame.
  bool upside_down = false;
  // Frames sampled (the rest pose alone for a clip with no frame).
  int frames = 0;
  // How the figures were found, in words, for warnings and reports.
  std::string evidence;
};

// Measures `skeleton` over up to 64 evenly spaced frames of `clip` (its rest pose when `clip` is
// null or empty). `up`: the up axis when it is known (stated or given); the body then only
// measures along it and checks it (upside_down). Without it, a humanoid's up comes from the body
// and anything else is estimated from the extent of its joints (up_decided false).
BodyMeasure MeasureBody(const Skeleton& skeleton, const Clip* clip,
                        std::optional<SignedAxis> up = std::nullopt);

// The joints that make a figure's body: every joint except the carrier roots above the first
// joint that branches (a root that stays at the origin or is projected on the ground while the
// body moves away). All joints when no joint branches.
std::vector<int> BodyJoints(const Skeleton& skeleton);

}  // namespace rigel

#endif  // RIGEL_CORE_BODY_H_
