#include "core/retarget/cleanup.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "core/ik/bake.h"
#include "core/pose.h"

namespace rigel::retarget {

Eigen::Vector3d LimbGoal(const Alignment& a, const TransferredMotion& motion, int f,
                         const Limb& limb, std::span<const Eigen::Isometry3d> world) {
  if (!limb.foot || limb.source_upper < 0) return SourceGoal(a, motion, f, limb.source_end);
  Eigen::Vector3d v =
      limb.ratio * (a.up_from_source * (motion.source_position(f, limb.source_end) -
                                        motion.source_position(f, limb.source_upper)));
  // A straight source leg gives a goal at the target leg's full length: kept a hair (1e-9 of the
  // length) inside it, so rounding does not count a straight leg as out of reach.
  const double reach =
      (1.0 - 1e-9) * ((world[limb.lower].translation() - world[limb.upper].translation()).norm() +
                      (world[limb.end].translation() - world[limb.lower].translation()).norm());
  if (v.norm() > reach) v *= reach / v.norm();
  Eigen::Vector3d goal = world[limb.upper].translation() + v;
  // Never below the hip-height-scaled goal: the hips are placed by the hip-height ratio, so a leg
  // longer than that ratio says would push the foot into the ground.
  const int up = a.target_up;
  goal[up] = std::max(goal[up], SourceGoal(a, motion, f, limb.source_end)[up]);
  return goal;
}

Eigen::Vector3d ContactPin(const Skeleton& tgt, const Limb& limb, const Clip& transferred,
                           const FootContact& contact) {
  // World transforms of the joints from the root down to the foot only.
  std::vector<int> path;
  for (int j = limb.end; j != Skeleton::kNoParent; j = tgt.parent(j)) path.push_back(j);
  std::reverse(path.begin(), path.end());
  std::vector<Eigen::Isometry3d> world(tgt.num_joints(), Eigen::Isometry3d::Identity());
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  for (int f = contact.first; f <= contact.last; ++f) {
    for (const int j : path) UpdateJointWorld(tgt, transferred.frame(f), world, j);
    sum += world[limb.end].translation();
  }
  return sum / static_cast<double>(contact.last - contact.first + 1);
}

namespace {

// A limb's middle joint within its normal hyperextension of straight (about 5 degrees: a bend
// under 2 % of the limb's length) cannot tell a forward bend from a backward one; there the upper
// joint's hinge decides (PoleDirection).
constexpr double kHingeWeight = 0.02;

// `v` without its component along `axis`.
Eigen::Vector3d Perpendicular(const Eigen::Vector3d& v, const Eigen::Vector3d& axis) {
  const double n = axis.squaredNorm();
  return n > 0 ? Eigen::Vector3d(v - axis * (v.dot(axis) / n)) : v;
}

// The direction a limb's middle joint (knee, elbow) bends, in its upper joint's frame, from the
// target's rest pose: the rest's own bend where it is bent that way (modelled knees and elbows
// often are), else the body's forward for a knee and backward for an elbow. Zero when the rest
// has no hips to tell forward from.
Eigen::Vector3d RestHinge(const Skeleton& tgt, const Alignment& m, const Limb& l) {
  if (m.left_upper_leg < 0 || m.right_upper_leg < 0) return Eigen::Vector3d::Zero();
  const Pose rest(tgt);
  const std::vector<Eigen::Isometry3d>& w = rest.world;
  const int up = m.target_up;
  const Eigen::Vector3d right =
      Horizontal(w[m.right_upper_leg].translation() - w[m.left_upper_leg].translation(), up);
  Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(right);
  if (forward.norm() == 0) return Eigen::Vector3d::Zero();
  forward = (l.foot ? 1.0 : -1.0) * forward.normalized();
  const Eigen::Vector3d hip = w[l.upper].translation(), knee = w[l.lower].translation();
  const Eigen::Vector3d axis = w[l.end].translation() - hip;
  const Eigen::Vector3d bend = Perpendicular(knee - hip, axis);
  const double length = (knee - hip).norm() + (w[l.end].translation() - knee).norm();
  const Eigen::Vector3d hinge =
      bend.norm() > kHingeWeight * length && bend.dot(forward) > 0 ? bend.normalized() : forward;
  return w[l.upper].linear().transpose() * hinge;
}

// Where the pole of a limb points on a frame: the bend of the transferred pose, away from the
// hip-ankle line, and near straight the upper joint's hinge (`hinge`: RestHinge turned with the
// upper joint), blended continuously. `fallback` when neither gives a direction.
Eigen::Vector3d PoleDirection(const Eigen::Vector3d& hip, const Eigen::Vector3d& knee,
                              const Eigen::Vector3d& ankle, const Eigen::Vector3d& hinge,
                              const Eigen::Vector3d& fallback) {
  const Eigen::Vector3d axis = ankle - hip;
  const double length = (knee - hip).norm() + (ankle - knee).norm();
  if (length <= 0) return fallback;
  Eigen::Vector3d dir = Perpendicular(knee - hip, axis) / length;
  const Eigen::Vector3d h = Perpendicular(hinge, axis);
  if (h.norm() > 1e-9) dir += kHingeWeight * h.normalized();
  return dir.norm() > 1e-9 ? Eigen::Vector3d(dir.normalized()) : fallback;
}

// Per limb and frame: the weight of its pin (0: none) and the pin.
using PinTable = std::vector<std::vector<std::pair<double, Eigen::Vector3d>>>;

// The feet's contact pins (none unless `pin_feet`), blended in and out over `blend` frames.
PinTable ContactPins(const Skeleton& tgt, const Alignment& m, std::span<const FootContact> contacts,
                     const Clip& clip, int blend, bool pin_feet) {
  const int frames = clip.num_frames();
  PinTable pins(m.limbs.size(), std::vector<std::pair<double, Eigen::Vector3d>>(
                                    frames, {0.0, Eigen::Vector3d::Zero()}));
  if (!pin_feet) return pins;
  for (const FootContact& k : contacts) {
    const Eigen::Vector3d pin = ContactPin(tgt, m.limbs[k.limb], clip, k);
    for (int f = std::max(0, k.first - blend); f <= std::min(frames - 1, k.last + blend); ++f) {
      const int dist = f < k.first ? k.first - f : (f > k.last ? f - k.last : 0);
      const double w = 1.0 - static_cast<double>(dist) / (blend + 1);
      if (w > pins[k.limb][f].first) pins[k.limb][f] = {w, pin};
    }
  }
  return pins;
}

// One limb of the clean-up rig: its index in Alignment::limbs, its tasks, its rest hinge.
struct PinnedLimb {
  int limb, pose_task, pole_task;
  Eigen::Vector3d hinge;  // RestHinge
};

// The rig: per pinned limb, a two-bone stage with a pose task on the hand/foot (its goal,
// and its world rotation before the clean-up, kept) and a pole task. The bake loop
// (ik::BakeJob) runs it over the clip; the per-frame callback sets the goals.
std::vector<PinnedLimb> AddPinnedLimbs(const Skeleton& tgt, const Alignment& m,
                                       const RetargetOptions& options, ik::Rig& rig,
                                       CleanUpReport& report) {
  std::vector<PinnedLimb> pinned;
  for (int li = 0; li < static_cast<int>(m.limbs.size()); ++li) {
    const Limb& l = m.limbs[li];
    if (l.foot ? !options.pin_feet : !options.pin_hands) continue;
    ik::Task pose_task;
    pose_task.type = ik::TaskType::kPose;
    pose_task.joint = l.end;
    ik::Task pole_task;
    pole_task.type = ik::TaskType::kPole;
    pole_task.joint = l.end;
    pole_task.pole_root = l.upper;
    pole_task.pole_mid = l.lower;
    const PinnedLimb p{li, rig.AddTask(pose_task), rig.AddTask(pole_task), RestHinge(tgt, m, l)};
    report.records.effector_names.push_back(tgt.name(l.end));
    report.records.effector_names.push_back(tgt.name(l.end) + ".pole");
    report.records.effector_joints.push_back(l.end);
    report.records.effector_joints.push_back(l.end);
    ik::Stage stage;
    stage.method = ik::Method::kTwoBone;
    stage.tasks = {p.pose_task, p.pole_task};
    stage.upper = l.upper;
    stage.lower = l.lower;
    rig.stages.push_back(stage);
    pinned.push_back(p);
  }
  return pinned;
}

// The callback reads the world transforms of the limbs and upper legs only: it brings those
// paths up to date itself (root first), not the whole pose.
std::vector<int> JointsRead(const Skeleton& tgt, const Alignment& m,
                            const std::vector<PinnedLimb>& pinned) {
  std::vector<int> read;
  auto add_path = [&](int joint) {
    for (int j = joint; j != Skeleton::kNoParent; j = tgt.parent(j)) read.push_back(j);
  };
  for (const PinnedLimb& p : pinned) add_path(m.limbs[p.limb].end);
  if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
    add_path(m.left_upper_leg);
    add_path(m.right_upper_leg);
  }
  std::sort(read.begin(), read.end());  // parents come before their children
  read.erase(std::unique(read.begin(), read.end()), read.end());
  return read;
}

// The goal of limb `l` on frame f, pinned with weight w > 0 at `pin` or following the source
// (`free_goal`); `*ik_blend` set when the solution is to be blended with the animated pose.
Eigen::Vector3d PinnedGoal(const Limb& l, double w, const Eigen::Vector3d& pin,
                           const Eigen::Vector3d& free_goal, bool follow, int up,
                           const std::vector<Eigen::Isometry3d>& wt, double* ik_blend) {
  Eigen::Vector3d goal = free_goal;
  if (w > 0.0 && !follow) {
    // Into and out of a contact the solution is blended with the animated pose (IK/FK
    // blend), not the goal with the animated foot: a pin out of the leg's reach held the
    // knee straight through the whole blend, which then snapped back to the animation's
    // bend on the first free frame (CMU 01_01 onto itself: 20 degrees in one frame).
    goal = pin;
    *ik_blend = w;
  } else if (w > 0.0) {
    goal = (1.0 - w) * Horizontal(free_goal, up) + w * Horizontal(pin, up);
    goal[up] = (1.0 - w) * free_goal[up] + w * pin[up];
  }
  if (w > 0.0) {
    // A straight leg puts the pin at the leg's full length: kept a hair (1e-9 of the
    // length) inside it, as LimbGoal does, so the knee keeps the pole's plane instead of
    // an arbitrary turn about a straight leg.
    const Eigen::Vector3d from_hip = goal - wt[l.upper].translation();
    const double reach =
        (1.0 - 1e-9) * ((wt[l.lower].translation() - wt[l.upper].translation()).norm() +
                        (wt[l.end].translation() - wt[l.lower].translation()).norm());
    if (from_hip.norm() > reach) {
      goal = wt[l.upper].translation() + from_hip * (reach / from_hip.norm());
    }
  }
  return goal;
}

// The pole keeps the bend of the transferred pose; near straight, the thigh's (upper
// arm's) hinge decides (forward for a straight leg, backward for a straight arm).
Eigen::Vector3d PolePosition(const Limb& l, const PinnedLimb& p,
                             const std::vector<Eigen::Isometry3d>& wt,
                             const Eigen::Vector3d& forward) {
  const Eigen::Vector3d hip = wt[l.upper].translation();
  const Eigen::Vector3d knee = wt[l.lower].translation();
  const Eigen::Vector3d ankle = wt[l.end].translation();
  const double length = (knee - hip).norm() + (ankle - knee).norm();
  return knee + PoleDirection(hip, knee, ankle, wt[l.upper].linear() * p.hinge,
                              (l.foot ? 1.0 : -1.0) * forward) *
                    length;
}

// What the clean-up reads on each frame and the targets it sets.
struct FrameGoals {
  const Skeleton& tgt;
  const Alignment& m;
  const RetargetOptions& options;
  const TransferredMotion& motion;
  const PinTable& pins;
  const std::vector<PinnedLimb>& pinned;
  const std::vector<int>& read;
  std::vector<ik::Target>& targets;
};

// Sets frame f's targets from `pose` (its world transforms of `read` brought up to date); false
// when no limb is pinned or follows on that frame.
bool SetFrameTargets(const FrameGoals& g, int f, Pose& pose) {
  const Alignment& m = g.m;
  const int up = m.target_up;
  for (const int j : g.read) UpdateJointWorld(g.tgt, pose.channels, pose.world, j);
  const std::vector<Eigen::Isometry3d>& wt = pose.world;
  Eigen::Vector3d right = Eigen::Vector3d::Zero();
  if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
    right = wt[m.right_upper_leg].translation() - wt[m.left_upper_leg].translation();
  }
  Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(Horizontal(right, up));
  if (forward.norm() > 0) forward.normalize();
  bool any = false;
  for (const PinnedLimb& p : g.pinned) {
    const Limb& l = m.limbs[p.limb];
    // Feet: pinned during contacts (IK/FK-blended in and out of them, or blending the goal
    // from the scaled source position with follow_source_between_contacts); hands: the
    // scaled source position.
    const auto& [w, pin] = g.pins[p.limb][f];
    const bool follow = !l.foot || g.options.follow_source_between_contacts;
    ik::Target& goal_target = g.targets[p.pose_task];
    ik::Target& pole_target = g.targets[p.pole_task];
    goal_target.orientation = Eigen::Quaterniond(wt[l.end].linear());
    goal_target.position = wt[l.end].translation();
    goal_target.weight = w <= 0.0 && !follow ? 0.0 : 1.0;
    goal_target.ik_blend = 1.0;
    pole_target.position = wt[l.lower].translation();
    if (goal_target.weight == 0.0) continue;
    any = true;
    const Eigen::Vector3d free_goal =
        follow ? LimbGoal(m, g.motion, f, l, wt) : wt[l.end].translation();
    goal_target.position = PinnedGoal(l, w, pin, free_goal, follow, up, wt, &goal_target.ik_blend);
    pole_target.position = PolePosition(l, p, wt, forward);
  }
  return any;
}

}  // namespace

