// IK/FK blending: a real interpolation between the animated (FK) pose a solve starts from and the
// pose it solves, joint by joint, as Maya's ikBlend and MotionBuilder's IK blend do. At weight w
// a joint's channel rotation (its local rotation after the rest orientation) is
// slerp(R_fk, R_ik, w), written back into its Euler channels, and its position channels are
// lerped; w = 0 gives the FK channels bit for bit, w = 1 the solved ones.
//
// ik::Solve runs it after the stages when some Stage::ik_blend or Target::ik_blend is below 1:
// each joint's weight is the blend of the effectors whose chain it belongs to (the joints a stage
// moves for that effector: its columns from the effector up to the chain root, or a two-bone
// stage's upper, lower and end joints); a joint on several chains takes the largest, so an
// effector at full IK keeps its whole solved chain. Poles follow their limb.
//
// Not to be confused with Target::weight (rig:frame_weight, alias rig:blend, in Lua): that one
// is a least-squares weight factor, which only switches an effector off at 0 (a lone effector at
// weight 0.5 still reaches its target in full).
#ifndef RIGEL_CORE_IK_IK_FK_BLEND_H_
#define RIGEL_CORE_IK_IK_FK_BLEND_H_

#include <span>
#include <string>

#include "core/ik/rig.h"
#include "core/ik/solve.h"

namespace rigel::ik {

// Interpolates, joint by joint, the channels `fk` towards `ik` by `weights` into `output`.
// Per joint j with weight w = weights[j]:
// - w >= 1, or fk and ik channels bit-identical: output = ik's channels (copied as they are);
// - w <= 0: output = fk's channels;
// - otherwise position channels lerp, fk + w (ik - fk); a joint with three rotation channels
//   gets R = slerp(R_fk, R_ik, w) (shortest arc, R the rotation of its channels in its Euler
//   order), written as the Euler triple of R nearest the FK triple (continuous with the FK
//   values; IK values a whole turn away from them come back within a half turn of FK); a joint
//   with one or two rotation channels lerps them (for one channel: the slerp about its axis).
// Never allocates.
struct IkFkBlendJob {
  // Returns false (with `error`) when:
  // - skeleton is nullptr;
  // - fk, ik or output does not have the skeleton's channel count, or weights its joint count;
  // - a weight is outside [0, 1] or NaN.
  bool Validate(std::string* error = nullptr) const;
  // Validates, then blends. `output` may be `ik` itself (each joint's channels are read before
  // they are written), not `fk` unless equal to it.
  bool Run() const;

  const Skeleton* skeleton = nullptr;
  // The animated channels (a Clip row) and the solved ones.
  std::span<const double> fk;
  std::span<const double> ik;
  // Per joint: 0 = FK, 1 = IK.
  std::span<const double> weights;
  // Receives the blended channels.
  std::span<double> output;
  // Out (optional): the first joint whose output differs from `ik` (num_joints() when none), so
  // the caller can refresh world transforms from there.
  int* first_changed = nullptr;
};

namespace internal {

// Whether a solve of `rig` with `targets` blends at all (some stage's or non-pole target's
// ik_blend below 1).
bool WantsIkFkBlend(const Rig& rig, std::span<const Target> targets);

// The per-joint weights of a solve's IK/FK blend (see the header comment) into `weights`
// (num_joints entries): 1 for joints on no active effector's chain. `w` is prepared for `rig`.
void IkFkJointWeights(const Rig& rig, std::span<const Target> targets, const Workspace::Impl& w,
                      std::span<double> weights);

}  // namespace internal

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_IK_FK_BLEND_H_
