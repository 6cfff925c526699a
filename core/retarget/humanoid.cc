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
using internal::LimbOfTokens;
using internal::LimbRole;
using internal::LimbWord;
using internal::StartsWith;

namespace {

std::vector<int> Depths(const Skeleton& s) {
  std::vector<int> depth(s.num_joints(), 0);
  for (int j = 0; j < s.num_joints(); ++j) {
    if (s.parent(j) >= 0) depth[j] = depth[s.parent(j)] + 1;
  }
  return depth;
}

int CommonAncestor(const Skeleton& s, int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  for (int j = a; j >= 0; j = s.parent(j)) {
    if (IsAncestorOrSelf(s, j, b)) return j;
  }
  return -1;
}

// Joints strictly below `top` down to `bottom` (included), parent first. Empty when `top` is not
// an ancestor of `bottom`.
std::vector<int> PathBelow(const Skeleton& s, int top, int bottom) {
  std::vector<int> path;
  for (int j = bottom; j >= 0 && j != top; j = s.parent(j)) path.push_back(j);
  if (top >= 0 && !IsAncestorOrSelf(s, top, bottom)) return {};
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
  std::vector<LimbWord> limb;
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

// Classifies one skeleton: every joint's name read once, then the roles decided part by part (legs,
// arms, head and neck, hips, chest and spine, fingers), each confirming or filling in from the
// hierarchy what the names say.
class Classifier {
 public:
  explicit Classifier(const Skeleton& s);
  HumanoidJoints Run();

 private:
  // Helpers shared by the parts.
  bool Better(int a, int b) const;
  void Set(Role role, int j, double confidence, std::string why);
  int BestOf(LimbWord limb, Side side, int top, int bottom = -1) const;
  int NextDown(int j, bool allow_fork) const;
  std::string Named(int j) const { return "named '" + s_.name(j) + "'"; }
  void WarnOffChain(LimbWord limb, Side side, Role role, const char* where);
  int ChainTop(LimbWord top, LimbWord middle, LimbWord end, Side side) const;
  int LinkBelow(LimbWord limb, Side side, int above, const char* above_name);
  bool IsNeck(int j) const;

  // The parts, in the order they run.
  void ClassifyLeg(Side side);
  void ClassifyArm(Side side);
  void ClassifyHeadAndNeck();
  void ClassifyHips();
  void ClassifyChestAndSpine();
  void ClassifyNeckChain();
  void ClassifyFingers(int side);
  void WarnAboutHierarchy();

  const Skeleton& s_;
  const int n_;
  HumanoidJoints h_;
  Candidates c_;
  std::vector<int> subtree_;
  int head_ = -1;        // once ClassifyHeadAndNeck ran
  int upper_body_ = -1;  // the head, else the neck; once ClassifyHips ran
};

Classifier::Classifier(const Skeleton& s) : s_(s), n_(s.num_joints()) {
  c_.depth = Depths(s_);
  c_.names.resize(n_);
  c_.limb.assign(n_, LimbWord::kNone);
  for (int j = 0; j < n_; ++j) {
    c_.names[j] = NormaliseJointName(s_.name(j));
    if (c_.names[j].extra) {
      h_.extras.push_back(j);
      continue;
    }
    c_.limb[j] = LimbOfTokens(c_.names[j].tokens);
  }
  subtree_ = SubtreeSizes(s_);
}

HumanoidJoints Classifier::Run() {
  for (const Side side : {Side::kLeft, Side::kRight}) ClassifyLeg(side);
  for (const Side side : {Side::kLeft, Side::kRight}) ClassifyArm(side);
  ClassifyHeadAndNeck();
  ClassifyHips();
  ClassifyChestAndSpine();
  ClassifyNeckChain();
  for (int side = 0; side < 2; ++side) ClassifyFingers(side);
  WarnAboutHierarchy();
  return std::move(h_);
}

// Better candidate: plain before helper, then shallower, then earlier.
bool Classifier::Better(int a, int b) const {
  if (b < 0) return true;
  if (c_.names[a].helper != c_.names[b].helper) return !c_.names[a].helper;
  return c_.depth[a] < c_.depth[b];
}

void Classifier::Set(Role role, int j, double confidence, std::string why) {
  h_[role] = j;
  const int r = static_cast<int>(role);
  h_.confidence[r] = j >= 0 ? confidence - (c_.names[j].helper ? kHelperCost : 0.0) : 0.0;
  h_.why[r] = j >= 0 ? std::move(why) : std::string();
}

// The best joint of `limb` on `side` below `top` (any when top < 0), optionally above `bottom`.
int Classifier::BestOf(LimbWord limb, Side side, int top, int bottom) const {
  int best = -1;
  for (int j = 0; j < n_; ++j) {
    if (c_.limb[j] != limb || c_.names[j].side != side) continue;
    if (top >= 0 && (j == top || !IsAncestorOrSelf(s_, top, j))) continue;
    if (bottom >= 0 && !IsAncestorOrSelf(s_, j, bottom)) continue;
    if (Better(j, best)) best = j;
  }
  return best;
}

// Next joint down the main chain from `j` (largest non-extra child), -1 at a leaf or a fork of
// equals (MakeHuman's five toes).
int Classifier::NextDown(int j, bool allow_fork) const {
  int best = -1, second = -1;
  for (const int child : s_.children(j)) {
    if (c_.names[child].extra || c_.limb[child] == LimbWord::kFinger) continue;
    if (best < 0 || subtree_[child] > subtree_[best]) {
      second = best;
      best = child;
    } else if (second < 0 || subtree_[child] > subtree_[second]) {
      second = child;
    }
  }
  if (!allow_fork && second >= 0 && subtree_[second] == subtree_[best]) return -1;
  return best;
}

// Warns about joints named like `limb` on `side` that the chain did not take.
void Classifier::WarnOffChain(LimbWord limb, Side side, Role role, const char* where) {
  const int chosen = h_[role];
  for (int j = 0; j < n_; ++j) {
    if (c_.limb[j] != limb || c_.names[j].side != side || j == chosen) continue;
    if (chosen >= 0 && (IsAncestorOrSelf(s_, chosen, j) || IsAncestorOrSelf(s_, j, chosen)))
      continue;
    if (c_.names[j].helper) continue;
    h_.warnings.push_back(std::string(RoleName(role)) + ": '" + s_.name(j) +
                          "' is named like it but is not " + where +
                          (chosen >= 0 ? "; using '" + s_.name(chosen) + "'" : std::string()));
  }
}

// The best joint named `top` on `side`, preferring one with a `middle` or `end` joint named
// below it.
int Classifier::ChainTop(LimbWord top, LimbWord middle, LimbWord end, Side side) const {
  auto named_below = [&](int j) {
    return BestOf(middle, side, j) >= 0 || BestOf(end, side, j) >= 0;
  };
  int upper = -1;
  for (int j = 0; j < n_; ++j) {
    if (c_.limb[j] != top || c_.names[j].side != side) continue;
    const bool chain = named_below(j);
    const bool upper_chain = upper >= 0 && named_below(upper);
    if (upper < 0 || (chain && !upper_chain) || (chain == upper_chain && Better(j, upper))) {
      upper = j;
    }
  }
  return upper;
}

// The joint of `limb` on `side` below `above` ("the <above_name>"): by name, else the next joint
// down the chain. Sets its role; -1 when there is none.
int Classifier::LinkBelow(LimbWord limb, Side side, int above, const char* above_name) {
  int j = BestOf(limb, side, above);
  if (j >= 0) {
    Set(LimbRole(limb, side), j, kNamed, Named(j) + ", below the " + above_name);
  } else if ((j = NextDown(above, true)) >= 0) {
    Set(LimbRole(limb, side), j, kHierarchy, std::string("next joint below the ") + above_name);
  }
  return j;
}

// Neck: a neck word above the head (any neck word when there is no head).
bool Classifier::IsNeck(int j) const {
  return c_.names[j].side == Side::kCenter && StartsWith(c_.names[j].word, "neck") &&
         (head_ < 0 || IsAncestorOrSelf(s_, j, head_));
}

// Legs: upper (definite word, else a sided "hip"), then lower, foot and toes below it, each by
// name under the previous one, else the next joint down the chain.
void Classifier::ClassifyLeg(Side side) {
  const Role lower_r = LimbRole(LimbWord::kLowerLeg, side),
             foot_r = LimbRole(LimbWord::kFoot, side), toes_r = LimbRole(LimbWord::kToes, side);
  // Prefer an upper leg with a lower leg or foot named below it.
  int upper = ChainTop(LimbWord::kUpperLeg, LimbWord::kLowerLeg, LimbWord::kFoot, side);
  double upper_conf = kNamed;
  if (upper < 0) {
    upper = BestOf(LimbWord::kAmbiguousHip, side, -1);
    upper_conf = kResolved;
  }
  if (upper < 0) return;
  Set(LimbRole(LimbWord::kUpperLeg, side), upper, upper_conf,
      Named(upper) + (upper_conf < kNamed ? ", the top of a leg chain" : ""));
  const int lower = LinkBelow(LimbWord::kLowerLeg, side, upper, "upper leg");
  if (lower < 0) return;
  const int foot = LinkBelow(LimbWord::kFoot, side, lower, "lower leg");
  if (foot < 0) return;
  int toes = BestOf(LimbWord::kToes, side, foot);
  if (toes >= 0) {
    Set(toes_r, toes, kNamed, Named(toes) + ", below the foot");
  } else if ((toes = NextDown(foot, false)) >= 0 && c_.limb[toes] == LimbWord::kNone &&
             BestOf(LimbWord::kToes, side, -1) < 0) {
    Set(toes_r, toes, kHierarchy, "the one joint below the foot");
  }
  WarnOffChain(LimbWord::kLowerLeg, side, lower_r, "below the upper leg");
  WarnOffChain(LimbWord::kFoot, side, foot_r, "below the lower leg");
}

// Arms: a definite upper arm (with a forearm or hand below when one exists), the clavicle
// above it; "shoulder" is the clavicle above an "arm" and the upper arm below a "collar".
void Classifier::ClassifyArm(Side side) {
  const Role clav_r = LimbRole(LimbWord::kShoulder, side),
             upper_r = LimbRole(LimbWord::kUpperArm, side),
             lower_r = LimbRole(LimbWord::kLowerArm, side),
             hand_r = LimbRole(LimbWord::kHand, side);
  int upper = ChainTop(LimbWord::kUpperArm, LimbWord::kLowerArm, LimbWord::kHand, side);
  double upper_conf = kNamed;
  std::string upper_why = upper >= 0 ? Named(upper) : "";
  int clav = upper >= 0 ? BestOf(LimbWord::kShoulder, side, -1, upper)
                        : BestOf(LimbWord::kShoulder, side, -1);
  double clav_conf = kNamed;
  std::string clav_why = clav >= 0 ? Named(clav) + ", above the upper arm" : "";
  // Ambiguous "shoulder"s, best first.
  std::vector<int> ambiguous;
  for (int j = 0; j < n_; ++j) {
    if (c_.limb[j] == LimbWord::kAmbiguousShoulder && c_.names[j].side == side)
      ambiguous.push_back(j);
  }
  std::sort(ambiguous.begin(), ambiguous.end(),
            [&](int a, int b) { return Better(a, b) && a != b; });
  for (const int j : ambiguous) {
    if (upper < 0 && clav >= 0 && IsAncestorOrSelf(s_, clav, j)) {
      upper = j;
      upper_conf = kResolved;
      upper_why = Named(j) + ", below the collar '" + s_.name(clav) + "'";
    } else if (upper < 0 && clav < 0) {
      upper = j;
      upper_conf = kResolved;
      upper_why = Named(j) + ", no collar or arm named";
    } else if (upper >= 0 && clav < 0 && IsAncestorOrSelf(s_, j, upper)) {
      clav = j;
      clav_conf = kResolved;
      clav_why = Named(j) + ", above the upper arm '" + s_.name(upper) + "'";
    }
  }
  if (upper < 0) return;
  Set(upper_r, upper, upper_conf, upper_why);
  if (clav >= 0) Set(clav_r, clav, clav_conf, clav_why);
  const int lower = LinkBelow(LimbWord::kLowerArm, side, upper, "upper arm");
  if (lower < 0) return;
  LinkBelow(LimbWord::kHand, side, lower, "lower arm");
  WarnOffChain(LimbWord::kLowerArm, side, lower_r, "below the upper arm");
  WarnOffChain(LimbWord::kHand, side, hand_r, "below the lower arm");
}

// Head and neck by name (shallowest wins).
void Classifier::ClassifyHeadAndNeck() {
  for (int j = 0; j < n_; ++j) {
    if (c_.names[j].side == Side::kCenter && c_.limb[j] == LimbWord::kHead &&
        (h_[Role::kHead] < 0 || Better(j, h_[Role::kHead]))) {
      Set(Role::kHead, j, kNamed, Named(j));
    }
  }
  head_ = h_[Role::kHead];
  // Twist-named necks (Reallusion's "NeckTwist01") only when nothing else is called a neck.
  bool plain_neck = false;
  for (int j = 0; j < n_; ++j) plain_neck = plain_neck || (IsNeck(j) && !c_.names[j].extra);
  for (int j = 0; j < n_; ++j) {
    if (!IsNeck(j) || (plain_neck && c_.names[j].extra)) continue;
    if (h_[Role::kNeck] < 0 || Better(j, h_[Role::kNeck])) {
      Set(Role::kNeck, j, kNamed, Named(j) + (head_ >= 0 ? ", above the head" : ""));
    }
  }
}

// Hips: where the legs and the upper body meet; by name when there are no legs.
void Classifier::ClassifyHips() {
  const int legs = CommonAncestor(s_, h_[Role::kLeftUpperLeg], h_[Role::kRightUpperLeg]);
  upper_body_ = head_ >= 0 ? head_ : h_[Role::kNeck];
  if (legs >= 0 && h_[Role::kLeftUpperLeg] >= 0 && h_[Role::kRightUpperLeg] >= 0) {
    const int hips = upper_body_ >= 0 ? CommonAncestor(s_, legs, upper_body_) : legs;
    const bool hips_named = c_.limb[hips] == LimbWord::kHips ||
                            c_.limb[hips] == LimbWord::kAmbiguousHip ||
                            c_.names[hips].word == "root";
    Set(Role::kHips, hips, hips_named ? kNamed : kHierarchy + 0.1,
        (hips_named ? Named(hips) + ", " : std::string("'") + s_.name(hips) + "': ") +
            "where the legs and the upper body meet");
    return;
  }
  for (int j = 0; j < n_; ++j) {
    if (c_.names[j].side == Side::kCenter &&
        (c_.limb[j] == LimbWord::kHips || c_.limb[j] == LimbWord::kAmbiguousHip) &&
        (h_[Role::kHips] < 0 || Better(j, h_[Role::kHips]))) {
      Set(Role::kHips, j, kResolved, Named(j) + " (no pair of legs)");
    }
  }
  if (h_[Role::kHips] < 0 && n_ > 0) Set(Role::kHips, 0, 0.5, "the root (no legs or hips named)");
}

// Chest: where the arms meet (the clavicles' common ancestor), on the way to the head; the spine is
// the path from the hips to it.
void Classifier::ClassifyChestAndSpine() {
  const int hips = h_[Role::kHips];
  int arms = CommonAncestor(
      s_, h_[Role::kLeftShoulder] >= 0 ? h_[Role::kLeftShoulder] : h_[Role::kLeftUpperArm],
      h_[Role::kRightShoulder] >= 0 ? h_[Role::kRightShoulder] : h_[Role::kRightUpperArm]);
  if (arms >= 0 && (h_[Role::kLeftUpperArm] < 0 || h_[Role::kRightUpperArm] < 0)) arms = -1;
  std::string chest_why = "where the arms meet";
  if (arms >= 0 && upper_body_ >= 0 && !IsAncestorOrSelf(s_, arms, upper_body_)) {
    arms = CommonAncestor(s_, arms, upper_body_);
    chest_why = "where the arms and the head meet";
  }
  // The arms hang from a joint named as a neck (3ds Max Biped's clavicles below 'Bip01 Neck',
  // ProAnimationBank's below 'Neck'): the chest is the spine joint below it, so a chest of
  // another rig drives that chest, not the neck (the retarget matrix found MocapBank's Chest2
  // driving 'Bip01 Neck', its own neck left out).
  if (arms >= 0 && IsNeck(arms) && hips >= 0 && s_.parent(arms) >= 0 && s_.parent(arms) != hips &&
      IsAncestorOrSelf(s_, hips, s_.parent(arms))) {
    arms = s_.parent(arms);
    chest_why = "below the neck the arms hang from";
  }
  if (arms < 0 && h_[Role::kNeck] >= 0) {
    arms = s_.parent(h_[Role::kNeck]);
    chest_why = "below the neck (no pair of arms)";
  }
  if (arms < 0 && head_ >= 0) {
    arms = s_.parent(head_);
    chest_why = "below the head (no pair of arms)";
  }
  if (arms >= 0 && hips >= 0 && arms != hips && IsAncestorOrSelf(s_, hips, arms)) {
    Set(Role::kChest, arms, kResolved, "'" + s_.name(arms) + "': " + chest_why);
    h_.spine = PathBelow(s_, hips, arms);
  } else if (arms >= 0 && hips >= 0 && arms != hips) {
    h_.warnings.push_back("Chest: the arms meet at '" + s_.name(arms) +
                          "', which is not above the hips '" + s_.name(hips) + "'");
  }
}

// The neck chain: the joints from the chest to the head, from the named neck down when there is one
// (the joints above it belong to the spine); then the spine loses its twist/helper joints.
void Classifier::ClassifyNeckChain() {
  const int chest = h_[Role::kChest];
  if (chest >= 0 && head_ >= 0 && IsAncestorOrSelf(s_, chest, head_)) {
    h_.neck = PathBelow(s_, chest, head_);
    if (!h_.neck.empty()) h_.neck.pop_back();  // the head itself
    // Twist/helper joints do not make a neck.
    std::erase_if(h_.neck, [&](int j) { return c_.names[j].extra && !IsNeck(j); });
    if (!h_.neck.empty() && h_[Role::kNeck] < 0) {
      Set(Role::kNeck, h_.neck.front(), kHierarchy, "first joint from the chest to the head");
    }
    if (h_[Role::kNeck] >= 0 && !h_.neck.empty() && h_.neck.front() != h_[Role::kNeck]) {
      // Joints between the chest and the named neck belong to the spine.
      while (!h_.neck.empty() && h_.neck.front() != h_[Role::kNeck]) h_.neck.erase(h_.neck.begin());
    }
  }
  std::erase_if(h_.spine, [&](int j) { return c_.names[j].extra; });
}

// Fingers: below each hand, named by finger word or by number (Biped "Finger0" = thumb,
// 0-based when some finger is numbered 0; MakeHuman "finger1-1" = thumb, 1-based), a chain of
// up to three phalanges in depth order, and the metacarpal above the first when the rig has one.
void Classifier::ClassifyFingers(int side) {
  const int hand = h_[side == 0 ? Role::kLeftHand : Role::kRightHand];
  if (hand < 0) return;
  std::vector<int> below;
  for (int j = hand + 1; j < n_; ++j) {
    if (IsAncestorOrSelf(s_, hand, j) && c_.limb[j] == LimbWord::kFinger) below.push_back(j);
  }
  auto number_of = [&](int j) {
    const std::vector<std::string>& t = c_.names[j].tokens;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i] == "finger" && IsNumber(t[i + 1])) return t[i + 1].front() - '0';
    }
    return -1;
  };
  bool zero_based = false;
  for (const int j : below) zero_based = zero_based || number_of(j) == 0;
  std::vector<int> finger_of(n_, -1);
  std::vector<bool> metacarpal(n_, false);
  for (const int j : below) {
    for (const std::string& t : c_.names[j].tokens) {
      metacarpal[j] = metacarpal[j] || IsMetacarpalToken(t) || t == "fingerbase";
    }
    finger_of[j] = FingerOfTokens(c_.names[j].tokens);
    if (finger_of[j] < 0 && number_of(j) >= 0) {
      const int f = number_of(j) - (zero_based ? 0 : 1);
      if (f >= 0 && f < 5) finger_of[j] = f;
    }
  }
  for (int f = 0; f < 5; ++f) {
    std::array<int, 4>& chain = h_.fingers[static_cast<size_t>(side * 5 + f)];
    int first = -1;
    for (const int j : below) {
      if (finger_of[j] == f && !metacarpal[j] && (first < 0 || Better(j, first))) first = j;
    }
    if (first < 0) continue;
    chain[1] = first;
    for (int slot = 2; slot <= 3; ++slot) {
      int next = -1;
      for (const int child : s_.children(chain[static_cast<size_t>(slot - 1)])) {
        if (c_.limb[child] == LimbWord::kFinger && finger_of[child] == f && !metacarpal[child] &&
            (next < 0 || Better(child, next))) {
          next = child;
        }
      }
      if (next < 0) break;
      chain[static_cast<size_t>(slot)] = next;
    }
    const int parent = s_.parent(first);
    if (parent != hand && parent >= 0 && c_.limb[parent] == LimbWord::kFinger &&
        !c_.names[parent].helper) {
      chain[0] = parent;
    }
  }
}

