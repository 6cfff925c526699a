#include "core/retarget/humanoid.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "core/skeleton.h"

namespace rigel::retarget {

namespace {

constexpr std::array<std::string_view, kRoleCount> kRoleNames = {
    "Hips",          "Chest",         "Neck",          "Head",          "LeftShoulder",
    "LeftUpperArm",  "LeftLowerArm",  "LeftHand",      "RightShoulder", "RightUpperArm",
    "RightLowerArm", "RightHand",     "LeftUpperLeg",  "LeftLowerLeg",  "LeftFoot",
    "LeftToes",      "RightUpperLeg", "RightLowerLeg", "RightFoot",     "RightToes",
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsUpper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
bool IsSeparator(char c) { return c == '_' || c == '.' || c == '-' || c == ' '; }

// Limb words: which role of the left side a word names (the right side is +4 or +8 roles away).
enum class Limb {
  kNone,
  kShoulder,
  kUpperArm,
  kLowerArm,
  kHand,
  kUpperLeg,
  kLowerLeg,
  kFoot,
  kToes,
  kAmbiguousShoulder,
  kAmbiguousHip
};

Limb LimbOfWord(const std::string& w) {
  static const std::pair<std::string_view, Limb> kWords[] = {
      {"collar", Limb::kShoulder},
      {"clavicle", Limb::kShoulder},
      {"shoulder", Limb::kAmbiguousShoulder},
      {"arm", Limb::kUpperArm},
      {"uparm", Limb::kUpperArm},
      {"upperarm", Limb::kUpperArm},
      {"upperarm01", Limb::kUpperArm},
      {"humerus", Limb::kUpperArm},
      {"forearm", Limb::kLowerArm},
      {"lowarm", Limb::kLowerArm},
      {"loarm", Limb::kLowerArm},
      {"lowerarm", Limb::kLowerArm},
      {"lowerarm01", Limb::kLowerArm},
      {"elbow", Limb::kLowerArm},
      {"hand", Limb::kHand},
      {"wrist", Limb::kHand},
      {"upleg", Limb::kUpperLeg},
      {"upperleg", Limb::kUpperLeg},
      {"upperleg01", Limb::kUpperLeg},
      {"thigh", Limb::kUpperLeg},
      {"femur", Limb::kUpperLeg},
      {"hip", Limb::kAmbiguousHip},
      {"leg", Limb::kLowerLeg},
      {"lowleg", Limb::kLowerLeg},
      {"loleg", Limb::kLowerLeg},
      {"lowerleg", Limb::kLowerLeg},
      {"lowerleg01", Limb::kLowerLeg},
      {"knee", Limb::kLowerLeg},
      {"shin", Limb::kLowerLeg},
      {"calf", Limb::kLowerLeg},
      {"tibia", Limb::kLowerLeg},
      {"foot", Limb::kFoot},
      {"ankle", Limb::kFoot},
      {"toebase", Limb::kToes},
      {"toe", Limb::kToes},
      {"toes", Limb::kToes},
      {"toe0", Limb::kToes},
      {"ball", Limb::kToes},
  };
  for (const auto& [word, limb] : kWords) {
    if (w == word) return limb;
  }
  return Limb::kNone;
}

Role LimbRole(Limb limb, Side side) {
  const bool left = side == Side::kLeft;
  switch (limb) {
    case Limb::kShoulder:
      return left ? Role::kLeftShoulder : Role::kRightShoulder;
    case Limb::kUpperArm:
      return left ? Role::kLeftUpperArm : Role::kRightUpperArm;
    case Limb::kLowerArm:
      return left ? Role::kLeftLowerArm : Role::kRightLowerArm;
    case Limb::kHand:
      return left ? Role::kLeftHand : Role::kRightHand;
    case Limb::kUpperLeg:
      return left ? Role::kLeftUpperLeg : Role::kRightUpperLeg;
    case Limb::kLowerLeg:
      return left ? Role::kLeftLowerLeg : Role::kRightLowerLeg;
    case Limb::kFoot:
      return left ? Role::kLeftFoot : Role::kRightFoot;
    case Limb::kToes:
      return left ? Role::kLeftToes : Role::kRightToes;
    default:
      return Role::kHips;  // unreachable for the limbs passed in
  }
}

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

}  // namespace

std::string_view RoleName(Role role) { return kRoleNames[static_cast<int>(role)]; }

std::optional<Role> ParseRole(std::string_view name) {
  const std::string n = Lower(name);
  for (int r = 0; r < kRoleCount; ++r) {
    if (Lower(kRoleNames[r]) == n) return static_cast<Role>(r);
  }
  return std::nullopt;
}

NormalisedName NormaliseJointName(std::string_view name) {
  NormalisedName out;
  // Namespaces and paths: "mixamorig:LeftArm", "Armature|Hips".
  const size_t cut = name.find_last_of(":|");
  if (cut != std::string_view::npos) name = name.substr(cut + 1);
  out.helper = !name.empty() && name.front() == '_';
  while (!name.empty() && IsSeparator(name.front())) name.remove_prefix(1);
  // Rig prefixes.
  for (std::string_view prefix : {"mixamorig", "bip001", "bip01", "biped", "def-", "def_"}) {
    if (StartsWith(Lower(name.substr(0, prefix.size())), prefix)) {
      name.remove_prefix(prefix.size());
      while (!name.empty() && IsSeparator(name.front())) name.remove_prefix(1);
      break;
    }
  }
  std::string lower = Lower(name);
  std::string_view rest = name;
  // Side as a prefix: "Left", "Right", "L_", "r.", "L " or "L" + capital ("LHipJoint").
  auto side_prefix = [&](std::string_view word, Side side) {
    if (StartsWith(lower, word)) {
      out.side = side;
      rest.remove_prefix(word.size());
      return true;
    }
    return false;
  };
  if (!side_prefix("left", Side::kLeft) && !side_prefix("right", Side::kRight)) {
    if (rest.size() >= 2 &&
        (rest[0] == 'L' || rest[0] == 'l' || rest[0] == 'R' || rest[0] == 'r')) {
      const bool sep = IsSeparator(rest[1]);
      const bool camel = (rest[0] == 'L' || rest[0] == 'R') && IsUpper(rest[1]);
      if (sep || camel) {
        out.side = (rest[0] == 'L' || rest[0] == 'l') ? Side::kLeft : Side::kRight;
        rest.remove_prefix(1);
      }
    }
  }
  // Side as a suffix: "upperleg01.L", "UpLeg_L", "thigh_l", "Hand Left".
  if (out.side == Side::kCenter) {
    const std::string l = Lower(rest);
    for (const auto& [suffix, side] :
         {std::pair<std::string_view, Side>{"left", Side::kLeft}, {"right", Side::kRight}}) {
      if (EndsWith(l, suffix) && l.size() > suffix.size()) {
        out.side = side;
        rest.remove_suffix(suffix.size());
        break;
      }
    }
    if (out.side == Side::kCenter && rest.size() >= 3 && IsSeparator(rest[rest.size() - 2])) {
      const char c = rest.back();
      if (c == 'L' || c == 'l' || c == 'R' || c == 'r') {
        out.side = (c == 'L' || c == 'l') ? Side::kLeft : Side::kRight;
        rest.remove_suffix(2);
      }
    }
  }
  for (const char c : rest) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

HumanoidJoints ClassifyHumanoid(const Skeleton& s) {
  HumanoidJoints h;
  const std::vector<int> depth = Depths(s);
  const int n = s.num_joints();
  std::vector<NormalisedName> names(n);
  for (int j = 0; j < n; ++j) names[j] = NormaliseJointName(s.name(j));
  // Better candidate: plain before helper, then shallower, then earlier.
  auto better = [&](int a, int b) {
    if (b < 0) return true;
    if (names[a].helper != names[b].helper) return !names[a].helper;
    return depth[a] < depth[b];
  };
  auto offer = [&](Role role, int j) {
    if (better(j, h[role])) h[role] = j;
  };
  // Definite limb words first, then the ambiguous ones into whichever slot is left.
  for (int pass = 0; pass < 2; ++pass) {
    for (int j = 0; j < n; ++j) {
      if (names[j].side == Side::kCenter) continue;
      const Limb limb = LimbOfWord(names[j].word);
      const Side side = names[j].side;
      if (pass == 0) {
        if (limb != Limb::kNone && limb != Limb::kAmbiguousShoulder &&
            limb != Limb::kAmbiguousHip) {
          offer(LimbRole(limb, side), j);
        }
        continue;
      }
      if (limb == Limb::kAmbiguousShoulder) {
        // CMU/Mixamo/HumanIK "LeftShoulder" is the clavicle (next to "LeftArm"); Motion
        // Analysis' is the upper arm (next to "LeftCollar").
        const Role clav = LimbRole(Limb::kShoulder, side);
        const Role upper = LimbRole(Limb::kUpperArm, side);
        if (h[upper] < 0 && h[clav] >= 0 && IsAncestor(s, h[clav], j)) {
          h[upper] = j;
        } else if (h[clav] < 0 && (h[upper] < 0 || IsAncestor(s, j, h[upper]))) {
          if (h[upper] < 0) {
            h[upper] = j;
          } else {
            h[clav] = j;
          }
        }
      } else if (limb == Limb::kAmbiguousHip) {
        const Role upper = LimbRole(Limb::kUpperLeg, side);
        if (h[upper] < 0) h[upper] = j;
      }
    }
  }
  // Head and neck by name (shallowest wins).
  for (int j = 0; j < n; ++j) {
    if (names[j].side != Side::kCenter) continue;
    const std::string& w = names[j].word;
    if (w == "head") offer(Role::kHead, j);
  }
  const int head = h[Role::kHead];
  for (int j = 0; j < n; ++j) {
    if (names[j].side != Side::kCenter || !StartsWith(names[j].word, "neck")) continue;
    if (head >= 0 && !IsAncestor(s, j, head)) continue;
    offer(Role::kNeck, j);
  }
  // Hips: where the legs and the upper body meet; by name when there are no legs.
  const int legs = CommonAncestor(s, h[Role::kLeftUpperLeg], h[Role::kRightUpperLeg]);
  const int upper_body = head >= 0 ? head : h[Role::kNeck];
  if (legs >= 0 && h[Role::kLeftUpperLeg] >= 0 && h[Role::kRightUpperLeg] >= 0) {
    h[Role::kHips] = upper_body >= 0 ? CommonAncestor(s, legs, upper_body) : legs;
  } else {
    for (int j = 0; j < n; ++j) {
      const std::string& w = names[j].word;
      if (names[j].side == Side::kCenter && (w == "hips" || w == "hip" || w == "pelvis")) {
        offer(Role::kHips, j);
      }
    }
    if (h[Role::kHips] < 0 && n > 0) h[Role::kHips] = 0;
  }
  const int hips = h[Role::kHips];
  // Chest: where the arms meet (the clavicles' common ancestor), on the way to the head.
  int arms = CommonAncestor(
      s, h[Role::kLeftShoulder] >= 0 ? h[Role::kLeftShoulder] : h[Role::kLeftUpperArm],
      h[Role::kRightShoulder] >= 0 ? h[Role::kRightShoulder] : h[Role::kRightUpperArm]);
  if (arms >= 0 && (h[Role::kLeftUpperArm] < 0 || h[Role::kRightUpperArm] < 0)) arms = -1;
  if (arms >= 0 && upper_body >= 0 && !IsAncestor(s, arms, upper_body)) {
    arms = CommonAncestor(s, arms, upper_body);
  }
  if (arms < 0 && h[Role::kNeck] >= 0) arms = s.parent(h[Role::kNeck]);
  if (arms < 0 && head >= 0) arms = s.parent(head);
  if (arms >= 0 && hips >= 0 && arms != hips && IsAncestor(s, hips, arms)) {
    h[Role::kChest] = arms;
    h.spine = PathBelow(s, hips, arms);
  }
  const int chest = h[Role::kChest];
  if (chest >= 0 && head >= 0 && IsAncestor(s, chest, head)) {
    h.neck = PathBelow(s, chest, head);
    if (!h.neck.empty()) h.neck.pop_back();  // the head itself
    if (!h.neck.empty() && h[Role::kNeck] < 0) h[Role::kNeck] = h.neck.front();
    if (h[Role::kNeck] >= 0 && !h.neck.empty() && h.neck.front() != h[Role::kNeck]) {
      // Joints between the chest and the named neck belong to the spine.
      while (!h.neck.empty() && h.neck.front() != h[Role::kNeck]) h.neck.erase(h.neck.begin());
    }
  }
  return h;
}

namespace {

// Pairs the joints of two chains end to end: the shorter chain's joints spread over the longer.
// A one-joint chain pairs with the longer chain's last joint (spine: the chest, where the arms
// hang) or first (neck: its base, so the segment to the head is the one that follows the source).
std::vector<std::pair<int, int>> MatchChains(const std::vector<int>& a, const std::vector<int>& b,
                                             bool single_to_first) {
  std::vector<std::pair<int, int>> pairs;
  if (a.empty() || b.empty()) return pairs;
  const size_t m = a.size();
  const size_t n = b.size();
  if (m <= n) {
    for (size_t i = 0; i < m; ++i) {
      const size_t j = m == 1 ? (single_to_first ? 0 : n - 1)
                              : static_cast<size_t>(std::lround(static_cast<double>(i) *
                                                                static_cast<double>(n - 1) /
                                                                static_cast<double>(m - 1)));
      pairs.emplace_back(a[i], b[j]);
    }
  } else {
    for (size_t j = 0; j < n; ++j) {
      const size_t i = n == 1 ? (single_to_first ? 0 : m - 1)
                              : static_cast<size_t>(std::lround(static_cast<double>(j) *
                                                                static_cast<double>(m - 1) /
                                                                static_cast<double>(n - 1)));
      pairs.emplace_back(a[i], b[j]);
    }
  }
  return pairs;
}

}  // namespace

BoneMap AutoMap(const Skeleton& source, const Skeleton& target, std::vector<std::string>* notes) {
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
  // Keep the target's joint order (parents first) so maps read top-down.
  std::sort(map.entries.begin(), map.entries.end(),
            [&](const BoneMapEntry& a, const BoneMapEntry& b) {
              return target.FindJoint(a.target) < target.FindJoint(b.target);
            });
  return map;
}

}  // namespace rigel::retarget
