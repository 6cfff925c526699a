#include "core/ik/two_bone.h"

#include <algorithm>
#include <cmath>

#include "core/euler.h"
#include "core/ik/stages.h"
#include "core/ik/validate.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::ik {
namespace {

// world rotation of joint's parent times its rest orientation: the frame its channels act in.
Eigen::Matrix3d ChannelBase(const Skeleton& s, std::span<const Eigen::Isometry3d> world,
                            int joint) {
  const int p = s.parent(joint);
  const Eigen::Matrix3d parent =
      p == Skeleton::kNoParent ? Eigen::Matrix3d::Identity() : Eigen::Matrix3d(world[p].linear());
  return parent * s.rest_orientation(joint).toRotationMatrix();
}

// Writes the channel rotation `local` (product of the joint's 3 rotation channels) back into the
// channels, continuous with their current values.
void WriteEuler(const Skeleton& s, int joint, const Eigen::Matrix3d& local,
                std::span<double> channels) {
  const std::span<const int> rc = s.rotation_channels(joint);
  const std::span<const ChannelType> layout = s.channels();
  Eigen::Vector3d previous;
  for (const int c : rc) previous[ChannelAxis(layout[c])] = channels[c];
  const Eigen::Vector3d xyz = MatrixToEulerNear(local, *s.rotation_order(joint), previous);
  for (const int c : rc) channels[c] = xyz[ChannelAxis(layout[c])];
}

Eigen::Vector3d AnyPerpendicular(const Eigen::Vector3d& v) {
  const Eigen::Vector3d other =
      std::abs(v.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  return v.cross(other).normalized();
}

}  // namespace

bool TwoBoneJob::Validate(std::string* error) const {
  if (!skeleton) return Fail(error, "two-bone: skeleton is null");
  const Skeleton& s = *skeleton;
  if (static_cast<int>(channels.size()) != s.num_channels() ||
      static_cast<int>(world.size()) != s.num_joints()) {
    return Fail(error, "two-bone: channels/world do not match the skeleton");
  }
  const int n = s.num_joints();
  if (upper < 0 || upper >= n || lower < 0 || lower >= n || end < 0 || end >= n) {
    return Fail(error, "two-bone: joint index out of range");
  }
  if (!IsAncestor(s, upper, lower) || !IsAncestor(s, lower, end)) {
    return Fail(error, "two-bone: upper must be an ancestor of lower, lower of end");
  }
  if (s.rotation_channels(upper).size() != 3 || !s.rotation_order(upper)) {
    return Fail(error, "two-bone: upper joint needs three rotation channels");
  }
  const size_t lower_count = s.rotation_channels(lower).size();
  if (lower_count != 1 && (lower_count != 3 || !s.rotation_order(lower))) {
    return Fail(error, "two-bone: lower joint needs one or three rotation channels");
  }
  if (!target.allFinite() || !pole.allFinite() || !offset.allFinite()) {
    return Fail(error, "two-bone: target, pole or offset is not finite");
  }
  const Eigen::Vector3d p_u = world[upper].translation();
  const Eigen::Vector3d p_l = world[lower].translation();
  const Eigen::Vector3d p_e = world[end] * offset;
  if ((p_l - p_u).norm() < 1e-12 || (p_e - p_l).norm() < 1e-12) {
    return Fail(error, "two-bone: a bone has zero length");
  }
  return true;
}

double Swivel::Begin() {
  const double t_prev = valid ? pole_weight : 1.0;
  jump = 0.0;
  pole_weight = 1.0;
  pole_degenerate = false;
  return t_prev;
}

Eigen::Vector3d SwivelTarget(Swivel* swivel, double t_prev, const Eigen::Vector3d& axis,
                             bool use_pole, const Eigen::Vector3d& q, Eigen::Vector3d* prev_out) {
  // The previous frame's elbow direction, moved onto the plane normal to the new axis.
  Eigen::Vector3d prev = Eigen::Vector3d::Zero();
  bool has_prev = false;
  if (swivel && swivel->valid) {
    prev = swivel->direction - axis * axis.dot(swivel->direction);
    has_prev = prev.norm() > 1e-6;
    if (has_prev) {
      prev.normalize();
    } else {
      prev.setZero();
    }
  }
  *prev_out = prev;
  // The direction the elbow should take (zero: keep the smallest turn).
  Eigen::Vector3d want = Eigen::Vector3d::Zero();
  if (!use_pole) return want;
  const Eigen::Vector3d q_perp = q - axis * axis.dot(q);
  const double qn = q.norm();
  const double wd = qn > 1e-12 ? q_perp.norm() / qn : 0.0;
  const bool degenerate = wd <= Swivel::kPoleDegenerate;
  double t = 1.0;
  if (has_prev) {
    const double u = std::clamp(
        (wd - Swivel::kPoleDegenerate) / (Swivel::kPoleSharp - Swivel::kPoleDegenerate), 0.0, 1.0);
    t = u * u * (3 - 2 * u);
  }
  if (swivel) {
    swivel->pole_degenerate = degenerate;
    swivel->pole_weight = t;
  }
  if (has_prev) {
    // Turn the previous direction towards the pole's by the fraction f of the angle between
    // them (Swivel's blend rule).
    const double angle =
        degenerate ? 0.0 : std::atan2(axis.dot(prev.cross(q_perp)), prev.dot(q_perp));
    const double progress = t >= 1.0 ? 1.0 : t > t_prev ? (t - t_prev) / (1.0 - t_prev) : 0.0;
    const double f = std::max(progress, Swivel::kPoleFollow * t);
    want = Eigen::AngleAxisd(f * angle, axis) * prev;
  } else if (!degenerate || q_perp.norm() > 1e-12 * qn) {
    want = q_perp;
  }
  return want;
}

void SwivelRecord(Swivel* swivel, const Eigen::Vector3d& axis, const Eigen::Vector3d& elbow,
                  const Eigen::Vector3d& prev) {
  // The elbow's direction as solved.
  Eigen::Vector3d out = elbow - axis * axis.dot(elbow);
  out.normalize();
  if (prev.squaredNorm() > 0) swivel->jump = std::atan2(prev.cross(out).norm(), prev.dot(out));
  swivel->direction = out;
  swivel->valid = true;
}

bool TwoBoneJob::Run() const {
  if (!Validate()) return false;
  const Skeleton& s = *skeleton;
  const std::span<const ChannelType> layout = s.channels();
  const Eigen::Vector3d p_u = world[upper].translation();
  const Eigen::Vector3d p_l = world[lower].translation();
  const Eigen::Vector3d p_e = world[end] * offset;
  const double l1 = (p_l - p_u).norm();
  const double l2 = (p_e - p_l).norm();
  const double d_target = (target - p_u).norm();
  const double d_min = std::abs(l1 - l2);
  const double d_max = l1 + l2;
  const double slack = 1e-12 * d_max;
  bool ok = d_target >= d_min - slack && d_target <= d_max + slack;
  const double d = std::clamp(d_target, d_min, d_max);

  // 1. Bend the lower joint about axis a (through p_l) until |p_u - p_e| = d:
  //    r . R(a, x) w = K  with r = p_u - p_l, w = p_e - p_l, K = (|r|^2 + |w|^2 - d^2) / 2,
  //    i.e. B cos x + C sin x = K' (Rodrigues), solved in closed form; the smaller turn wins.
  const Eigen::Vector3d r = p_u - p_l;
  const Eigen::Vector3d w = p_e - p_l;
  Eigen::Vector3d a;
  const std::span<const int> lower_rc = s.rotation_channels(lower);
  const Eigen::Matrix3d lower_base = ChannelBase(s, world, lower);
  if (lower_rc.size() == 1) {
    a = lower_base.col(ChannelAxis(layout[lower_rc[0]]));
  } else {
    a = r.cross(w);
    if (a.norm() < 1e-9 * l1 * l2) {
      // Straight (or folded) chain: bend towards the pole if there is one.
      a = use_pole ? r.cross(pole - p_l) : Eigen::Vector3d::Zero();
      if (a.norm() < 1e-9 * l1 * (pole - p_l).norm() || !use_pole) a = AnyPerpendicular(r);
    }
    a.normalize();
  }
  const double ra = r.dot(a), wa = w.dot(a);
  const double b = r.dot(w) - ra * wa;
  const double c = r.dot(a.cross(w));
  const double k = (r.squaredNorm() + w.squaredNorm() - d * d) / 2 - ra * wa;
  const double rho = std::hypot(b, c);
  double x = 0.0;
  if (rho > 1e-15) {
    double ratio = k / rho;
    if (ratio > 1.0 || ratio < -1.0) ok = false;
    ratio = std::clamp(ratio, -1.0, 1.0);
    const double phi = std::atan2(c, b);
    const double delta = std::acos(ratio);
    const double x1 = WrapNear(phi + delta, 0.0);
    const double x2 = WrapNear(phi - delta, 0.0);
    x = std::abs(x1) <= std::abs(x2) ? x1 : x2;
    if (lower_rc.size() == 1 && !min.empty() && !max.empty()) {
      const int ch = lower_rc[0];
      auto inside = [&](double v) { return v >= min[ch] && v <= max[ch]; };
      const double other = x == x1 ? x2 : x1;
      if (!inside(channels[ch] + x) && inside(channels[ch] + other)) x = other;
    }
  }
  const Eigen::Matrix3d bend = Eigen::AngleAxisd(x, a).toRotationMatrix();
  if (lower_rc.size() == 1) {
    channels[lower_rc[0]] += x;
  } else {
    const Eigen::Matrix3d local = lower_base.transpose() * bend * world[lower].linear();
    WriteEuler(s, lower, local, channels);
  }
  const Eigen::Vector3d p_e_bent = p_l + bend * w;

  // 2. Swing the upper joint so the effector lies on the target, then twist about the
  //    upper -> target axis so the chain's plane contains the pole.
  const Eigen::Vector3d u1 = p_e_bent - p_u;
  const Eigen::Vector3d u2 = target - p_u;
  Eigen::Matrix3d swing = Eigen::Matrix3d::Identity();
  if (u1.norm() > 1e-12 && u2.norm() > 1e-12) {
    swing = Eigen::Quaterniond::FromTwoVectors(u1, u2).toRotationMatrix();
  }
  Swivel none;
  const double t_prev = (swivel ? swivel : &none)->Begin();
  if ((use_pole || swivel) && u2.norm() > 1e-12) {
    const Eigen::Vector3d axis = u2.normalized();
    const Eigen::Vector3d m = swing * (p_l - p_u);
    const Eigen::Vector3d m_perp = m - axis * axis.dot(m);
    Eigen::Vector3d prev;
    const Eigen::Vector3d want = SwivelTarget(swivel, t_prev, axis, use_pole, pole - p_u, &prev);
    if (m_perp.norm() > 1e-12 * l1 && want.norm() > 0) {
      const double angle = std::atan2(axis.dot(m_perp.cross(want)), m_perp.dot(want));
      swing = Eigen::AngleAxisd(angle, axis).toRotationMatrix() * swing;
    }
    if (swivel && m_perp.norm() > 1e-9 * l1) SwivelRecord(swivel, axis, swing * (p_l - p_u), prev);
  }
  const Eigen::Matrix3d upper_base = ChannelBase(s, world, upper);
  const Eigen::Matrix3d local = upper_base.transpose() * swing * world[upper].linear();
  WriteEuler(s, upper, local, channels);
  if (reached) *reached = ok;
  return true;
}

namespace internal {

bool PlanTwoBone(const Rig& rig, const Stage& stage, StageWork& st, const std::string& where,
                 std::string* error) {
  const Skeleton& s = rig.skeleton();
  const int nj = s.num_joints();
  st.pos_task = -1;
  st.pole_task = -1;
  for (const int t : st.tasks) {
    const TaskType type = rig.tasks[t].type;
    if (st.pos_task < 0 && (type == TaskType::kPosition || type == TaskType::kPose)) {
      st.pos_task = t;
    }
    if (st.pole_task < 0 && type == TaskType::kPole) st.pole_task = t;
  }
  if (st.pos_task < 0) return Fail(error, where + ": two-bone needs a position or pose task");
  st.end = rig.tasks[st.pos_task].joint;
  if (rig.tasks[st.pos_task].type == TaskType::kPose && s.rotation_channels(st.end).empty()) {
    return Fail(error, where +
                           ": two-bone pose task: the end joint has no rotation channels to take "
                           "the orientation");
  }
  st.lower = stage.lower;
  st.upper = stage.upper;
  if (st.lower < 0) {
    for (int j = s.parent(st.end); j != Skeleton::kNoParent; j = s.parent(j)) {
      if (!s.rotation_channels(j).empty()) {
        st.lower = j;
        break;
      }
    }
  }
  if (st.upper < 0 && st.lower >= 0) {
    for (int j = s.parent(st.lower); j != Skeleton::kNoParent; j = s.parent(j)) {
      if (s.rotation_channels(j).size() == 3) {
        st.upper = j;
        break;
      }
    }
  }
  if (st.upper < 0 || st.lower < 0 || st.upper >= nj || st.lower >= nj ||
      !IsAncestorOrSelf(s, st.upper, st.lower) || !IsAncestorOrSelf(s, st.lower, st.end) ||
      st.upper == st.lower || st.lower == st.end || s.rotation_channels(st.upper).size() != 3 ||
      (s.rotation_channels(st.lower).size() != 1 && s.rotation_channels(st.lower).size() != 3)) {
    return Fail(error, where +
                           ": no valid upper/lower/end joints (upper needs 3 rotation "
                           "channels, lower 1 or 3)");
  }
  st.limb_path.clear();
  for (int j = st.end; j != Skeleton::kNoParent; j = s.parent(j)) st.limb_path.push_back(j);
  std::reverse(st.limb_path.begin(), st.limb_path.end());
  return true;
}

Status RunTwoBone(const Rig& rig, int stage_index, std::span<const Target> targets, Pose& pose,
                  Workspace::Impl& w, int* iterations) {
  const Skeleton& s = rig.skeleton();
  const Settings& set = rig.stages[stage_index].settings;
  StageWork& st = w.stages[stage_index];
  const Task& task = rig.tasks[st.pos_task];
  const Target& target = targets[st.pos_task];
  st.reached = true;
  if (task.weight * target.weight <= 0) {
    // The limb is off this frame: nothing moves, and its swivel continuity starts afresh when it
    // comes back on.
    st.swivel.Reset();
    st.swivel.jump = 0.0;
    return Status::kConverged;
  }
  // World transforms of the limb's path only (root to end): the stage reads no other joint.
  for (const int j : st.limb_path) UpdateJointWorld(s, pose.channels, pose.world, j);
  // A pose task fixes the end joint's final world rotation R_end = R_target * offset_rotation^-1,
  // so the effector point's offset is known in world space: the end joint's origin goes to
  // target - R_end * offset, and the end joint's channels are set to R_end afterwards.
  const bool with_orientation = task.type == TaskType::kPose;
  const Eigen::Matrix3d end_rotation =
      (target.orientation * task.offset_rotation.conjugate()).toRotationMatrix();
  TwoBoneJob job;
  job.skeleton = &s;
  job.channels = pose.channels;
  job.world = pose.world;
  job.upper = st.upper;
  job.lower = st.lower;
  job.end = st.end;
  if (with_orientation) {
    job.target = target.position - end_rotation * task.offset;
  } else {
    job.offset = task.offset;
    job.target = target.position;
  }
  if (st.pole_task >= 0 && rig.tasks[st.pole_task].weight * targets[st.pole_task].weight > 0) {
    job.pole = targets[st.pole_task].position;
    job.use_pole = true;
  }
  job.min = rig.min;
  job.max = rig.max;
  job.swivel = &st.swivel;
  bool reached = false;
  job.reached = &reached;
  if (!job.Run()) return Status::kInvalidInput;
  // Limits: the analytic answer is projected onto the limits of the two joints.
  for (const int j : {st.upper, st.lower}) {
    for (const int c : s.rotation_channels(j)) {
      pose.channels[c] = std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
    }
  }
  for (const int j : st.limb_path) UpdateJointWorld(s, pose.channels, pose.world, j);
  if (with_orientation) {
    // channels' rotation = (parent world * rest orientation)^T * R_end.
    const int parent = s.parent(st.end);
    Eigen::Matrix3d base = s.rest_orientation(st.end).toRotationMatrix();
    if (parent != Skeleton::kNoParent) base = pose.world[parent].linear() * base;
    SetRotationChannels(s, st.end, base.transpose() * end_rotation, pose.channels, pose.channels);
    for (const int c : s.rotation_channels(st.end)) {
      pose.channels[c] = std::clamp(pose.channels[c], rig.min[c], rig.max[c]);
    }
    UpdateJointWorld(s, pose.channels, pose.world, st.end);
  }
  st.reached = reached;
  *iterations += 1;
  double pe = 0, ae = 0;
  TaskError(s, task, target, pose.world, &pe, &ae);
  if (pe <= set.position_tolerance && (!with_orientation || ae <= set.angle_tolerance)) {
    return Status::kConverged;
  }
  return reached ? Status::kNotConverged : Status::kUnreachable;
}

}  // namespace internal
}  // namespace rigel::ik