CleanUpReport IkCleanUp(const Skeleton& tgt, const Alignment& m, const RetargetOptions& options,
                        std::span<const FootContact> contacts, TransferredMotion* motion,
                        std::vector<std::string>* warnings) {
  CleanUpReport report;
  const double dt = motion->clip.frame_time() > 0 ? motion->clip.frame_time() : 1.0 / 30.0;
  const bool ik_on = options.pin_feet || options.pin_hands;
  report.applied = ik_on && !m.limbs.empty();
  if (options.pin_feet && options.root_motion == RootMotion::kInPlace) {
    warnings->emplace_back(
        "feet pinned with in-place root motion: the hips do not travel, so pinned feet stretch "
        "the legs; use scale or keep with --pin-feet");
  }
  const int blend = std::max(0, static_cast<int>(std::lround(options.contact_blend_seconds / dt)));
  std::vector<int> unreached(m.limbs.size(), 0);
  if (report.applied) {
    // Per foot and frame: the pin (if any) and its weight.
    const PinTable pins = ContactPins(tgt, m, contacts, motion->clip, blend, options.pin_feet);
    ik::Rig rig(std::shared_ptr<const Skeleton>(std::shared_ptr<const Skeleton>(), &tgt));
    const std::vector<PinnedLimb> pinned = AddPinnedLimbs(tgt, m, options, rig, report);
    std::vector<ik::Target> targets(rig.tasks.size());
    ik::Workspace workspace;
    Clip cleaned;
    ik::BakeJob job;
    job.rig = &rig;
    job.targets = &targets;
    job.clip = &motion->clip;
    job.output = &cleaned;
    job.workspace = &workspace;
    if (options.frame_records) job.records = &report.records.frames;
    const std::vector<int> read = JointsRead(tgt, m, pinned);
    job.forward_kinematics = false;
    const FrameGoals goals{tgt, m, options, *motion, pins, pinned, read, targets};
    job.on_frame = [&goals](int f, Pose& pose, std::string*) {
      return SetFrameTargets(goals, f, pose) ? ik::FrameAction::kSolve : ik::FrameAction::kSkip;
    };
    job.on_frame_done = [&](int, const Pose&, const ik::SolveReport* solve) {
      if (solve == nullptr) return;
      for (size_t k = 0; k < solve->limbs.size() && k < pinned.size(); ++k) {
        if (!solve->limbs[k].reached) ++unreached[pinned[k].limb];
      }
    };
    if (job.Run()) {
      motion->clip = std::move(cleaned);
    } else {
      warnings->push_back("IK clean-up skipped: " + job.error);
      report.applied = false;
    }
  }
  for (int u : unreached) report.unreached += u;
  return report;
}

}  // namespace rigel::retarget
