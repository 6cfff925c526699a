// The per-frame record of a solve: what a bake keeps of each frame's SolveReport so that a bad
// frame (a pop, an unreachable goal, a limb on its limits) can be found afterwards without
// watching the clip. Plain data; the writers (JSON lines, Lua tables) live outside core/ik.
#ifndef RIGEL_CORE_IK_FRAME_RECORD_H_
#define RIGEL_CORE_IK_FRAME_RECORD_H_

#include <span>
#include <string>
#include <vector>

#include "core/ik/rig.h"

namespace rigel::ik {

// One effector's residual after the solve (a task of the rig).
struct EffectorResidual {
  // Index into Rig::tasks.
  int task = -1;
  // Position error (length units) and angle error (radians), as in SolveReport.
  double position_error = 0.0;
  double angle_error = 0.0;
  // The target's position this frame (world space; for kPole the pole point), and whether the
  // task was on (Task::weight * Target::weight > 0).
  Eigen::Vector3d target = Eigen::Vector3d::Zero();
  bool active = true;
};

// One frame of a bake: the solve's outcome (status, iterations, restarts, channels on a limit,
// and one LimbSwivel per kTwoBone stage: the swivel jump since the previous frame and the pole
// warnings; LimbSwivel::jump is in radians, SwivelJumpDegrees gives the largest in degrees), the
// frame and the effectors' residuals.
struct FrameRecord : SolveOutcome {
  // Frame index in the clip.
  int frame = 0;
  // One entry per task of the rig, in Rig::tasks order.
  std::vector<EffectorResidual> effectors;

  // The largest swivel jump of the frame's limbs, in degrees (0 without limbs).
  double SwivelJumpDegrees() const;
  // True when a limb's pole lay on its limb axis this frame.
  bool AnyDegeneratePole() const;
};

// The records of one bake (BakeJob::records) with the names a report needs: the effectors'
// names and joints, in Rig::tasks order.
struct BakeRecords {
  std::vector<std::string> effector_names;
  std::vector<int> effector_joints;
  std::vector<FrameRecord> frames;
};

// Copies what a frame's solve reported into `record` (reusing its vectors' capacity).
void RecordFrame(int frame, const SolveReport& report, FrameRecord* record);
// The same with each effector's target and whether it was on (`targets` in Rig::tasks order).
void RecordFrame(int frame, const Rig& rig, std::span<const Target> targets,
                 const SolveReport& report, FrameRecord* record);

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_FRAME_RECORD_H_
