#include "core/retarget/evidence.h"

#include <algorithm>
#include <cmath>

#include "core/pose.h"
#include "core/retarget/humanoid.h"
#include "core/skeleton_utils.h"

namespace rigel::retarget {

namespace {

constexpr double kDegPerRad = 180.0 / 3.14159265358979323846;

}  // namespace

// The pop scores: per joint, the rotation vector of R_{f-1}^T R_f (the joint's local angular
// velocity, radians per frame), then the change of it from one frame to the next.
void MeasurePops(const Skeleton& s, const Clip& clip, std::vector<double>* pop,
                 std::vector<int>* pop_joint, const std::vector<int>& scored) {
  const int frames = clip.num_frames();
  pop->assign(frames, 0.0);
  pop_joint->assign(frames, -1);
  if (frames < 3) return;
  std::vector<int> joints;
  for (int j = 0; j < s.num_joints(); ++j) {
    const bool wanted =
        scored.empty() || std::find(scored.begin(), scored.end(), j) != scored.end();
    if (wanted && !s.rotation_channels(j).empty()) joints.push_back(j);
  }
  const size_t nj = joints.size();
  std::vector<Eigen::Matrix3d> previous(nj), current(nj);
  std::vector<Eigen::Vector3d> velocity(nj);
  for (size_t k = 0; k < nj; ++k) previous[k] = LocalRotation(s, joints[k], clip.frame(0));
  for (int f = 1; f < frames; ++f) {
    for (size_t k = 0; k < nj; ++k) {
      current[k] = LocalRotation(s, joints[k], clip.frame(f));
      const Eigen::AngleAxisd step(previous[k].transpose() * current[k]);
      const Eigen::Vector3d w = step.angle() * step.axis();
      if (f >= 2) {
        // The change at frame f-1: between (f-2 -> f-1) and (f-1 -> f).
        const double score = (w - velocity[k]).norm() * kDegPerRad / kPopDegrees;
        if (score > (*pop)[f - 1]) {
          (*pop)[f - 1] = score;
          (*pop_joint)[f - 1] = joints[k];
        }
      }
      velocity[k] = w;
      previous[k] = current[k];
    }
  }
}

ClipEvidence MeasureClipEvidence(const Skeleton& skeleton, const Clip& clip, std::vector<int> feet,
                                 int up_axis) {
  ClipEvidence out;
  const int frames = clip.num_frames();
  MeasurePops(skeleton, clip, &out.pop, &out.pop_joint);
  out.foot_slide.assign(frames, -1.0);
  if (frames == 0) return out;
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  ForwardKinematics(skeleton, clip.frame(0), world);
  out.up_axis = up_axis >= 0 && up_axis < 3 ? up_axis : GuessUpAxis(JointBounds(world));
  if (feet.empty()) {
    const HumanoidJoints h = ClassifyHumanoid(skeleton);
    for (const Role r : {Role::kLeftFoot, Role::kRightFoot}) {
      const int j = h.joint[static_cast<int>(r)];
      if (j >= 0) feet.push_back(j);
    }
  }
  out.feet = feet;
  if (feet.empty()) return out;
  ContactOptions options;
  options.up_axis = out.up_axis;
  options.scale = FigureHipHeight(skeleton, world, out.up_axis);
  // The feet's world positions, one forward-kinematics pass; the detector and the slide read them.
  const int tracks = static_cast<int>(feet.size());
  std::vector<Eigen::Vector3d> positions(static_cast<size_t>(frames) * tracks);
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(skeleton, clip.frame(f), world);
    for (int t = 0; t < tracks; ++t) {
      positions[static_cast<size_t>(f) * tracks + t] = world[feet[t]].translation();
    }
  }
  out.contacts = DetectContacts(positions, tracks, clip.frame_time(), options);
  std::vector<int> window_of(static_cast<size_t>(frames) * tracks, -1);
  for (size_t w = 0; w < out.contacts.size(); ++w) {
    const ContactWindow& c = out.contacts[w];
    for (int f = c.first; f <= c.last; ++f)
      window_of[static_cast<size_t>(f) * tracks + c.track] = static_cast<int>(w);
  }
  for (int f = 1; f < frames; ++f) {
    for (int t = 0; t < tracks; ++t) {
      const size_t k = static_cast<size_t>(f) * tracks + t;
      if (window_of[k] < 0 || window_of[k - tracks] != window_of[k]) continue;
      Eigen::Vector3d d = positions[k] - positions[k - tracks];
      d[out.up_axis] = 0.0;
      out.foot_slide[f] = std::max(out.foot_slide[f], d.norm());
    }
  }
  return out;
}

}  // namespace rigel::retarget
