#include "core/retarget/retarget.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/euler.h"
#include "core/ik/two_bone.h"
#include "core/pose.h"
#include "core/skeleton_utils.h"

namespace rigel::retarget {

namespace {

// Rotation taking the source's up axis onto the target's: Y-up -> Z-up is +90 degrees about X
// (+Z forward becomes -Y forward, the Blender convention), Z-up -> Y-up its inverse.
Eigen::Matrix3d UpFromSource(int source_up, int target_up) {
  if (source_up == target_up) return Eigen::Matrix3d::Identity();
  if (source_up == 1 && target_up == 2) return AxisRotation(0, kPi / 2);
  if (source_up == 2 && target_up == 1) return AxisRotation(0, -kPi / 2);
  return Eigen::Matrix3d::Identity();
}

// The rotation R minimising sum |R a_i - b_i|^2 over unit vectors (Kabsch); the smallest turn
// for one pair.
Eigen::Matrix3d BestRotation(const std::vector<Eigen::Vector3d>& from,
                             const std::vector<Eigen::Vector3d>& to) {
  if (from.empty()) return Eigen::Matrix3d::Identity();
  if (from.size() == 1) {
    return Eigen::Quaterniond::FromTwoVectors(from[0], to[0]).toRotationMatrix();
  }
  Eigen::Matrix3d h = Eigen::Matrix3d::Zero();
  for (size_t i = 0; i < from.size(); ++i)
    h += from[i].normalized() * to[i].normalized().transpose();
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1.0 : 1.0;
  return svd.matrixV() * d * svd.matrixU().transpose();
}

// Writes the rotation channels of `joint` so that its channel rotation is `rotation` (as close as
// its channels allow), continuous with `near` (a whole row).
void SetRotationChannels(const Skeleton& s, int joint, const Eigen::Matrix3d& rotation,
                         std::span<double> row, std::span<const double> near) {
  const std::span<const int> rc = s.rotation_channels(joint);
  const std::span<const ChannelType> layout = s.channels();
  if (rc.size() == 3) {
    const EulerOrder order = *s.rotation_order(joint);
    Eigen::Vector3d prev;
    for (const int c : rc) prev[ChannelAxis(layout[c])] = near[c];
    const Eigen::Vector3d xyz = MatrixToEulerNear(rotation, order, prev);
    for (const int c : rc) row[c] = xyz[ChannelAxis(layout[c])];
  } else if (rc.size() == 1) {
    const int a = ChannelAxis(layout[rc[0]]);
    const int b = (a + 1) % 3;
    const int c = (a + 2) % 3;
    const double angle =
        std::atan2(rotation(c, b) - rotation(b, c), rotation(b, b) + rotation(c, c));
    row[rc[0]] = WrapNear(angle, near[rc[0]]);
  } else if (rc.size() == 2) {
    const int a0 = ChannelAxis(layout[rc[0]]);
    const int a1 = ChannelAxis(layout[rc[1]]);
    const std::optional<EulerOrder> order = EulerOrderFromAxes({a0, a1, 3 - a0 - a1});
    if (!order) return;
    Eigen::Vector3d prev = Eigen::Vector3d::Zero();
    prev[a0] = near[rc[0]];
    prev[a1] = near[rc[1]];
    const Eigen::Vector3d xyz = MatrixToEulerNear(rotation, *order, prev);
    row[rc[0]] = xyz[a0];
    row[rc[1]] = xyz[a1];
  }
}

double AngleBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

// Extent of a pose along `up`, end sites included.
double PoseHeight(const Skeleton& s, std::span<const Eigen::Isometry3d> world, int up,
                  double* ground) {
  double lo = 1e300;
  double hi = -1e300;
  for (const Eigen::Isometry3d& w : world) {
    lo = std::min(lo, w.translation()[up]);
    hi = std::max(hi, w.translation()[up]);
  }
  for (int e = 0; e < static_cast<int>(s.end_sites().size()); ++e) {
    const double v = EndSitePosition(s, world, e)[up];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (ground) *ground = lo;
  return hi > lo ? hi - lo : 0.0;
}

// Metres per unit from a standing humanoid's height (1.7 m), snapped to a common unit within 20 %.
double EstimateUnitMetres(double height) {
  if (height <= 0.0) return 1.0;
  const double guess = 1.7 / height;
  for (const double unit : {1.0, 0.1, 0.01, 0.001, 0.0254}) {
    if (guess > unit / 1.2 && guess < unit * 1.2) return unit;
  }
  return guess;
}

Eigen::Vector3d Horizontal(const Eigen::Vector3d& v, int up) {
  Eigen::Vector3d h = v;
  h[up] = 0.0;
  return h;
}

}  // namespace

std::string_view RootMotionName(RootMotion policy) {
  switch (policy) {
    case RootMotion::kScale:
      return "scale";
    case RootMotion::kKeep:
      return "keep";
    case RootMotion::kInPlace:
      return "in-place";
  }
  return "scale";
}

std::optional<RootMotion> ParseRootMotion(std::string_view text) {
  if (text == "scale") return RootMotion::kScale;
  if (text == "keep") return RootMotion::kKeep;
  if (text == "in-place") return RootMotion::kInPlace;
  return std::nullopt;
}

// A two-bone chain of the IK pass.
struct Limb {
  int upper = -1;
  int lower = -1;
  int end = -1;
  int source_end = -1;
  bool foot = false;
  std::string name;
};

struct Bone {
  int source_a, source_b, target_a, target_b;
  bool branch;
};

struct Retargeter::Impl {
  // Per target joint: the source joint driving it (-1 = unmapped) and its alignment rotation.
  std::vector<int> source_of;
  std::vector<Eigen::Matrix3d> alignment;
  // Per target joint with one mapped child: that child's target joint and the segment to it in the
  // joint's space (aligned reference). The swing that keeps this segment on the source's segment
  // absorbs the motion of source joints between the two that the map skips.
  std::vector<int> single_child;
  std::vector<Eigen::Vector3d> child_segment;
  std::vector<double> target_reference_row;
  Eigen::Matrix3d up_from_source = Eigen::Matrix3d::Identity();
  int source_up = 1;
  int target_up = 1;
  int source_hips = -1;
  int target_hips = -1;
  // The target joint whose translation channels move the hips (-1: none).
  int translation_joint = -1;
  double scale = 1.0;  // hip-height ratio
  double target_hip_height = 1.0;
  // Height of the hips joint above the ground in each reference pose.
  double source_hips_up = 0.0;
  double target_hips_up = 0.0;
  double unit_ratio = 1.0;  // source unit / target unit
  double source_unit = 1.0;
  double target_unit = 1.0;
  bool source_unit_estimated = false;
  bool target_unit_estimated = false;
  // Ground-level points under the hips in the reference poses.
  Eigen::Vector3d source_origin = Eigen::Vector3d::Zero();
  Eigen::Vector3d target_origin = Eigen::Vector3d::Zero();
  std::vector<Bone> bones;
  std::vector<Limb> limbs;  // feet first (when found), then hands
  int left_upper_leg = -1;
  int right_upper_leg = -1;
  int mapped = 0;
};

Retargeter::~Retargeter() = default;

std::unique_ptr<Retargeter> Retargeter::Create(std::shared_ptr<const Skeleton> source,
                                               std::shared_ptr<const Skeleton> target,
                                               const BoneMap& map, const RetargetOptions& options,
                                               std::string* error, const Clip* source_clip,
                                               const Clip* target_clip) {
  auto fail = [&](const std::string& message) {
    if (error) *error = message;
    return std::unique_ptr<Retargeter>();
  };
  if (!source || !target) return fail("retarget: source or target skeleton missing");
  const Skeleton& src = *source;
  const Skeleton& tgt = *target;
  std::unique_ptr<Retargeter> r(new Retargeter());
  r->source_ = source;
  r->target_ = target;
  r->options_ = options;
  r->map_ = map.entries.empty() ? AutoMap(src, tgt) : map;
  if (map.entries.empty()) r->map_.origin = "automatic map";
  r->impl_ = std::make_unique<Impl>();
  Impl& m = *r->impl_;
  const int ns = src.num_joints();
  const int nt = tgt.num_joints();

  // Map entries -> joint pairs.
  const std::string where = r->map_.origin.empty() ? std::string("bone map") : r->map_.origin;
  auto at = [&](const BoneMapEntry& e) {
    return e.line > 0 ? where + ":" + std::to_string(e.line) : where;
  };
  m.source_of.assign(nt, -1);
  m.alignment.assign(nt, Eigen::Matrix3d::Identity());
  std::vector<Eigen::Matrix3d> offset(nt, Eigen::Matrix3d::Identity());
  HumanoidJoints roles = ClassifyHumanoid(tgt);
  std::array<bool, kRoleCount> role_from_map{};
  int hips_from_map = -1;
  for (const BoneMapEntry& e : r->map_.entries) {
    const int s = src.FindJoint(e.source);
    const int t = tgt.FindJoint(e.target);
    if (s < 0)
      return fail(at(e) + ": source joint '" + e.source + "' not found in the source skeleton");
    if (t < 0)
      return fail(at(e) + ": target joint '" + e.target + "' not found in the target skeleton");
    if (m.source_of[t] >= 0) {
      return fail(at(e) + ": target joint '" + e.target + "' is mapped twice");
    }
    m.source_of[t] = s;
    offset[t] = e.offset.normalized().toRotationMatrix();
    if (e.role) {
      roles[*e.role] = t;
      role_from_map[static_cast<int>(*e.role)] = true;
      if (*e.role == Role::kHips) hips_from_map = t;
    }
    ++m.mapped;
  }
  (void)role_from_map;
  // Hips: the map's, else the classified one if mapped, else the shallowest mapped target joint.
  std::vector<int> depth(nt, 0);
  for (int j = 0; j < nt; ++j) depth[j] = tgt.parent(j) >= 0 ? depth[tgt.parent(j)] + 1 : 0;
  m.target_hips = hips_from_map;
  if (m.target_hips < 0 && roles[Role::kHips] >= 0 && m.source_of[roles[Role::kHips]] >= 0) {
    m.target_hips = roles[Role::kHips];
  }
  if (m.target_hips < 0) {
    for (int j = 0; j < nt; ++j) {
      if (m.source_of[j] >= 0 && (m.target_hips < 0 || depth[j] < depth[m.target_hips])) {
        m.target_hips = j;
      }
    }
  }
  if (m.target_hips < 0) return fail(where + ": no joint is mapped (the hips at least must be)");
  m.source_hips = m.source_of[m.target_hips];
  roles[Role::kHips] = m.target_hips;

  // Reference rows.
  auto reference_row = [&](const Skeleton& s, const Clip* clip, int frame, const char* which,
                           std::vector<double>* row) -> std::string {
    row->assign(s.num_channels(), 0.0);
    if (frame < 0) return "";
    if (!clip)
      return std::string(which) + " reference frame " + std::to_string(frame) +
             " asked for but no " + which + " clip was given";
    if (!clip->matches(s)) return std::string(which) + " clip does not match its skeleton";
    if (frame >= clip->num_frames()) {
      return std::string(which) + " reference frame " + std::to_string(frame) +
             " out of range (the clip has " + std::to_string(clip->num_frames()) + " frames)";
    }
    const auto f = clip->frame(frame);
    row->assign(f.begin(), f.end());
    return "";
  };
  std::vector<double> src_row;
  if (std::string e =
          reference_row(src, source_clip, options.source_reference_frame, "source", &src_row);
      !e.empty()) {
    return fail("retarget: " + e);
  }
  if (std::string e = reference_row(tgt, target_clip, options.target_reference_frame, "target",
                                    &m.target_reference_row);
      !e.empty()) {
    return fail("retarget: " + e);
  }
  std::vector<Eigen::Isometry3d> ws(ns);
  std::vector<Eigen::Isometry3d> wt(nt);
  ForwardKinematics(src, src_row, ws);
  ForwardKinematics(tgt, m.target_reference_row, wt);
  m.source_up = options.source_up_axis >= 1 ? options.source_up_axis : GuessUpAxis(JointBounds(ws));
  m.target_up = options.target_up_axis >= 1 ? options.target_up_axis : GuessUpAxis(JointBounds(wt));
  m.up_from_source = UpFromSource(m.source_up, m.target_up);
  const Eigen::Matrix3d& c = m.up_from_source;

  // Rest-pose alignment: bend the target's reference pose so its bones point along the source's.
  std::vector<Eigen::Isometry3d> local(nt);
  for (int j = 0; j < nt; ++j) local[j] = LocalTransform(tgt, j, m.target_reference_row);
  auto fk = [&]() {
    for (int j = 0; j < nt; ++j) {
      wt[j] = tgt.parent(j) < 0 ? local[j] : wt[tgt.parent(j)] * local[j];
    }
  };
  std::vector<int> mapped_parent(nt, -1);  // nearest mapped ancestor of each target joint
  std::vector<std::vector<int>> mapped_children(nt);
  for (int j = 0; j < nt; ++j) {
    for (int p = tgt.parent(j); p >= 0; p = tgt.parent(p)) {
      if (m.source_of[p] >= 0) {
        mapped_parent[j] = p;
        break;
      }
    }
    if (m.source_of[j] >= 0 && mapped_parent[j] >= 0)
      mapped_children[mapped_parent[j]].push_back(j);
  }
  double ground_s = 0.0;
  const double height_s = PoseHeight(src, ws, m.source_up, &ground_s);
  fk();
  const double height_t0 = PoseHeight(tgt, wt, m.target_up, nullptr);
  const double eps_s = 1e-6 * std::max(height_s, 1e-9);
  const double eps_t = 1e-6 * std::max(height_t0, 1e-9);
  for (int t = 0; t < nt; ++t) {
    const int s = m.source_of[t];
    if (s < 0) continue;
    fk();
    std::vector<Eigen::Vector3d> from;
    std::vector<Eigen::Vector3d> to;
    // Segments to the mapped children; a zero-length one on either side is replaced by the
    // segments to that child's own mapped children.
    std::vector<int> stack(mapped_children[t].rbegin(), mapped_children[t].rend());
    while (!stack.empty()) {
      const int b = stack.back();
      stack.pop_back();
      const Eigen::Vector3d dt = wt[b].translation() - wt[t].translation();
      const Eigen::Vector3d ds = c * (ws[m.source_of[b]].translation() - ws[s].translation());
      if (dt.norm() < eps_t || ds.norm() < eps_s) {
        stack.insert(stack.end(), mapped_children[b].rbegin(), mapped_children[b].rend());
        continue;
      }
      from.push_back(dt.normalized());
      to.push_back(ds.normalized());
    }
    const Eigen::Matrix3d turn = BestRotation(from, to);
    const Eigen::Matrix3d parent_rot = tgt.parent(t) < 0
                                           ? Eigen::Matrix3d(Eigen::Matrix3d::Identity())
                                           : Eigen::Matrix3d(wt[tgt.parent(t)].linear());
    local[t].linear() = parent_rot.transpose() * turn * wt[t].linear();
  }
  fk();
  for (int t = 0; t < nt; ++t) {
    const int s = m.source_of[t];
    if (s < 0) continue;
    m.alignment[t] = (c * ws[s].linear()).transpose() * wt[t].linear() * offset[t];
  }
  m.single_child.assign(nt, -1);
  m.child_segment.assign(nt, Eigen::Vector3d::Zero());
  for (int t = 0; t < nt; ++t) {
    if (m.source_of[t] < 0 || mapped_children[t].size() != 1) continue;
    const int b = mapped_children[t][0];
    const Eigen::Vector3d seg = wt[t].inverse() * wt[b].translation();
    const double ls = (ws[m.source_of[b]].translation() - ws[m.source_of[t]].translation()).norm();
    if (seg.norm() > 1e-4 * height_t0 && ls > 1e-4 * height_s) {
      m.single_child[t] = b;
      m.child_segment[t] = seg;
    }
  }
  // Bones measured by the metrics.
  for (int t = 0; t < nt; ++t) {
    for (const int b : mapped_children[t]) {
      const double lt = (wt[b].translation() - wt[t].translation()).norm();
      const double ls =
          (ws[m.source_of[b]].translation() - ws[m.source_of[t]].translation()).norm();
      if (lt > 1e-4 * height_t0 && ls > 1e-4 * height_s) {
        m.bones.push_back({m.source_of[t], m.source_of[b], t, b, mapped_children[t].size() > 1});
      }
    }
  }

  // Proportions, origins and units (target measured in its aligned reference pose). The hip
  // height is the height of the hip joints (the upper legs) when both skeletons have them, else
  // of the hips joint.
  double ground_t = 0.0;
  const double height_t = PoseHeight(tgt, wt, m.target_up, &ground_t);
  auto hip_height = [](const std::vector<Eigen::Isometry3d>& w, int hips, int left, int right,
                       int up_axis, double ground) {
    if (left >= 0 && right >= 0) {
      return 0.5 * (w[left].translation()[up_axis] + w[right].translation()[up_axis]) - ground;
    }
    return w[hips].translation()[up_axis] - ground;
  };
  const int src_left =
      roles[Role::kLeftUpperLeg] >= 0 ? m.source_of[roles[Role::kLeftUpperLeg]] : -1;
  const int src_right =
      roles[Role::kRightUpperLeg] >= 0 ? m.source_of[roles[Role::kRightUpperLeg]] : -1;
  const bool legs = src_left >= 0 && src_right >= 0;
  const double hip_s = hip_height(ws, m.source_hips, legs ? src_left : -1, legs ? src_right : -1,
                                  m.source_up, ground_s);
  const double hip_t = hip_height(wt, m.target_hips, legs ? roles[Role::kLeftUpperLeg] : -1,
                                  legs ? roles[Role::kRightUpperLeg] : -1, m.target_up, ground_t);
  if (hip_s > 0.0 && hip_t > 0.0) {
    m.scale = hip_t / hip_s;
    m.target_hip_height = hip_t;
  } else {
    r->setup_warnings_.push_back("hips at or below the ground in a reference pose: scale 1 used");
    m.target_hip_height = std::max(height_t * 0.5, 1e-9);
  }
  m.source_origin = ws[m.source_hips].translation();
  m.source_origin[m.source_up] = ground_s;
  m.target_origin = wt[m.target_hips].translation();
  m.target_origin[m.target_up] = ground_t;
  m.source_hips_up = ws[m.source_hips].translation()[m.source_up] - ground_s;
  m.target_hips_up = wt[m.target_hips].translation()[m.target_up] - ground_t;
  m.source_unit = options.source_unit_metres;
  m.target_unit = options.target_unit_metres;
  if (m.source_unit <= 0.0) {
    m.source_unit = EstimateUnitMetres(height_s);
    m.source_unit_estimated = true;
  }
  if (m.target_unit <= 0.0) {
    m.target_unit = EstimateUnitMetres(height_t);
    m.target_unit_estimated = true;
  }
  m.unit_ratio = m.source_unit / m.target_unit;

  // The joint that carries the hips' translation.
  for (int j = m.target_hips; j >= 0; j = tgt.parent(j)) {
    if (tgt.translation_channel(j, 0) >= 0 || tgt.translation_channel(j, 1) >= 0 ||
        tgt.translation_channel(j, 2) >= 0) {
      m.translation_joint = j;
      break;
    }
  }
  if (m.translation_joint < 0) {
    r->setup_warnings_.push_back("target joint '" + tgt.name(m.target_hips) +
                                 "' and its ancestors have no position channels: root motion "
                                 "dropped");
  }

  // IK chains (feet first, then hands) and the legs used for the facing direction.
  m.left_upper_leg = roles[Role::kLeftUpperLeg];
  m.right_upper_leg = roles[Role::kRightUpperLeg];
  struct LimbRoles {
    Role upper, lower, end;
    bool foot;
    const char* name;
  };
  const LimbRoles limb_roles[] = {
      {Role::kLeftUpperLeg, Role::kLeftLowerLeg, Role::kLeftFoot, true, "left leg"},
      {Role::kRightUpperLeg, Role::kRightLowerLeg, Role::kRightFoot, true, "right leg"},
      {Role::kLeftUpperArm, Role::kLeftLowerArm, Role::kLeftHand, false, "left arm"},
      {Role::kRightUpperArm, Role::kRightLowerArm, Role::kRightHand, false, "right arm"},
  };
  for (const LimbRoles& lr : limb_roles) {
    Limb limb{roles[lr.upper], roles[lr.lower], roles[lr.end], -1, lr.foot, lr.name};
    const bool wanted = lr.foot ? options.pin_feet : options.pin_hands;
    if (limb.upper < 0 || limb.lower < 0 || limb.end < 0 || m.source_of[limb.end] < 0) {
      if (wanted) {
        const std::string what = std::string(lr.name) + " (" + std::string(RoleName(lr.upper)) +
                                 ", " + std::string(RoleName(lr.lower)) + ", " +
                                 std::string(RoleName(lr.end)) + ")";
        if (lr.foot) return fail(where + ": --pin-feet needs the target's " + what + " mapped");
        r->setup_warnings_.push_back("hand IK skipped: the target's " + what + " is not mapped");
      }
      continue;
    }
    limb.source_end = m.source_of[limb.end];
    std::vector<double> row = m.target_reference_row;
    ik::TwoBoneJob job;
    job.skeleton = &tgt;
    job.channels = row;
    job.world = wt;
    job.upper = limb.upper;
    job.lower = limb.lower;
    job.end = limb.end;
    std::string why;
    ForwardKinematics(tgt, row, wt);
    if (!job.Validate(&why)) {
      if (wanted) r->setup_warnings_.push_back(std::string(lr.name) + " IK skipped: " + why);
      continue;
    }
    m.limbs.push_back(limb);
  }
  return r;
}

RetargetResult Retargeter::Run(const Clip& clip) const {
  const Skeleton& src = *source_;
  const Skeleton& tgt = *target_;
  const Impl& m = *impl_;
  RetargetResult result;
  if (!clip.matches(src)) {
    throw std::invalid_argument("retarget: clip has " + std::to_string(clip.num_channels()) +
                                " channels, the source skeleton " +
                                std::to_string(src.num_channels()));
  }
  const int frames = clip.num_frames();
  const int ns = src.num_joints();
  const int nt = tgt.num_joints();
  const int up = m.target_up;
  const Eigen::Matrix3d& c = m.up_from_source;
  result.clip = Clip(frames, tgt.num_channels(), clip.frame_time());
  result.clip.set_name(clip.name());
  result.warnings = setup_warnings_;

  // Pass 1: rotations and hips, per frame; keep the source joint positions for later passes.
  std::vector<Eigen::Vector3d> source_pos(static_cast<size_t>(frames) * ns);
  std::vector<Eigen::Vector3d> hips_goal(frames);
  std::vector<Eigen::Isometry3d> ws(ns);
  std::vector<Eigen::Isometry3d> wt(nt);
  std::vector<Eigen::Matrix3d> wrot(nt);
  std::vector<double> prev = m.target_reference_row;
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(src, clip.frame(f), ws);
    for (int j = 0; j < ns; ++j) source_pos[static_cast<size_t>(f) * ns + j] = ws[j].translation();
    std::span<double> row = result.clip.frame(f);
    std::copy(m.target_reference_row.begin(), m.target_reference_row.end(), row.begin());
    for (int j = 0; j < nt; ++j) {
      const int p = tgt.parent(j);
      const Eigen::Matrix3d parent_rot =
          p < 0 ? Eigen::Matrix3d(Eigen::Matrix3d::Identity()) : wrot[p];
      const int s = m.source_of[j];
      if (s >= 0) {
        Eigen::Matrix3d want = c * ws[s].linear() * m.alignment[j];
        if (m.single_child[j] >= 0) {
          const Eigen::Vector3d now = want * m.child_segment[j];
          const Eigen::Vector3d goal =
              c * (ws[m.source_of[m.single_child[j]]].translation() - ws[s].translation());
          want = Eigen::Quaterniond::FromTwoVectors(now, goal).toRotationMatrix() * want;
        }
        const Eigen::Matrix3d channel_rot =
            tgt.rest_orientation(j).toRotationMatrix().transpose() * parent_rot.transpose() * want;
        SetRotationChannels(tgt, j, channel_rot, row, prev);
      }
      wrot[j] = parent_rot * LocalRotation(tgt, j, row);
    }
    // Hips placement by the root-motion policy.
    const Eigen::Vector3d d = c * (ws[m.source_hips].translation() - m.source_origin);
    Eigen::Vector3d goal = m.target_origin;
    goal[up] += m.target_hips_up + m.scale * (d[up] - m.source_hips_up);
    const Eigen::Vector3d dh = Horizontal(d, up);
    if (options_.root_motion == RootMotion::kScale) goal += m.scale * dh;
    if (options_.root_motion == RootMotion::kKeep) goal += m.unit_ratio * dh;
    hips_goal[f] = goal;
    if (m.translation_joint >= 0) {
      ForwardKinematics(tgt, row, wt);
      const int a = m.translation_joint;
      const Eigen::Vector3d delta = goal - wt[m.target_hips].translation();
      const Eigen::Vector3d local_delta =
          tgt.parent(a) < 0 ? delta
                            : Eigen::Vector3d(wt[tgt.parent(a)].linear().transpose() * delta);
      for (int axis = 0; axis < 3; ++axis) {
        const int ch = tgt.translation_channel(a, axis);
        if (ch >= 0) row[ch] += local_delta[axis];
      }
    }
    std::copy(row.begin(), row.end(), prev.begin());
  }
  auto spos = [&](int f, int j) -> const Eigen::Vector3d& {
    return source_pos[static_cast<size_t>(f) * ns + j];
  };
  // Goal of a source joint in the output (follows the placed hips) and in the scaled source world
  // (independent of the root-motion policy; used to find contacts).
  auto goal_of = [&](int f, int s) -> Eigen::Vector3d {
    Eigen::Vector3d g =
        Horizontal(hips_goal[f] + m.scale * (c * (spos(f, s) - spos(f, m.source_hips))), up);
    g[up] = m.target_origin[up] + m.scale * (c * (spos(f, s) - m.source_origin))[up];
    return g;
  };
  auto scaled_of = [&](int f, int s) -> Eigen::Vector3d {
    return m.target_origin + m.scale * (c * (spos(f, s) - m.source_origin));
  };

