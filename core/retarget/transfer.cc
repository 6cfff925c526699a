#include "core/retarget/transfer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/euler.h"
#include "core/pose.h"
#include "core/retarget/humanoid.h"

namespace rigel::retarget {

namespace {

// Unmapped target joints between a mapped joint `a` (whose segments do not follow one mapped
// child: the hips, a chest) and a mapped descendant `b` (a chest, a neck), whose sources lie on
// one chain of the source: the spine joints a source with a shorter spine does not drive.
// Spine correction (HumanIK's name): they take the source's bend spread by their share of the
// chain's length instead of staying at the reference pose, which kept the target's trunk rigid
// from the hips to its chest and tilted it (15 degrees on the matrix test's worst pair).
struct Span {
  int a = -1, b = -1;
  std::vector<int> joints;       // target joints strictly between a and b, parent first
  std::vector<int> next;         // per joint: the next joint on the path (toward b)
  std::vector<double> u;         // per joint: its fraction of the reference path length a -> b
  std::vector<double> u_next;    // the next joint's fraction
  std::vector<int> source_path;  // source joints from source_of[a] down to the trunk's end
  double u_b = 1;                // b's fraction
};

std::vector<Span> FindSpans(const Skeleton& src, const Skeleton& tgt, const Alignment& m,
                            const std::vector<Eigen::Isometry3d>& reference) {
  std::vector<Span> spans;
  // Only the trunk: the target's spine and neck chains and its head (a limb's root joints, such
  // as CMU's LHipJoint between the hips and the thigh, keep their reference pose).
  const HumanoidJoints h = ClassifyHumanoid(tgt);
  std::vector<char> trunk(tgt.num_joints(), 0);
  for (const int j : h.spine) trunk[j] = 1;
  for (const int j : h.neck) trunk[j] = 1;
  if (h[Role::kHead] >= 0) trunk[h[Role::kHead]] = 1;
  for (int b = 0; b < tgt.num_joints(); ++b) {
    if (m.source_of[b] < 0 || !trunk[b]) continue;
    Span span;
    span.b = b;
    int j = tgt.parent(b);
    bool in_trunk = true;
    while (j >= 0 && m.source_of[j] < 0) {
      span.joints.insert(span.joints.begin(), j);
      in_trunk = in_trunk && trunk[j];
      j = tgt.parent(j);
    }
    if (j < 0 || span.joints.empty() || !in_trunk || m.single_child[j] >= 0) continue;
    span.a = j;
    const int sa = m.source_of[span.a], sb = m.source_of[b];
    if (sa == sb || !IsAncestorOrSelf(src, sa, sb)) continue;
    // The trunk goes on past b to the next mapped trunk joint (a chest's neck, a neck's head):
    // the shares are of the whole trunk, so a source whose spine bends low (Biovision's Chest,
    // a fifth of the way up) bends the target low too.
    std::vector<int> path = {span.a};
    path.insert(path.end(), span.joints.begin(), span.joints.end());
    path.push_back(b);
    for (int k = b;;) {
      int onward = -1;
      for (const int child : tgt.children(k)) {
        if (trunk[child]) onward = child;
      }
      if (onward < 0) break;
      path.push_back(onward);
      if (m.source_of[onward] >= 0) break;
      k = onward;
    }
    while (path.size() > span.joints.size() + 2 && m.source_of[path.back()] < 0) path.pop_back();
    const int end = m.source_of[path.back()];
    if (!IsAncestorOrSelf(src, sa, end)) continue;
    for (int k = end; k != sa; k = src.parent(k))
      span.source_path.insert(span.source_path.begin(), k);
    span.source_path.insert(span.source_path.begin(), sa);
    // Fractions of the reference path.
    std::vector<double> along(path.size(), 0.0);
    for (size_t i = 1; i < path.size(); ++i) {
      along[i] = along[i - 1] +
                 (reference[path[i]].translation() - reference[path[i - 1]].translation()).norm();
    }
    if (!(along.back() > 0)) continue;
    span.u_b = along[span.joints.size() + 1] / along.back();
    for (size_t i = 1; i <= span.joints.size(); ++i) {
      span.next.push_back(path[i + 1]);
      span.u.push_back(along[i] / along.back());
      span.u_next.push_back(along[i + 1] / along.back());
    }
    spans.push_back(std::move(span));
  }
  return spans;
}

// The point at fraction `u` of the length of the polyline through `points`.
Eigen::Vector3d AlongPolyline(const std::vector<Eigen::Vector3d>& points, double u) {
  double total = 0;
  for (size_t i = 1; i < points.size(); ++i) total += (points[i] - points[i - 1]).norm();
  double left = std::clamp(u, 0.0, 1.0) * total;
  for (size_t i = 1; i < points.size(); ++i) {
    const double l = (points[i] - points[i - 1]).norm();
    if (left <= l && l > 0) return points[i - 1] + (left / l) * (points[i] - points[i - 1]);
    left -= l;
  }
  return points.back();
}

// Per target joint: its span and place in it (-1: none).
struct SpanIndex {
  std::vector<int> span_of, index_in_span;
};

SpanIndex IndexSpans(const std::vector<Span>& spans, int nt) {
  SpanIndex index{std::vector<int>(nt, -1), std::vector<int>(nt, -1)};
  for (size_t k = 0; k < spans.size(); ++k) {
    for (size_t i = 0; i < spans[k].joints.size(); ++i) {
      index.span_of[spans[k].joints[i]] = static_cast<int>(k);
      index.index_in_span[spans[k].joints[i]] = static_cast<int>(i);
    }
  }
  return index;
}

// The world rotation a mapped target joint j takes from its source in this frame (source world
// transforms ws; c turns the source's up into the target's).
Eigen::Matrix3d WantOf(const Alignment& m, const Eigen::Matrix3d& c,
                       const std::vector<Eigen::Isometry3d>& ws, int j) {
  const int s = m.source_of[j];
  Eigen::Matrix3d want = c * ws[s].linear() * m.alignment[j];
  if (m.single_child[j] >= 0) {
    const Eigen::Vector3d now = want * m.child_segment[j];
    const Eigen::Vector3d goal =
        c * (ws[m.source_of[m.single_child[j]]].translation() - ws[s].translation());
    want = Eigen::Quaterniond::FromTwoVectors(now, goal).toRotationMatrix() * want;
  }
  return want;
}

// A span joint's world rotation: the turn from the reference spread between its mapped ends by
// its share of the length, then swung so its segment lies along the source's chain at the same
// share of the source chain's length. wrot: the target's world rotations so far this frame;
// points: a buffer.
Eigen::Matrix3d SpreadRotation(const Alignment& m, const Eigen::Matrix3d& c,
                               const std::vector<Eigen::Isometry3d>& ws, const Span& span, int i,
                               int j, const std::vector<Eigen::Matrix3d>& wrot,
                               const std::vector<Eigen::Isometry3d>& reference,
                               std::vector<Eigen::Vector3d>& points) {
  const Eigen::Quaterniond da(
      Eigen::Matrix3d(wrot[span.a] * reference[span.a].linear().transpose()));
  const Eigen::Quaterniond db(
      Eigen::Matrix3d(WantOf(m, c, ws, span.b) * reference[span.b].linear().transpose()));
  Eigen::Matrix3d r = da.slerp(span.u[i], db).toRotationMatrix() * reference[j].linear();
  points.clear();
  for (const int k : span.source_path) points.push_back(c * ws[k].translation());
  const Eigen::Vector3d goal =
      AlongPolyline(points, span.u_next[i]) - AlongPolyline(points, span.u[i]);
  const Eigen::Vector3d now =
      r * (reference[j].linear().transpose() *
           (reference[span.next[i]].translation() - reference[j].translation()));
  if (goal.squaredNorm() > 0 && now.squaredNorm() > 0) {
    r = Eigen::Quaterniond::FromTwoVectors(now, goal).toRotationMatrix() * r;
  }
  return r;
}

// Where the target's hips go this frame, by the root-motion policy.
Eigen::Vector3d HipsGoal(const Alignment& m, const Eigen::Matrix3d& c,
                         const std::vector<Eigen::Isometry3d>& ws, RootMotion root_motion) {
  const int up = m.target_up;
  const Eigen::Vector3d d = c * (ws[m.source_hips].translation() - m.source_origin);
  Eigen::Vector3d goal = m.target_origin;
  goal[up] += m.target_hips_up + m.scale * (d[up] - m.source_hips_up);
  const Eigen::Vector3d dh = Horizontal(d, up);
  if (root_motion == RootMotion::kScale) goal += m.scale * dh;
  if (root_motion == RootMotion::kKeep) goal += m.unit_ratio * dh;
  return goal;
}

// Moves the hips to `goal` through the translation joint's channels (wt: a buffer).
void PlaceHips(const Skeleton& tgt, const Alignment& m, const Eigen::Vector3d& goal,
               std::span<double> row, std::vector<Eigen::Isometry3d>& wt) {
  ForwardKinematics(tgt, row, wt);
  const int a = m.translation_joint;
  const Eigen::Vector3d delta = goal - wt[m.target_hips].translation();
  const Eigen::Vector3d local_delta =
      tgt.parent(a) < 0 ? delta : Eigen::Vector3d(wt[tgt.parent(a)].linear().transpose() * delta);
  for (int axis = 0; axis < 3; ++axis) {
    const int ch = tgt.translation_channel(a, axis);
    if (ch >= 0) row[ch] += local_delta[axis];
  }
}

}  // namespace

TransferredMotion TransferRotations(const Skeleton& src, const Skeleton& tgt, const Alignment& m,
                                    RootMotion root_motion, const Clip& clip) {
  const int frames = clip.num_frames();
  const int ns = src.num_joints();
  const int nt = tgt.num_joints();
  const Eigen::Matrix3d& c = m.up_from_source;
  TransferredMotion out;
  out.clip = Clip(frames, tgt.num_channels(), clip.frame_time());
  out.clip.set_name(clip.name());
  out.source_joints = ns;
  std::vector<Eigen::Vector3d>& source_pos = out.source_positions;
  std::vector<Eigen::Vector3d>& hips_goal = out.hips_goal;
  source_pos.resize(static_cast<size_t>(frames) * ns);
  hips_goal.resize(frames);
  std::vector<Eigen::Isometry3d> ws(ns);
  std::vector<Eigen::Isometry3d> wt(nt);
  std::vector<Eigen::Matrix3d> wrot(nt);
  std::vector<double> prev = m.target_reference_row;
  std::vector<Eigen::Isometry3d> reference(nt);
  ForwardKinematics(tgt, m.target_reference_row, reference);
  const std::vector<Span> spans = FindSpans(src, tgt, m, reference);
  const SpanIndex index = IndexSpans(spans, nt);
  const std::vector<int>& span_of = index.span_of;
  std::vector<Eigen::Vector3d> points;
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(src, clip.frame(f), ws);
    for (int j = 0; j < ns; ++j) source_pos[static_cast<size_t>(f) * ns + j] = ws[j].translation();
    std::span<double> row = out.clip.frame(f);
    std::copy(m.target_reference_row.begin(), m.target_reference_row.end(), row.begin());
    for (int j = 0; j < nt; ++j) {
      const int p = tgt.parent(j);
      const Eigen::Matrix3d parent_rot =
          p < 0 ? Eigen::Matrix3d(Eigen::Matrix3d::Identity()) : wrot[p];
      if (m.source_of[j] >= 0 || span_of[j] >= 0) {
        const Eigen::Matrix3d want =
            m.source_of[j] >= 0
                ? WantOf(m, c, ws, j)
                : SpreadRotation(m, c, ws, spans[span_of[j]], index.index_in_span[j], j, wrot,
                                 reference, points);
        const Eigen::Matrix3d channel_rot =
            tgt.rest_orientation(j).toRotationMatrix().transpose() * parent_rot.transpose() * want;
        SetRotationChannels(tgt, j, channel_rot, row, prev);
      }
      wrot[j] = parent_rot * LocalRotation(tgt, j, row);
    }
    const Eigen::Vector3d goal = HipsGoal(m, c, ws, root_motion);
    hips_goal[f] = goal;
    if (m.translation_joint >= 0) PlaceHips(tgt, m, goal, row, wt);
    std::copy(row.begin(), row.end(), prev.begin());
  }
  return out;
}

}  // namespace rigel::retarget
