// Native BVH reader: exact channel layout, strict numbers, file:line errors.
//
// Accepts any subset and order of the six channels per joint, End Sites, several ROOTs, CRLF or LF,
// tabs and runs of spaces, trailing whitespace, numbers like ".0083333", "1.87e-05", "+3", and
// angles beyond +-180 degrees (kept as written). Rotation values are converted to radians. Every
// number is correctly rounded, whatever its digits and exponent (fast_float; strtod's double).
// Where degrees -> radians (or an OFFSET subtracted, below) maps two neighbouring file numbers to
// one clip value and the writer would not find the file's by itself, the file's number is kept in
// Clip::file_values so the writer gives it back.
//
// Rejected, with "file:line: expected X, found Y": unknown keywords, CHANNELS counts outside 0..6
// or unknown/duplicate channel names, duplicate joint names, unbalanced braces, a hierarchy or
// motion section cut short, non-numeric values, NaN/Inf, a comma as decimal separator, rows with
// too few or too many values, "Frames:" <= 0 or more frames than the rest of the file can hold,
// "Frame Time:" <= 0 or not finite, more than Skeleton::kMaxJoints joints or nesting deeper than
// Skeleton::kMaxDepth. A joint name that is not valid UTF-8 fails with "file:line: joint name is
// not valid UTF-8".
//
// Leniencies, each with a warning in Scene::warnings: motion rows beyond the declared frame count
// are ignored (some real exporters write one extra row); a hierarchy that opens with JOINT instead
// of ROOT reads it as a root (as Blender and three.js do; "file:line: ..."). A humanoid whose head
// is below its feet on every frame (a file axis pointing down, as Azure Kinect's +Y) is read as
// it is, with a warning naming the axis (retarget::FindUpsideDown).
//
// Position channels. Files disagree on what they mean: deltas added to the OFFSET (most roots:
// MakeHuman, iClone, CMU) or absolute local translations restating it (3ds Max Biped/Truebones and
// Bandai Namco exports put 6 channels on every joint; PyMO writes the root's first position into
// its OFFSET and absolute positions into the channels). With BvhTranslation::kAuto the reader
// decides per joint, from all frames (docs/formats.md states the rule):
//   - o = the OFFSET on the axes that have a position channel. If |o| <= 1e-9 of the figure size
//     (rest extent), both readings agree: kAdd, nothing to decide.
//   - Otherwise each such axis k with |o_k| >= 0.1 |o| is examined over all frames: m = median
//     value, spread = 95th - 5th percentile. An axis whose spread exceeds 0.5 |o_k| (a root
//     travelling) says nothing. Else t = m / o_k votes "replace" when |t - 1| <= 0.25 (the values
//     restate the OFFSET), "add" when |t| <= 0.25 (near zero), and "neither" otherwise.
//   - Unanimous votes decide. A joint under a parent that has channels also has its bone: when
//     its length over the frames spreads less than a tenth as much under one reading as under the
//     other, that reading is evidence too (it decides a joint without votes; against the votes
//     it leaves the joint undecided).
//   - A joint its own data leave undecided (no vote, "neither" or mixed votes) takes the reading
//     every decided joint of the file has (the file's convention), silently. Only when the file
//     has none (no decided joint, or both readings among them) is it read as kAdd, and
//     Scene::warnings says so, with the numbers.
// rigel stores position values as deltas (a kReplace joint's values minus its OFFSET) and records
// the mode in the Skeleton, so the BVH writer gives back the file's own values.
#ifndef RIGEL_IMPORTERS_BVH_READER_H_
#define RIGEL_IMPORTERS_BVH_READER_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/body.h"
#include "core/scene.h"
#include "importers/import_error.h"

namespace rigel {

// How to read BVH position channels (see above).
enum class BvhTranslation {
  kAuto,     // decided per joint from the data
  kAdd,      // every joint: deltas added to the OFFSET
  kReplace,  // every joint: absolute translations replacing the OFFSET
};

// Parses "auto", "add", "replace". nullopt for anything else.
std::optional<BvhTranslation> ParseBvhTranslation(std::string_view text);

// Metres per file unit: "m", "dm", "cm", "mm", "in", or any factor, as a number of metres
// ("0.0254", "1e-3") or a number followed by one of those names ("2.54cm", "2.54 cm"); finite and
// > 0. nullopt for anything else, with *error (when given) saying why and what is accepted.
std::optional<double> ParseBvhUnit(std::string_view text, std::string* error = nullptr);

// The unit names ParseBvhUnit accepts, in order.
std::vector<std::string> BvhUnitNames();

// The name of a unit of `metres` metres: one of BvhUnitNames() when it is one of them, else
// "<metres> m" (e.g. "0.3048 m").
std::string UnitLabel(double metres);

// Guess of the unit of a human figure standing `height` units tall (head joint above the feet),
// assuming an adult whose head joint stands about 1.6 m high: the unit among ParseBvhUnit's and
// the CMU ASF unit (1/0.45 inch, every CMU-derived BVH) whose height in metres is nearest 1.6 m on
// a log scale. Returns metres per unit; 0 when height is not > 0.
double EstimateBvhUnit(double height);

// The unit of `skeleton`'s figure from its body (core/body.h MeasureBody over `clip`, its rest
// pose when null): EstimateBvhUnit of a humanoid's standing height over the clip; 0 when the
// figure is not a humanoid (a hand, an animal: its size says nothing about its unit) or has no
// height. The measure is stored in *measure when given.
double EstimateUnitFromBody(const Skeleton& skeleton, const Clip* clip,
                            BodyMeasure* measure = nullptr);

// EstimateUnitFromBody over one frame of `skeleton`, with the standing height in *height when
// given. Prefer EstimateUnitFromBody over a whole clip.
double EstimateUnitFromFrame(const Skeleton& skeleton, std::span<const double> row,
                             double* height = nullptr);

struct BvhReadOptions {
  BvhTranslation translation = BvhTranslation::kAuto;
  // Metres per file unit, stated by the user (--unit-in). 0: estimated from the figure's height
  // (EstimateBvhUnit) with a warning naming the estimate.
  double unit_metres = 0.0;
};

// Reads the BVH file at `path`. Throws ImportError. The scene has exactly one clip.
Scene ReadBvh(const std::string& path, const BvhReadOptions& options = {});

// Parses BVH text held in memory; `name` stands for the file name in messages.
Scene ParseBvh(std::string_view text, const std::string& name, const BvhReadOptions& options = {});

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_BVH_READER_H_
