// The per-joint rule that decides how a BVH file's position channels read (added to the OFFSET or
// replacing it): what one joint's own values say (importers/bvh_reader.cc's header comment).
#include "importers/bvh_translation_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace rigel::bvh_internal {
namespace {

// Value at quantile q (0..1) of `v` (reordered), nearest rank.
double Quantile(std::vector<double>& v, double q) {
  const size_t k = std::min(
      v.size() - 1, static_cast<size_t>(std::llround(q * static_cast<double>(v.size() - 1))));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

// True when no ancestor of `joint` has a channel: its translation is as free as a root's.
bool IsFree(const Skeleton& skeleton, int joint) {
  for (int p = skeleton.parent(joint); p >= 0; p = skeleton.parent(p)) {
    if (skeleton.channel_count(p) > 0) return false;
  }
  return true;
}

// Bone-length evidence: a joint under a moving parent is one rigid bone away from it, so its
// local translation keeps one length on every frame under the right reading. Returns the reading
// whose length spread over the frames is less than a tenth of the other's, when the other's is
// more than rounding (1e-9 of the figure); nullopt when the lengths do not tell.
std::optional<TranslationMode> BoneLengthVerdict(const Skeleton& skeleton, const Clip& clip,
                                                 int joint, double figure_size) {
  if (IsFree(skeleton, joint) || clip.num_frames() < 2) return std::nullopt;
  const Eigen::Vector3d& offset = skeleton.rest_translation(joint);
  double add_min = INFINITY, add_max = -INFINITY, rep_min = INFINITY, rep_max = -INFINITY;
  for (int f = 0; f < clip.num_frames(); ++f) {
    Eigen::Vector3d added = offset, replaced = offset;
    for (int k = 0; k < 3; ++k) {
      const int c = skeleton.translation_channel(joint, k);
      if (c < 0) continue;
      added[k] += clip.at(f, c);
      replaced[k] = clip.at(f, c);
    }
    add_min = std::min(add_min, added.norm());
    add_max = std::max(add_max, added.norm());
    rep_min = std::min(rep_min, replaced.norm());
    rep_max = std::max(rep_max, replaced.norm());
  }
  const double add_spread = add_max - add_min, rep_spread = rep_max - rep_min;
  const double noise = 1e-9 * figure_size;
  if (add_spread > noise && rep_spread * 10 < add_spread) return TranslationMode::kReplace;
  if (rep_spread > noise && add_spread * 10 < rep_spread) return TranslationMode::kAdd;
  return std::nullopt;
}

}  // namespace

// The per-joint decision of the header comment from the joint's own values. `clip` holds the
// file's values.
JointVerdict DecideTranslation(const Skeleton& skeleton, const Clip& clip, int joint,
                               double figure_size, std::vector<double>& values) {
  JointVerdict verdict;
  const Eigen::Vector3d& offset = skeleton.rest_translation(joint);
  double norm2 = 0;
  for (int k = 0; k < 3; ++k) {
    if (skeleton.translation_channel(joint, k) >= 0) norm2 += offset[k] * offset[k];
  }
  const double norm = std::sqrt(norm2);
  if (norm <= 1e-9 * figure_size || norm == 0) return verdict;
  int add = 0, replace = 0, neither = 0;
  std::string detail;
  values.resize(clip.num_frames());
  for (int k = 0; k < 3; ++k) {
    const int c = skeleton.translation_channel(joint, k);
    if (c < 0 || std::abs(offset[k]) < 0.1 * norm) continue;
    for (int f = 0; f < clip.num_frames(); ++f) values[f] = clip.at(f, c);
    const double spread = Quantile(values, 0.95) - Quantile(values, 0.05);
    const double median = Quantile(values, 0.5);
    const char axis = static_cast<char>('X' + k);
    if (spread > 0.5 * std::abs(offset[k])) {
      detail +=
          fmt::format(" {}: values spread over {:.4g}, OFFSET {:.4g};", axis, spread, offset[k]);
      continue;
    }
    const double t = median / offset[k];
    if (std::abs(t - 1) <= 0.25) {
      ++replace;
    } else if (std::abs(t) <= 0.25) {
      ++add;
    } else {
      ++neither;
      detail +=
          fmt::format(" {}: median {:.4g} is {:.3g} x OFFSET {:.4g};", axis, median, t, offset[k]);
    }
  }
  std::optional<TranslationMode> votes;
  if (replace > 0 && add == 0 && neither == 0) votes = TranslationMode::kReplace;
  if (add > 0 && replace == 0 && neither == 0) votes = TranslationMode::kAdd;
  const std::optional<TranslationMode> bones =
      BoneLengthVerdict(skeleton, clip, joint, figure_size);
  if (votes && (!bones || bones == votes)) {
    verdict.kind = JointVerdict::kDecided;
    verdict.mode = *votes;
    return verdict;
  }
  if (bones && !votes) {
    verdict.kind = JointVerdict::kDecided;
    verdict.mode = *bones;
    return verdict;
  }
  if (add > 0 && replace > 0) detail += " some axes restate the OFFSET, others stay near zero;";
  if (votes && bones) {
    detail +=
        fmt::format(" the values {}, but the bone keeps its length only {};",
                    votes == TranslationMode::kReplace ? "restate the OFFSET" : "stay near zero",
                    bones == TranslationMode::kReplace ? "as absolute" : "as deltas");
  }
  if (!detail.empty()) detail.pop_back();
  verdict.kind = JointVerdict::kUndecided;
  verdict.detail = detail.empty() ? std::string("no axis to judge by") : detail.substr(1);
  return verdict;
}

}  // namespace rigel::bvh_internal
