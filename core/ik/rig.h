// The IK rig: data that says what to solve (tasks on effectors), what may move (channels, limits,
// locks, strength, preferred values) and how (a stack of solver stages). A Rig is plain data; it
// is solved by ik::Solve (core/ik/solve.h) with per-frame targets, a Pose and a Workspace.
//
// Spaces and units used throughout core/ik:
// - "world" is the skeleton's model space (the space of Pose::world).
// - "joint space" is the frame of a joint after its channels (world_from_joint in Pose::world).
// - Lengths are in the skeleton's units; angles in radians.
// - The solver's variables are the skeleton's channels (a Clip row), see core/pose.h.
#ifndef RIGEL_CORE_IK_RIG_H_
#define RIGEL_CORE_IK_RIG_H_

#include <Eigen/Geometry>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/skeleton.h"

namespace rigel::ik {

// What a task drives.
enum class TaskType : std::uint8_t {
  // The effector point (joint origin + offset) goes to Target::position. 3 rows (fewer with
  // Task::position_axes).
  kPosition,
  // The effector frame's rotation becomes Target::orientation. Error is log(R_d R_e^T) as a
  // scaled axis (world). 3 rows.
  kOrientation,
  // Position and orientation together. 6 rows (position rows first).
  kPose,
  // Aim / look-at: the effector's Task::aim_axis (joint space) points from the effector point at
  // Target::position. 2 rows (the twist about the aim axis is left free).
  kAim,
  // Pole vector: the plane through Task::pole_root, Task::pole_mid and the effector joint
  // contains Target::position. 1 row (the signed angle about the root->effector axis; its row is
  // the exact derivative, with the root, middle, effector and the axis itself moving). At the
  // same priority as a position task on the effector the weighted problem has local minima:
  // give the pole a lower priority (one below the position task meets it wherever the position
  // leaves the freedom: tests/ik/priority_pole_test.cc), use restarts (Settings::restarts), or
  // kTwoBone.
  kPole,
};

std::string_view TaskTypeName(TaskType type);

// One effector goal. Tasks are indexed by their position in Rig::tasks; a frame's Target array
// uses the same indices.
struct Task {
  TaskType type = TaskType::kPosition;
  // Effector joint (index into the skeleton). Required (>= 0).
  int joint = -1;
  // Effector point in the joint's space (e.g. an End Site offset). Default: the joint origin.
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();
  // Effector frame's rotation relative to the joint (joint space). kOrientation/kPose drive
  // world_from_joint.linear() * offset_rotation. Default identity. Must be unit length.
  Eigen::Quaterniond offset_rotation = Eigen::Quaterniond::Identity();
  // kPosition/kPose: which world axes of the position are constrained (bit 0 = X, 1 = Y, 2 = Z).
  // Default all three. E.g. 0b011 for a planar (XY) problem.
  std::uint8_t position_axes = 0b111;
  // kAim: the axis, in joint space, that must point at the target. Unit length. Default +X.
  Eigen::Vector3d aim_axis = Eigen::Vector3d::UnitX();
  // kPole: the chain's root joint (e.g. upper arm) and middle joint (e.g. forearm); the effector
  // joint `joint` is the chain's end (e.g. hand). Both must be ancestors of `joint`.
  int pole_root = -1;
  int pole_mid = -1;
  // Multiplies the task's rows (so the squared error counts weight^2). >= 0; 0 disables the task.
  // Default 1.
  double weight = 1.0;
  // Priority level: 0 is the highest. Lower levels (larger numbers) are solved in the null space
  // of all higher ones. Default 0.
  int priority = 0;
  // kPosition/kPose: use the "alternate Jacobian" of seed 002 (columns built at the goal instead
  // of at the effector). Default false.
  bool alternate_jacobian = false;
};

// A task's goal for one frame, in world space.
struct Target {
  // kPosition/kPose: where the effector point goes. kAim: the point to look at. kPole: the pole
  // point. Default origin.
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  // kOrientation/kPose: the effector frame's world rotation. Unit length. Default identity.
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
  // Per-frame weight factor, multiplies Task::weight (0 switches the task off this frame; any
  // other value only rescales the task's rows against the others, so a lone effector still
  // reaches its target in full). Default 1.
  double weight = 1.0;
  // Per-frame IK/FK blend of the effector's chain, in [0, 1]: after the solve, the joints that
  // move the effector are interpolated from the pose the solve started from (the animated, FK
  // pose: 0) to the solved one (1), rotations slerped per joint and translations lerped
  // (core/ik/ik_fk_blend.h). Ignored on kPole tasks (a pole follows its limb's effector).
  // Default 1 (full IK).
  double ik_blend = 1.0;
};

// How a stage computes its steps.
enum class Method : std::uint8_t {
  // dtheta = h J^T V with h = <V, J J^T V> / |J J^T V|^2 (Buss), halved while the error grows.
  kTranspose,
  // Pseudo-inverse through (J J^T) beta = V solved by LU, dtheta = J^T beta (seeds 000/003).
  kPseudoInverse,
  // Pseudo-inverse by SVD of J (singular values below Settings::svd_threshold dropped).
  kSvd,
  // Minimum-norm least squares by a rank-revealing QR (complete orthogonal decomposition).
  kQr,
  // Damped least squares / SR inverse J^T (J J^T + lambda^2 I)^-1 V, fixed lambda.
  kDls,
  // Damped least squares with adaptive lambda (Levenberg-Marquardt: shrinks after a step that
  // lowers the error, grows and retries after one that raises it). The default.
  kDlsAdaptive,
  // Cyclic coordinate descent, one channel at a time from the effector inward, limits applied
  // per channel. Position goals only (kPosition, the position of kPose).
  kCcd,
  // Analytic two-bone IK (law of cosines) with an optional pole task. See core/ik/two_bone.h.
  // With a kPose task the end joint's rotation channels also take the target orientation (a
  // foot or hand keeping its world rotation, as Maya's ikRPsolver with an orient constraint).
  // A position task weighted off for the frame (Task::weight * Target::weight == 0) leaves the
  // limb as it is.
  kTwoBone,
  // FABRIK (Aristidou & Lasenby 2011, forward and backward reaching, core/ik/fabrik.cc): one
  // position or pose effector per stage; the chain runs from the stage's chain_root (default:
  // the topmost joint of the effector's path with free rotation channels) to the effector. Each
  // pass moves the joint positions (tip to base, then base to tip), and the base-to-tip pass
  // writes every joint's rotation channels at once (the minimal rotation taking its bone to the
  // new direction), applying the joint's BoneLimit (cone or hinge) there and the per-channel
  // limits and locks after it. A kPose target's orientation goes to the end joint's rotation
  // channels, as with kTwoBone. Translation channels do not move.
  kFabrik,
};

std::string_view MethodName(Method method);

// Iteration controls of a stage. Defaults suit animation in metres or centimetres.
struct Settings {
  // Iteration cap (>= 1). Default 100.
  int max_iterations = 100;
  // Converged when every enabled task's position error <= position_tolerance (length units)
  // and its angle error <= angle_tolerance (radians). Defaults 1e-6. A tolerance of 0 never
  // counts as reached (the stage runs to its iteration cap, e.g. to let the preferred-angle bias
  // act on a solved pose).
  double position_tolerance = 1e-6;
  double angle_tolerance = 1e-6;
  // Stalled when the weighted squared error drops by less than this fraction over
  // stall_iterations consecutive iterations. Defaults 1e-6 and 8.
  double stall_fraction = 1e-6;
  int stall_iterations = 8;
  // Largest change of one channel per iteration (radians or length units); the whole step is
  // scaled down to respect it. <= 0 disables. Default 0.5.
  double max_step = 0.5;
  // kDls: the damping lambda. kDlsAdaptive: its start value (a stage with one effector of at most
  // 6 rows starts from max(lambda, 0.1 |e|), |e| the initial weighted residual). Length units.
  // Default 0.01.
  double lambda = 0.01;
  // kDlsAdaptive: lambda never drops below lambda_min nor exceeds lambda_max. Defaults 1e-8, 1e4.
  double lambda_min = 1e-8;
  double lambda_max = 1e4;
  // kSvd: singular values below svd_threshold * largest are treated as zero. Default 1e-9.
  double svd_threshold = 1e-9;
  // Preferred-angle bias (null-space term of seeds 000/003): H = sum_i alpha_i (theta_i -
  // theta_c_i)^psi with alpha_i = Rig::preferred_gain, theta_c = Rig::preferred. psi is even,
  // >= 2. Default 2.
  int preferred_power = 2;
  // Scale of the null-space step -(I - J^+ J) grad H per iteration. Default 1.
  double preferred_step = 1.0;
  // Iterative methods: when the stage stops above tolerance (a stall, a local minimum or the
  // iteration cap), run it again up to `restarts` times from a fixed, seeded sequence of start
  // poses inside the limits (the same sequence on every solve, so results stay bit-identical),
  // each with a fresh iteration budget; the best end (lowest weighted squared error) is kept.
  // A rotation channel with an infinite limit restarts within one turn (-pi..pi, or 2 pi from
  // its finite limit); a translation channel with an infinite limit keeps its value from the
  // best end so far. Default 0 (off: a restart
  // may jump to another branch, which animation with warm start usually does not want).
  int restarts = 0;
};

// One entry of the solver stack: which method drives which tasks on which part of the tree.
struct Stage {
  Method method = Method::kDlsAdaptive;
  // Indices into Rig::tasks that this stage solves. Empty = every task.
  std::vector<int> tasks;
  // Only channels of this joint and its descendants move (the chain's top). -1 (default): every
  // channel on the path from a root to the effectors.
  int chain_root = -1;
  // kTwoBone only: the upper (root), lower (middle) and end joints. -1 (default): end = the
  // position task's joint, lower = its nearest ancestor with rotation channels, upper = the
  // nearest ancestor of lower with three rotation channels.
  int upper = -1;
  int lower = -1;
  // IK/FK blend of every effector this stage solves, in [0, 1]; multiplies Target::ik_blend
  // (core/ik/ik_fk_blend.h). Default 1 (full IK).
  double ik_blend = 1.0;
  Settings settings;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

// A joint's direction limit, used by FABRIK stages (Method::kFabrik; the other methods act on
// the per-channel limits only). Angles in radians. Both kinds are expressed in the joint's
// channel frame: its parent's world rotation times its rest orientation (the parent's frame for a
// BVH joint), the frame its rotation channels act in. The joint's "bone" is the vector from its
// origin to the next joint of the FABRIK chain (or the effector point); its rest direction is
// that bone's direction when the joint's rotation channels are all zero.
struct BoneLimit {
  enum class Kind : std::uint8_t {
    // No limit beyond the per-channel ones. The default.
    kNone,
    // Ball joint: the bone stays within max_angle of its rest direction (a circular cone). The
    // twist about the bone is left as the joint has it.
    kCone,
    // Hinge: the joint's channel rotation is a rotation about `axis` (channel frame, unit) by an
    // angle in [min, max] (a subset of [-pi, pi]); the bone turns in the plane normal to the axis.
    kHinge,
  };
  Kind kind = Kind::kNone;
  // kCone: the cone's half angle, in [0, pi].
  double max_angle = 0.0;
  // kHinge: the axis and the angle range (min <= max).
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
  double min = 0.0;
  double max = 0.0;
};

// Everything to solve on one skeleton. Per-channel arrays have Skeleton::num_channels() entries,
// per-joint arrays num_joints() entries; the constructor sizes them with their defaults.
class Rig {
 public:
  Rig() = default;
  explicit Rig(std::shared_ptr<const Skeleton> skeleton);

