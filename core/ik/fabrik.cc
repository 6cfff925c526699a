// FABRIK stages (Method::kFabrik; Aristidou & Lasenby 2011). The chain's points are the origins
// of its joints with free rotation channels (base first) and the effector point; the distance
// between two consecutive points is fixed (the joints between them have no free channels and
// move rigidly with the upper one). One iteration:
//   1. tip to base ("forward reaching"): the last point is put on the goal and each point, from
//      the tip down, is moved onto the line to its old position at its bone's length from the
//      point after it (a goal out of reach skips this: every bone then aims at the goal);
//   2. base to tip ("backward reaching") with the joints: the base stays where it is; each joint
//      in turn, its parent already placed, turns by the minimal rotation that takes its bone
//      (to the next point as forward kinematics puts it) to the direction of the next point of
//      step 1. The direction is first limited by the joint's BoneLimit (cone: within the angle of
//      the bone's rest direction; hinge: the channel rotation becomes a rotation about the axis,
//      its angle in the range; a joint with one rotation channel is a hinge about that channel's
//      axis), the rotation is written into the joint's channels (nearest Euler angles), and the
//      per-channel limits and locks then act. Forward kinematics then places the next joint, so
//      the limits are part of the iteration rather than a correction after it.
//   3. a kPose task: the end joint's rotation channels take the target orientation.
// The iteration stops within tolerance, on a stall (Settings::stall_fraction and
// stall_iterations: out of reach or blocked by limits, reported kUnreachable) or at the cap
// (kNotConverged).
#include "core/ik/fabrik.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/stages.h"
#include "core/ik/validate.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::ik {

using Eigen::Matrix3d;
using Eigen::Vector3d;

Vector3d LimitToCone(const Vector3d& rest, const Vector3d& want, double max_angle) {
  const double angle = std::atan2(rest.cross(want).norm(), rest.dot(want));
  if (angle <= max_angle) return want;
  Vector3d normal = rest.cross(want);
  if (normal.norm() < 1e-12) {
    // Opposite directions: any plane through rest.
    normal = rest.cross(std::abs(rest.x()) < 0.9 ? Vector3d::UnitX() : Vector3d::UnitY());
  }
  return Eigen::AngleAxisd(max_angle, normal.normalized()) * rest;
}

namespace {

// `angle` kept in [lo, hi] (within [-pi, pi]): outside, the bound nearer on the circle.
double ClampOnCircle(double angle, double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || (angle >= lo && angle <= hi)) return angle;
  const double to_lo = std::abs(std::remainder(angle - lo, 2 * kPi));
  const double to_hi = std::abs(std::remainder(angle - hi, 2 * kPi));
  return to_lo <= to_hi ? lo : hi;
}

}  // namespace

double HingeAngle(const Vector3d& axis, const Vector3d& rest, const Vector3d& want, double min,
                  double max, double current) {
  const Vector3d rest_p = rest - axis * axis.dot(rest);
  const Vector3d want_p = want - axis * axis.dot(want);
  if (rest_p.norm() < 1e-9 || want_p.norm() < 1e-9) return ClampOnCircle(current, min, max);
  const double angle = std::atan2(axis.dot(rest_p.cross(want_p)), rest_p.dot(want_p));
  return ClampOnCircle(angle, min, max);
}

