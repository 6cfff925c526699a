// Retarget pass: IK clean-up of the transferred motion with analytic two-bone IK and a pole.
//
// With pin_feet, each foot is pinned during its contacts (FindFootContacts) at its mean transferred
// position over the contact (ContactPin), and the pin blends in
// and out over contact_blend_seconds; between contacts the foot stays where the rotations put it,
// or follows the scaled source with follow_source_between_contacts. With pin_hands, the hands go
// to the scaled source positions. Feet goals are scaled per leg chain (LimbGoal). The pole keeps
// the knee (elbow) bending the way the retargeted pose bends it (forward for a straight leg,
// backward for a straight arm); the foot's (hand's) world orientation is kept.
#ifndef RIGEL_CORE_RETARGET_CLEANUP_H_
#define RIGEL_CORE_RETARGET_CLEANUP_H_

#include <span>
#include <string>
#include <vector>

#include "core/ik/frame_record.h"
#include "core/retarget/alignment.h"
#include "core/retarget/contacts.h"
#include "core/retarget/retarget.h"
#include "core/retarget/transfer.h"
#include "core/skeleton.h"

namespace rigel::retarget {

// What the clean-up did.
struct CleanUpReport {
  // True when IK ran (pin_feet or pin_hands, and the alignment found limbs).
  bool applied = false;
  // Frames where a chain could not reach its goal, summed over the chains.
  int unreached = 0;
  // The clean-up's per-frame records: per pinned limb a pose task named after its end joint and a
  // pole task named "<end joint>.pole" (frames where no limb was pinned have none).
  ik::BakeRecords records;
};

// Goal of `limb`'s end in frame `f` given the target's world transforms `world` (its upper joint
// up to date). A foot whose source chain is mapped: the target's upper leg plus the source's
// upper-leg-to-foot vector scaled by the chain's length ratio (Limb::ratio), so a leg of any
// proportion reaches what the source's leg reached (a straight source leg: 1e-9 of the length
// inside the target leg's reach), never lower than SourceGoal's height (the hips are placed by
// the hip-height ratio: a leg longer than that ratio would otherwise push the foot into the
// ground). Hands, and feet without a mapped source
// chain: SourceGoal (scaled by the hip-height ratio). During a contact the foot goes to the
// contact's pin (ContactPin) instead.
Eigen::Vector3d LimbGoal(const Alignment& a, const TransferredMotion& motion, int f,
                         const Limb& limb, std::span<const Eigen::Isometry3d> world);

// Where a foot is pinned during `contact`: the mean over the contact of the foot's position in
// the `transferred` clip (the rotations' result, before IK). The pin removes only the foot's
// drift, so the leg keeps the source's bone directions. Pinning at the scaled source position
// (contact.pin) and at the per-chain goal's height instead also moved the foot by the difference
// between the two skeletons' pelvis widths, hip joint placement, thigh/shin ratios and hip-height
// vs leg-length ratios, bending the legs off the source's directions: over the 154 pairs of
// tests/retarget/matrix_test.cc, 4.99 degrees on average for the worst pair (1.48 with this pin)
// and up to 8.8 degrees at a thigh over a whole clip.
Eigen::Vector3d ContactPin(const Skeleton& target, const Limb& limb, const Clip& transferred,
                           const FootContact& contact);

// Runs the IK clean-up on `motion->clip` (a clip of `target` from TransferRotations with `a`) in
// place. Appends a warning to `*warnings` when feet are pinned with in-place root motion.
CleanUpReport IkCleanUp(const Skeleton& target, const Alignment& a, const RetargetOptions& options,
                        std::span<const FootContact> contacts, TransferredMotion* motion,
                        std::vector<std::string>* warnings);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_CLEANUP_H_
