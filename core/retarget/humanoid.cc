#include "core/retarget/humanoid.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
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

bool IsUpper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
bool IsLowerChar(char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsNumber(const std::string& t) { return !t.empty() && IsDigit(t.front()); }

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
  kAmbiguousHip,
  kFinger,
  kHead,
  kNeck,
  kHips,
};

// Whole words and compounds (tokens joined) naming a limb. Compounds are looked up before single
// tokens, so "upperarm" beats "arm" and "toebase" beats "toe".
Limb LimbOfWord(std::string_view w) {
  static const std::pair<std::string_view, Limb> kWords[] = {
      {"collar", Limb::kShoulder},
      {"collarbone", Limb::kShoulder},
      {"clavicle", Limb::kShoulder},
      {"clav", Limb::kShoulder},
      {"shoulder", Limb::kAmbiguousShoulder},
      {"shldr", Limb::kAmbiguousShoulder},
      {"arm", Limb::kUpperArm},
      {"uparm", Limb::kUpperArm},
      {"upperarm", Limb::kUpperArm},
      {"humerus", Limb::kUpperArm},
      {"forearm", Limb::kLowerArm},
      {"lowarm", Limb::kLowerArm},
      {"loarm", Limb::kLowerArm},
      {"lowerarm", Limb::kLowerArm},
      {"elbow", Limb::kLowerArm},
      {"ulna", Limb::kLowerArm},
      {"hand", Limb::kHand},
      {"wrist", Limb::kHand},
      {"upleg", Limb::kUpperLeg},
      {"upperleg", Limb::kUpperLeg},
      {"thigh", Limb::kUpperLeg},
      {"femur", Limb::kUpperLeg},
      {"hip", Limb::kAmbiguousHip},
      {"leg", Limb::kLowerLeg},
      {"lowleg", Limb::kLowerLeg},
      {"loleg", Limb::kLowerLeg},
      {"lowerleg", Limb::kLowerLeg},
      {"knee", Limb::kLowerLeg},
      {"shin", Limb::kLowerLeg},
      {"calf", Limb::kLowerLeg},
      {"tibia", Limb::kLowerLeg},
      {"foot", Limb::kFoot},
      {"ankle", Limb::kFoot},
      {"toebase", Limb::kToes},
      {"toe", Limb::kToes},
      {"toes", Limb::kToes},
      {"ball", Limb::kToes},
      {"head", Limb::kHead},
      {"neck", Limb::kNeck},
      {"hips", Limb::kHips},
      {"pelvis", Limb::kHips},
      // Side bones that are not limbs: CMU "LHipJoint", MakeHuman "pelvis.L".
      {"hipjoint", Limb::kNone},
  };
  for (const auto& [word, limb] : kWords) {
    if (w == word) return limb;
  }
  return Limb::kNone;
}

bool IsFingerToken(std::string_view t) {
  for (std::string_view f : {"thumb", "index", "middle", "mid", "ring", "pinky", "pinkie", "little",
                             "finger", "fingers", "fingerbase", "carpal", "metacarpal", "palm"}) {
    if (t == f) return true;
  }
  return false;
}

// Which finger a name's tokens name (0 thumb .. 4 pinky), -1 when none says. Numbered fingers
// ("Bip01 L Finger1", MakeHuman "finger2-1") are resolved by the caller.
int FingerOfTokens(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens) {
    if (t == "thumb") return 0;
    if (t == "index" || t == "first" || t == "fore" || t == "pointer") return 1;
    if (t == "middle" || t == "mid" || t == "second") return 2;
    if (t == "ring" || t == "third") return 3;
    if (t == "pinky" || t == "pinkie" || t == "little" || t == "fourth") return 4;
  }
  return -1;
}

bool IsMetacarpalToken(std::string_view t) {
  return t == "metacarpal" || t == "carpal" || t == "meta" || t == "palm" || t == "base" ||
         t == "carpus";
}

// Bones that only follow (twist, roll, helpers), mark an end, or drive IK: never a role.
bool IsExtraToken(std::string_view t) {
  for (std::string_view f :
       {"twist",  "roll",    "helper", "end",        "nub",    "share",  "ik",
        "pole",   "target",  "adjust", "corrective", "jiggle", "bulge",  "fix",
        "ctrl",   "control", "dummy",  "footsteps",  "prop",   "weapon", "attach",
        "socket", "lookat",  "aim",    "null",       "offset", "mch",    "scale"}) {
    if (t == f) return true;
  }
  return false;
}