// What the hierarchy says about the names: both legs hang from the hips, left and right are
// mirrored consistently between arms and legs, the two legs have about the same length.
void Classifier::WarnAboutHierarchy() {
  const int chest = h_[Role::kChest];
  const std::vector<Eigen::Vector3d> pos = RestPositions(s_);
  const int lul = h_[Role::kLeftUpperLeg], rul = h_[Role::kRightUpperLeg];
  const int lua = h_[Role::kLeftUpperArm], rua = h_[Role::kRightUpperArm];
  if (lul >= 0 && rul >= 0 && lua >= 0 && rua >= 0) {
    const Eigen::Vector3d legs_lr = pos[lul] - pos[rul];
    const Eigen::Vector3d arms_lr = pos[lua] - pos[rua];
    if (legs_lr.norm() > 1e-9 && arms_lr.norm() > 1e-9 && legs_lr.dot(arms_lr) < 0.0) {
      h_.warnings.push_back("left and right: the left arm '" + s_.name(lua) +
                            "' is on the side of the right leg '" + s_.name(rul) +
                            "' in the rest pose; check the side markers");
    }
  }
  if (chest >= 0) {
    for (const Role r : {Role::kLeftUpperLeg, Role::kRightUpperLeg}) {
      if (h_[r] >= 0 && IsAncestorOrSelf(s_, chest, h_[r])) {
        h_.warnings.push_back(std::string(RoleName(r)) + ": '" + s_.name(h_[r]) +
                              "' hangs below the chest '" + s_.name(chest) + "', not the hips");
      }
    }
  }
  auto leg_length = [&](Role upper, Role foot) {
    return h_[upper] >= 0 && h_[foot] >= 0 ? (pos[h_[foot]] - pos[h_[upper]]).norm() : 0.0;
  };
  const double ll = leg_length(Role::kLeftUpperLeg, Role::kLeftFoot);
  const double rl = leg_length(Role::kRightUpperLeg, Role::kRightFoot);
  if (ll > 0.0 && rl > 0.0 && std::abs(ll - rl) > 0.1 * std::max(ll, rl)) {
    h_.warnings.push_back("legs: the left leg is " + std::to_string(ll / rl) +
                          " times the right one in the rest pose; the chains may be misnamed");
  }
}

}  // namespace

HumanoidJoints ClassifyHumanoid(const Skeleton& s) { return Classifier(s).Run(); }

}  // namespace rigel::retarget
