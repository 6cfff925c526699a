// Solving a Rig: the caller-owned Workspace, the stage jobs and ik::Solve.
//
// Typical use (one character, frame by frame, warm start):
//
//   ik::Rig rig(skeleton);                     // tasks, limits, stages: see core/ik/rig.h
//   int hand = rig.AddTask({.type = ik::TaskType::kPose, .joint = hand_joint});
//   ik::Workspace ws;                           // sized on first use (or ws.Prepare(rig))
//   std::vector<ik::Target> targets(rig.tasks.size());
//   ik::SolveReport report;
//   Pose pose(*skeleton);
//   for (int f = 0; f < frames; ++f) {
//     targets[hand].position = ...;             // world space
//     ik::Solve(rig, targets, pose, ws, &report);  // pose.channels: in = warm start, out = answer
//   }
//
// Solve never allocates once the workspace is prepared for the rig (and the report's vectors have
// grown once). It is deterministic: identical inputs give bit-identical outputs. One Workspace per
// thread; Rig and Skeleton are only read and may be shared.
#ifndef RIGEL_CORE_IK_SOLVE_H_
#define RIGEL_CORE_IK_SOLVE_H_

#include <memory>
#include <span>
#include <string>

#include "core/ik/rig.h"
#include "core/pose.h"

namespace rigel::ik {

namespace internal {
struct StageWork;
}

// Per-thread scratch memory for solving one Rig: joint frames, Jacobians and factorizations
// sized for each stage. Prepare() allocates; solving afterwards does not.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;

  // Sizes the workspace for `rig`. Returns false and sets `error` if the rig is invalid:
  // - no skeleton, or per-channel/per-joint arrays of the wrong size;
  // - a task's joint (or pole_root/pole_mid) out of range, pole joints not ancestors of the
  //   task's joint, a non-unit aim axis or offset rotation, a negative weight, no position axis;
  // - a limit with min > max or NaN, a negative strength or gain, preferred_power odd or < 2;
  // - a stage naming a task or joint out of range, an empty stage, a kTwoBone stage without a
  //   position/pose task or whose joints fail TwoBoneJob's checks, settings out of range.
  bool Prepare(const Rig& rig, std::string* error = nullptr);
  // True when Prepare(rig) was called and the rig's structure (tasks' types, joints, priorities,
  // locks, relaxed joints, stages) has not changed since.
  bool IsPreparedFor(const Rig& rig) const;

  // The serial fast path (a stage with one position or pose task on all axes, solved by DLS
  // without the preferred-angle bias, runs on fixed-size systems) is on by default. Off sends
  // every stage through the general iteration, which computes the same steps with other
  // rounding: for cross-checks.
  void SetFastPaths(bool enabled);

  // Forgets the previous frame: the kTwoBone stages' swivel continuity (ik::Swivel) starts
  // afresh on the next solve. Call it at a cut (a new clip, a jump in time). Solving another
  // rig (a new Prepare) also starts afresh.
  void ResetContinuity();

  // Opaque storage (defined in solve.cc).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One iterative stage (Jacobian-based methods: transpose, pseudo-inverse, SVD, QR, DLS fixed or
// adaptive), run on caller-owned state. Limits act inside each iteration as an active set:
// channels whose step would cross a limit are pinned at that limit, their columns dropped and the
// step re-solved, so no iterate ever leaves the limits.
struct IterativeJob {
  // Returns false (and sets `error`) if a pointer is null, `stage` is out of range or not an
  // iterative method, the workspace is not prepared for the rig, targets/pose do not match the
  // rig, or any target or channel value is not finite.
  bool Validate(std::string* error = nullptr) const;
  // Runs the stage. Returns false if the job is not valid (pose untouched). `pose->channels` is
  // the start (warm start) and receives the answer; `pose->world` is updated for the stage's
  // joints only (ik::Solve updates all of them at the end).
  bool Run() const;

  const Rig* rig = nullptr;
  int stage = 0;
  std::span<const Target> targets;  // One per rig task.
  Pose* pose = nullptr;
  Workspace* workspace = nullptr;
  // Out (optional): status, iterations (added to), residuals.
  SolveReport* report = nullptr;
};

// One CCD stage: per sweep, every channel from the effector inward turns (rotation: in the plane
// normal to its world axis, seed 002 "3D CCD") or slides (translation) to bring the effector
// point towards its target, then is clamped to its limits. Position goals only.
struct CcdJob {
  bool Validate(std::string* error = nullptr) const;
  bool Run() const;

  const Rig* rig = nullptr;
  int stage = 0;
  std::span<const Target> targets;
  Pose* pose = nullptr;
  Workspace* workspace = nullptr;
  SolveReport* report = nullptr;
};

// Runs the rig's stages in order (an empty stack = one kDlsAdaptive stage over every task) on
// `pose` (in: warm start; out: the answer, with pose.world updated for every joint). Prepares the
// workspace if it is not prepared for this rig (the only allocation). Channel values outside
// their limits are first moved onto them. Returns false with report->status = kInvalidInput (and
// the pose unchanged) when the rig, targets or pose are invalid. Otherwise returns true and fills
// the report: status is kConverged when every task is within its stage's tolerance, kUnreachable
// if a stage stopped at a least-squares minimum above tolerance (or two-bone's reach failed),
// kNotConverged otherwise. When a stage's or a target's ik_blend is below 1, the answer is then
// blended joint by joint back towards the channels `pose` came in with (the animated pose, before
// the limits act on it: core/ik/ik_fk_blend.h); the report describes the solve before the blend.
//
// `between` (optional) runs between two stages: Solve calls between->wants(k) after stage k (not
// after the last), and when it says yes brings every world transform of `pose` up to date and
// calls between->run(k, pose, &error), which may change channels (and must leave pose.world
// consistent with them: constraint jobs do); the next stage starts from that pose. A run that
// returns false ends the solve with status kInvalidInput and its error as the message (the pose
// then holds the stages run so far). This is how constraints declared between two solver stages
// run between them (core/ik/constrained_solve.h).
class BetweenStages {
 public:
  virtual ~BetweenStages() = default;
  // Whether there is anything to run after stage `stage`.
  virtual bool wants(int stage) const = 0;
  // Runs what comes after stage `stage` on `pose`; false with `error` set stops the solve.
  virtual bool run(int stage, Pose& pose, std::string* error) const = 0;
};
bool Solve(const Rig& rig, std::span<const Target> targets, Pose& pose, Workspace& workspace,
           SolveReport* report = nullptr, const BetweenStages* between = nullptr);

// Errors of one task on a pose whose world transforms are up to date: position error (length
// units) and angle error (radians), as reported in SolveReport.
void TaskError(const Skeleton& skeleton, const Task& task, const Target& target,
               std::span<const Eigen::Isometry3d> world, double* position_error,
               double* angle_error);

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_SOLVE_H_
