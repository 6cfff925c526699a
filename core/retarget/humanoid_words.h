// The words of joint names (internal to core/retarget; the public side is NormaliseJointName in
// core/retarget/humanoid.h): limb words and their synonyms, finger words, side markers, and the
// role a limb word names on a side. Defined in humanoid_names.cc, used by the classifier
// (humanoid.cc).
#ifndef RIGEL_CORE_RETARGET_HUMANOID_WORDS_H_
#define RIGEL_CORE_RETARGET_HUMANOID_WORDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/retarget/humanoid.h"

namespace rigel::retarget::internal {

// True when `s` begins with `prefix`.
bool StartsWith(std::string_view s, std::string_view prefix);
// True for a token of digits ("01").
bool IsNumber(const std::string& t);

// Limb words: which role of the left side a word names (the right side is +4 or +8 roles away).
enum class LimbWord {
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

// Whole words and compounds (tokens joined) naming a limb ("upperarm", "toebase", "calf").
LimbWord LimbOfWord(std::string_view w);

// Which finger a name's tokens name (0 thumb .. 4 pinky), -1 when none says. Numbered fingers
// ("Bip01 L Finger1", MakeHuman "finger2-1") are resolved by the caller.
int FingerOfTokens(const std::vector<std::string>& tokens);

// A token naming a metacarpal ("metacarpal", "carpal", "palm", "base", ...).
bool IsMetacarpalToken(std::string_view t);

// The limb a name's tokens (side and prefixes removed) name: the whole compound first, then pairs
// of adjacent tokens, then single tokens from the last (the noun usually ends the name). Names
// with two numbers ("toe1-1") or a finger word are digit phalanges, not limb roles.
LimbWord LimbOfTokens(const std::vector<std::string>& tokens);

// The role of a limb (kShoulder .. kToes) on `side` (left, else right).
Role LimbRole(LimbWord limb, Side side);

}  // namespace rigel::retarget::internal

#endif  // RIGEL_CORE_RETARGET_HUMANOID_WORDS_H_
