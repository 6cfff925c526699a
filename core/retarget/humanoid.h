// Humanoid roles of a skeleton's joints and automatic bone maps between two skeletons.
//
// Names are normalised (namespace prefixes such as "mixamorig:" or "Bip01 " dropped, side tokens
// "Left"/"L"/".L"/"_l" split off, lower case, separators removed) and matched against the words
// of the common conventions: CMU cgspeed, Mixamo, MakeHuman (default and legacy rigs), Motion
// Analysis / Biovision, HumanIK, Xsens MVN, 3ds Max Biped, Unreal. Topology settles what names
// cannot: the hips are the lowest common ancestor of the upper legs and the head, the chest the
// one of the upper arms, and spine/neck chains of different lengths are matched end to end.
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
};
NormalisedName NormaliseJointName(std::string_view name);

// Joint index per role (-1 when the skeleton has none), plus the spine chain (hips excluded,
// chest included) and the neck chain (after the chest, head excluded), parent first.
struct HumanoidJoints {
  std::array<int, kRoleCount> joint;
  std::vector<int> spine;
  std::vector<int> neck;

  HumanoidJoints() { joint.fill(-1); }
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
// (optional) receives one line per role found on one side only.
BoneMap AutoMap(const Skeleton& source, const Skeleton& target,
                std::vector<std::string>* notes = nullptr);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_HUMANOID_H_
