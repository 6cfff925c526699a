// Retargeting: plays a clip of one skeleton on another.
//
// Per mapped joint, the target's world rotation is the source's world rotation times a constant
// alignment rotation, computed once from the two reference poses (the rest poses, or a named frame
// of either file): the target's reference pose is first bent, joint by joint from the root, so its
// bones point where the source's bones point (A-pose <-> T-pose), then
//   alignment_j = (up_from_source * source_reference_world_j)^-1 * target_aligned_world_j.
// Every frame, target_world_j = up_from_source * source_world_j * alignment_j * offset_j, so the
// source's world bone directions are reproduced whatever the bone axes, rest poses and up axes.
// Unmapped target joints keep their reference (rest) channel values; unmapped source joints are
// skipped. The hips are placed by the root-motion policy, scaled by the ratio of hip heights. An
// optional IK pass puts the feet (and hands) at the proportion-scaled source positions and pins
// the feet during contacts with analytic two-bone IK and a pole. Quality metrics come with the
// result.
//
// Create runs the set-up pass (core/retarget/alignment.h); Run runs the per-clip passes in
// order, one file each: transfer.h (rotations and hips), contacts.h (foot contacts, the one
// contact rule), cleanup.h (IK) and metrics.h.
//
// Spaces: "source world" / "target world" are the model spaces of each skeleton; up_from_source
// turns the source's up axis into the target's (Y-up <-> Z-up). Lengths are in each skeleton's own
// units; metrics in millimetres use RetargetOptions::*_unit_metres (or an estimate, see there).
#ifndef RIGEL_CORE_RETARGET_RETARGET_H_
#define RIGEL_CORE_RETARGET_RETARGET_H_

#include <Eigen/Geometry>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clip.h"
#include "core/ik/frame_record.h"
#include "core/mesh.h"
#include "core/retarget/humanoid.h"
#include "core/skeleton.h"