// Tokens of a name that say nothing about the limb ("ThighBend", "LHipJoint" is handled whole).
bool IsNeutralToken(std::string_view t) {
  for (std::string_view f : {"bend", "bone", "jnt", "joint", "base", "def", "deform", "bn", "b"}) {
    if (t == f) return true;
  }
  return false;
}

// A side marker token.
Side SideOfToken(std::string_view t) {
  if (t == "l" || t == "left" || t == "lft") return Side::kLeft;
  if (t == "r" || t == "right" || t == "rgt" || t == "rt") return Side::kRight;
  return Side::kCenter;
}

// The limb a name's tokens (side and prefixes removed) name: the whole compound first, then pairs
// of adjacent tokens, then single tokens from the last (the noun usually ends the name). Names
// with two numbers ("toe1-1") or a finger word are digit phalanges, not limb roles.
Limb LimbOfTokens(const std::vector<std::string>& tokens) {
  std::vector<std::string> words;
  int numbers = 0;
  for (const std::string& t : tokens) {
    if (IsNumber(t)) {
      ++numbers;
    } else {
      words.push_back(t);
    }
  }
  if (words.empty()) return Limb::kNone;
  bool finger = false, toe = false;
  for (const std::string& w : words) {
    finger = finger || IsFingerToken(w);
    toe = toe || w == "toe" || w == "toes";
  }
  if (finger) return toe ? Limb::kNone : Limb::kFinger;
  if (numbers >= 2) return Limb::kNone;
  std::string all;
  for (const std::string& w : words) all += w;
  if (all == "hipjoint") return Limb::kNone;
  if (const Limb l = LimbOfWord(all); l != Limb::kNone) return l;
  for (size_t i = words.size(); i-- > 1;) {
    if (const Limb l = LimbOfWord(words[i - 1] + words[i]); l != Limb::kNone) return l;
  }
  for (size_t i = words.size(); i-- > 0;) {
    if (IsNeutralToken(words[i])) continue;
    if (const Limb l = LimbOfWord(words[i]); l != Limb::kNone) return l;
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

std::vector<std::string> SplitJointName(std::string_view name) {
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) tokens.push_back(Lower(cur));
    cur.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsAlnum(c)) {
      flush();
      continue;
    }
    if (!cur.empty()) {
      const char p = cur.back();
      const bool digit_edge = IsDigit(p) != IsDigit(c);
      // "lThigh", "UpLeg": lower -> upper. "LHip": the last capital of a run starts a word.
      const bool camel =
          (IsLowerChar(p) && IsUpper(c)) ||
          (IsUpper(p) && IsUpper(c) && i + 1 < name.size() && IsLowerChar(name[i + 1]));
      if (digit_edge || camel) flush();
    }
    cur += c;
  }
  flush();
  return tokens;
}

NormalisedName NormaliseJointName(std::string_view name) {
  NormalisedName out;
  // Namespaces and paths: "mixamorig:LeftArm", "Armature|Hips".
  const size_t cut = name.find_last_of(":|");
  if (cut != std::string_view::npos) name = name.substr(cut + 1);
  out.helper = !name.empty() && name.front() == '_';
  std::vector<std::string> tokens = SplitJointName(name);
  // Rig prefixes: "mixamorig", "Bip01", "Bip001", "Biped", "CC_Base", "DEF-", "ORG-".
  auto drop_front = [&](size_t n) { tokens.erase(tokens.begin(), tokens.begin() + n); };
  if (!tokens.empty()) {
    const std::string& t = tokens.front();
    if (t == "mixamorig" || t == "bip" || t == "biped" || t == "def" || t == "org") {
      drop_front(1);
      if (!tokens.empty() && IsNumber(tokens.front())) drop_front(1);
    } else if (t == "cc" && tokens.size() > 1 && tokens[1] == "base") {
      drop_front(2);
    }
  }
  // Side: a marker token anywhere, as long as a word is left ("L5" is a vertebra).
  int words = 0;
  for (const std::string& t : tokens) words += IsNumber(t) ? 0 : 1;
  for (size_t i = 0; i < tokens.size() && words > 1; ++i) {
    const Side side = SideOfToken(tokens[i]);
    if (side == Side::kCenter) continue;
    out.side = side;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  // Glued markers: Daz/Poser "lhip", "rshldr"; "Hand_Left" already split above.
  if (out.side == Side::kCenter) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if (t.size() < 3 || (t[0] != 'l' && t[0] != 'r')) continue;
      const std::string rest = t.substr(1);
      const Limb limb = LimbOfWord(rest);
      if (limb == Limb::kNone || limb == Limb::kHead || limb == Limb::kNeck ||
          limb == Limb::kHips) {
        continue;
      }
      out.side = t[0] == 'l' ? Side::kLeft : Side::kRight;
      tokens[i] = rest;
      break;
    }
  }
  for (const std::string& t : tokens) {
    out.word += t;
    out.extra = out.extra || IsExtraToken(t);
  }
  out.tokens = std::move(tokens);
  return out;
}

