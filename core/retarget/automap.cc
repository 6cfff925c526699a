// AutoMap and the names of finger joints (core/retarget/humanoid.h): two skeletons classified,
// their roles paired, spine and neck chains matched end to end, fingers joint by joint.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/retarget/humanoid.h"
#include "core/skeleton.h"

namespace rigel::retarget {

namespace {

// Pairs the joints of two chains end to end: the shorter chain's joints spread over the longer.
// A one-joint chain pairs with the longer chain's last joint (spine: the chest, where the arms
// hang) or first (neck: its base, so the segment to the head is the one that follows the source).
std::vector<std::pair<int, int>> MatchChains(const std::vector<int>& a, const std::vector<int>& b,
                                             bool single_to_first) {
  std::vector<std::pair<int, int>> pairs;
  if (a.empty() || b.empty()) return pairs;
  // The joint of the longer chain (`many` joints) that joint `i` of the shorter (`few`) pairs with.
  auto spread = [single_to_first](size_t i, size_t few, size_t many) {
    if (few == 1) return single_to_first ? size_t{0} : many - 1;
    return static_cast<size_t>(std::lround(static_cast<double>(i) * static_cast<double>(many - 1) /
                                           static_cast<double>(few - 1)));
  };
  const size_t m = a.size();
  const size_t n = b.size();
  if (m <= n) {
    for (size_t i = 0; i < m; ++i) pairs.emplace_back(a[i], b[spread(i, m, n)]);
  } else {
    for (size_t j = 0; j < n; ++j) pairs.emplace_back(a[spread(j, n, m)], b[j]);
  }
  return pairs;
}

// "0.90" for a confidence.
std::string FormatConfidence(double c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", c);
  return buf;
}

}  // namespace

std::string FingerJointName(int side, int finger, int slot) {
  static constexpr std::array<std::string_view, 5> kFingers = {"Thumb", "Index", "Middle", "Ring",
                                                               "Pinky"};
  return std::string(side == 0 ? "Left" : "Right") + std::string(kFingers[finger]) +
         std::to_string(slot);
}

BoneMap AutoMap(const Skeleton& source, const Skeleton& target, std::vector<std::string>* notes,
                std::vector<std::string>* left_out) {
  const HumanoidJoints hs = ClassifyHumanoid(source);
  const HumanoidJoints ht = ClassifyHumanoid(target);
  BoneMap map;
  std::vector<bool> target_used(target.num_joints(), false);
  auto add = [&](int s, int t, std::optional<Role> role) {
    if (s < 0 || t < 0 || target_used[t]) return;
    target_used[t] = true;
    BoneMapEntry e;
    e.source = source.name(s);
    e.target = target.name(t);
    e.role = role;
    map.entries.push_back(std::move(e));
  };
  auto confidence = [](const HumanoidJoints& h, Role r) {
    return FormatConfidence(h.confidence[static_cast<int>(r)]) + " " + h.why[static_cast<int>(r)];
  };
  auto add_role = [&](Role r) {
    if (hs[r] >= 0 && ht[r] >= 0) {
      add(hs[r], ht[r], r);
    } else if (notes && (hs[r] >= 0 || ht[r] >= 0)) {
      notes->push_back(std::string(RoleName(r)) + ": found only in the " +
                       (hs[r] >= 0 ? "source ('" + source.name(hs[r]) + "')"
                                   : "target ('" + target.name(ht[r]) + "')") +
                       ", left unmapped");
    }
  };
  if (notes) {
    for (const std::string& w : hs.warnings) notes->push_back("warning: source: " + w);
    for (const std::string& w : ht.warnings) notes->push_back("warning: target: " + w);
  }
  add_role(Role::kHips);
  // Spine: chains end to end (the chest is the last joint of both).
  for (const auto& [s, t] : MatchChains(hs.spine, ht.spine, false)) {
    add(s, t,
        s == hs[Role::kChest] && t == ht[Role::kChest] ? std::optional(Role::kChest)
                                                       : std::nullopt);
  }
  add_role(Role::kChest);
  for (const auto& [s, t] : MatchChains(hs.neck, ht.neck, true)) {
    add(s, t,
        s == hs[Role::kNeck] && t == ht[Role::kNeck] ? std::optional(Role::kNeck) : std::nullopt);
  }
  for (int r = static_cast<int>(Role::kHead); r < kRoleCount; ++r) add_role(static_cast<Role>(r));
  // Why each role pair was chosen (chest and neck come from the chains above).
  for (BoneMapEntry& e : map.entries) {
    if (!e.role || hs[*e.role] < 0 || ht[*e.role] < 0) continue;
    e.comment = "source " + confidence(hs, *e.role) + "; target " + confidence(ht, *e.role);
  }
  // Fingers, joint by joint where both rigs have it.
  for (int side = 0; side < 2; ++side) {
    std::string only_source, only_target;
    for (int f = 0; f < 5; ++f) {
      const auto& fs = hs.fingers[static_cast<size_t>(side * 5 + f)];
      const auto& ft = ht.fingers[static_cast<size_t>(side * 5 + f)];
      for (size_t slot = 0; slot < 4; ++slot) {
        const std::string label = FingerJointName(side, f, static_cast<int>(slot));
        if (fs[slot] >= 0 && ft[slot] >= 0) {
          add(fs[slot], ft[slot], std::nullopt);
          if (!map.entries.empty() && map.entries.back().target == target.name(ft[slot])) {
            map.entries.back().comment = label;
          }
        } else if (fs[slot] >= 0) {
          only_source += (only_source.empty() ? "" : ", ") + label;
        } else if (ft[slot] >= 0) {
          only_target += (only_target.empty() ? "" : ", ") + label;
        }
      }
    }
    if (!left_out) continue;
    const char* hand = side == 0 ? "left hand" : "right hand";
    if (!only_source.empty()) {
      left_out->push_back(std::string(hand) + ": only the source has " + only_source);
    }
    if (!only_target.empty()) {
      left_out->push_back(std::string(hand) + ": only the target has " + only_target +
                          " (left at the reference pose)");
    }
  }
  // Keep the target's joint order (parents first) so maps read top-down.
  std::sort(map.entries.begin(), map.entries.end(),
            [&](const BoneMapEntry& a, const BoneMapEntry& b) {
              return target.FindJoint(a.target) < target.FindJoint(b.target);
            });
  return map;
}

}  // namespace rigel::retarget