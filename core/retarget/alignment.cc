#include "core/retarget/alignment.h"

#include <Eigen/SVD>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "core/body.h"
#include "core/euler.h"
#include "core/pose.h"
#include "core/skeleton_utils.h"

namespace rigel::retarget {

namespace {

// The up axis (1 Y, 2 Z) of a skeleton in its reference pose (`row`, `world`) when the caller did
// not give it: the body's when it decides (a humanoid's head over its feet, core/body.h), else the
// larger extent of the body's joints along Y or Z.
int InferUpAxis(const Skeleton& skeleton, const std::vector<double>& row,
                const std::vector<Eigen::Isometry3d>& world) {
  Clip pose(1, skeleton.num_channels(), 1.0);
  std::copy(row.begin(), row.end(), pose.frame(0).begin());
  const BodyMeasure body = MeasureBody(skeleton, &pose);
  if (body.up_decided && body.up.sign > 0 && body.up.axis >= 1) return body.up.axis;
  std::vector<Eigen::Isometry3d> joints;
  for (const int j : BodyJoints(skeleton)) joints.push_back(world[j]);
  if (joints.empty()) return GuessUpAxis(JointBounds(world));
  return GuessUpAxis(JointBounds(joints));
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

// The rotation taking from[primary] exactly onto to[primary] (the smallest turn), then turned
// about that direction to best fit the other pairs (least squares on their projections across
// it): the spine's direction out of a branching joint is kept whatever the branches' angles.
Eigen::Matrix3d SpineFirstRotation(const std::vector<Eigen::Vector3d>& from,
                                   const std::vector<Eigen::Vector3d>& to, size_t primary) {
  const Eigen::Matrix3d swing =
      Eigen::Quaterniond::FromTwoVectors(from[primary], to[primary]).toRotationMatrix();
  const Eigen::Vector3d axis = to[primary].normalized();
  double c = 0.0;
  double s = 0.0;
  for (size_t i = 0; i < from.size(); ++i) {
    if (i == primary) continue;
    Eigen::Vector3d a = swing * from[i].normalized();
    Eigen::Vector3d b = to[i].normalized();
    a -= axis.dot(a) * axis;
    b -= axis.dot(b) * axis;
    c += a.dot(b);
    s += axis.dot(a.cross(b));
  }
  if (c == 0.0 && s == 0.0) return swing;
  return Eigen::AngleAxisd(std::atan2(s, c), axis).toRotationMatrix() * swing;
}

// Reads the map's pairs into `m` (source_of, mapped) and `offset`, and the roles it states into
// `roles` (`*hips_from_map`: the joint it calls the hips). An error names the map's line.
std::string ApplyBoneMap(const Skeleton& src, const Skeleton& tgt, const BoneMap& map,
                         const std::string& where, Alignment& m,
                         std::vector<Eigen::Matrix3d>& offset, HumanoidJoints& roles,
                         int* hips_from_map) {
  auto at = [&](const BoneMapEntry& e) {
    return e.line > 0 ? where + ":" + std::to_string(e.line) : where;
  };
  for (const BoneMapEntry& e : map.entries) {
    const int s = src.FindJoint(e.source);
    const int t = tgt.FindJoint(e.target);
    if (s < 0) return at(e) + ": source joint '" + e.source + "' not found in the source skeleton";
    if (t < 0) return at(e) + ": target joint '" + e.target + "' not found in the target skeleton";
    if (m.source_of[t] >= 0) {
      return at(e) + ": target joint '" + e.target + "' is mapped twice";
    }
    m.source_of[t] = s;
    offset[t] = e.offset.normalized().toRotationMatrix();
    if (e.role) {
      roles[*e.role] = t;
      if (*e.role == Role::kHips) *hips_from_map = t;
    }
    ++m.mapped;
  }
  return "";
}

// Hips: the map's, else the classified one if mapped, else the shallowest mapped target joint.
std::string ChooseHips(const Skeleton& tgt, int hips_from_map, const std::string& where,
                       HumanoidJoints& roles, Alignment& m) {
  const int nt = tgt.num_joints();
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
  if (m.target_hips < 0) return where + ": no joint is mapped (the hips at least must be)";
  m.source_hips = m.source_of[m.target_hips];
  roles[Role::kHips] = m.target_hips;
  return "";
}

// `clip`'s frame `frame` as a channel row of `s` (zeros, the rest pose, when frame < 0).
std::string ReferenceRow(const Skeleton& s, const Clip* clip, int frame, const char* which,
                         std::vector<double>* row) {
  row->assign(s.num_channels(), 0.0);
  if (frame < 0) return "";
  if (!clip)
    return std::string(which) + " reference frame " + std::to_string(frame) + " asked for but no " +
           which + " clip was given";
  if (!clip->matches(s)) return std::string(which) + " clip does not match its skeleton";
  if (frame >= clip->num_frames()) {
    return std::string(which) + " reference frame " + std::to_string(frame) +
           " out of range (the clip has " + std::to_string(clip->num_frames()) + " frames)";
  }
  const auto f = clip->frame(frame);
  row->assign(f.begin(), f.end());
  return "";
}

// Both reference poses (`src_row` and `m.target_reference_row`, their world transforms `ws` and
// `wt`), the up axes and the rotation between them.
std::string ReferencePoses(const Skeleton& src, const Skeleton& tgt, const RetargetOptions& options,
                           const Clip* source_clip, const Clip* target_clip, Alignment& m,
                           std::vector<double>& src_row, std::vector<Eigen::Isometry3d>& ws,
                           std::vector<Eigen::Isometry3d>& wt) {
  if (std::string e =
          ReferenceRow(src, source_clip, options.source_reference_frame, "source", &src_row);
      !e.empty()) {
    return "retarget: " + e;
  }
  if (std::string e = ReferenceRow(tgt, target_clip, options.target_reference_frame, "target",
                                   &m.target_reference_row);
      !e.empty()) {
    return "retarget: " + e;
  }
  ForwardKinematics(src, src_row, ws);
  ForwardKinematics(tgt, m.target_reference_row, wt);
  m.source_up =
      options.source_up_axis >= 1 ? options.source_up_axis : InferUpAxis(src, src_row, ws);
  m.target_up = options.target_up_axis >= 1 ? options.target_up_axis
                                            : InferUpAxis(tgt, m.target_reference_row, wt);
  m.up_from_source = UpFromSource(m.source_up, m.target_up);
  return "";
}

// The target's world transforms from its local ones.
void TargetFk(const Skeleton& tgt, const std::vector<Eigen::Isometry3d>& local,
              std::vector<Eigen::Isometry3d>& wt) {
  for (int j = 0; j < tgt.num_joints(); ++j) {
    wt[j] = tgt.parent(j) < 0 ? local[j] : wt[tgt.parent(j)] * local[j];
  }
}

// The mapped children of each target joint: the mapped joints whose nearest mapped ancestor it is.
std::vector<std::vector<int>> MappedChildren(const Skeleton& tgt,
                                             const std::vector<int>& source_of) {
  const int nt = tgt.num_joints();
  std::vector<int> mapped_parent(nt, -1);  // nearest mapped ancestor of each target joint
  std::vector<std::vector<int>> mapped_children(nt);
  for (int j = 0; j < nt; ++j) {
    for (int p = tgt.parent(j); p >= 0; p = tgt.parent(p)) {
      if (source_of[p] >= 0) {
        mapped_parent[j] = p;
        break;
      }
    }
    if (source_of[j] >= 0 && mapped_parent[j] >= 0) mapped_children[mapped_parent[j]].push_back(j);
  }
  return mapped_children;
}

// What the rest-pose alignment needs besides the two poses.
struct BendInputs {
  const std::vector<std::vector<int>>& mapped_children;
  const std::vector<bool>& on_spine;
  int spine_top;  // the highest mapped joint of the spine
  double eps_s;   // segments shorter than these are zero-length
  double eps_t;
};

// The target's spine: the joints from the head (else the neck) up to the root. At a branching
// joint on it (hips, chest), the direction to the top of the spine is matched exactly and the
// branches (thighs, clavicles) only set the turn about it: a best fit over all segments would
// tilt the spine when the branches' angles differ between the two anatomies (clavicles hanging
// from the neck in one rig and rising from the chest in the other turned a chest upside down:
// ProAnimationBank onto the Biovision skeleton, tests/retarget/matrix_test.cc).
std::vector<bool> TargetSpine(const Skeleton& tgt, const HumanoidJoints& roles,
                              const std::vector<int>& source_of, int* spine_top) {
  std::vector<bool> on_spine(tgt.num_joints(), false);
  const int spine_end = roles[Role::kHead] >= 0 ? roles[Role::kHead] : roles[Role::kNeck];
  *spine_top = -1;
  for (int j = spine_end; j >= 0; j = tgt.parent(j)) {
    on_spine[j] = true;
    if (*spine_top < 0 && source_of[j] >= 0) *spine_top = j;
  }
  return on_spine;
}

// The rotation turning target joint `t`'s segments (to its mapped children) onto its source joint
// `s`'s, in the target's current pose `wt`.
Eigen::Matrix3d TurnOntoSource(const Alignment& m, const BendInputs& in,
                               const std::vector<Eigen::Isometry3d>& ws,
                               const std::vector<Eigen::Isometry3d>& wt, int t, int s) {
  const Eigen::Matrix3d& c = m.up_from_source;
  std::vector<Eigen::Vector3d> from;
  std::vector<Eigen::Vector3d> to;
  size_t primary = SIZE_MAX;
  // Segments to the mapped children; a zero-length one on either side is replaced by the
  // segments to that child's own mapped children.
  std::vector<int> stack(in.mapped_children[t].rbegin(), in.mapped_children[t].rend());
  while (!stack.empty()) {
    const int b = stack.back();
    stack.pop_back();
    const Eigen::Vector3d dt = wt[b].translation() - wt[t].translation();
    const Eigen::Vector3d ds = c * (ws[m.source_of[b]].translation() - ws[s].translation());
    if (dt.norm() < in.eps_t || ds.norm() < in.eps_s) {
      stack.insert(stack.end(), in.mapped_children[b].rbegin(), in.mapped_children[b].rend());
      continue;
    }
    if (in.on_spine[t] && in.on_spine[b] && primary == SIZE_MAX && in.spine_top != t) {
      // The spine's direction out of this joint: to the top of the spine (the head), not to
      // the next spine joint, whose offset can be odd (MakeHuman's spine05 sits behind the
      // root, nearly level with it).
      primary = from.size();
      const Eigen::Vector3d top_t = wt[in.spine_top].translation() - wt[t].translation();
      const Eigen::Vector3d top_s =
          c * (ws[m.source_of[in.spine_top]].translation() - ws[s].translation());
      if (top_t.norm() > in.eps_t && top_s.norm() > in.eps_s) {
        from.push_back(top_t.normalized());
        to.push_back(top_s.normalized());
        continue;
      }
    }
    from.push_back(dt.normalized());
    to.push_back(ds.normalized());
  }
  return primary != SIZE_MAX && from.size() > 1 ? SpineFirstRotation(from, to, primary)
                                                : BestRotation(from, to);
}

// Rest-pose alignment: bends the target's reference pose (`local`, parent first) so its bones point
// along the source's; `wt` ends as the bent pose.
void BendTargetOntoSource(const Skeleton& tgt, const Alignment& m, const BendInputs& in,
                          const std::vector<Eigen::Isometry3d>& ws,
                          std::vector<Eigen::Isometry3d>& local,
                          std::vector<Eigen::Isometry3d>& wt) {
  for (int t = 0; t < tgt.num_joints(); ++t) {
    const int s = m.source_of[t];
    if (s < 0) continue;
    TargetFk(tgt, local, wt);
    const Eigen::Matrix3d turn = TurnOntoSource(m, in, ws, wt, t, s);
    const Eigen::Matrix3d parent_rot = tgt.parent(t) < 0
                                           ? Eigen::Matrix3d(Eigen::Matrix3d::Identity())
                                           : Eigen::Matrix3d(wt[tgt.parent(t)].linear());
    local[t].linear() = parent_rot.transpose() * turn * wt[t].linear();
  }
  TargetFk(tgt, local, wt);
}

// From the aligned pose: each mapped joint's alignment, its single mapped child's segment, and the
// bones measured by the metrics.
void RecordAlignedSegments(const Skeleton& tgt,
                           const std::vector<std::vector<int>>& mapped_children,
                           const std::vector<Eigen::Matrix3d>& offset,
                           const std::vector<Eigen::Isometry3d>& ws,
                           const std::vector<Eigen::Isometry3d>& wt, double height_s,
                           double height_t0, Alignment& m) {
  const int nt = tgt.num_joints();
  const Eigen::Matrix3d& c = m.up_from_source;
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
}

// The height of the hip joints (`left`, `right`) above `ground`, else of the hips joint.
double HipHeight(const std::vector<Eigen::Isometry3d>& w, int hips, int left, int right,
                 int up_axis, double ground) {
  if (left >= 0 && right >= 0) {
    return 0.5 * (w[left].translation()[up_axis] + w[right].translation()[up_axis]) - ground;
  }
  return w[hips].translation()[up_axis] - ground;
}

// Proportions, origins and units (target measured in its aligned reference pose). The hip
// height is the height of the hip joints (the upper legs) when both skeletons have them, else
// of the hips joint.
void MeasureProportions(const Skeleton& src, const Skeleton& tgt, const HumanoidJoints& roles,
                        const RetargetOptions& options, const Clip* source_clip,
                        const Clip* target_clip, const std::vector<Eigen::Isometry3d>& ws,
                        const std::vector<Eigen::Isometry3d>& wt, double ground_s, double height_s,
                        Alignment& m, std::vector<std::string>* warnings) {
  double ground_t = 0.0;
  const double height_t = PoseHeight(tgt, wt, m.target_up, &ground_t);
  const int src_left =
      roles[Role::kLeftUpperLeg] >= 0 ? m.source_of[roles[Role::kLeftUpperLeg]] : -1;
  const int src_right =
      roles[Role::kRightUpperLeg] >= 0 ? m.source_of[roles[Role::kRightUpperLeg]] : -1;
  const bool legs = src_left >= 0 && src_right >= 0;
  const double hip_s = HipHeight(ws, m.source_hips, legs ? src_left : -1, legs ? src_right : -1,
                                 m.source_up, ground_s);
  const double hip_t = HipHeight(wt, m.target_hips, legs ? roles[Role::kLeftUpperLeg] : -1,
                                 legs ? roles[Role::kRightUpperLeg] : -1, m.target_up, ground_t);
  if (hip_s > 0.0 && hip_t > 0.0) {
    m.scale = hip_t / hip_s;
    m.target_hip_height = hip_t;
  } else {
    warnings->emplace_back("hips at or below the ground in a reference pose: scale 1 used");
    m.target_hip_height = std::max(height_t * 0.5, 1e-9);
  }
  m.source_origin = ws[m.source_hips].translation();
  // The floor a figure stands on: its reference pose's lowest point, unless that pose does not
  // stand on the floor its clip stands on (FloorOf).
  m.source_origin[m.source_up] =
      FloorOf(src, ws, m.source_hips, ground_s, m.source_up,
              source_clip != nullptr && source_clip->matches(src) ? source_clip : nullptr);
  m.target_origin = wt[m.target_hips].translation();
  m.target_origin[m.target_up] =
      FloorOf(tgt, wt, m.target_hips, ground_t, m.target_up,
              target_clip != nullptr && target_clip->matches(tgt) ? target_clip : nullptr);
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
}

// The joint that carries the hips' translation: the topmost joint with position channels from
// the top of the body down to the hips (core/body.h BodyJoints: a carrier root above the first
// joint that branches is not body), so that no bone of the body stretches; else, as before, the
// nearest ancestor of the hips with them. Moving the hips joint itself stretched a bone of the
// pelvis over the whole path where the body's top sits above it (the ProAnimationBank rig: its
// legs hang from 'Spine', 7 cm below its root 'Hips').
void FindTranslationJoint(const Skeleton& tgt, Alignment& m, std::vector<std::string>* warnings) {
  auto has_position = [&](int j) {
    return tgt.translation_channel(j, 0) >= 0 || tgt.translation_channel(j, 1) >= 0 ||
           tgt.translation_channel(j, 2) >= 0;
  };
  std::vector<char> body(tgt.num_joints(), 0);
  for (const int j : BodyJoints(tgt)) body[j] = 1;
  for (int j = m.target_hips; j >= 0 && body[j]; j = tgt.parent(j)) {
    if (has_position(j)) m.translation_joint = j;
  }
  for (int j = m.target_hips; j >= 0 && m.translation_joint < 0; j = tgt.parent(j)) {
    if (has_position(j)) m.translation_joint = j;
  }
  if (m.translation_joint < 0) {
    warnings->push_back("target joint '" + tgt.name(m.target_hips) +
                        "' and its ancestors have no position channels: root motion "
                        "dropped");
  }
}

// IK chains (feet first, then hands) and the legs used for the facing direction. `wt` is left as
// the target's reference pose (each chain is validated on it).
std::string SetUpLimbs(const Skeleton& tgt, const HumanoidJoints& roles,
                       const RetargetOptions& options, const std::string& where,
                       const std::vector<Eigen::Isometry3d>& ws, std::vector<Eigen::Isometry3d>& wt,
                       Alignment& m, std::vector<std::string>* warnings) {
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
        if (lr.foot) return where + ": --pin-feet needs the target's " + what + " mapped";
        warnings->push_back("hand IK skipped: the target's " + what + " is not mapped");
      }
      continue;
    }
    limb.source_end = m.source_of[limb.end];
    // Per-chain length ratio (issue 15 item 4): legs of any proportion reach their goals.
    limb.ratio = m.scale;
    const int su = m.source_of[limb.upper];
    const int sl = m.source_of[limb.lower];
    if (su >= 0 && sl >= 0) {
      const double source_length =
          (ws[sl].translation() - ws[su].translation()).norm() +
          (ws[limb.source_end].translation() - ws[sl].translation()).norm();
      const double target_length =
          (wt[limb.lower].translation() - wt[limb.upper].translation()).norm() +
          (wt[limb.end].translation() - wt[limb.lower].translation()).norm();
      if (source_length > 1e-9 && target_length > 1e-9) {
        limb.source_upper = su;
        limb.ratio = target_length / source_length;
      }
    }
    std::vector<double> row = m.target_reference_row;
    const ik::TwoBoneJob job = LimbJob(tgt, limb, row, wt);
    std::string why;
    ForwardKinematics(tgt, row, wt);
    if (!job.Validate(&why)) {
      if (wanted) warnings->push_back(std::string(lr.name) + " IK skipped: " + why);
      continue;
    }
    m.limbs.push_back(limb);
  }
  return "";
}

}  // namespace