namespace {

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

  // Legs: upper (definite word, else a sided "hip"), then lower, foot and toes below it, each by
  // name under the previous one, else the next joint down the chain.
  for (const Side side : {Side::kLeft, Side::kRight}) {
    const Role upper_r = LimbRole(Limb::kUpperLeg, side), lower_r = LimbRole(Limb::kLowerLeg, side),
               foot_r = LimbRole(Limb::kFoot, side), toes_r = LimbRole(Limb::kToes, side);
    int upper = -1;
    double upper_conf = kNamed;
    // Prefer an upper leg with a lower leg or foot named below it.
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] != Limb::kUpperLeg || c.names[j].side != side) continue;
      const bool chain =
          best_of(Limb::kLowerLeg, side, j) >= 0 || best_of(Limb::kFoot, side, j) >= 0;
      const bool upper_chain = upper >= 0 && (best_of(Limb::kLowerLeg, side, upper) >= 0 ||
                                              best_of(Limb::kFoot, side, upper) >= 0);
      if (upper < 0 || (chain && !upper_chain) || (chain == upper_chain && better(j, upper))) {
        upper = j;
      }
    }
    if (upper < 0) {
      upper = best_of(Limb::kAmbiguousHip, side, -1);
      upper_conf = kResolved;
    }
    if (upper < 0) continue;
    set(upper_r, upper, upper_conf,
        named(upper) + (upper_conf < kNamed ? ", the top of a leg chain" : ""));
    int lower = best_of(Limb::kLowerLeg, side, upper);
    if (lower >= 0) {
      set(lower_r, lower, kNamed, named(lower) + ", below the upper leg");
    } else if ((lower = next_down(upper, true)) >= 0) {
      set(lower_r, lower, kHierarchy, "next joint below the upper leg");
    }
    if (lower < 0) continue;
    int foot = best_of(Limb::kFoot, side, lower);
    if (foot >= 0) {
      set(foot_r, foot, kNamed, named(foot) + ", below the lower leg");
    } else if ((foot = next_down(lower, true)) >= 0) {
      set(foot_r, foot, kHierarchy, "next joint below the lower leg");
    }
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
    int upper = -1;
    for (int j = 0; j < n; ++j) {
      if (c.limb[j] != Limb::kUpperArm || c.names[j].side != side) continue;
      const bool chain =
          best_of(Limb::kLowerArm, side, j) >= 0 || best_of(Limb::kHand, side, j) >= 0;
      const bool upper_chain = upper >= 0 && (best_of(Limb::kLowerArm, side, upper) >= 0 ||
                                              best_of(Limb::kHand, side, upper) >= 0);
      if (upper < 0 || (chain && !upper_chain) || (chain == upper_chain && better(j, upper))) {
        upper = j;
      }
    }
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
    int lower = best_of(Limb::kLowerArm, side, upper);
    if (lower >= 0) {
      set(lower_r, lower, kNamed, named(lower) + ", below the upper arm");
    } else if ((lower = next_down(upper, true)) >= 0) {
      set(lower_r, lower, kHierarchy, "next joint below the upper arm");
    }
    if (lower < 0) continue;
    int hand = best_of(Limb::kHand, side, lower);
    if (hand >= 0) {
      set(hand_r, hand, kNamed, named(hand) + ", below the lower arm");
    } else if ((hand = next_down(lower, true)) >= 0) {
      set(hand_r, hand, kHierarchy, "next joint below the lower arm");
    }
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
