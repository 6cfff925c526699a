// The checks of core/check/plausibility.h, one function each, over the two sides measured once
// (MeasuredSide). Internal to core/check; the thresholds are the constants below, explained in
// docs/checks.md.
#ifndef RIGEL_CORE_CHECK_RULES_H_
#define RIGEL_CORE_CHECK_RULES_H_

#include <Eigen/Geometry>
#include <string>
#include <utility>
#include <vector>

#include "core/check/motion.h"
#include "core/check/plausibility.h"

namespace rigel::check::internal {

// Limits (docs/checks.md gives the reasoning for each).
// Standing height within 25 % of the expected one.
constexpr double kHeightRatio = 0.25;
// Hips within 0.25 hip heights of the expected height above the floor.
constexpr double kHipsHeight = 0.25;
// Path length within a factor 1.5 of the expected one (when that is over half a hip height).
constexpr double kTravelRatio = 1.5;
constexpr double kTravelSlack = 0.5;
// Direction of travel (relative to the facing) within 45 degrees, over 1 hip height of travel.
constexpr double kTravelDegrees = 45.0;
constexpr double kTravelMinimum = 1.0;
// Feet and toes no more than 0.1 hip heights further under the floor than the source's.
constexpr double kGround = 0.1;
// Feet, head and hands turned no more than 45 degrees from the source's.
constexpr double kOrientationDegrees = 45.0;
// Arm and leg segments within 30 degrees of the source's.
constexpr double kLimbDegrees = 30.0;
// Bones within 10 % (and 0.02 hip heights) of their expected length.
constexpr double kBoneRatio = 0.10;
constexpr double kBoneSlack = 0.02;
// A foot on a source contact moves at most 0.15 hip heights more than the source's, scaled.
constexpr double kFootSlide = 0.15;
// A pop: score >= 1 (core/retarget/evidence.h) and over twice the source's around that frame.
constexpr double kPopScore = 1.0;
// A pole flip: an elbow or knee plane turning over 60 degrees in one frame, over twice the
// source's turn; limbs bent less than 15 degrees have no plane.
constexpr double kFlipDegrees = 60.0;
constexpr double kStraightDegrees = 15.0;

// One side measured: its motion, rest pose, parts and per-frame figures.
struct MeasuredSide {
  const CheckSide* side = nullptr;
  Motion motion;
  Motion rest;
  BodyParts parts;
  // The joints tracked (TrackedJoints).
  std::vector<bool> tracked;
  // Per sample: the lowest sole's height, and the standing height (head above the lowest sole;
  // non-humanoids: the extent of the body along up).
  std::vector<double> lowest;
  std::vector<double> stand;
  // Per sample: the heading frame (rows: forward, left, up), and whether it is defined.
  std::vector<Eigen::Matrix3d> heading;
  std::vector<bool> has_heading;
  // The lowest sole over the clip (the floor the clip stands on).
  double floor = 0.0;
  // Rest pose: lowest sole, hips above it, standing height, heading.
  double rest_lowest = 0.0;
  double rest_hip = 0.0;
  double rest_stand = 0.0;
  Eigen::Matrix3d rest_heading = Eigen::Matrix3d::Identity();
  bool rest_has_heading = false;
};

// Both sides and what the job expects.
struct Comparison {
  const PlausibilityJob* job = nullptr;
  MeasuredSide source;
  MeasuredSide output;
  // Output and source share the skeleton's joints (names and parents): joints correspond one to
  // one.
  bool same_rig = false;
  // Frames compared (the shorter clip's), the sampling stride (about 30 samples per second) and
  // the samples measured (Motion::frame gives each one's frame).
  int clip_frames = 0;
  int stride = 1;
  int frames = 0;
  // Output length per source length, and the reference length (output hip height).
  double scale = 1.0;
  double hip = 1.0;
  // The floor the output should stand on (output units, height along its up).
  double floor = 0.0;
};

// Measures the first `count` frames of a side every `stride` frames (Motion sampling).
MeasuredSide MeasureSide(const CheckSide& side, int count, int stride);

// The clip frame of sample `i`.
inline int ClipFrame(const Comparison& c, int i) { return c.source.motion.frame[i]; }

constexpr double kDegPerRad = 180.0 / 3.14159265358979323846;

// Appends a finding of `check` to `report`.
inline void Add(CheckReport* report, const char* check, int frame, double value, double limit,
                std::string reason) {
  report->findings.push_back({check, std::move(reason), frame, value, limit});
}

// "0.93 m" (metres known) or "93.2 units".
std::string Length(const Comparison& c, double value);
// printf into a std::string.
std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));

void CheckHeight(const Comparison& c, CheckReport* report);
void CheckHipsHeight(const Comparison& c, CheckReport* report);
void CheckTravel(const Comparison& c, CheckReport* report);
void CheckGround(const Comparison& c, CheckReport* report);
void CheckOrientation(const Comparison& c, CheckReport* report);
void CheckLimbDirections(const Comparison& c, CheckReport* report);
void CheckBoneLengths(const Comparison& c, CheckReport* report);
void CheckFootSlide(const Comparison& c, CheckReport* report);
void CheckPops(const Comparison& c, CheckReport* report);
void CheckPoleFlips(const Comparison& c, CheckReport* report);

// MeasurePops' scores of `joints` over the first `frames` frames of `clip`, computed only where
// the channels' changes allow a pop (a bound that never misses one); 0 elsewhere.
void PopScoresWherePossible(const Skeleton& s, const Clip& clip, const std::vector<int>& joints,
                            int frames, std::vector<double>* pop, std::vector<int>* pop_joint);

}  // namespace rigel::check::internal

#endif  // RIGEL_CORE_CHECK_RULES_H_