Eigen::Matrix3d UpFromSource(int source_up, int target_up) {
  if (source_up == target_up) return Eigen::Matrix3d::Identity();
  if (source_up == 1 && target_up == 2) return AxisRotation(0, kPi / 2);
  if (source_up == 2 && target_up == 1) return AxisRotation(0, -kPi / 2);
  return Eigen::Matrix3d::Identity();
}

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

double ClipFloor(const Skeleton& s, const Clip& clip, int up) {
  // Up to 512 evenly spaced frames, the first and last included.
  const int frames = clip.num_frames();
  const int samples = std::min(frames, 512);
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  double floor = 1e300;
  for (int i = 0; i < samples; ++i) {
    const int f =
        samples == 1
            ? 0
            : static_cast<int>(std::lround(static_cast<double>(i) * (frames - 1) / (samples - 1)));
    ForwardKinematics(s, clip.frame(f), world);
    double ground = 0;
    PoseHeight(s, world, up, &ground);
    floor = std::min(floor, ground);
  }
  return floor;
}

double FloorOf(const Skeleton& s, std::span<const Eigen::Isometry3d> reference, int hips,
               double reference_ground, int up, const Clip* clip) {
  if (clip == nullptr || clip->num_frames() == 0 || hips < 0) return reference_ground;
  const double floor = ClipFloor(s, *clip, up);
  const double standing = reference[hips].translation()[up] - reference_ground;
  const double over_clip_floor = reference[hips].translation()[up] - floor;
  return over_clip_floor < 0.5 * standing ? floor : reference_ground;
}