  const Skeleton& skeleton() const { return *skeleton_; }
  const std::shared_ptr<const Skeleton>& skeleton_ptr() const { return skeleton_; }

  // Adds a task, returns its index.
  int AddTask(const Task& task);
  // Limits of one channel (radians or length units). min <= max. Default (-inf, +inf).
  void SetLimits(int channel, double min, double max);
  // A locked channel never moves. Default unlocked.
  void Lock(int channel, bool locked = true);
  // Joint strength (>= 0): scales the joint's Jacobian columns, so a strong joint takes more of
  // the motion. 0 relaxes the joint: its channels drop out of the solve. Default 1.
  void SetStrength(int joint, double strength);
  // Preferred value (radians or length units) and gain (>= 0) of a channel for the null-space
  // bias. Defaults 0 and 0 (no bias).
  void SetPreferred(int channel, double value, double gain);
  // FABRIK direction limits of one joint (BoneLimit): a cone of half angle max_angle (radians),
  // a hinge about `axis` (channel frame, normalized here) with min <= angle <= max (radians), or
  // none.
  void SetCone(int joint, double max_angle);
  void SetHinge(int joint, const Eigen::Vector3d& axis, double min, double max);
  void ClearBoneLimit(int joint);

  std::vector<Task> tasks;
  // Per channel.
  std::vector<double> min;
  std::vector<double> max;
  std::vector<std::uint8_t> locked;
  std::vector<double> preferred;
  std::vector<double> preferred_gain;
  // Per joint.
  std::vector<double> strength;
  // FABRIK direction limits (BoneLimit), default kNone.
  std::vector<BoneLimit> bone_limits;
  // The solver stack, run in order. Empty = one kDlsAdaptive stage over every task.
  std::vector<Stage> stages;

