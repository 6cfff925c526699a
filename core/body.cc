#include "core/body.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/pose.h"
#include "core/retarget/humanoid.h"

namespace rigel {

namespace {

using retarget::Role;

constexpr int kMaxFrames = 64;

// The frames to sample: up to kMaxFrames evenly spaced over the clip.
std::vector<int> SampleFrames(const Clip* clip) {
  std::vector<int> frames;
  if (clip == nullptr || clip->num_frames() == 0) return frames;
  const int n = clip->num_frames();
  const int count = std::min(n, kMaxFrames);
  for (int i = 0; i < count; ++i) {
    frames.push_back(count == 1 ? 0
                                : static_cast<int>(std::lround(1.0 * i * (n - 1) / (count - 1))));
  }
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  return frames;
}

// World poses of the sampled frames (the rest pose when there is none).
std::vector<std::vector<Eigen::Isometry3d>> SampledWorlds(const Skeleton& skeleton,
                                                          const Clip* clip) {
  std::vector<std::vector<Eigen::Isometry3d>> worlds;
  Pose pose(skeleton);
  const std::vector<int> frames = SampleFrames(clip);
  if (frames.empty()) worlds.push_back(pose.world);
  for (const int f : frames) {
    pose.SetFromRow(skeleton, clip->frame(f));
    worlds.push_back(pose.world);
  }
  return worlds;
}

// Joints at and below `joint`.
std::vector<int> Subtree(const Skeleton& skeleton, int joint) {
  std::vector<int> out{joint};
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const int c : skeleton.children(out[i])) out.push_back(c);
  }
  return out;
}

// Sum of the bone lengths from `joint` up to `ancestor` (0 when it is not an ancestor).
double PathLength(const Skeleton& skeleton, int joint, int ancestor) {
  double length = 0;
  for (int j = joint; j != ancestor; j = skeleton.parent(j)) {
    if (j < 0) return 0.0;
    length += skeleton.rest_translation(j).norm();
  }
  return length;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// The deepest joint that is an ancestor of (or equal to) both `a` and `b`; -1 when none.
int CommonAncestor(const Skeleton& skeleton, int a, int b) {
  std::vector<int> chain;
  for (int j = a; j >= 0; j = skeleton.parent(j)) chain.push_back(j);
  for (int j = b; j >= 0; j = skeleton.parent(j)) {
    if (std::find(chain.begin(), chain.end(), j) != chain.end()) return j;
  }
  return -1;
}

struct HumanoidParts {
  int head = -1, hips = -1;
  std::vector<int> feet;         // foot joints (or lower legs)
  std::vector<int> foot_points;  // joints of the feet's subtrees
  std::vector<int> foot_sites;   // end sites under them
  int left_leg = -1, right_leg = -1, left_arm = -1, right_arm = -1;
  bool trunk = false;  // no feet: head over hips (Trunk)
};

// A figure with a head over its hips but no feet (a trunk, a figure cut at the legs): the hips
// stand in for the feet in the direction and the lowest of its body joints for the ground. The
// hips are an ancestor of the head named hips or pelvis.
std::optional<HumanoidParts> Trunk(const Skeleton& skeleton, const retarget::HumanoidJoints& h,
                                   HumanoidParts p) {
  for (int j = skeleton.parent(p.head); p.hips < 0 && j >= 0; j = skeleton.parent(j)) {
    const std::string word = retarget::NormaliseJointName(skeleton.name(j)).word;
    if (word == "hips" || word == "pelvis") p.hips = j;
  }
  if (p.hips < 0 || h[Role::kHead] < 0) return std::nullopt;
  p.feet = {p.hips};
  p.foot_points = BodyJoints(skeleton);
  p.trunk = true;
  return p;
}

std::optional<HumanoidParts> FindHumanoid(const Skeleton& skeleton) {
  const retarget::HumanoidJoints h = retarget::ClassifyHumanoid(skeleton);
  HumanoidParts p;
  p.head = h[Role::kHead] >= 0 ? h[Role::kHead] : h[Role::kNeck];
  p.hips = h[Role::kHips];
  for (const auto& [foot, lower] : {std::pair{Role::kLeftFoot, Role::kLeftLowerLeg},
                                    std::pair{Role::kRightFoot, Role::kRightLowerLeg}}) {
    const int j = h[foot] >= 0 ? h[foot] : h[lower];
    if (j >= 0) p.feet.push_back(j);
  }
  if (p.head < 0) return std::nullopt;
  if (p.feet.empty()) {
    p.hips = -1;  // the classification's hips of a figure without legs mean little (a VR root)
    return Trunk(skeleton, h, p);
  }
  // Hips not named (a figure with one leg): the joint where the head's and a foot's chains meet.
  if (p.hips < 0) p.hips = CommonAncestor(skeleton, p.head, p.feet.front());
  if (p.hips < 0) return std::nullopt;
  for (const int f : p.feet) {
    for (const int j : Subtree(skeleton, f)) p.foot_points.push_back(j);
  }
  const auto& sites = skeleton.end_sites();
  for (std::size_t e = 0; e < sites.size(); ++e) {
    if (std::count(p.foot_points.begin(), p.foot_points.end(), sites[e].parent)) {
      p.foot_sites.push_back(static_cast<int>(e));
    }
  }
  p.left_leg = h[Role::kLeftUpperLeg];
  p.right_leg = h[Role::kRightUpperLeg];
  p.left_arm = h[Role::kLeftUpperArm];
  p.right_arm = h[Role::kRightUpperArm];
  return p;
}

// Lowest point of the feet along `up` in one world pose.
double LowestFoot(const Skeleton& skeleton, const HumanoidParts& p,
                  const std::vector<Eigen::Isometry3d>& w, const Eigen::Vector3d& up) {
  double low = INFINITY;
  for (const int j : p.foot_points) low = std::min(low, up.dot(w[j].translation()));
  for (const int e : p.foot_sites) {
    const EndSite& s = skeleton.end_sites()[e];
    low = std::min(low, up.dot(w[s.parent] * s.offset));
  }
  return low;
}

void MeasureHumanoid(const Skeleton& skeleton, const HumanoidParts& p,
                     const std::vector<std::vector<Eigen::Isometry3d>>& worlds,
                     std::optional<SignedAxis> given, BodyMeasure* m) {
  Eigen::Vector3d direction = Eigen::Vector3d::Zero(), left = Eigen::Vector3d::Zero();
  for (const auto& w : worlds) {
    Eigen::Vector3d feet = Eigen::Vector3d::Zero();
    for (const int f : p.feet) feet += w[f].translation();
    feet /= static_cast<double>(p.feet.size());
    const Eigen::Vector3d v = w[p.head].translation() - feet;
    if (v.norm() > 0) direction += v.normalized();
    for (const auto& [l, r] : {std::pair{p.left_leg, p.right_leg}, {p.left_arm, p.right_arm}}) {
      if (l >= 0 && r >= 0) left += (w[l].translation() - w[r].translation()).normalized();
    }
  }
  direction /= static_cast<double>(worlds.size());
  const SignedAxis body_up = NearestSignedAxis(direction);
  // A trunk lying across the stated up axis (a quadruped's head before its hips) is no figure.
  if (p.trunk && given && body_up.axis != given->axis) return;
  const double along = std::abs(direction[body_up.axis]);
  m->up_decided = along >= std::sqrt(0.5) * std::max(direction.norm(), 1e-300) && along > 0.5;
  m->up = given ? *given : body_up;
  const Eigen::Vector3d up = m->up.Vector();
  std::vector<double> heights;
  int below = 0;
  for (const auto& w : worlds) {
    const double head = up.dot(w[p.head].translation());
    heights.push_back(head - LowestFoot(skeleton, p, w, up));
    double feet = 0;
    for (const int f : p.feet) feet += up.dot(w[f].translation());
    below += head < feet / static_cast<double>(p.feet.size());
  }
  m->upside_down = below == static_cast<int>(worlds.size());
  m->height = std::max(0.0, Percentile(heights, 0.95));
  double leg = 0;
  for (const int f : p.feet) leg = std::max(leg, PathLength(skeleton, f, p.hips));
  m->chain_height = PathLength(skeleton, p.head, p.hips) + leg;
  Eigen::Vector3d side = left - left.dot(up) * up;
  if (side.norm() > 0.5 * static_cast<double>(worlds.size())) {
    m->forward = NearestSignedAxis(side.normalized().cross(up));
  }
  char text[160];
  std::snprintf(text, sizeof text,
                " %s feet in %zu frame%s (mean feet-to-head direction %.2f %.2f %.2f)",
                m->upside_down ? "below the" : "over the", worlds.size(),
                worlds.size() == 1 ? "" : "s", direction.x(), direction.y(), direction.z());
  m->evidence = "head '" + skeleton.name(p.head) + "'" + text;
  if (p.trunk) m->evidence += "; no feet: the hips stand for them, the lowest joint for the ground";
}

}  // namespace