namespace rigel::retarget {

struct Alignment;

// What happens to the hips' translation. Vertical motion is always scaled by the hip-height ratio
// (so feet stay on the ground).
enum class RootMotion : std::uint8_t {
  // Horizontal translation scaled by the hip-height ratio (the default): strides fit the legs.
  kScale,
  // Horizontal translation kept at the source's distance in metres (converted between units).
  kKeep,
  // No horizontal translation: the hips keep the target reference pose's horizontal position.
  kInPlace,
  // The hips are placed as by kScale, then the horizontal travel (the hips' path projected on the
  // ground plane) and the heading (the hips' yaw about the up axis) move onto a root bone above
  // the hips: the target's own root, or a joint the output adds (RetargetOptions::
  // root_motion_bone). The hips keep the rest (height, tilt, the offset from the root's path), so
  // every world transform but the root's is the kScale result's. See core/retarget/root_motion.h.
  kExtract,
};

std::string_view RootMotionName(RootMotion policy);
// Parses "scale", "keep", "in-place", "extract". nullopt otherwise.
std::optional<RootMotion> ParseRootMotion(std::string_view text);

struct RetargetOptions {
  RootMotion root_motion = RootMotion::kScale;
  // With kExtract: the joint receiving the root motion. Empty (default) = the target's root when
  // it is a joint above the hips. A name the target lacks, when the target's root is its hips, adds
  // a joint of that name above the hips (on the ground under them, with position and rotation
  // channels: core/retarget/root_motion.h AddRootBone): the
  // output skeleton is then Retargeter::target(), the target's plus that joint.
  std::string root_motion_bone;
  // Frame of the source clip given to Retargeter::Create used as the source's reference pose
  // instead of its rest pose (all channels zero). -1 (default) = rest pose.
  int source_reference_frame = -1;
  // Same for the target (needs a target clip). -1 (default) = rest pose.
  int target_reference_frame = -1;
  // Up axis (1 = Y, 2 = Z) of each skeleton; -1 (default) infers it from the reference pose: the
  // body's head over its feet for a humanoid (core/body.h), else the larger of the body joints'
  // extents along Y and Z.
  int source_up_axis = -1;
  int target_up_axis = -1;
  // Metres per length unit of each skeleton (Scene::file_unit_metres / Scene::length_scale when
  // the file states it). 0 (default) = estimated from the reference pose's height, assuming a
  // 1.7 m tall humanoid and snapping to m, dm, cm, mm or inch when within 20 %. Used for the
  // `keep` root motion and for millimetre metrics only.
  double source_unit_metres = 0.0;
  double target_unit_metres = 0.0;
  // IK clean-up: feet at the proportion-scaled source positions, pinned during contacts.
  bool pin_feet = false;
  // IK clean-up of the hands: hands at the proportion-scaled source positions.
  bool pin_hands = false;
  // With pin_feet: between contacts, also put the feet at the proportion-scaled source positions
  // (true), or leave them where the retargeted rotations put them (false, the default: the legs
  // keep the source's bone directions exactly and IK acts only around contacts).
  bool follow_source_between_contacts = false;
  // Keep the IK clean-up's per-frame records (RetargetResult::records), e.g. for a frames
  // report. Default false: no per-frame bookkeeping.
  bool frame_records = false;
  // Contact detection on the scaled source feet: a foot is in contact when its height above the
  // clip's lowest foot height is below contact_height * hip height and its horizontal speed below
  // contact_speed * hip height per second, for at least contact_min_frames frames.
  // Defaults 0.06, 0.35, 3.
  double contact_height = 0.06;
  double contact_speed = 0.35;
  int contact_min_frames = 3;
  // Pins blend in and out over this many seconds around each contact. Default 0.1.
  double contact_blend_seconds = 0.1;
  // Optional channel limits of the target (Skeleton::num_channels() entries each, radians or
  // length units) counted as joint-limit violations in the metrics. Empty (default) = none.
  std::vector<double> limit_min;
  std::vector<double> limit_max;
  // A knee bent backwards by more than this many degrees counts as a joint-limit violation.
  // Default 5.
  double knee_hyperextension_degrees = 5.0;
};

// Quality figures of one retargeted clip. Directions compare each target bone (a mapped joint to
// its nearest mapped descendant) with the matching source segment in the target's world.
struct RetargetMetrics {
  int frames = 0;
  int mapped_joints = 0;
  // Bones measured.
  int bones = 0;
  // Target hip height / source hip height (both in their own units).
  double hip_height_ratio = 1.0;
  double source_unit_metres = 0.0;
  double target_unit_metres = 0.0;
  // True when the unit was estimated from the skeleton's height (not given).
  bool source_unit_estimated = false;
  bool target_unit_estimated = false;
  int source_up_axis = 1;
  int target_up_axis = 1;
  // World bone direction error, degrees, over every bone and frame. Bones are the segments from
  // a mapped joint with one mapped child to that child (limbs, spine, neck).
  double bone_direction_mean_deg = 0.0;
  double bone_direction_max_deg = 0.0;
  // The worst bone ("upperarm01.L -> lowerarm01.L").
  std::string bone_direction_worst;
  // Same error for the segments out of branching joints (hips -> thighs, chest -> clavicles and
  // neck). One rotation cannot match several segments whose angles differ between the two
  // skeletons' anatomies, so these show the anatomy difference rather than the motion.
  double branch_direction_mean_deg = 0.0;
  double branch_direction_max_deg = 0.0;
  // Per segment (bones then branches): "a -> b", mean and max degrees.
  struct Segment {
    std::string name;
    bool branch = false;
    double mean_deg = 0.0;
    double max_deg = 0.0;
  };
  std::vector<Segment> segments;
  // Foot contacts found (per foot), frames in contact (summed over feet), and the horizontal
  // distance (mm) of each foot from its mean position over the contact, over every contact frame.
  int contacts = 0;
  int contact_frames = 0;
  double foot_slide_mean_mm = 0.0;
  double foot_slide_max_mm = 0.0;
  // The same measured on the output alone: contacts found by the contact detector on the
  // retargeted feet (DetectContacts, thresholds scaled by the target's hip height), and each
  // foot's horizontal distance (mm) from its mean position over each of those contacts. Catches a
  // foot that stands still in the output where the source had no contact, and drifts.
  int output_contacts = 0;
  double output_foot_slide_mean_mm = 0.0;
  double output_foot_slide_max_mm = 0.0;
  // Distance (mm) of the feet and of the hands from the proportion-scaled source positions (the
  // hands' differs by the arm and torso proportions unless pin_hands).
  double foot_error_mean_mm = 0.0;
  double foot_error_max_mm = 0.0;
  double hand_error_mean_mm = 0.0;
  double hand_error_max_mm = 0.0;
  // Frames x channels outside RetargetOptions::limit_min/max, plus knee hyperextension frames.
  int joint_limit_violations = 0;
  int knee_hyperextension_frames = 0;
  // Frames where an IK chain could not reach its goal (fully extended towards it).
  int ik_unreached = 0;
  bool ik_applied = false;
  // With RootMotion::kExtract: the root bone, whether the output added it, the length of its
  // path on the ground (metres, target unit), its net heading change from the first frame to the
  // last and the sum of its heading changes frame to frame (degrees, about the up axis; positive
  // counter-clockwise seen from above).
  std::string root_bone;
  bool root_bone_added = false;
  double root_path_length_m = 0.0;
  double root_heading_change_deg = 0.0;
  double root_heading_turned_deg = 0.0;
};

struct RetargetResult {
  // The retargeted clip, in the target skeleton's channel layout.
  Clip clip;
  RetargetMetrics metrics;
  // Non-fatal findings ("IK skipped for the hands: ...").
  std::vector<std::string> warnings;
  // The IK clean-up's per-frame records (empty without clean-up): see CleanUpReport::records.
  ik::BakeRecords records;
};

// A source -> target retargeting set up once (alignment, scale, roles) and run on any number of
// clips of the source skeleton. Run() is const and thread-safe.
class Retargeter {
 public:
  // Sets up retargeting from `source` to `target` with `map` (an empty map = AutoMap). The clips
  // are only read for the reference frames (may be null when those are -1). Returns nullptr and
  // sets `*error` when:
  // - a map entry names a joint that does not exist (message: "<map>:<line>: source joint 'X' not
  //   found in the source skeleton");
  // - a target joint is mapped twice;
  // - no map entry drives the hips (the shallowest mapped target joint is taken as the hips);
  // - a reference frame is out of range, or needs a clip that was not given;
  // - pin_feet is set and the target's legs (upper leg, lower leg, foot, both sides) are not
  //   mapped;
  // - root_motion is kExtract and no root bone can take the motion (core/retarget/root_motion.h
  //   AddRootBone and SetUpRootMotion give the messages).
  static std::unique_ptr<Retargeter> Create(std::shared_ptr<const Skeleton> source,
                                            std::shared_ptr<const Skeleton> target,
                                            const BoneMap& map, const RetargetOptions& options,
                                            std::string* error, const Clip* source_clip = nullptr,
                                            const Clip* target_clip = nullptr);

