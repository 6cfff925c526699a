// What every constraint job shares: the per-constraint state carried from frame to frame, the
// write-back of a constrained world transform into a joint's channels (with influence), axis
// masks and the world Euler angles that per-axis rotation masks act on.
//
// A constraint job (parent.h, point.h, orient.h, aim.h, copy_location.h, copy_rotation.h,
// limit_rotation.h, limit_distance.h, limit_location.h, twist.h) reads a Pose whose world
// transforms are up to date, computes the constrained world transform of its joint, blends it with
// the unconstrained one by its influence (slerp for rotation, lerp for position), writes the
// joint's channels and updates the world transforms it changed. Jobs are plain data (they are
// stored in a Stack, stack.h): Validate(skeleton) checks them, Run(skeleton, pose, frame, state)
// applies them.
#ifndef RIGEL_CORE_CONSTRAINTS_CONSTRAINT_H_
#define RIGEL_CORE_CONSTRAINTS_CONSTRAINT_H_

#include <Eigen/Geometry>
#include <cstdint>
#include <string>

namespace rigel {
class Skeleton;
class Pose;
}  // namespace rigel

namespace rigel::constraints {

// Axis masks: bit 0 = X, 1 = Y, 2 = Z.
constexpr std::uint8_t kAllAxes = 0b111;

// How a copy constraint combines the target's value with the joint's own.
enum class Mix : std::uint8_t {
  kReplace,  // the masked components become the target's
  kAdd,      // the target's masked components are added to the joint's own
};

// State of one constraint carried across frames (caller-owned, like ozz's SamplingJob::Context).
// A fresh State (or Reset) makes the next Run capture its offsets again.
struct State {
  // Whether `offset` / `distance` were captured (on the first Run after a reset).
  bool captured = false;
  // Kind-specific offset captured at the first Run: parent: target_from_joint (the joint's world
  // transform in the target's space); point: joint - target (world vector, in the translation);
  // orient: target_from_joint rotation.
  Eigen::Isometry3d offset = Eigen::Isometry3d::Identity();
  // Parent: the target the offset refers to (changes at a target switch).
  int target = -1;
  // Limit distance: the captured distance when the job's distance is < 0.
  double distance = 0;
  // Twist: the previous frame's driver twist (radians), which the next one is unwrapped near.
  double twist = 0;

  void Reset() { *this = State(); }
};

// Writes `desired` (a world transform) into `joint` with `influence` in [0, 1]: the joint's new
// world rotation is slerp(own, desired, influence) and its world position lerp(own, desired,
// influence); `write_rotation` / `write_position` select what is written. Then updates the world
// transforms of the joint and of every later joint. The joint's parent must be up to date in
// pose.world. Returns false with `error` set when the joint lacks the channels to do it (three
// rotation channels; a position channel on every axis that must move).
bool ApplyWorld(const Skeleton& skeleton, Pose& pose, int joint, const Eigen::Isometry3d& desired,
                double influence, bool write_rotation, bool write_position, std::string* error);

// ApplyWorld of a new world position only: the joint's position becomes lerp(own, `position`,
// influence), its rotation is kept.
bool ApplyWorldPosition(const Skeleton& skeleton, Pose& pose, int joint,
                        const Eigen::Vector3d& position, double influence, std::string* error);
// ApplyWorld of a new world rotation only: the joint's rotation becomes slerp(own, `rotation`,
// influence), its position is kept.
bool ApplyWorldRotation(const Skeleton& skeleton, Pose& pose, int joint,
                        const Eigen::Matrix3d& rotation, double influence, std::string* error);

// The vector whose components are `replacement`'s on the axes of `axes` and `own`'s on the
// others (the per-axis mask of point, copy location and, on Euler angles, of the rotation kinds).
Eigen::Vector3d MaskAxes(const Eigen::Vector3d& own, const Eigen::Vector3d& replacement,
                         std::uint8_t axes);

// World Euler angles (x, y, z) of `rotation` in Blender's XYZ order: R = Rz(z) Ry(y) Rx(x). The
// per-axis masks of orient and copy rotation act on these (as Blender's Copy Rotation and Maya's
// skip axes do on an XYZ rotate order).
Eigen::Vector3d WorldEulerXYZ(const Eigen::Quaterniond& rotation);
// The rotation of WorldEulerXYZ angles.
Eigen::Quaterniond FromWorldEulerXYZ(const Eigen::Vector3d& xyz);

// The rotation whose WorldEulerXYZ angles are `replacement`'s on the axes of `axes` and `own`'s
// on the others (all axes: `replacement` itself, exactly).
Eigen::Quaterniond MaskRotation(const Eigen::Quaterniond& own,
                                const Eigen::Quaterniond& replacement, std::uint8_t axes);

// Whether `joint` lies below `ancestor` in the tree.
bool IsDescendant(const Skeleton& skeleton, int joint, int ancestor);

// Common checks of Validate: `joint` and `target` are joints of `skeleton` (target may be -1 when
// `target_required` is false), the target is not the joint nor one of its descendants (a target
// that moves with the joint has no fixed goal), influence is in [0, 1]. `kind` prefixes the error
// ("parent: ...").
bool CheckCommon(const Skeleton& skeleton, const char* kind, int joint, int target,
                 bool target_required, double influence, std::string* error);
// What an axis-masked kind (point, orient, copy location, copy rotation) writes.
enum class Part : std::uint8_t { kPosition, kRotation };
// Validate of the axis-masked kinds: CheckCommon with a required target, a non-empty `axes`
// ("<kind>: no axis constrained"), then the channels `part` needs (CheckPositionChannels on
// `axes`, or CheckRotationChannels).
bool CheckMasked(const Skeleton& skeleton, const char* kind, int joint, int target,
                 double influence, std::uint8_t axes, Part part, std::string* error);
// The joint has three rotation channels (rotation-writing kinds).
bool CheckRotationChannels(const Skeleton& skeleton, const char* kind, int joint,
                           std::string* error);
// The joint has a position channel on each axis of `axes` (position-writing kinds).
bool CheckPositionChannels(const Skeleton& skeleton, const char* kind, int joint, std::uint8_t axes,
                           std::string* error);

}  // namespace rigel::constraints

#endif  // RIGEL_CORE_CONSTRAINTS_CONSTRAINT_H_
