// Humanoid roles of a skeleton's joints and automatic bone maps between two skeletons.
//
// Names are split into tokens (camelCase, digits, '_', '.', '-', ' '; namespaces such as
// "mixamorig:" and rig prefixes such as "Bip01 ", "CC_Base_" dropped), the side marker is found in
// any form ("Left", "L", "l", "r", "right", as a prefix, a suffix or glued as in "lThigh"), and the
// remaining words are matched against limb words with their synonyms (thigh/upleg/upperleg/hip,
// calf/shin/leg/lowerleg/knee, foot/ankle, toe/ball, clavicle/collar/shoulder, upperarm/arm,
// forearm/lowerarm/elbow, hand/wrist, neck, head). Twist, roll, helper, end/nub and IK bones are
// recognised and left out of the chains. The hierarchy confirms the names: each leg and arm is a
// chain (upper above lower above the end), the hips are the lowest common ancestor of the upper
// legs and the head, the chest the one of the arms; gaps in a chain are filled from the hierarchy,
// and where hierarchy and names disagree a warning says so. Spine and neck chains of different
// lengths are matched end to end.
#ifndef RIGEL_CORE_RETARGET_HUMANOID_H_
#define RIGEL_CORE_RETARGET_HUMANOID_H_

#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rigel {
class Skeleton;
}

namespace rigel::retarget {

// The joints retargeting knows by role. Spine and neck joints between the named ends have no
// role of their own: they are matched as chains.
enum class Role : std::uint8_t {
  kHips,
  kChest,
  kNeck,
  kHead,
  kLeftShoulder,  // clavicle / collar
  kLeftUpperArm,
  kLeftLowerArm,
  kLeftHand,
  kRightShoulder,
  kRightUpperArm,
  kRightLowerArm,
  kRightHand,
  kLeftUpperLeg,
  kLeftLowerLeg,
  kLeftFoot,
  kLeftToes,
  kRightUpperLeg,
  kRightLowerLeg,
  kRightFoot,
  kRightToes,
};
constexpr int kRoleCount = 20;

// "Hips", "LeftUpperArm", ... (HumanIK-like spelling, used in map files).
std::string_view RoleName(Role role);
// Parses a role name (case-insensitive). nullopt when unknown.
std::optional<Role> ParseRole(std::string_view name);

// Which side a joint name belongs to.
enum class Side : std::uint8_t { kCenter, kLeft, kRight };

// A joint name split into side and normalised word: "mixamorig:LeftUpLeg" -> (kLeft, "upleg"),
// "upperleg01.L" -> (kLeft, "upperleg01"), "LHipJoint" -> (kLeft, "hipjoint").
struct NormalisedName {
  Side side = Side::kCenter;
  std::string word;
  // Helper joints (names starting with '_') lose ties against plain ones.
  bool helper = false;
  // The words of the name, lower case, rig prefix and side marker removed, digits as their own
  // tokens: "CC_Base_L_ThighTwist01" -> {"thigh", "twist", "01"}.
  std::vector<std::string> tokens;
  // Twist, roll, helper, end/nub, IK and other non-deforming or follower bones: never given a
  // role ("thigh_twist_01_l", "LeftHand_End", "ik_foot_l", "Bip01 L Toe0Nub").
  bool extra = false;
};
NormalisedName NormaliseJointName(std::string_view name);

// Splits a joint name into lower-case tokens at separators ('_', '.', '-', ' ', ':', '|'),
// camelCase boundaries ("LHipJoint" -> l, hip, joint) and letter/digit boundaries.
std::vector<std::string> SplitJointName(std::string_view name);

// Joint index per role (-1 when the skeleton has none), plus the spine chain (hips excluded,
// chest included) and the neck chain (after the chest, head excluded), parent first.
struct HumanoidJoints {
  std::array<int, kRoleCount> joint;
  // Per role: how sure the classification is, in [0, 1] (1: the name says it and the hierarchy
  // agrees; lower when the hierarchy had to decide or fill a gap), and why, in words.
  std::array<double, kRoleCount> confidence;
  std::array<std::string, kRoleCount> why;
  std::vector<int> spine;
  std::vector<int> neck;
  // Twist, roll, helper and end bones found (NormalisedName::extra): they follow their parents.
  std::vector<int> extras;
  // Where the hierarchy contradicts the names (a limb word off its chain, left and right swapped,
  // legs of different lengths), one line each.
  std::vector<std::string> warnings;
  // Fingers of each hand: fingers[side * 5 + finger] (side 0 left, 1 right; finger 0 thumb,
  // 1 index, 2 middle, 3 ring, 4 pinky) = {metacarpal, proximal, intermediate, distal}, -1 where
  // the rig has none.
  std::array<std::array<int, 4>, 10> fingers;

  HumanoidJoints() {
    joint.fill(-1);
    confidence.fill(0.0);
    for (auto& f : fingers) f.fill(-1);
  }
  int operator[](Role role) const { return joint[static_cast<int>(role)]; }
  int& operator[](Role role) { return joint[static_cast<int>(role)]; }
};

// Finds the humanoid roles of `skeleton`'s joints from their names and the hierarchy.
HumanoidJoints ClassifyHumanoid(const Skeleton& skeleton);

// One source -> target joint pair of a bone map.
struct BoneMapEntry {
  std::string source;
  std::string target;
  // Extra rotation applied in the target joint's space after rest-pose alignment (identity by
  // default): target_world = source_world_aligned * offset.
  Eigen::Quaterniond offset = Eigen::Quaterniond::Identity();
  // Role of the target joint, when the map says so (overrides name classification).
  std::optional<Role> role;
  // Line in the map file (0 when the map did not come from a file).
  int line = 0;
  // Why the automatic map chose this pair (confidence and reasons); "" for maps from files.
  std::string comment;
};

// Source -> target joint names. `origin` names the map file for messages ("" when built in code).
struct BoneMap {
  std::vector<BoneMapEntry> entries;
  std::string origin;
  std::string source_name;  // informational (the skeleton/file the map was made for)
  std::string target_name;
};

// Builds a map between two humanoid skeletons: every role both have, and the spine and neck
// chains matched end to end (the shorter chain's joints spread over the longer one). `notes`
// (optional) receives one line per role found on one side only and one per classification
// warning ("source: ..." / "target: ..."); each role entry's `comment` gives the confidence and
// the reason on both sides.
// Fingers found on both sides are mapped too (phalanx to phalanx, metacarpal to metacarpal, no
// role); `left_out` (optional) receives one line per hand listing the finger joints found on one
// side only.
BoneMap AutoMap(const Skeleton& source, const Skeleton& target,
                std::vector<std::string>* notes = nullptr,
                std::vector<std::string>* left_out = nullptr);

// "LeftIndex2" for side 0, finger 1, slot 2 of HumanoidJoints::fingers ("LeftIndex0" is the
// metacarpal).
std::string FingerJointName(int side, int finger, int slot);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_HUMANOID_H_
