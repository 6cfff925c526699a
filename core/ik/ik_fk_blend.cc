// IK/FK blending. See ik_fk_blend.h.
#include "core/ik/ik_fk_blend.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/plan.h"
#include "core/skeleton.h"

namespace rigel::ik {

namespace {

// Whether joint j's channels are bit-identical in a and b.
bool SameChannels(std::span<const double> a, std::span<const double> b, int begin, int count) {
  for (int c = begin; c < begin + count; ++c) {
    if (std::bit_cast<std::uint64_t>(a[c]) != std::bit_cast<std::uint64_t>(b[c])) return false;
  }
  return true;
}

// Blends the channels of joint j at weight w in (0, 1) (channels differ).
void BlendJoint(const Skeleton& s, int j, double w, std::span<const double> fk,
                std::span<const double> ik, std::span<double> out) {
  const std::span<const ChannelType> types = s.joint_channels(j);
  const int begin = s.channel_begin(j);
  const std::optional<EulerOrder> order = s.rotation_order(j);
  Eigen::Vector3d xyz_fk = Eigen::Vector3d::Zero(), xyz_ik = Eigen::Vector3d::Zero();
  if (order) {
    for (const int c : s.rotation_channels(j)) {
      xyz_fk[ChannelAxis(s.channels()[c])] = fk[c];
      xyz_ik[ChannelAxis(s.channels()[c])] = ik[c];
    }
  }
  // Positions (and one or two rotation channels) lerp; read every input before writing.
  for (int k = 0; k < static_cast<int>(types.size()); ++k) {
    const int c = begin + k;
    if (order && IsRotation(types[k])) continue;
    const double a = fk[c], b = ik[c];
    out[c] = a + w * (b - a);
  }
  if (!order) return;
  const Eigen::Quaterniond q_fk = EulerToQuaternion(*order, xyz_fk);
  const Eigen::Quaterniond q_ik = EulerToQuaternion(*order, xyz_ik);
  const Eigen::Vector3d xyz = QuaternionToEulerNear(q_fk.slerp(w, q_ik), *order, xyz_fk);
  for (const int c : s.rotation_channels(j)) out[c] = xyz[ChannelAxis(s.channels()[c])];
}

}  // namespace

bool IkFkBlendJob::Validate(std::string* error) const {
  auto fail = [&](const char* why) {
    if (error != nullptr) *error = std::string("ik/fk blend: ") + why;
    return false;
  };
  if (skeleton == nullptr) return fail("no skeleton");
  const size_t nc = static_cast<size_t>(skeleton->num_channels());
  if (fk.size() != nc || ik.size() != nc || output.size() != nc) {
    return fail("fk, ik and output need one value per channel of the skeleton");
  }
  if (weights.size() != static_cast<size_t>(skeleton->num_joints())) {
    return fail("weights need one value per joint of the skeleton");
  }
  for (const double w : weights) {
    if (!(w >= 0 && w <= 1)) return fail("a weight is outside [0, 1]");
  }
  return true;
}

bool IkFkBlendJob::Run() const {
  if (!Validate()) return false;
  const Skeleton& s = *skeleton;
  const int nj = s.num_joints();
  int first = nj;
  for (int j = 0; j < nj; ++j) {
    const int begin = s.channel_begin(j);
    const int count = s.channel_count(j);
    if (count == 0) continue;
    const double w = weights[j];
    if (w >= 1 || SameChannels(fk, ik, begin, count)) {
      if (output.data() != ik.data())
        std::copy_n(ik.begin() + begin, count, output.begin() + begin);
      continue;
    }
    if (w <= 0) {
      std::copy_n(fk.begin() + begin, count, output.begin() + begin);
    } else {
      BlendJoint(s, j, w, fk, ik, output);
    }
    first = std::min(first, j);
  }
  if (first_changed != nullptr) *first_changed = first;
  return true;
}

namespace internal {

bool WantsIkFkBlend(const Rig& rig, std::span<const Target> targets) {
  for (const Stage& st : rig.stages) {
    if (st.ik_blend < 1) return true;
  }
  for (size_t t = 0; t < targets.size() && t < rig.tasks.size(); ++t) {
    if (targets[t].ik_blend < 1 && rig.tasks[t].type != TaskType::kPole) return true;
  }
  return false;
}

void IkFkJointWeights(const Rig& rig, std::span<const Target> targets, const Workspace::Impl& w,
                      std::span<double> weights) {
  const Skeleton& s = rig.skeleton();
  constexpr double kUnset = -1;
  std::fill(weights.begin(), weights.end(), kUnset);
  for (size_t si = 0; si < w.stages.size(); ++si) {
    const StageWork& st = w.stages[si];
    const double stage_blend = rig.stages.empty() ? 1.0 : rig.stages[si].ik_blend;
    for (const int t : st.tasks) {
      const Task& task = rig.tasks[t];
      if (task.type == TaskType::kPole || task.weight * targets[t].weight <= 0) continue;
      const double blend = stage_blend * targets[t].ik_blend;
      auto mark = [&](int j) {
        if (j >= 0) weights[j] = std::max(weights[j], blend);
      };
      if (st.method == Method::kTwoBone) {
        mark(st.upper);
        mark(st.lower);
        mark(st.end);
        continue;
      }
      for (int j = task.joint; j != Skeleton::kNoParent; j = s.parent(j)) {
        for (int c = s.channel_begin(j); c < s.channel_begin(j) + s.channel_count(j); ++c) {
          if (st.channel_col[c] >= 0) {
            mark(j);
            break;
          }
        }
      }
    }
  }
  for (double& x : weights) {
    if (x == kUnset) x = 1.0;
  }
}

}  // namespace internal

}  // namespace rigel::ik
