// The per-frame bake loop: a clip through a rig, frame by frame, with per-clip statistics.
//
// Typical use: a character rig (core/ik/character_rig.h) whole, `job.character = &character`,
// then the clip, output and callback as below; or its parts one by one:
//
//   ik::BakeJob job;
//   job.rig = &rig;                 // tasks, limits, stages (core/ik/rig.h)
//   job.targets = &targets;         // one per task, read after the callback of each frame
//   job.clip = &clip;               // the source clip, on the rig's skeleton
//   job.output = &baked;            // resized to the clip's frames and channels
//   job.workspace = &workspace;
//   job.on_frame = [&](int frame, Pose& pose, std::string* error) {
//     targets[0].position = ...;    // world space; pose holds the clip's frame
//     return ik::FrameAction::kSolve;
//   };
//   ik::BakeSummary summary;
//   job.summary = &summary;
//   if (!job.Run()) ... job.error ...
//
// rig:bake (Lua), `rigel bake` and the benchmarks run this loop; the Lua binding's callback calls
// into the script. The loop keeps no pointer or size across a callback: it reads the clip's
// frame count once before the first frame, and every row, target and report afresh each frame.
#ifndef RIGEL_CORE_IK_BAKE_H_
#define RIGEL_CORE_IK_BAKE_H_

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/clip.h"
#include "core/constraints/foot_roll.h"
#include "core/constraints/stack.h"
#include "core/ik/frame_record.h"
#include "core/ik/rig.h"
#include "core/ik/solve.h"
#include "core/pose.h"

namespace rigel::ik {

struct CharacterRig;

// Per-clip statistics of a bake. Counts are over the clip's frames; means and maxima are over
// the frames that were solved (converged + not_converged + unreachable).
struct BakeSummary {
  int frames = 0;                  // frames in the clip (solved or skipped)
  int converged = 0;               // solves that reached every task's tolerance
  int not_converged = 0;           // solves stopped by the iteration cap or a stall
  int unreachable = 0;             // solves that stopped at a least-squares optimum above tolerance
  int skipped = 0;                 // frames whose callback said kSkip (copied unsolved)
  long long iterations = 0;        // solver iterations, summed over the solved frames
  int iterations_max = 0;          // most iterations of one frame
  double iterations_mean = 0;      // iterations / solved frames
  double residual_max = 0;         // largest position error of any task on any frame (units)
  double residual_mean = 0;        // mean over solved frames of the frame's largest position error
  double max_angle_error = 0;      // largest orientation error of any task (radians)
  int worst_frame = -1;            // 0-based frame of residual_max; -1 when none was above 0
  int frames_with_limit_hits = 0;  // solved frames where some channel ended on a limit

  // Frames that were solved.
  int solved() const { return converged + not_converged + unreachable; }
};

// What the per-frame callback asks of the loop.
enum class FrameAction {
  kSolve,  // solve the frame with the targets as they are now
  kSkip,   // write the pose as it is, unsolved
  kFail,   // stop the bake; the callback's error string says why
};

// Called once per frame, before the solve: `frame` is 0-based; `pose.channels` hold the clip's
// row (world transforms updated only when BakeJob::forward_kinematics is true). The callback may
// edit the pose's channels (the solve starts from them) and the targets.
using FrameCallback = std::function<FrameAction(int frame, Pose& pose, std::string* error)>;

// Called once per frame, after the frame's row is written to the output: `pose` holds the baked
// row, its world transforms up to date on a solved frame (on a skipped one, as the callback left
// them: the clip row's with forward_kinematics, unless the callback edited channels); `report` is
// the frame's solve report, or nullptr when the frame was not solved (skipped, or constrained
// only). For per-frame records (FrameRecord),
// per-limb counts and the like; it may not change the bake.
using FrameDoneCallback =
    std::function<void(int frame, const Pose& pose, const SolveReport* report)>;

// Bakes `clip` through `rig`: per frame, pose = clip row, on_frame sets targets, Solve, output row
// = pose. Inputs have defaults; Validate() checks them, Run() validates then loops.
struct BakeJob {
  // Validates the job. Returns false (and sets `error`) when:
  // - rig, targets, clip, output or workspace is nullptr;
  // - the rig has no skeleton, or the clip does not match the rig's skeleton (channel count);
  // - targets has fewer entries than the rig has tasks;
  // - pose is given and its channel count is not the skeleton's;
  // - output is the clip itself;
  // - constraints is given and one of them is invalid (constraints::Stack::Validate).
  bool Validate() const;
  // Runs the bake. Returns false when the job is invalid (see Validate), when the callback says
  // kFail, or when a frame's solve reports invalid input ("frame N: invalid rig: ..."), with
  // `error` set. On success `output` holds one row per frame of the clip and `summary` (if
  // given) the statistics.
  bool Run() const;

  // A character rig whole: when given, the rig, targets, workspace, report, constraints and foot
  // rolls are its own (those fields must then be left unset).
  CharacterRig* character = nullptr;
  const Rig* rig = nullptr;
  // One per task of the rig; read after each callback (the callback may change them, and the
  // vector may even grow: it is not held across the call).
  const std::vector<Target>* targets = nullptr;
  // Source clip, on the rig's skeleton. Its frame count is read once, before the first frame.
  const Clip* clip = nullptr;
  // Receives the baked clip: resized to the clip's frames x channels, frame time and name copied.
  Clip* output = nullptr;
  // Solver storage, reused across frames (prepared on the first solve).
  Workspace* workspace = nullptr;
  // The pose the loop works in; nullptr: a pose of the job's own. Given by the Lua binding,
  // whose script sees it.
  Pose* pose = nullptr;
  // Per-frame callback; empty: every frame is solved with the targets as they are.
  FrameCallback on_frame;
  // Per-frame callback after the solve; empty: none.
  FrameDoneCallback on_frame_done;
  // true: the workspace carries over from frame to frame (the solver reuses the previous frame's
  // preparation and, when the joints are unchanged, its forward kinematics); false: a fresh
  // workspace for each frame (cold start: slower, for cross-checks). Either way a frame's solve
  // starts from the pose the callback leaves, i.e. the clip's row unless it edited it.
  bool warm_start = true;
  // true: world transforms are updated before the callback; false: the caller's callback
  // refreshes what it reads (the Lua binding refreshes lazily, only the chains a script queries).
  bool forward_kinematics = true;
  // Constraints evaluated per solved frame where they were declared: before the first stage,
  // between two stages, after the last (ik::ConstrainedFrame, core/ik/constrained_solve.h).
  // Their captured offsets start afresh with each Run. A rig with constraints and no task is not
  // solved: its frames are constrained only (and counted in neither solved nor skipped).
  // nullptr: none.
  const constraints::Stack* constraints = nullptr;
  // Foot rolls on pose effectors: the targets hold the planted ankles (ik::ConstrainedFrame).
  std::span<const constraints::FootRollRig> foot_rolls;
  // Receives the statistics; may be nullptr.
  BakeSummary* summary = nullptr;
  // Receives one FrameRecord per solved frame (with each effector's target), in frame order;
  // cleared first. nullptr: none kept.
  std::vector<FrameRecord>* records = nullptr;
  // Receives each solve's report (the last solved frame's stays); nullptr: the job's own.
  SolveReport* report = nullptr;
  // Why Validate or Run failed.
  mutable std::string error;

 private:
  // This job with `character`'s parts in its fields (false, with `error`, when one is also set).
  bool Whole(BakeJob* whole) const;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_BAKE_H_
