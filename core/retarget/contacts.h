// Foot-contact detection: the one rule rigel uses, for retargeting (the IK clean-up pins and the
// foot-slide metric), for `rigel.contacts` and for scripts/contact.lua.
//
// A tracked point (a foot joint) is in contact in frame f when both hold:
//   height: p_f[up] - ground < height * scale, where ground is the lowest height any of the
//           tracks given together reaches over the clip;
//   speed:  |horizontal(p_{f+1} - p_{f-1})| / ((f+1 - (f-1)) * frame_time) < speed * scale per
//           second (one-sided at the first and last frames; 0 for a one-frame clip);
// and a window of such frames counts only when it lasts at least min_frames frames.
// `scale` is the figure's hip height (the height of the hip joints above the ground, in the
// positions' length unit), so the defaults fit any unit and size: 0.06 hip heights (5.4 cm for a
// 0.9 m hip height) and 0.35 hip heights per second (0.32 m/s).
#ifndef RIGEL_CORE_RETARGET_CONTACTS_H_
#define RIGEL_CORE_RETARGET_CONTACTS_H_

#include <Eigen/Geometry>
#include <span>
#include <vector>

#include "core/clip.h"
#include "core/retarget/retarget.h"
#include "core/skeleton.h"

namespace rigel::retarget {

struct Alignment;
struct TransferredMotion;

// Thresholds of DetectContacts (see the file comment).
struct ContactOptions {
  // Up axis of the positions: 0 = X, 1 = Y (default), 2 = Z.
  int up_axis = 1;
  // The length the thresholds scale with: the figure's hip height, in the positions' unit.
  // Default 1 (thresholds in absolute units).
  double scale = 1.0;
  // Height above the ground, in hip heights. Default 0.06.
  double height = 0.06;
  // Horizontal speed, in hip heights per second. Default 0.35.
  double speed = 0.35;
  // Shortest contact kept, in frames (values below 1 count as 1). Default 3.
  int min_frames = 3;
};

// One contact: track index and its first and last frames (0-based, inclusive).
struct ContactWindow {
  int track = 0;
  int first = 0;
  int last = 0;
};

// Contacts of `tracks` points over `positions` (frames x tracks, frame-major: positions[f *
// tracks + t]) sampled every `frame_time` seconds (<= 0: 1/30 s). Windows come ordered by track,
// then by first frame. `*ground` (optional) receives the ground height used.
std::vector<ContactWindow> DetectContacts(std::span<const Eigen::Vector3d> positions, int tracks,
                                          double frame_time, const ContactOptions& options,
                                          double* ground = nullptr);

// The same on the world positions of `joints` of `skeleton` over every frame of `clip` (its row
// width must match the skeleton); track t is joints[t].
std::vector<ContactWindow> DetectContacts(const Skeleton& skeleton, const Clip& clip,
                                          std::span<const int> joints,
                                          const ContactOptions& options, double* ground = nullptr);

// The figure's hip height in a pose (world transforms of every joint), along axis `up`: the mean
// height of the two upper legs (ClassifyHumanoid) above the lowest joint or end site; without
// both legs, the height of the hips (or the root) joint; half the pose's height when that is not
// above the ground. The default ContactOptions::scale of rigel.contacts.
double FigureHipHeight(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world, int up);

// A foot contact of the retarget passes: the foot's limb (index in Alignment::limbs), its frames
// (0-based, inclusive) and the mean of the scaled source foot positions over the contact (target
// world; the clean-up pins the foot at ContactPin, the retargeted foot's mean, instead).
struct FootContact {
  int limb = 0;
  int first = 0;
  int last = 0;
  Eigen::Vector3d pin = Eigen::Vector3d::Zero();
};

// Retarget pass: the contacts of the feet (the foot limbs of `a`) on the scaled source motion,
// with the thresholds of `options` (contact_height, contact_speed, contact_min_frames) scaled by
// the target's hip height. Ordered by limb, then frame.
std::vector<FootContact> FindFootContacts(const Alignment& a, const TransferredMotion& motion,
                                          const RetargetOptions& options);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_CONTACTS_H_