  // Pass 2: foot contacts on the scaled source.
  struct Contact {
    int limb, first, last;
    Eigen::Vector3d pin;
  };
  std::vector<Contact> contacts;
  const double dt = clip.frame_time() > 0 ? clip.frame_time() : 1.0 / 30.0;
  {
    double ground = 1e300;
    for (const Limb& l : m.limbs) {
      if (!l.foot) continue;
      for (int f = 0; f < frames; ++f) ground = std::min(ground, scaled_of(f, l.source_end)[up]);
    }
    for (int li = 0; li < static_cast<int>(m.limbs.size()); ++li) {
      const Limb& l = m.limbs[li];
      if (!l.foot) continue;
      int start = -1;
      for (int f = 0; f <= frames; ++f) {
        bool in = false;
        if (f < frames) {
          const Eigen::Vector3d p = scaled_of(f, l.source_end);
          const int f0 = std::max(f - 1, 0);
          const int f1 = std::min(f + 1, frames - 1);
          const double speed =
              f1 > f0 ? Horizontal(scaled_of(f1, l.source_end) - scaled_of(f0, l.source_end), up)
                                .norm() /
                            ((f1 - f0) * dt)
                      : 0.0;
          in = p[up] - ground < options_.contact_height * m.target_hip_height &&
               speed < options_.contact_speed * m.target_hip_height;
        }
        if (in && start < 0) start = f;
        if (!in && start >= 0) {
          if (f - start >= std::max(options_.contact_min_frames, 1)) {
            Eigen::Vector3d mean = Eigen::Vector3d::Zero();
            for (int g = start; g < f; ++g) mean += goal_of(g, l.source_end);
            contacts.push_back({li, start, f - 1, mean / (f - start)});
          }
          start = -1;
        }
      }
    }
  }

