// Joint names: role names, the tokenizer, side markers, rig prefixes and the limb words with
// their synonyms (core/retarget/humanoid.h, core/retarget/humanoid_words.h).
#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

#include "core/retarget/humanoid.h"
#include "core/retarget/humanoid_words.h"

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

bool IsUpper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
bool IsLowerChar(char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsFingerToken(std::string_view t) {
  for (std::string_view f : {"thumb", "index", "middle", "mid", "ring", "pinky", "pinkie", "little",
                             "finger", "fingers", "fingerbase", "carpal", "metacarpal", "palm"}) {
    if (t == f) return true;
  }
  return false;
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

}  // namespace

namespace internal {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool IsNumber(const std::string& t) { return !t.empty() && IsDigit(t.front()); }

// Whole words and compounds (tokens joined) naming a limb. Compounds are looked up before single
// tokens, so "upperarm" beats "arm" and "toebase" beats "toe".
LimbWord LimbOfWord(std::string_view w) {
  static const std::pair<std::string_view, LimbWord> kWords[] = {
      {"collar", LimbWord::kShoulder},
      {"collarbone", LimbWord::kShoulder},
      {"clavicle", LimbWord::kShoulder},
      {"clav", LimbWord::kShoulder},
      {"shoulder", LimbWord::kAmbiguousShoulder},
      {"shldr", LimbWord::kAmbiguousShoulder},
      {"arm", LimbWord::kUpperArm},
      {"uparm", LimbWord::kUpperArm},
      {"upperarm", LimbWord::kUpperArm},
      {"humerus", LimbWord::kUpperArm},
      {"forearm", LimbWord::kLowerArm},
      {"lowarm", LimbWord::kLowerArm},
      {"loarm", LimbWord::kLowerArm},
      {"lowerarm", LimbWord::kLowerArm},
      {"elbow", LimbWord::kLowerArm},
      {"ulna", LimbWord::kLowerArm},
      {"hand", LimbWord::kHand},
      {"wrist", LimbWord::kHand},
      {"upleg", LimbWord::kUpperLeg},
      {"upperleg", LimbWord::kUpperLeg},
      {"thigh", LimbWord::kUpperLeg},
      {"femur", LimbWord::kUpperLeg},
      {"hip", LimbWord::kAmbiguousHip},
      {"leg", LimbWord::kLowerLeg},
      {"lowleg", LimbWord::kLowerLeg},
      {"loleg", LimbWord::kLowerLeg},
      {"lowerleg", LimbWord::kLowerLeg},
      {"knee", LimbWord::kLowerLeg},
      {"shin", LimbWord::kLowerLeg},
      {"calf", LimbWord::kLowerLeg},
      {"tibia", LimbWord::kLowerLeg},
      {"foot", LimbWord::kFoot},
      {"ankle", LimbWord::kFoot},
      {"toebase", LimbWord::kToes},
      {"toe", LimbWord::kToes},
      {"toes", LimbWord::kToes},
      {"ball", LimbWord::kToes},
      {"head", LimbWord::kHead},
      {"neck", LimbWord::kNeck},
      {"hips", LimbWord::kHips},
      {"pelvis", LimbWord::kHips},
      // Side bones that are not limbs: CMU "LHipJoint", MakeHuman "pelvis.L".
      {"hipjoint", LimbWord::kNone},
  };
  for (const auto& [word, limb] : kWords) {
    if (w == word) return limb;
  }
  return LimbWord::kNone;
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

// The limb a name's tokens (side and prefixes removed) name: the whole compound first, then pairs
// of adjacent tokens, then single tokens from the last (the noun usually ends the name). Names
// with two numbers ("toe1-1") or a finger word are digit phalanges, not limb roles.
LimbWord LimbOfTokens(const std::vector<std::string>& tokens) {
  std::vector<std::string> words;
  int numbers = 0;
  for (const std::string& t : tokens) {
    if (IsNumber(t)) {
      ++numbers;
    } else {
      words.push_back(t);
    }
  }
  if (words.empty()) return LimbWord::kNone;
  bool finger = false, toe = false;
  for (const std::string& w : words) {
    finger = finger || IsFingerToken(w);
    toe = toe || w == "toe" || w == "toes";
  }
  if (finger) return toe ? LimbWord::kNone : LimbWord::kFinger;
  if (numbers >= 2) return LimbWord::kNone;
  std::string all;
  for (const std::string& w : words) all += w;
  if (all == "hipjoint") return LimbWord::kNone;
  if (const LimbWord l = LimbOfWord(all); l != LimbWord::kNone) return l;
  for (size_t i = words.size(); i-- > 1;) {
    if (const LimbWord l = LimbOfWord(words[i - 1] + words[i]); l != LimbWord::kNone) return l;
  }
  for (size_t i = words.size(); i-- > 0;) {
    if (IsNeutralToken(words[i])) continue;
    if (const LimbWord l = LimbOfWord(words[i]); l != LimbWord::kNone) return l;
  }
  return LimbWord::kNone;
}

Role LimbRole(LimbWord limb, Side side) {
  // The left and right roles of kShoulder .. kToes, in LimbWord order.
  static constexpr std::pair<Role, Role> kRoles[] = {
      {Role::kLeftShoulder, Role::kRightShoulder}, {Role::kLeftUpperArm, Role::kRightUpperArm},
      {Role::kLeftLowerArm, Role::kRightLowerArm}, {Role::kLeftHand, Role::kRightHand},
      {Role::kLeftUpperLeg, Role::kRightUpperLeg}, {Role::kLeftLowerLeg, Role::kRightLowerLeg},
      {Role::kLeftFoot, Role::kRightFoot},         {Role::kLeftToes, Role::kRightToes},
  };
  const int k = static_cast<int>(limb) - static_cast<int>(LimbWord::kShoulder);
  if (k < 0 || k >= static_cast<int>(std::size(kRoles))) {
    return Role::kHips;  // unreachable for the limbs passed in
  }
  return side == Side::kLeft ? kRoles[k].first : kRoles[k].second;
}

}  // namespace internal

using internal::IsNumber;
using internal::LimbOfWord;
using internal::LimbWord;

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
      const LimbWord limb = LimbOfWord(rest);
      if (limb == LimbWord::kNone || limb == LimbWord::kHead || limb == LimbWord::kNeck ||
          limb == LimbWord::kHips) {
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

}  // namespace rigel::retarget
