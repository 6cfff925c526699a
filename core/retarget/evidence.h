// Per-frame evidence measured on a clip itself (a baked or retargeted output), never read back
// from what the solver reported: a pop score per frame and the foot slide on the feet's contacts,
// found by the one contact detector (core/retarget/contacts.h). The frames report
// (exporters/frames_report.h) writes them beside the solver's per-frame records.
//
// Pop score of frame f: the largest change, over the joints with rotation channels, of the joint's
// local angular velocity between (f-1 -> f) and (f -> f+1), in degrees per frame, divided by
// kPopDegrees. A score >= 1 counts as a pop (a one-frame snap of 20 degrees or more in a joint's
// rotation, at any frame rate). Frames 0 and the last frame score 0.
//
// Foot slide of frame f: the largest horizontal distance a foot moves from f-1 to f while it is
// in contact in both frames (the same contact window), in the clip's length unit; absent (a
// negative value) when no foot is planted at f and f-1.
#ifndef RIGEL_CORE_RETARGET_EVIDENCE_H_
#define RIGEL_CORE_RETARGET_EVIDENCE_H_

#include <vector>

#include "core/clip.h"
#include "core/retarget/contacts.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// One joint's change of angular velocity of kPopDegrees in one frame scores 1.
constexpr double kPopDegrees = 20.0;

// What MeasureClipEvidence found.
struct ClipEvidence {
  // Per frame: the pop score, and the joint that set it (-1 when the score is 0).
  std::vector<double> pop;
  std::vector<int> pop_joint;
  // Per frame: the foot slide (length units), < 0 when no foot was planted in f-1 and f.
  std::vector<double> foot_slide;
  // The feet measured (joint indices; empty when the skeleton has no feet it could classify),
  // their contacts (track t is feet[t]) and the up axis used (0 X, 1 Y, 2 Z).
  std::vector<int> feet;
  std::vector<ContactWindow> contacts;
  int up_axis = 1;
};

// The pop score of every frame of `clip` (a clip of `skeleton`) and the joint that set it (-1
// when the score is 0): ClipEvidence::pop and pop_joint, alone. `joints`: the joints scored
// (those without rotation channels are skipped); empty (default): every joint.
void MeasurePops(const Skeleton& skeleton, const Clip& clip, std::vector<double>* pop,
                 std::vector<int>* pop_joint, const std::vector<int>& joints = {});

// Measures `clip` (a clip of `skeleton`). `feet`: the foot joints to track; empty: the feet
// ClassifyHumanoid finds (none on a non-humanoid rig, and foot_slide is then absent everywhere).
// `up_axis` < 0: guessed from the first frame's bounds (GuessUpAxis). The contact thresholds are
// ContactOptions' defaults scaled by the figure's hip height in the first frame.
ClipEvidence MeasureClipEvidence(const Skeleton& skeleton, const Clip& clip,
                                 std::vector<int> feet = {}, int up_axis = -1);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_EVIDENCE_H_