  // Pass 3: IK clean-up.
  const bool ik_on = options_.pin_feet || options_.pin_hands;
  result.metrics.ik_applied = ik_on && !m.limbs.empty();
  if (options_.pin_feet && options_.root_motion == RootMotion::kInPlace) {
    result.warnings.push_back(
        "feet pinned with in-place root motion: the hips do not travel, so pinned feet stretch "
        "the legs; use scale or keep with --pin-feet");
  }
  const int blend = std::max(0, static_cast<int>(std::lround(options_.contact_blend_seconds / dt)));
  std::vector<int> unreached(m.limbs.size(), 0);
  if (result.metrics.ik_applied) {
    // Per foot and frame: the pin (if any) and its weight.
    std::vector<std::vector<std::pair<double, Eigen::Vector3d>>> pins(
        m.limbs.size(),
        std::vector<std::pair<double, Eigen::Vector3d>>(frames, {0.0, Eigen::Vector3d::Zero()}));
    if (options_.pin_feet) {
      for (const Contact& k : contacts) {
        for (int f = std::max(0, k.first - blend); f <= std::min(frames - 1, k.last + blend); ++f) {
          const int dist = f < k.first ? k.first - f : (f > k.last ? f - k.last : 0);
          const double w = 1.0 - static_cast<double>(dist) / (blend + 1);
          if (w > pins[k.limb][f].first) pins[k.limb][f] = {w, k.pin};
        }
      }
    }
    for (int f = 0; f < frames; ++f) {
      std::span<double> row = result.clip.frame(f);
      ForwardKinematics(tgt, row, wt);
      Eigen::Vector3d right = Eigen::Vector3d::Zero();
      if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
        right = wt[m.right_upper_leg].translation() - wt[m.left_upper_leg].translation();
      }
      Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(Horizontal(right, up));
      if (forward.norm() > 0) forward.normalize();
      for (int li = 0; li < static_cast<int>(m.limbs.size()); ++li) {
        const Limb& l = m.limbs[li];
        if (l.foot ? !options_.pin_feet : !options_.pin_hands) continue;
        // Feet: pinned during contacts (blending from the FK position, or from the scaled source
        // position with follow_source_between_contacts); hands: the scaled source position.
        const auto& [w, pin] = pins[li][f];
        const Eigen::Vector3d source_goal = goal_of(f, l.source_end);
        const bool follow = !l.foot || options_.follow_source_between_contacts;
        if (w <= 0.0 && !follow) continue;
        const Eigen::Vector3d free_goal = follow ? source_goal : wt[l.end].translation();
        Eigen::Vector3d goal = free_goal;
        if (w > 0.0) {
          goal = (1.0 - w) * Horizontal(free_goal, up) + w * Horizontal(pin, up);
          goal[up] = (1.0 - w) * free_goal[up] + w * source_goal[up];
        }
        const Eigen::Vector3d hip = wt[l.upper].translation();
        const Eigen::Vector3d knee = wt[l.lower].translation();
        const Eigen::Vector3d ankle = wt[l.end].translation();
        const double length = (knee - hip).norm() + (ankle - knee).norm();
        const Eigen::Vector3d bend = knee - 0.5 * (hip + ankle);
        Eigen::Vector3d pole =
            bend.norm() > 1e-3 * length
                ? Eigen::Vector3d(knee + bend.normalized() * length)
                : Eigen::Vector3d(knee + (l.foot ? 1.0 : -1.0) * forward * length);
        const Eigen::Matrix3d end_rot = wt[l.end].linear();
        bool reached = true;
        ik::TwoBoneJob job;
        job.skeleton = &tgt;
        job.channels = row;
        job.world = wt;
        job.upper = l.upper;
        job.lower = l.lower;
        job.end = l.end;
        job.target = goal;
        job.pole = pole;
        job.use_pole = true;
        job.reached = &reached;
        if (!job.Run()) continue;
        if (!reached) ++unreached[li];
        ForwardKinematics(tgt, row, wt, l.upper);
        // Keep the hand/foot's world orientation.
        const int p = tgt.parent(l.end);
        const Eigen::Matrix3d channel_rot =
            tgt.rest_orientation(l.end).toRotationMatrix().transpose() *
            wt[p].linear().transpose() * end_rot;
        SetRotationChannels(tgt, l.end, channel_rot, row, row);
        ForwardKinematics(tgt, row, wt, l.end);
      }
    }
  }

