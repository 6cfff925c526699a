// Plausibility checks of an output clip against its source: is what rigel wrote a body doing what
// the source's body did? Run on every output of `rigel convert`, `rigel bake` and
// `rigel retarget` (and from Lua, `rigel.check`). The checks share nothing with the code that made
// the output: they run their own forward kinematics on the final clip (core/check/motion.h), find
// the joints by the humanoid classification of each skeleton on its own (never from the retarget's
// bone map), and compare bodies, not channels. Only the contact detector
// (core/retarget/contacts.h) and the pop score (core/retarget/evidence.h) are shared, so that
// there is one rule for each.
//
// Checks (names as reported; thresholds and their reasons in docs/checks.md):
//   height        standing height against the expected one (a retarget: the target's own);
//   hips_height   the hips' height above the floor, frame by frame, against the source's, scaled;
//   travel        the hips' path length on the ground against the source's times the scale, and
//                 the direction of travel relative to the way the figure faces;
//   ground        feet and toes under the floor where the source's are not;
//   orientation   feet and head against the source's (turn from their rest direction), hands
//                 (bend at the wrist);
//   limb_direction upper and lower arms and legs against the source's (humanoids);
//   bone_length   every bone keeps its length (the source's scaled, or the output skeleton's own);
//   foot_slide    feet on the source's contacts (the one contact detector) move no more than the
//                 source's feet, scaled;
//   pops          no pop (the per-frame pop score) that the source does not have;
//   pole_flip     no elbow or knee whose bend plane flips in one frame where the source's does not.
#ifndef RIGEL_CORE_CHECK_PLAUSIBILITY_H_
#define RIGEL_CORE_CHECK_PLAUSIBILITY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/axes.h"
#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {
struct Scene;
}

namespace rigel::check {

// What made the output: it decides the expected figures (docs/checks.md, "Expectations").
enum class OutputKind : std::uint8_t {
  // The input written again (another format or unit): the same body, lengths times `scale`.
  kConvert,
  // A rig script's bake of the input: the same figure; limbs and hands may go where the rig's
  // targets put them (limb_direction and the hands' orientation are not checked).
  kBake,
  // Another skeleton playing the source: heights from the target's own rest pose, lengths scaled
  // by the ratio of the two figures' hip heights.
  kRetarget,
};

// What the output's hips travel should be.
enum class TravelRule : std::uint8_t {
  // The source's path times the length scale (convert, bake, retarget --root-motion scale and
  // extract).
  kScaled,
  // The source's path in metres (retarget --root-motion keep): needs both units.
  kKept,
  // No travel (retarget --root-motion in-place).
  kNone,
};

// One side of the comparison: a clip on its skeleton, in its scene's axes and unit.
struct CheckSide {
  // The skeleton and the clip (its row width must match). Not owned; must outlive Run().
  const Skeleton* skeleton = nullptr;
  const Clip* clip = nullptr;
  // The scene's up axis (stated, inferred or given). Default +Y.
  SignedAxis up;
  // Metres per length unit; 0 (default) = unknown (lengths are then reported in file units and
  // TravelRule::kKept cannot be checked).
  double metres_per_unit = 0.0;
};

// The side of a comparison for `clip` on `skeleton` in `scene`'s axes and unit (stated, inferred
// or estimated; the up axis +Y when unknown).
CheckSide CheckSideOf(const Scene& scene, const Skeleton& skeleton, const Clip& clip);

// One broken check.
struct Finding {
  // The check's name ("height", "foot_slide", ... see the file comment).
  std::string check;
  // One sentence with the measured and expected figures and the limit.
  std::string reason;
  // The worst frame (0-based), or -1 when the finding is about the whole clip.
  int frame = -1;
  // The measure that broke the limit and the limit, in the unit the reason states.
  double value = 0.0;
  double limit = 0.0;
};

// What Run found.
struct CheckReport {
  // Broken checks, in the order of the file comment; empty when the output is plausible.
  std::vector<Finding> findings;
  // The checks that ran (a check that does not apply, e.g. limb_direction on a non-humanoid, is
  // not listed).
  std::vector<std::string> ran;
  // The length scale used (output units per source unit) and whether both figures were
  // classified as humanoids.
  double scale = 1.0;
  bool humanoid = false;
  // Frames compared (the shorter clip's count).
  int frames = 0;

  bool suspect() const { return !findings.empty(); }
};

// Compares `output` with `source`.
struct PlausibilityJob {
  OutputKind kind = OutputKind::kConvert;
  CheckSide source;
  CheckSide output;
  // kConvert and kBake: output length units per source length unit (1 = the same unit, 100 for
  // metres written as centimetres). Default 1. A retarget's scale comes from the figures.
  double scale = 1.0;
  TravelRule travel = TravelRule::kScaled;
  // kRetarget: a clip of the output skeleton that shows where its floor is (the target file's own
  // animation: the lowest its soles reach). Null (default): the output skeleton's rest pose
  // stands on the floor. Its row width must match the output skeleton.
  const Clip* output_floor_clip = nullptr;

  // "" for a valid job, else why not:
  // - a skeleton or clip is missing;
  // - a clip's row width is not its skeleton's channel count;
  // - an up axis is not 0, 1 or 2 with sign +1 or -1;
  // - scale is not finite and > 0;
  // - travel is kKept and a metres_per_unit is not > 0;
  // - output_floor_clip's row width is not the output skeleton's channel count.
  std::string Validate() const;
  // Runs every check that applies. Throws std::invalid_argument with Validate()'s message.
  CheckReport Run() const;
};

// The names of the checks, in report order.
std::vector<std::string_view> CheckNames();

// "height: standing height 0.17 m, ... (worst frame 12)" lines, one per finding.
std::string DescribeFinding(const Finding& finding);

}  // namespace rigel::check

#endif  // RIGEL_CORE_CHECK_PLAUSIBILITY_H_
