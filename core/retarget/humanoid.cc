// ClassifyHumanoid (core/retarget/humanoid.h): the limb words of every joint confirmed, and gaps
// filled, by the hierarchy: leg and arm chains, head and neck, hips and chest where the limbs
// meet, the spine and neck chains, the fingers, and warnings where names and hierarchy disagree.
#include "core/retarget/humanoid.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/retarget/humanoid_words.h"
#include "core/skeleton.h"

namespace rigel::retarget {

using internal::FingerOfTokens;
using internal::IsMetacarpalToken;
using internal::IsNumber;
using internal::Limb;
using internal::LimbOfTokens;
using internal::LimbRole;
using internal::StartsWith;

namespace {

std::vector<int> Depths(const Skeleton& s) {
  std::vector<int> depth(s.num_joints(), 0);
  for (int j = 0; j < s.num_joints(); ++j) {
    if (s.parent(j) >= 0) depth[j] = depth[s.parent(j)] + 1;
  }
  return depth;
}

bool IsAncestor(const Skeleton& s, int ancestor, int joint) {
  for (int j = joint; j >= 0; j = s.parent(j)) {
    if (j == ancestor) return true;
  }
  return false;
}

int CommonAncestor(const Skeleton& s, int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  for (int j = a; j >= 0; j = s.parent(j)) {
    if (IsAncestor(s, j, b)) return j;
  }
  return -1;
}

// Joints strictly below `top` down to `bottom` (included), parent first. Empty when `top` is not
// an ancestor of `bottom`.
std::vector<int> PathBelow(const Skeleton& s, int top, int bottom) {
  std::vector<int> path;
  for (int j = bottom; j >= 0 && j != top; j = s.parent(j)) path.push_back(j);
  if (top >= 0 && !IsAncestor(s, top, bottom)) return {};
  std::reverse(path.begin(), path.end());
  return path;
}

constexpr double kNamed = 1.0;      // the name says it and the hierarchy agrees
constexpr double kResolved = 0.9;   // an ambiguous word ("shoulder", "hip") settled by hierarchy
constexpr double kHierarchy = 0.7;  // the hierarchy alone (a gap in a named chain)
constexpr double kHelperCost = 0.2;

// What the classifier knows about each joint.
struct Candidates {
  std::vector<NormalisedName> names;
  std::vector<Limb> limb;
  std::vector<int> depth;
};

// Rest-pose world positions (all channels zero).
std::vector<Eigen::Vector3d> RestPositions(const Skeleton& s) {
  const int n = s.num_joints();
  std::vector<Eigen::Isometry3d> world(n);
  std::vector<Eigen::Vector3d> pos(n);
  for (int j = 0; j < n; ++j) {
    Eigen::Isometry3d local = Eigen::Isometry3d::Identity();
    local.translate(s.rest_translation(j));
    local.rotate(s.rest_orientation(j));
    world[j] = s.parent(j) >= 0 ? world[s.parent(j)] * local : local;
    pos[j] = world[j].translation();
  }
  return pos;
}

// Number of joints below `j` (itself included): the main chain continues into the largest child.
std::vector<int> SubtreeSizes(const Skeleton& s) {
  std::vector<int> size(s.num_joints(), 1);
  for (int j = s.num_joints() - 1; j >= 0; --j) {
    if (s.parent(j) >= 0) size[s.parent(j)] += size[j];
  }
  return size;
}

}  // namespace

HumanoidJoints ClassifyHumanoid(const Skeleton& s) {
  HumanoidJoints h;
  const int n = s.num_joints();
  Candidates c;
  c.depth = Depths(s);
  c.names.resize(n);
  c.limb.assign(n, Limb::kNone);
  for (int j = 0; j < n; ++j) {
    c.names[j] = NormaliseJointName(s.name(j));
    if (c.names[j].extra) {
      h.extras.push_back(j);
      continue;
    }
    c.limb[j] = LimbOfTokens(c.names[j].tokens);
  }
  const std::vector<int> subtree = SubtreeSizes(s);
  // Better candidate: plain before helper, then shallower, then earlier.
  auto better = [&](int a, int b) {
    if (b < 0) return true;
    if (c.names[a].helper != c.names[b].helper) return !c.names[a].helper;
    return c.depth[a] < c.depth[b];
  };
  auto set = [&](Role role, int j, double confidence, std::string why) {
    h[role] = j;
    const int r = static_cast<int>(role);
    h.confidence[r] = j >= 0 ? confidence - (c.names[j].helper ? kHelperCost : 0.0) : 0.0;
    h.why[r] = j >= 0 ? std::move(why) : std::string();
  };
  // The best joint of `limb` on `side` below `top` (any when top < 0), optionally above `bottom`.
  auto best_of = [&](Limb limb, Side side, int top, int bottom = -1) {
    int best = -1;
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] != limb || c.names[j].side != side) continue;
      if (top >= 0 && (j == top || !IsAncestor(s, top, j))) continue;
      if (bottom >= 0 && !IsAncestor(s, j, bottom)) continue;
      if (better(j, best)) best = j;
    }
    return best;
  };
  // Next joint down the main chain from `j` (largest non-extra child), -1 at a leaf or a fork of
  // equals (MakeHuman's five toes).
  auto next_down = [&](int j, bool allow_fork) {
    int best = -1, second = -1;
    for (const int child : s.children(j)) {
      if (c.names[child].extra || c.limb[child] == Limb::kFinger) continue;
      if (best < 0 || subtree[child] > subtree[best]) {
        second = best;
        best = child;
      } else if (second < 0 || subtree[child] > subtree[second]) {
        second = child;
      }
    }
    if (!allow_fork && second >= 0 && subtree[second] == subtree[best]) return -1;
    return best;
  };
  auto named = [&](int j) { return "named '" + s.name(j) + "'"; };
  // Warns about joints named like `limb` on `side` that the chain did not take.
  auto warn_off_chain = [&](Limb limb, Side side, Role role, const char* where) {
    const int chosen = h[role];
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] != limb || c.names[j].side != side || j == chosen) continue;
      if (chosen >= 0 && (IsAncestor(s, chosen, j) || IsAncestor(s, j, chosen))) continue;
      if (c.names[j].helper) continue;
      h.warnings.push_back(std::string(RoleName(role)) + ": '" + s.name(j) +
                           "' is named like it but is not " + where +
                           (chosen >= 0 ? "; using '" + s.name(chosen) + "'" : std::string()));
    }
  };
  // The best joint named `top` on `side`, preferring one with a `middle` or `end` joint named
  // below it.
  auto chain_top = [&](Limb top, Limb middle, Limb end, Side side) {
    auto named_below = [&](int j) {
      return best_of(middle, side, j) >= 0 || best_of(end, side, j) >= 0;
    };
    int upper = -1;
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] != top || c.names[j].side != side) continue;
      const bool chain = named_below(j);
      const bool upper_chain = upper >= 0 && named_below(upper);
      if (upper < 0 || (chain && !upper_chain) || (chain == upper_chain && better(j, upper))) {
        upper = j;
      }
    }
    return upper;
  };
  // The joint of `limb` on `side` below `above` ("the <above_name>"): by name, else the next joint
  // down the chain. Sets its role; -1 when there is none.
  auto link_below = [&](Limb limb, Side side, int above, const char* above_name) {
    int j = best_of(limb, side, above);
    if (j >= 0) {
      set(LimbRole(limb, side), j, kNamed, named(j) + ", below the " + above_name);
    } else if ((j = next_down(above, true)) >= 0) {
      set(LimbRole(limb, side), j, kHierarchy, std::string("next joint below the ") + above_name);
    }
    return j;
  };

  // Legs: upper (definite word, else a sided "hip"), then lower, foot and toes below it, each by
  // name under the previous one, else the next joint down the chain.
  for (const Side side : {Side::kLeft, Side::kRight}) {
    const Role upper_r = LimbRole(Limb::kUpperLeg, side), lower_r = LimbRole(Limb::kLowerLeg, side),
               foot_r = LimbRole(Limb::kFoot, side), toes_r = LimbRole(Limb::kToes, side);
    // Prefer an upper leg with a lower leg or foot named below it.
    int upper = chain_top(Limb::kUpperLeg, Limb::kLowerLeg, Limb::kFoot, side);
    double upper_conf = kNamed;
    if (upper < 0) {
      upper = best_of(Limb::kAmbiguousHip, side, -1);
      upper_conf = kResolved;
    }
    if (upper < 0) continue;
    set(upper_r, upper, upper_conf,
        named(upper) + (upper_conf < kNamed ? ", the top of a leg chain" : ""));
    const int lower = link_below(Limb::kLowerLeg, side, upper, "upper leg");
    if (lower < 0) continue;
    const int foot = link_below(Limb::kFoot, side, lower, "lower leg");
    if (foot < 0) continue;
    int toes = best_of(Limb::kToes, side, foot);
    if (toes >= 0) {
      set(toes_r, toes, kNamed, named(toes) + ", below the foot");
    } else if ((toes = next_down(foot, false)) >= 0 && c.limb[toes] == Limb::kNone &&
               best_of(Limb::kToes, side, -1) < 0) {
      set(toes_r, toes, kHierarchy, "the one joint below the foot");
    }
    warn_off_chain(Limb::kLowerLeg, side, lower_r, "below the upper leg");
    warn_off_chain(Limb::kFoot, side, foot_r, "below the lower leg");
  }

  // Arms: a definite upper arm (with a forearm or hand below when one exists), the clavicle
  // above it; "shoulder" is the clavicle above an "arm" and the upper arm below a "collar".
  for (const Side side : {Side::kLeft, Side::kRight}) {
    const Role clav_r = LimbRole(Limb::kShoulder, side), upper_r = LimbRole(Limb::kUpperArm, side),
               lower_r = LimbRole(Limb::kLowerArm, side), hand_r = LimbRole(Limb::kHand, side);
    int upper = chain_top(Limb::kUpperArm, Limb::kLowerArm, Limb::kHand, side);
    double upper_conf = kNamed;
    std::string upper_why = upper >= 0 ? named(upper) : "";
    int clav =
        upper >= 0 ? best_of(Limb::kShoulder, side, -1, upper) : best_of(Limb::kShoulder, side, -1);
    double clav_conf = kNamed;
    std::string clav_why = clav >= 0 ? named(clav) + ", above the upper arm" : "";
    // Ambiguous "shoulder"s, best first.
    std::vector<int> ambiguous;
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] == Limb::kAmbiguousShoulder && c.names[j].side == side) ambiguous.push_back(j);
    }
    std::sort(ambiguous.begin(), ambiguous.end(),
              [&](int a, int b) { return better(a, b) && a != b; });
    for (const int j : ambiguous) {
      if (upper < 0 && clav >= 0 && IsAncestor(s, clav, j)) {
        upper = j;
        upper_conf = kResolved;
        upper_why = named(j) + ", below the collar '" + s.name(clav) + "'";
      } else if (upper < 0 && clav < 0) {
        upper = j;
        upper_conf = kResolved;
        upper_why = named(j) + ", no collar or arm named";
      } else if (upper >= 0 && clav < 0 && IsAncestor(s, j, upper)) {
        clav = j;
        clav_conf = kResolved;
        clav_why = named(j) + ", above the upper arm '" + s.name(upper) + "'";
      }
    }
    if (upper < 0) continue;
    set(upper_r, upper, upper_conf, upper_why);
    if (clav >= 0) set(clav_r, clav, clav_conf, clav_why);
    const int lower = link_below(Limb::kLowerArm, side, upper, "upper arm");
    if (lower < 0) continue;
    link_below(Limb::kHand, side, lower, "lower arm");
    warn_off_chain(Limb::kLowerArm, side, lower_r, "below the upper arm");
    warn_off_chain(Limb::kHand, side, hand_r, "below the lower arm");
  }

  // Head and neck by name (shallowest wins).
  for (int j = 0; j < n; ++j) {
    if (c.names[j].side == Side::kCenter && c.limb[j] == Limb::kHead &&
        (h[Role::kHead] < 0 || better(j, h[Role::kHead]))) {
      set(Role::kHead, j, kNamed, named(j));
    }
  }
  const int head = h[Role::kHead];
  // Neck: a neck word above the head; twist-named necks (Reallusion's "NeckTwist01") only when
  // nothing else is called a neck.
  auto is_neck = [&](int j) {
    return c.names[j].side == Side::kCenter && StartsWith(c.names[j].word, "neck") &&
           (head < 0 || IsAncestor(s, j, head));
  };
  bool plain_neck = false;
  for (int j = 0; j < n; ++j) plain_neck = plain_neck || (is_neck(j) && !c.names[j].extra);
  for (int j = 0; j < n; ++j) {
    if (!is_neck(j) || (plain_neck && c.names[j].extra)) continue;
    if (h[Role::kNeck] < 0 || better(j, h[Role::kNeck])) {
      set(Role::kNeck, j, kNamed, named(j) + (head >= 0 ? ", above the head" : ""));
    }
  }
  // Hips: where the legs and the upper body meet; by name when there are no legs.
  const int legs = CommonAncestor(s, h[Role::kLeftUpperLeg], h[Role::kRightUpperLeg]);
  const int upper_body = head >= 0 ? head : h[Role::kNeck];
  if (legs >= 0 && h[Role::kLeftUpperLeg] >= 0 && h[Role::kRightUpperLeg] >= 0) {
    const int hips = upper_body >= 0 ? CommonAncestor(s, legs, upper_body) : legs;
    const bool hips_named = c.limb[hips] == Limb::kHips || c.limb[hips] == Limb::kAmbiguousHip ||
                            c.names[hips].word == "root";
    set(Role::kHips, hips, hips_named ? kNamed : kHierarchy + 0.1,
        (hips_named ? named(hips) + ", " : std::string("'") + s.name(hips) + "': ") +
            "where the legs and the upper body meet");
  } else {
    for (int j = 0; j < n; ++j) {
      if (c.names[j].side == Side::kCenter &&
          (c.limb[j] == Limb::kHips || c.limb[j] == Limb::kAmbiguousHip) &&
          (h[Role::kHips] < 0 || better(j, h[Role::kHips]))) {
        set(Role::kHips, j, kResolved, named(j) + " (no pair of legs)");
      }
    }
    if (h[Role::kHips] < 0 && n > 0) set(Role::kHips, 0, 0.5, "the root (no legs or hips named)");
  }
  const int hips = h[Role::kHips];
  // Chest: where the arms meet (the clavicles' common ancestor), on the way to the head.
  int arms = CommonAncestor(
      s, h[Role::kLeftShoulder] >= 0 ? h[Role::kLeftShoulder] : h[Role::kLeftUpperArm],
      h[Role::kRightShoulder] >= 0 ? h[Role::kRightShoulder] : h[Role::kRightUpperArm]);
  if (arms >= 0 && (h[Role::kLeftUpperArm] < 0 || h[Role::kRightUpperArm] < 0)) arms = -1;
  std::string chest_why = "where the arms meet";
  if (arms >= 0 && upper_body >= 0 && !IsAncestor(s, arms, upper_body)) {
    arms = CommonAncestor(s, arms, upper_body);
    chest_why = "where the arms and the head meet";
  }
  // The arms hang from a joint named as a neck (3ds Max Biped's clavicles below 'Bip01 Neck',
  // ProAnimationBank's below 'Neck'): the chest is the spine joint below it, so a chest of
  // another rig drives that chest, not the neck (the retarget matrix found MocapBank's Chest2
  // driving 'Bip01 Neck', its own neck left out).
  if (arms >= 0 && is_neck(arms) && hips >= 0 && s.parent(arms) >= 0 && s.parent(arms) != hips &&
      IsAncestor(s, hips, s.parent(arms))) {
    arms = s.parent(arms);
    chest_why = "below the neck the arms hang from";
  }
  if (arms < 0 && h[Role::kNeck] >= 0) {
    arms = s.parent(h[Role::kNeck]);
    chest_why = "below the neck (no pair of arms)";
  }
  if (arms < 0 && head >= 0) {
    arms = s.parent(head);
    chest_why = "below the head (no pair of arms)";
  }
  if (arms >= 0 && hips >= 0 && arms != hips && IsAncestor(s, hips, arms)) {
    set(Role::kChest, arms, kResolved, "'" + s.name(arms) + "': " + chest_why);
    h.spine = PathBelow(s, hips, arms);
  } else if (arms >= 0 && hips >= 0 && arms != hips) {
    h.warnings.push_back("Chest: the arms meet at '" + s.name(arms) +
                         "', which is not above the hips '" + s.name(hips) + "'");
  }
  const int chest = h[Role::kChest];
  if (chest >= 0 && head >= 0 && IsAncestor(s, chest, head)) {
    h.neck = PathBelow(s, chest, head);
    if (!h.neck.empty()) h.neck.pop_back();  // the head itself
    // Twist/helper joints do not make a neck.
    std::erase_if(h.neck, [&](int j) { return c.names[j].extra && !is_neck(j); });
    if (!h.neck.empty() && h[Role::kNeck] < 0) {
      set(Role::kNeck, h.neck.front(), kHierarchy, "first joint from the chest to the head");
    }
    if (h[Role::kNeck] >= 0 && !h.neck.empty() && h.neck.front() != h[Role::kNeck]) {
      // Joints between the chest and the named neck belong to the spine.
      while (!h.neck.empty() && h.neck.front() != h[Role::kNeck]) h.neck.erase(h.neck.begin());
    }
  }
  std::erase_if(h.spine, [&](int j) { return c.names[j].extra; });

  // Fingers: below each hand, named by finger word or by number (Biped "Finger0" = thumb,
  // 0-based when some finger is numbered 0; MakeHuman "finger1-1" = thumb, 1-based), a chain of
  // up to three phalanges in depth order, and the metacarpal above the first when the rig has one.
  for (int side = 0; side < 2; ++side) {
    const int hand = h[side == 0 ? Role::kLeftHand : Role::kRightHand];
    if (hand < 0) continue;
    std::vector<int> below;
    for (int j = hand + 1; j < n; ++j) {
      if (IsAncestor(s, hand, j) && c.limb[j] == Limb::kFinger) below.push_back(j);
    }
    auto number_of = [&](int j) {
      const std::vector<std::string>& t = c.names[j].tokens;
      for (size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "finger" && IsNumber(t[i + 1])) return t[i + 1].front() - '0';
      }
      return -1;
    };
    bool zero_based = false;
    for (const int j : below) zero_based = zero_based || number_of(j) == 0;
    std::vector<int> finger_of(n, -1);
    std::vector<bool> metacarpal(n, false);
    for (const int j : below) {
      for (const std::string& t : c.names[j].tokens) {
        metacarpal[j] = metacarpal[j] || IsMetacarpalToken(t) || t == "fingerbase";
      }
      finger_of[j] = FingerOfTokens(c.names[j].tokens);
      if (finger_of[j] < 0 && number_of(j) >= 0) {
        const int f = number_of(j) - (zero_based ? 0 : 1);
        if (f >= 0 && f < 5) finger_of[j] = f;
      }
    }
    for (int f = 0; f < 5; ++f) {
      std::array<int, 4>& chain = h.fingers[static_cast<size_t>(side * 5 + f)];
      int first = -1;
      for (const int j : below) {
        if (finger_of[j] == f && !metacarpal[j] && (first < 0 || better(j, first))) first = j;
      }
      if (first < 0) continue;
      chain[1] = first;
      for (int slot = 2; slot <= 3; ++slot) {
        int next = -1;
        for (const int child : s.children(chain[static_cast<size_t>(slot - 1)])) {
          if (c.limb[child] == Limb::kFinger && finger_of[child] == f && !metacarpal[child] &&
              (next < 0 || better(child, next))) {
            next = child;
          }
        }
        if (next < 0) break;
        chain[static_cast<size_t>(slot)] = next;
      }
      const int parent = s.parent(first);
      if (parent != hand && parent >= 0 && c.limb[parent] == Limb::kFinger &&
          !c.names[parent].helper) {
        chain[0] = parent;
      }
    }
  }

  // What the hierarchy says about the names: both legs hang from the hips, left and right are
  // mirrored consistently between arms and legs, the two legs have about the same length.
  const std::vector<Eigen::Vector3d> pos = RestPositions(s);
  const int lul = h[Role::kLeftUpperLeg], rul = h[Role::kRightUpperLeg];
  const int lua = h[Role::kLeftUpperArm], rua = h[Role::kRightUpperArm];
  if (lul >= 0 && rul >= 0 && lua >= 0 && rua >= 0) {
    const Eigen::Vector3d legs_lr = pos[lul] - pos[rul];
    const Eigen::Vector3d arms_lr = pos[lua] - pos[rua];
    if (legs_lr.norm() > 1e-9 && arms_lr.norm() > 1e-9 && legs_lr.dot(arms_lr) < 0.0) {
      h.warnings.push_back("left and right: the left arm '" + s.name(lua) +
                           "' is on the side of the right leg '" + s.name(rul) +
                           "' in the rest pose; check the side markers");
    }
  }
  if (chest >= 0) {
    for (const Role r : {Role::kLeftUpperLeg, Role::kRightUpperLeg}) {
      if (h[r] >= 0 && IsAncestor(s, chest, h[r])) {
        h.warnings.push_back(std::string(RoleName(r)) + ": '" + s.name(h[r]) +
                             "' hangs below the chest '" + s.name(chest) + "', not the hips");
      }
    }
  }
  auto leg_length = [&](Role upper, Role foot) {
    return h[upper] >= 0 && h[foot] >= 0 ? (pos[h[foot]] - pos[h[upper]]).norm() : 0.0;
  };
  const double ll = leg_length(Role::kLeftUpperLeg, Role::kLeftFoot);
  const double rl = leg_length(Role::kRightUpperLeg, Role::kRightFoot);
  if (ll > 0.0 && rl > 0.0 && std::abs(ll - rl) > 0.1 * std::max(ll, rl)) {
    h.warnings.push_back("legs: the left leg is " + std::to_string(ll / rl) +
                         " times the right one in the rest pose; the chains may be misnamed");
  }
  return h;
}

}  // namespace rigel::retarget