  // Pass 4: metrics.
  RetargetMetrics& q = result.metrics;
  q.frames = frames;
  q.mapped_joints = m.mapped;
  q.hip_height_ratio = m.scale;
  q.source_unit_metres = m.source_unit;
  q.target_unit_metres = m.target_unit;
  q.source_unit_estimated = m.source_unit_estimated;
  q.target_unit_estimated = m.target_unit_estimated;
  q.source_up_axis = m.source_up;
  q.target_up_axis = m.target_up;
  const double mm = m.target_unit * 1000.0;
  std::vector<double> seg_sum(m.bones.size(), 0.0);
  std::vector<double> seg_max(m.bones.size(), 0.0);
  double eff_sum[2] = {0.0, 0.0};
  long eff_count[2] = {0, 0};
  double eff_max[2] = {0.0, 0.0};
  std::vector<std::vector<Eigen::Vector3d>> limb_pos(m.limbs.size(),
                                                     std::vector<Eigen::Vector3d>(frames));
  const bool limits = static_cast<int>(options_.limit_min.size()) == tgt.num_channels() &&
                      static_cast<int>(options_.limit_max.size()) == tgt.num_channels();
  if (!options_.limit_min.empty() && !limits) {
    result.warnings.push_back("channel limits ignored: expected " +
                              std::to_string(tgt.num_channels()) + " entries");
  }
  for (int f = 0; f < frames; ++f) {
    std::span<const double> row = result.clip.frame(f);
    ForwardKinematics(tgt, row, wt);
    for (size_t bi = 0; bi < m.bones.size(); ++bi) {
      const Bone& b = m.bones[bi];
      const Eigen::Vector3d dtv = wt[b.target_b].translation() - wt[b.target_a].translation();
      const Eigen::Vector3d dsv = c * (spos(f, b.source_b) - spos(f, b.source_a));
      const double angle = AngleBetween(dtv, dsv) * kDegPerRad;
      seg_sum[bi] += angle;
      seg_max[bi] = std::max(seg_max[bi], angle);
    }
    for (size_t li = 0; li < m.limbs.size(); ++li) {
      const Limb& l = m.limbs[li];
      limb_pos[li][f] = wt[l.end].translation();
      const double e = (wt[l.end].translation() - goal_of(f, l.source_end)).norm() * mm;
      eff_sum[l.foot ? 0 : 1] += e;
      ++eff_count[l.foot ? 0 : 1];
      eff_max[l.foot ? 0 : 1] = std::max(eff_max[l.foot ? 0 : 1], e);
    }
    if (limits) {
      for (int ch = 0; ch < tgt.num_channels(); ++ch) {
        if (row[ch] < options_.limit_min[ch] || row[ch] > options_.limit_max[ch]) {
          ++q.joint_limit_violations;
        }
      }
    }
    // Knees bent backwards.
    if (m.left_upper_leg >= 0 && m.right_upper_leg >= 0) {
      const Eigen::Vector3d right =
          Horizontal(wt[m.right_upper_leg].translation() - wt[m.left_upper_leg].translation(), up);
      const Eigen::Vector3d forward = Eigen::Vector3d::Unit(up).cross(right);
      for (const Limb& l : m.limbs) {
        if (!l.foot || forward.norm() == 0.0) continue;
        const Eigen::Vector3d hip = wt[l.upper].translation();
        const Eigen::Vector3d knee = wt[l.lower].translation();
        const Eigen::Vector3d ankle = wt[l.end].translation();
        const double flexion = AngleBetween(knee - hip, ankle - knee) * kDegPerRad;
        const Eigen::Vector3d axis = (ankle - hip).normalized();
        const Eigen::Vector3d bend = (knee - hip) - axis * axis.dot(knee - hip);
        if (bend.dot(forward) < 0.0 && flexion > options_.knee_hyperextension_degrees) {
          ++q.knee_hyperextension_frames;
        }
      }
    }
  }
  q.joint_limit_violations += q.knee_hyperextension_frames;
  double bone_sum = 0.0;
  double branch_sum = 0.0;
  int bone_count = 0;
  int branch_count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t bi = 0; bi < m.bones.size(); ++bi) {
      const Bone& b = m.bones[bi];
      if (b.branch != (pass == 1)) continue;
      RetargetMetrics::Segment seg;
      seg.name = tgt.name(b.target_a) + " -> " + tgt.name(b.target_b);
      seg.branch = b.branch;
      seg.mean_deg = frames ? seg_sum[bi] / frames : 0.0;
      seg.max_deg = seg_max[bi];
      if (b.branch) {
        branch_sum += seg_sum[bi];
        ++branch_count;
        q.branch_direction_max_deg = std::max(q.branch_direction_max_deg, seg.max_deg);
      } else {
        bone_sum += seg_sum[bi];
        ++bone_count;
        if (seg.max_deg >= q.bone_direction_max_deg) {
          q.bone_direction_max_deg = seg.max_deg;
          q.bone_direction_worst = seg.name;
        }
      }
      q.segments.push_back(std::move(seg));
    }
  }
  q.bones = bone_count;
  q.bone_direction_mean_deg = bone_count && frames ? bone_sum / (bone_count * frames) : 0.0;
  q.branch_direction_mean_deg = branch_count && frames ? branch_sum / (branch_count * frames) : 0.0;
  q.foot_error_mean_mm = eff_count[0] ? eff_sum[0] / static_cast<double>(eff_count[0]) : 0.0;
  q.foot_error_max_mm = eff_max[0];
  q.hand_error_mean_mm = eff_count[1] ? eff_sum[1] / static_cast<double>(eff_count[1]) : 0.0;
  q.hand_error_max_mm = eff_max[1];
  double slide_sum = 0.0;
  for (const Contact& k : contacts) {
    ++q.contacts;
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int f = k.first; f <= k.last; ++f) mean += limb_pos[k.limb][f];
    mean /= (k.last - k.first + 1);
    for (int f = k.first; f <= k.last; ++f) {
      const double d = Horizontal(limb_pos[k.limb][f] - mean, up).norm() * mm;
      slide_sum += d;
      ++q.contact_frames;
      q.foot_slide_max_mm = std::max(q.foot_slide_max_mm, d);
    }
  }
  q.foot_slide_mean_mm = q.contact_frames ? slide_sum / q.contact_frames : 0.0;
  for (int u : unreached) q.ik_unreached += u;
  return result;
}

RetargetResult Retarget(std::shared_ptr<const Skeleton> source, const Clip& clip,
                        std::shared_ptr<const Skeleton> target, const BoneMap& map,
                        const RetargetOptions& options, const Clip* target_clip) {
  std::string error;
  std::unique_ptr<Retargeter> r = Retargeter::Create(std::move(source), std::move(target), map,
                                                     options, &error, &clip, target_clip);
  if (!r) throw std::invalid_argument(error);
  return r->Run(clip);
}

}  // namespace rigel::retarget