  // Retargets `clip` (a clip of the source skeleton; its row width must match). The result clip
  // has the source clip's frame count, frame time and name.
  RetargetResult Run(const Clip& clip) const;

  const Skeleton& source() const { return *source_; }
  // The output skeleton: the target given to Create, or with RootMotion::kExtract and a new root
  // bone, that target plus the new root (joint 0; every other joint one index later).
  const Skeleton& target() const { return *target_; }
  const std::shared_ptr<const Skeleton>& target_ptr() const { return target_; }
  // True when target() is the given target plus a root joint added for kExtract.
  bool added_root() const { return added_root_; }
  // `meshes` of the target made for the output skeleton (target()): with an added root bone,
  // every skin and attach joint index one later (the root is joint 0); else unchanged.
  void MoveMeshesToOutput(std::vector<Mesh>* meshes) const;
  // The map in use (the automatic one when Create got an empty map).
  const BoneMap& map() const { return map_; }
  const RetargetOptions& options() const { return options_; }
  // Warnings from set-up (unit estimates, IK chains that cannot run).
  const std::vector<std::string>& setup_warnings() const { return setup_warnings_; }

  // The set-up: alignment rotations, scale, units, up axes, IK chains (core/retarget/alignment.h).
  const Alignment& alignment() const { return *alignment_; }

  ~Retargeter();

 private:
  Retargeter() = default;
  std::shared_ptr<const Skeleton> source_;
  std::shared_ptr<const Skeleton> target_;
  BoneMap map_;
  RetargetOptions options_;
  std::vector<std::string> setup_warnings_;
  std::unique_ptr<Alignment> alignment_;
  bool added_root_ = false;
};

// Convenience: Create + Run. Throws std::invalid_argument with Create's message on failure.
RetargetResult Retarget(std::shared_ptr<const Skeleton> source, const Clip& clip,
                        std::shared_ptr<const Skeleton> target, const BoneMap& map = {},
                        const RetargetOptions& options = {}, const Clip* target_clip = nullptr);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_RETARGET_H_