std::vector<int> BodyJoints(const Skeleton& skeleton) {
  std::vector<int> out;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (skeleton.parent(j) != Skeleton::kNoParent) continue;
    int top = j;
    while (skeleton.children(top).size() == 1) top = skeleton.children(top)[0];
    // A chain that never branches is all body (a tail, a single limb).
    if (skeleton.children(top).empty()) top = j;
    for (const int k : Subtree(skeleton, top)) out.push_back(k);
  }
  std::sort(out.begin(), out.end());
  return out;
}

BodyMeasure MeasureBody(const Skeleton& skeleton, const Clip* clip, std::optional<SignedAxis> up) {
  BodyMeasure m;
  const auto worlds = SampledWorlds(skeleton, clip);
  m.frames = static_cast<int>(worlds.size());
  if (skeleton.num_joints() == 0) return m;
  if (const std::optional<HumanoidParts> parts = FindHumanoid(skeleton)) {
    m.humanoid = true;
    MeasureHumanoid(skeleton, *parts, worlds, up, &m);
    if (m.evidence.empty()) m = BodyMeasure{};  // MeasureHumanoid refused the figure
    if (m.humanoid) return m;
    m.frames = static_cast<int>(worlds.size());
  }
  // Not a humanoid: the median extent of the body's joints; up only estimated.
  const std::vector<int> body = BodyJoints(skeleton);
  std::vector<double> extent[3];
  for (const auto& w : worlds) {
    Eigen::AlignedBox3d box;
    for (const int j : body) box.extend(w[j].translation());
    for (int a = 0; a < 3; ++a) extent[a].push_back(box.sizes()[a]);
  }
  Eigen::Vector3d size;
  for (int a = 0; a < 3; ++a) size[a] = Percentile(extent[a], 0.5);
  m.up = up ? *up : SignedAxis{size.z() > size.y() ? 2 : 1, 1};
  m.height = size[m.up.axis];
  char text[200];
  std::snprintf(text, sizeof text,
                "not a humanoid: estimated from the extent of %zu body joint%s over %zu frame%s "
                "(%.4g x %.4g x %.4g)",
                body.size(), body.size() == 1 ? "" : "s", worlds.size(),
                worlds.size() == 1 ? "" : "s", size.x(), size.y(), size.z());
  m.evidence = text;
  return m;
}

}  // namespace rigel