namespace internal {
namespace {

// Marks chain_next_frame entries whose next joint is not a hinge.
constexpr double kNoHinge = 2.0;

bool IsPositionTask(TaskType type) {
  return type == TaskType::kPosition || type == TaskType::kPose;
}

// True when `joint` has a rotation channel the stage moves.
bool HasFreeRotation(const Skeleton& s, const StageWork& st, int joint) {
  for (const int c : s.rotation_channels(joint)) {
    if (st.channel_col[c] >= 0) return true;
  }
  return false;
}

// The frame `joint`'s rotation channels act in: its parent's world rotation times its rest
// orientation (pose.world of the parent must be current).
Matrix3d ChannelFrame(const Skeleton& s, const Pose& pose, int joint) {
  const int p = s.parent(joint);
  const Matrix3d rest = s.rest_orientation(joint).toRotationMatrix();
  return p == Skeleton::kNoParent ? rest : Matrix3d(pose.world[p].linear() * rest);
}

// Writes the channel rotation `rotation` into `joint`'s rotation channels (nearest Euler angles),
// leaving the channels the stage does not move (locked, relaxed, above the chain root) as they
// were and clamping the others to their limits. Then updates the joint's world transform.
void WriteJointRotation(const Rig& rig, const StageWork& st, int joint, const Matrix3d& rotation,
                        Pose& pose) {
  const Skeleton& s = rig.skeleton();
  const std::span<const int> rc = s.rotation_channels(joint);
  double before[3] = {0, 0, 0};
  for (size_t k = 0; k < rc.size() && k < 3; ++k) before[k] = pose.channels[rc[k]];
  SetRotationChannels(s, joint, rotation, pose.channels, pose.channels);
  for (size_t k = 0; k < rc.size() && k < 3; ++k) {
    const int c = rc[k];
    pose.channels[c] =
        st.channel_col[c] < 0 ? before[k] : std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
  }
  UpdateJointWorld(s, pose.channels, pose.world, joint);
}

// The joint's BoneLimit as FABRIK applies it: a joint with one rotation channel and no limit of
// its own is a hinge about that channel's axis (its range: the channel's limits when they lie
// within [-pi, pi], else free; the channel's limits act after in any case).
BoneLimit EffectiveLimit(const Rig& rig, int joint) {
  const Skeleton& s = rig.skeleton();
  BoneLimit limit = rig.bone_limits[joint];
  const std::span<const int> rc = s.rotation_channels(joint);
  if (limit.kind == BoneLimit::Kind::kNone && rc.size() == 1) {
    limit.kind = BoneLimit::Kind::kHinge;
    limit.axis = Vector3d::Unit(ChannelAxis(s.channels()[rc[0]]));
    const bool on_circle = rig.min[rc[0]] >= -kPi && rig.max[rc[0]] <= kPi;
    limit.min = on_circle ? rig.min[rc[0]] : -kInf;
    limit.max = on_circle ? rig.max[rc[0]] : kInf;
  }
  return limit;
}

// The twists about the unit bone `b` that turn the unit axis `a` so that a . w = `dot` (a hinge
// whose bone has the component `dot` / |w| along its axis can then point along w): two (the
// smaller first), or, when none does, the one that comes nearest (twice). Zero when the twist
// does not move `a` relative to `w`.
void TwistsToPlane(const Vector3d& b, const Vector3d& a, const Vector3d& w, double dot, double* x1,
                   double* x2) {
  // a(phi) . w - dot = A cos(phi) + B sin(phi) + C (Rodrigues).
  const double c = b.dot(a) * b.dot(w) - dot;
  const double big_a = a.dot(w) - b.dot(a) * b.dot(w);
  const double big_b = b.cross(a).dot(w);
  const double rho = std::hypot(big_a, big_b);
  *x1 = *x2 = 0.0;
  if (rho < 1e-12) return;
  const double phase = std::atan2(big_b, big_a);
  if (std::abs(c) >= rho) {
    *x1 = *x2 = c > 0 ? WrapNear(phase + kPi, 0.0) : phase;
    return;
  }
  const double delta = std::acos(-c / rho);
  *x1 = WrapNear(phase + delta, 0.0);
  *x2 = WrapNear(phase - delta, 0.0);
  if (std::abs(*x2) < std::abs(*x1)) std::swap(*x1, *x2);
}

// True when some rotation channel of `joint` is held (locked, relaxed) or the joint has two
// rotation channels: its channel rotation cannot follow an arbitrary rotation.
bool PartlyHeld(const Skeleton& s, const StageWork& st, int joint) {
  const std::span<const int> rc = s.rotation_channels(joint);
  if (rc.size() == 2) return true;
  for (const int c : rc) {
    if (st.channel_col[c] < 0) return true;
  }
  return false;
}

// A partly held joint: its free rotation channels, one at a time (three sweeps, as CCD turns
// channels), turn its bone (`rest` in its channel frame) towards `want` (channel frame), each
// clamped to its limits. Then updates the joint's world transform.
void AimFreeChannels(const Rig& rig, const StageWork& st, int joint, const Vector3d& rest,
                     const Vector3d& want, Pose& pose) {
  const Skeleton& s = rig.skeleton();
  const std::span<const int> rc = s.rotation_channels(joint);
  const std::span<const ChannelType> layout = s.channels();
  for (int sweep = 0; sweep < 3; ++sweep) {
    for (size_t k = 0; k < rc.size(); ++k) {
      const int c = rc[k];
      if (st.channel_col[c] < 0) continue;
      // Rotations of the channels before k (prefix) and from k on (suffix).
      Matrix3d prefix = Matrix3d::Identity(), suffix = Matrix3d::Identity();
      for (size_t n = 0; n < rc.size(); ++n) {
        const Matrix3d r =
            Eigen::AngleAxisd(pose.channels[rc[n]], Vector3d::Unit(ChannelAxis(layout[rc[n]])))
                .toRotationMatrix();
        if (n < k) {
          prefix = prefix * r;
        } else {
          suffix = suffix * r;
        }
      }
      const Vector3d a = prefix.col(ChannelAxis(layout[c]));
      const Vector3d u = prefix * suffix * rest;
      const Vector3d u_p = u - a * a.dot(u);
      const Vector3d v_p = want - a * a.dot(want);
      if (u_p.squaredNorm() < 1e-24 || v_p.squaredNorm() < 1e-24) continue;
      const double delta = std::atan2(a.dot(u_p.cross(v_p)), u_p.dot(v_p));
      pose.channels[c] = std::clamp(pose.channels[c] + delta, rig.min[c], rig.max[c]);
    }
  }
  UpdateJointWorld(s, pose.channels, pose.world, joint);
}

// Turns chain joint `i` so its bone points along `want` (world, unit) as far as its BoneLimit
// allows (see the file comment). A free or cone joint whose next chain joint is a hinge also
// twists about its bone so that the hinge's plane holds `after` (world: the point the next
// joint's bone should reach).
void TurnJoint(const Rig& rig, const StageWork& st, int i, const Vector3d& want,
               const Vector3d& after, Pose& pose) {
  const Skeleton& s = rig.skeleton();
  const int j = st.chain[i];
  const Matrix3d frame = ChannelFrame(s, pose, j);
  const Matrix3d current = frame.transpose() * pose.world[j].linear();
  const Vector3d rest = st.chain_bone[i] / st.chain_length[i];
  const Vector3d local_want = frame.transpose() * want;
  const BoneLimit limit = EffectiveLimit(rig, j);
  if (limit.kind != BoneLimit::Kind::kHinge && PartlyHeld(s, st, j)) {
    AimFreeChannels(rig, st, j, rest,
                    limit.kind == BoneLimit::Kind::kCone
                        ? LimitToCone(rest, local_want, limit.max_angle)
                        : local_want,
                    pose);
    return;
  }
  Matrix3d next;
  switch (limit.kind) {
    case BoneLimit::Kind::kHinge: {
      const Vector3d& a = limit.axis;
      // The hinge angle the joint has now (its bone's turn from rest about the axis).
      const Vector3d now = current * rest;
      const Vector3d rest_p = rest - a * a.dot(rest);
      const Vector3d now_p = now - a * a.dot(now);
      const double angle_now = std::atan2(a.dot(rest_p.cross(now_p)), rest_p.dot(now_p));
      const double angle = HingeAngle(a, rest, local_want, limit.min, limit.max, angle_now);
      next = Eigen::AngleAxisd(angle, a).toRotationMatrix();
      break;
    }
    case BoneLimit::Kind::kCone: {
      const Vector3d limited = LimitToCone(rest, local_want, limit.max_angle);
      next =
          Eigen::Quaterniond::FromTwoVectors(current * rest, limited).toRotationMatrix() * current;
      break;
    }
    case BoneLimit::Kind::kNone:
      next = Eigen::Quaterniond::FromTwoVectors(current * rest, local_want).toRotationMatrix() *
             current;
      break;
  }
  if (limit.kind != BoneLimit::Kind::kHinge && i + 1 < static_cast<int>(st.chain.size()) &&
      st.chain_next_frame[i](0, 0) != kNoHinge) {
    // The next joint is a hinge: twist this bone so that the hinge can point its bone at `after`,
    // taking of the two twists that do the one whose hinge angle is inside the hinge's range.
    const Matrix3d& q = st.chain_next_frame[i];  // Next joint's channel frame, in this joint's.
    const BoneLimit hinge = EffectiveLimit(rig, st.chain[i + 1]);
    const Vector3d b = next * rest;
    const Vector3d w =
        frame.transpose() * (after - pose.world[j].translation()) - b * st.chain_length[i];
    if (w.norm() > 1e-12 * st.chain_length[i]) {
      double x1, x2;
      const Vector3d next_rest = st.chain_bone[i + 1] / std::max(st.chain_length[i + 1], 1e-300);
      TwistsToPlane(b, next * q * hinge.axis, w, hinge.axis.dot(next_rest) * w.norm(), &x1, &x2);
      auto inside = [&](double phi) {
        const Matrix3d turned = Eigen::AngleAxisd(phi, b).toRotationMatrix() * next;
        const Vector3d d = q.transpose() * turned.transpose() * w;
        const double angle = HingeAngle(hinge.axis, next_rest, d, -kInf, kInf, 0.0);
        return angle >= hinge.min && angle <= hinge.max;
      };
      const double phi = !inside(x1) && inside(x2) ? x2 : x1;
      next = Eigen::AngleAxisd(phi, b).toRotationMatrix() * next;
    }
  }
  WriteJointRotation(rig, st, j, next, pose);
}

// The chain's points: each chain joint's origin, then the tip (the end joint's origin moved by
// tip_offset).
[[gnu::always_inline]] inline void FillPoints(const Pose& pose, const Vector3d& tip_offset, int m,
                                              StageWork& st) {
  for (int i = 0; i < m; ++i) st.chain_points[i] = pose.world[st.chain[i]].translation();
  st.chain_points[m] = pose.world[st.end] * tip_offset;
}

// The bones in their joints' frames (fixed during the stage: the joints between two chain joints
// do not move), their lengths and the next joint's hinge frame; returns the chain's reach.
[[gnu::always_inline]] inline double MeasureChain(const Rig& rig, const Pose& pose, int m,
                                                  StageWork& st) {
  const Skeleton& s = rig.skeleton();
  double reach = 0.0;
  for (int i = 0; i < m; ++i) {
    st.chain_bone[i] = pose.world[st.chain[i]].linear().transpose() *
                       (st.chain_points[i + 1] - st.chain_points[i]);
    st.chain_length[i] = st.chain_bone[i].norm();
    reach += st.chain_length[i];
    st.chain_next_frame[i](0, 0) = kNoHinge;
    if (i + 1 < m && EffectiveLimit(rig, st.chain[i + 1]).kind == BoneLimit::Kind::kHinge) {
      st.chain_next_frame[i] =
          pose.world[st.chain[i]].linear().transpose() * ChannelFrame(s, pose, st.chain[i + 1]);
    }
  }
  return reach;
}

// FABRIK's backward pass, tip to base: st.chain_reach from the goal g, each bone at its length.
[[gnu::always_inline]] inline void ReachBackward(const Vector3d& g, double tiny, int m,
                                                 StageWork& st) {
  st.chain_reach[m] = g;
  for (int i = m - 1; i >= 0; --i) {
    Vector3d d = st.chain_points[i] - st.chain_reach[i + 1];
    if (d.norm() <= tiny) d = st.chain_points[i] - st.chain_points[i + 1];
    const double n = d.norm();
    st.chain_reach[i] = n > tiny ? Vector3d(st.chain_reach[i + 1] + d * (st.chain_length[i] / n))
                                 : st.chain_reach[i + 1];
  }
}

// FABRIK's forward pass, base to tip, through the joints' channels: each chain joint turned
// toward its reach point (toward g when out of reach). The limb path from index `first` is
// updated as it goes.
[[gnu::always_inline]] inline void TurnChain(const Rig& rig, const Vector3d& g, bool out_of_reach,
                                             double tiny, size_t first, int m, StageWork& st,
                                             Pose& pose) {
  const Skeleton& s = rig.skeleton();
  int i = 0;
  for (size_t k = first; k < st.limb_path.size(); ++k) {
    const int j = st.limb_path[k];
    UpdateJointWorld(s, pose.channels, pose.world, j);
    if (i >= m || st.chain[i] != j) continue;
    const Vector3d p = pose.world[j].translation();
    const Vector3d want = (out_of_reach ? g : st.chain_reach[i + 1]) - p;
    if (st.chain_length[i] > tiny && want.norm() > tiny) {
      const Vector3d after = out_of_reach ? g : st.chain_reach[std::min(i + 2, m)];
      TurnJoint(rig, st, i, want.normalized(), after, pose);
    }
    ++i;
  }
}

}  // namespace

bool PlanFabrik(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
                std::string* error) {
  const Skeleton& s = rig.skeleton();
  st.pos_task = -1;
  for (const int t : st.tasks) {
    const TaskType type = rig.tasks[t].type;
    if (!IsPositionTask(type)) {
      return Fail(error, where + ": FABRIK solves position and pose effectors only; task " +
                             std::to_string(t) + " (" + std::string(TaskTypeName(type)) +
                             ") needs another stage");
    }
    if (st.pos_task >= 0) {
      return Fail(error, where + ": FABRIK takes one effector per stage (tasks " +
                             std::to_string(st.pos_task) + " and " + std::to_string(t) +
                             "): give each chain its own stage");
    }
    st.pos_task = t;
  }
  if (st.pos_task < 0) return Fail(error, where + ": FABRIK needs a position or pose task");
  const Task& task = rig.tasks[st.pos_task];
  st.end = task.joint;
  if (stage.chain_root >= 0 && !IsAncestorOrSelf(s, stage.chain_root, st.end)) {
    return Fail(error, where + ": chain_root '" + s.name(stage.chain_root) +
                           "' is not an ancestor of the effector joint '" + s.name(st.end) + "'");
  }
  if (task.type == TaskType::kPose && !HasFreeRotation(s, st, st.end)) {
    return Fail(error, where + ": FABRIK pose task: the end joint '" + s.name(st.end) +
                           "' has no free rotation channel to take the orientation");
  }
  st.limb_path.clear();
  for (int j = st.end; j != Skeleton::kNoParent; j = s.parent(j)) st.limb_path.push_back(j);
  std::reverse(st.limb_path.begin(), st.limb_path.end());
  // The end joint turns the last point only when that point is an offset past it (a position
  // effector); a pose effector's end joint takes the orientation instead.
  const bool end_turns = task.type == TaskType::kPosition && task.offset.norm() > 0;
  st.chain.clear();
  for (const int j : st.limb_path) {
    if (HasFreeRotation(s, st, j) && (j != st.end || end_turns)) st.chain.push_back(j);
  }
  if (st.chain.empty()) {
    return Fail(error, where + ": no joint with free rotation channels between '" +
                           s.name(stage.chain_root >= 0 ? stage.chain_root : st.limb_path[0]) +
                           "' and the effector joint '" + s.name(st.end) + "'");
  }
  const size_t m = st.chain.size();
  st.chain_bone.assign(m, Vector3d::Zero());
  st.chain_length.assign(m, 0.0);
  st.chain_next_frame.assign(m, Matrix3d::Identity());
  st.chain_points.assign(m + 1, Vector3d::Zero());
  st.chain_reach.assign(m + 1, Vector3d::Zero());
  return true;
}

Status RunFabrik(const Rig& rig, int stage_index, std::span<const Target> targets, Pose& pose,
                 Workspace::Impl& w, int* iterations) {
  const Skeleton& s = rig.skeleton();
  const Settings& set = rig.stages[stage_index].settings;
  StageWork& st = w.stages[stage_index];
  const Task& task = rig.tasks[st.pos_task];
  const Target& target = targets[st.pos_task];
  if (task.weight * target.weight <= 0) return Status::kConverged;  // Off this frame.
  for (const int j : st.limb_path) UpdateJointWorld(s, pose.channels, pose.world, j);
  const int m = static_cast<int>(st.chain.size());
  // A pose task fixes the end joint's world rotation, so the end joint's origin is the chain's
  // last point and its goal is target - R_end * offset (as kTwoBone).
  const bool with_orientation = task.type == TaskType::kPose;
  const Matrix3d end_rotation =
      (target.orientation * task.offset_rotation.conjugate()).toRotationMatrix();
  const Vector3d tip_offset = with_orientation ? Vector3d::Zero() : task.offset;
  const Vector3d goal =
      with_orientation ? Vector3d(target.position - end_rotation * task.offset) : target.position;
  Vector3d mask;
  for (int axis = 0; axis < 3; ++axis) mask[axis] = (task.position_axes >> axis) & 1;
  FillPoints(pose, tip_offset, m, st);
  const double reach = MeasureChain(rig, pose, m, st);
  // Bones shorter than this are degenerate (zero length): their joints are left as they are.
  const double tiny = 1e-12 * std::max(reach, 1.0);
  size_t first = 0;
  while (st.limb_path[first] != st.chain[0]) ++first;
  int it = 0;
  int stall = 0;
  double err = kInf;
  Status status = Status::kNotConverged;
  while (true) {
    double pe = 0.0, ae = 0.0;
    TaskError(s, task, target, pose.world, &pe, &ae);
    const bool position_ok = pe <= set.position_tolerance && set.position_tolerance > 0;
    const bool angle_ok =
        !with_orientation || (ae <= set.angle_tolerance && set.angle_tolerance > 0);
    if (position_ok && angle_ok) {
      status = Status::kConverged;
      break;
    }
    const double next = pe * pe + ae * ae;
    stall = next > err * (1.0 - set.stall_fraction) ? stall + 1 : 0;
    err = std::min(err, next);
    if (it >= set.max_iterations || stall >= set.stall_iterations) {
      status = stall >= set.stall_iterations ? Status::kUnreachable : Status::kNotConverged;
      break;
    }
    ++it;
    FillPoints(pose, tip_offset, m, st);
    // Free axes of a masked goal follow the effector.
    const Vector3d g =
        goal.cwiseProduct(mask) + st.chain_points[m].cwiseProduct(Vector3d::Ones() - mask);
    const bool out_of_reach = (g - st.chain_points[0]).norm() >= reach;
    if (!out_of_reach) ReachBackward(g, tiny, m, st);
    TurnChain(rig, g, out_of_reach, tiny, first, m, st, pose);
    if (with_orientation) {
      WriteJointRotation(rig, st, st.end, ChannelFrame(s, pose, st.end).transpose() * end_rotation,
                         pose);
    }
  }
  *iterations += it;
  return status;
}

}  // namespace internal
}  // namespace rigel::ik
