#include "core/retarget/contacts.h"

#include <algorithm>

#include "core/pose.h"
#include "core/retarget/alignment.h"
#include "core/retarget/humanoid.h"
#include "core/retarget/transfer.h"

namespace rigel::retarget {

std::vector<ContactWindow> DetectContacts(std::span<const Eigen::Vector3d> positions, int tracks,
                                          double frame_time, const ContactOptions& options,
                                          double* ground_out) {
  std::vector<ContactWindow> out;
  if (tracks <= 0) return out;
  const int frames = static_cast<int>(positions.size() / static_cast<size_t>(tracks));
  const int up = options.up_axis;
  const double dt = frame_time > 0 ? frame_time : 1.0 / 30.0;
  auto at = [&](int f, int t) -> const Eigen::Vector3d& {
    return positions[static_cast<size_t>(f) * tracks + t];
  };
  double ground = 1e300;
  for (int t = 0; t < tracks; ++t) {
    for (int f = 0; f < frames; ++f) ground = std::min(ground, at(f, t)[up]);
  }
  if (ground_out) *ground_out = frames > 0 ? ground : 0.0;
  const double max_height = options.height * options.scale;
  const double max_speed = options.speed * options.scale;
  const int min_frames = std::max(options.min_frames, 1);
  for (int t = 0; t < tracks; ++t) {
    int start = -1;
    for (int f = 0; f <= frames; ++f) {
      bool in = false;
      if (f < frames) {
        const int f0 = std::max(f - 1, 0);
        const int f1 = std::min(f + 1, frames - 1);
        const double speed =
            f1 > f0 ? Horizontal(at(f1, t) - at(f0, t), up).norm() / ((f1 - f0) * dt) : 0.0;
        in = at(f, t)[up] - ground < max_height && speed < max_speed;
      }
      if (in && start < 0) start = f;
      if (!in && start >= 0) {
        if (f - start >= min_frames) out.push_back({t, start, f - 1});
        start = -1;
      }
    }
  }
  return out;
}

std::vector<ContactWindow> DetectContacts(const Skeleton& skeleton, const Clip& clip,
                                          std::span<const int> joints,
                                          const ContactOptions& options, double* ground) {
  const int frames = clip.num_frames();
  const int tracks = static_cast<int>(joints.size());
  std::vector<Eigen::Vector3d> positions(static_cast<size_t>(frames) * tracks);
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(skeleton, clip.frame(f), world);
    for (int t = 0; t < tracks; ++t) {
      positions[static_cast<size_t>(f) * tracks + t] = world[joints[t]].translation();
    }
  }
  return DetectContacts(positions, tracks, clip.frame_time(), options, ground);
}

double FigureHipHeight(const Skeleton& skeleton, std::span<const Eigen::Isometry3d> world, int up) {
  double ground = 0.0;
  const double height = PoseHeight(skeleton, world, up, &ground);
  const HumanoidJoints roles = ClassifyHumanoid(skeleton);
  const int left = roles[Role::kLeftUpperLeg];
  const int right = roles[Role::kRightUpperLeg];
  double hip = 0.0;
  if (left >= 0 && right >= 0) {
    hip = 0.5 * (world[left].translation()[up] + world[right].translation()[up]) - ground;
  } else {
    const int hips = roles[Role::kHips] >= 0 ? roles[Role::kHips] : 0;
    if (!world.empty()) hip = world[hips].translation()[up] - ground;
  }
  return hip > 0.0 ? hip : 0.5 * height;
}

std::vector<FootContact> FindFootContacts(const Alignment& a, const TransferredMotion& motion,
                                          const RetargetOptions& options) {
  const int frames = motion.clip.num_frames();
  std::vector<int> feet;
  for (int li = 0; li < static_cast<int>(a.limbs.size()); ++li) {
    if (a.limbs[li].foot) feet.push_back(li);
  }
  const int tracks = static_cast<int>(feet.size());
  std::vector<Eigen::Vector3d> positions(static_cast<size_t>(frames) * tracks);
  for (int f = 0; f < frames; ++f) {
    for (int t = 0; t < tracks; ++t) {
      positions[static_cast<size_t>(f) * tracks + t] =
          ScaledSourcePosition(a, motion, f, a.limbs[feet[t]].source_end);
    }
  }
  ContactOptions o;
  o.up_axis = a.target_up;
  o.scale = a.target_hip_height;
  o.height = options.contact_height;
  o.speed = options.contact_speed;
  o.min_frames = options.contact_min_frames;
  std::vector<FootContact> out;
  for (const ContactWindow& w : DetectContacts(positions, tracks, motion.clip.frame_time(), o)) {
    const int source_end = a.limbs[feet[w.track]].source_end;
    Eigen::Vector3d mean = Eigen::Vector3d::Zero();
    for (int g = w.first; g <= w.last; ++g) mean += SourceGoal(a, motion, g, source_end);
    out.push_back({feet[w.track], w.first, w.last, mean / (w.last - w.first + 1)});
  }
  return out;
}

}  // namespace rigel::retarget
