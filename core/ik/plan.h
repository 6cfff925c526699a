// The plan of a Workspace (internal to core/ik): what Workspace::Prepare computes once per rig
// structure and every solve then reuses without allocating. Per stage (StageWork): its tasks in
// priority order and their rows, its columns (the free channels under its chain root), a flat
// forward-kinematics program over its joints, the block pattern of J J^T, and every buffer of
// the iteration, sized once. Per workspace (Workspace::Impl): the joint frames shared by the
// stages and the keys IsPreparedFor compares.
//
// Prepare is transactional: the plan is built into a new Impl and swapped in only once every
// stage has been planned, so a failed Prepare leaves the workspace as it was (prepared for the
// previous rig, or not at all) and never half-built.
#ifndef RIGEL_CORE_IK_PLAN_H_
#define RIGEL_CORE_IK_PLAN_H_

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "core/ik/linear.h"
#include "core/ik/rig.h"
#include "core/ik/solve.h"
#include "core/ik/two_bone.h"

namespace rigel::ik {
namespace internal {

using Eigen::Vector3d;

// The stage's forward kinematics as a flat program: per joint (ancestors first), its translation
// channels fk_channels[t_begin, t_end) and rotation channels [t_end, r_end).
struct FkJoint {
  int joint = 0, parent = -1;
  bool rest_identity = true;
  Eigen::Vector3d rest_t = Eigen::Vector3d::Zero();
  int t_begin = 0, t_end = 0, r_end = 0;
  // Skeletons with scale: the joint's scale channels (-1: none) and whether it compensates its
  // parent's scale. Scale is never a column (solvers leave it alone); the stage FK places the
  // joint at its parent's world scale (as a uniform factor: exact for uniform scale).
  std::array<int, 3> scale_c = {-1, -1, -1};
  bool compensate = false;
};
// One channel of the stage FK program: its skeleton channel, axis (0-2) and stage column (-1 when
// it does not move in this stage).
struct FkChannel {
  int channel = 0, axis = 0, col = -1;
};

// One stage's plan (from Prepare) and its iteration state (reused by every solve).
struct StageWork {
  Method method = Method::kDlsAdaptive;
  std::vector<FkJoint> fk;
  std::vector<FkChannel> fk_channels;
  // The channel values (per fk_channels entry) of the last ChainFk.
  std::vector<double> fk_theta;
  // The skeleton channels of fk_channels' rotation entries in order, and ChainFk's scratch for
  // their angles, sines and cosines (computed in one vectorized pass before the joint loop).
  std::vector<int> fk_rotation_channels;
  std::vector<double> fk_angle, fk_sin, fk_cos;
  // Priority levels taking part in the steps (all, until a higher level stalls above tolerance
  // while lower ones pull: then the lower ones are dropped and the higher ones finish alone).
  int active_levels = 1;
  // True while the joint frames of the last ChainFk match the channels (false after a rejected
  // trial or a restored restart): Solve then reuses them for pose.world.
  bool frames_valid = false;
  bool last_bias = false;                    // The last step used the preferred-angle bias.
  bool step_scaled = false;                  // The last step was scaled down to the max step.
  std::vector<std::uint8_t> joint_in_stage;  // Per skeleton joint.
  std::vector<int> tasks;                    // Rig task indices, sorted by (priority, index).
  std::vector<int> task_row;
  std::vector<int> task_dim;
  std::vector<Eigen::Matrix3d> task_offset_rotation;
  std::vector<Level> levels;
  int rows = 0;
  int cols = 0;
  std::vector<int> joints;  // Joints to update, ancestor-closed, ascending.
  std::vector<int> col_channel;
  std::vector<int> channel_col;  // Per skeleton channel: column or -1.
  std::vector<std::uint8_t> col_rotation;
  std::vector<int> col_joint;
  std::vector<std::vector<int>> task_cols;  // Columns moving the effector joint.
  // kPole: per entry of task_cols, bit 0 = the column moves pole_mid, bit 1 = pole_root.
  std::vector<std::vector<std::uint8_t>> task_col_moves;
  // Single-level damped least squares (kDls, kDlsAdaptive): J J^T is assembled block by block
  // from the columns two tasks share (J is sparse on a tree), factorized by LDL^T.
  struct Block {
    int row_a = 0, dim_a = 0, row_b = 0, dim_b = 0;  // row_a >= row_b: the lower triangle.
    std::vector<int> cols;                           // Columns both tasks depend on.
  };
  bool fast = false;
  std::vector<Block> blocks;
  // Estimated cost of a full step over a chord step (fast stages).
  double full_over_chord = 1.0;
  // 3 or 6 when the stage may take the serial path (one kPosition/kPose task on all axes,
  // DLS, no alternate Jacobian; see IterateSerial), else 0.
  int serial_rows = 0;
  // Per iteration.
  std::vector<Vector3d> axis;
  std::vector<Vector3d> pivot;
  std::vector<double> pos_err, pos_err_saved;
  std::vector<double> ang_err, ang_err_saved;
  // j/e hold the current system; the *_saved buffers hold the last accepted one while a trial
  // step is evaluated (swapped, never copied). Both J buffers share one sparsity pattern.
  MatrixXd j, j_saved, n_proj;
  // Restarts: best channel values (per column) and their error.
  VectorXd best;
  VectorXd e, e_saved, e_work, x, dtheta, fixed, z, scale, theta_prev, grad;
  std::vector<std::uint8_t> clamped;
  // kTwoBone.
  int upper = -1, lower = -1, end = -1, pos_task = -1, pole_task = -1;
  // kTwoBone: the joints from a root down to `end`, parents first: the only world transforms
  // the stage reads and writes (the rest of the pose is brought up to date after the solve).
  std::vector<int> limb_path;
  // kTwoBone: whether the last solve's target was within reach (true when the stage was off).
  bool reached = true;
  // kTwoBone: the limb's swivel continuity across frames (Workspace::ResetContinuity clears it).
  Swivel swivel;
  // kFabrik (core/ik/fabrik.cc; pos_task, end and limb_path as for kTwoBone): the chain's
  // joints with free rotation channels, base first; whether the end joint's own rotation moves
  // the chain's last point (a kPosition effector offset past a free end joint); per chain
  // joint its bone (to the next chain joint or the effector point, in its joint frame, set at
  // the start of each solve), length and next hinge frame; the chain points as FK has them and as
  // the tip-to-base pass moves them (one more than the joints: the last is the effector point).
  std::vector<int> chain;
  std::vector<Eigen::Vector3d> chain_bone;
  std::vector<double> chain_length;
  // Per chain joint whose next chain joint is a hinge: the next joint's channel frame in this
  // joint's frame (a free joint twists about its bone to turn that hinge's plane); entry (0, 0)
  // is 2 when the next joint is not a hinge.
  std::vector<Eigen::Matrix3d> chain_next_frame;
  std::vector<Eigen::Vector3d> chain_points;
  std::vector<Eigen::Vector3d> chain_reach;
};

}  // namespace internal

// The workspace's storage: the keys IsPreparedFor compares, the joint frames shared by the stages
// and every stage's plan.
struct Workspace::Impl {
  // Structure the workspace was prepared for.
  const Skeleton* skeleton = nullptr;
  std::vector<std::tuple<TaskType, int, int, int, int, std::uint8_t, bool>> task_keys;
  std::vector<std::tuple<Method, std::vector<int>, int, int, int>> stage_keys;
  std::vector<std::uint8_t> locked;
  std::vector<std::uint8_t> relaxed;
  // Joint frames (world), valid for the joints a stage updated.
  std::vector<Eigen::Matrix3d> rot;
  std::vector<Eigen::Vector3d> pos;
  // Skeletons with scale: each joint's world scale (a uniform factor).
  std::vector<double> world_scale;
  std::vector<Eigen::Matrix3d> rest_rot;
  std::vector<std::uint8_t> rest_identity;
  std::vector<internal::StageWork> stages;
  std::vector<Target> no_targets;
  // ConstrainedFrame's targets with the foot-rolled goals (grows once).
  std::vector<Target> rolled_targets;
  // Restarts run by the current solve.
  int restarts = 0;
  bool fast_paths = true;
  // Pole tasks solved by iterative stages: their swivel continuity across frames (as a kTwoBone
  // stage's), the pole each solve actually aims at, and the frame's axis and previous direction.
  struct IterativePole {
    int task = -1;
    int stage = -1;
    Swivel swivel;
    Eigen::Vector3d axis = Eigen::Vector3d::Zero();
    Eigen::Vector3d prev = Eigen::Vector3d::Zero();
  };
  std::vector<IterativePole> poles;
  std::vector<Target> pole_targets;
  // IK/FK blend (core/ik/ik_fk_blend.h): the channels a solve started from and the per-joint
  // weights, sized by Prepare.
  std::vector<double> fk_channels;
  std::vector<double> joint_blend;
  // UpdateWorldAfterSolve's sines and cosines of every channel (one vectorized pass).
  std::vector<double> channel_sin, channel_cos;
};

}  // namespace rigel::ik

#endif  // RIGEL_CORE_IK_PLAN_H_