 private:
  std::shared_ptr<const Skeleton> skeleton_;
};

// Outcome of a solve (or of one stage).
enum class Status : std::uint8_t {
  // Every task within tolerance.
  kConverged,
  // Stopped by the iteration cap or a stall before reaching tolerance, while still making
  // progress possible.
  kNotConverged,
  // Stopped at a point where no step lowers the error (a least-squares minimum): the goal is out
  // of reach, or blocked by limits/locks. For two-bone: the reach condition failed.
  kUnreachable,
  // The rig, targets, pose or workspace are inconsistent; nothing was changed.
  kInvalidInput,
};

std::string_view StatusName(Status status);

// The swivel of one limb in a solve: a kTwoBone stage's, or a kPole task's in an iterative stage
// (both keep it continuous across frames: ik::Swivel in core/ik/two_bone.h).
struct LimbSwivel {
  // The stage and its pole task (-1 when it has none or the pole is weighted off).
  int stage = -1;
  int pole_task = -1;
  // Turn of the elbow's direction about the upper -> target axis since the previous solve with
  // the same workspace (radians; 0 on the first frame or after Workspace::ResetContinuity).
  double jump = 0.0;
  // The pole's weight in the swivel blend (1: the pole alone; 0: the previous frame's swivel).
  double pole_weight = 1.0;
  // Warning: the pole lay on the limb axis (within 2 degrees), so it could not set the swivel;
  // the previous frame's swivel was kept (or, on a first frame, the smallest turn).
  bool pole_degenerate = false;
  // False when the limb's target lay out of reach (the limb ended fully extended or folded
  // towards it); true when reached or when the limb's position task was weighted off.
  bool reached = true;
};

// What a solve did, as both the solve's report (SolveReport) and a bake's per-frame record
// (FrameRecord, core/ik/frame_record.h) hold it.
struct SolveOutcome {
  Status status = Status::kInvalidInput;
  // Iterations run, summed over stages (including restarts).
  int iterations = 0;
  // Restarts run (Settings::restarts), summed over stages.
  int restarts = 0;
  // Channels that sit on a limit after the solve (skeleton channel indices, ascending).
  std::vector<int> channels_on_limit;
  // One per kTwoBone stage, in stage order, then one per kPole task of an iterative stage: the
  // limb's swivel jump and pole warnings.
  std::vector<LimbSwivel> limbs;
};

// What a solve did. Reused across frames: its vectors keep their capacity.
struct SolveReport : SolveOutcome {
  // Per task (Rig::tasks order) after the solve: position error (length units; kPosition,
  // kPose; for kPole the distance-free angle is in angle_error) and angle error (radians;
  // kOrientation, kPose, kAim, kPole). 0 when not applicable.
  std::vector<double> position_error;
  std::vector<double> angle_error;
  // Why the input was invalid, or which stage failed to converge. Empty when converged.
  std::string message;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_RIG_H_