double EstimateUnitMetres(double height) {
  if (height <= 0.0) return 1.0;
  const double guess = 1.7 / height;
  for (const double unit : {1.0, 0.1, 0.01, 0.001, 0.0254}) {
    if (guess > unit / 1.2 && guess < unit * 1.2) return unit;
  }
  return guess;
}

ik::TwoBoneJob LimbJob(const Skeleton& target, const Limb& limb, std::span<double> row,
                       std::span<const Eigen::Isometry3d> world) {
  return ik::TwoBoneJob::OnLimb(target, row, world, limb.upper, limb.lower, limb.end);
}

std::string Align(const Skeleton& src, const Skeleton& tgt, const BoneMap& map,
                  const RetargetOptions& options, const Clip* source_clip, const Clip* target_clip,
                  Alignment* out, std::vector<std::string>* warnings) {
  Alignment& m = *out;
  m = Alignment();
  const int ns = src.num_joints();
  const int nt = tgt.num_joints();

  const std::string where = map.origin.empty() ? std::string("bone map") : map.origin;
  m.source_of.assign(nt, -1);
  m.alignment.assign(nt, Eigen::Matrix3d::Identity());
  std::vector<Eigen::Matrix3d> offset(nt, Eigen::Matrix3d::Identity());
  HumanoidJoints roles = ClassifyHumanoid(tgt);
  int hips_from_map = -1;
  if (std::string e = ApplyBoneMap(src, tgt, map, where, m, offset, roles, &hips_from_map);
      !e.empty()) {
    return e;
  }
  if (std::string e = ChooseHips(tgt, hips_from_map, where, roles, m); !e.empty()) return e;

  std::vector<double> src_row;
  std::vector<Eigen::Isometry3d> ws(ns);
  std::vector<Eigen::Isometry3d> wt(nt);
  if (std::string e =
          ReferencePoses(src, tgt, options, source_clip, target_clip, m, src_row, ws, wt);
      !e.empty()) {
    return e;
  }

  // Rest-pose alignment: bend the target's reference pose so its bones point along the source's.
  std::vector<Eigen::Isometry3d> local(nt);
  for (int j = 0; j < nt; ++j) local[j] = LocalTransform(tgt, j, m.target_reference_row);
  const std::vector<std::vector<int>> mapped_children = MappedChildren(tgt, m.source_of);
  double ground_s = 0.0;
  const double height_s = PoseHeight(src, ws, m.source_up, &ground_s);
  TargetFk(tgt, local, wt);
  const double height_t0 = PoseHeight(tgt, wt, m.target_up, nullptr);
  int spine_top = -1;
  const std::vector<bool> on_spine = TargetSpine(tgt, roles, m.source_of, &spine_top);
  const BendInputs bend{mapped_children, on_spine, spine_top, 1e-6 * std::max(height_s, 1e-9),
                        1e-6 * std::max(height_t0, 1e-9)};
  BendTargetOntoSource(tgt, m, bend, ws, local, wt);
  RecordAlignedSegments(tgt, mapped_children, offset, ws, wt, height_s, height_t0, m);

  MeasureProportions(src, tgt, roles, options, source_clip, target_clip, ws, wt, ground_s, height_s,
                     m, warnings);
  FindTranslationJoint(tgt, m, warnings);
  return SetUpLimbs(tgt, roles, options, where, ws, wt, m, warnings);
}

}  // namespace rigel::retarget
