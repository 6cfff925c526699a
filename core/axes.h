// Scene axes with provenance: which way is up and forward in a scene's data, and how that was
// found (stated by the file, inferred from the body, given by the user).
#ifndef RIGEL_CORE_AXES_H_
#define RIGEL_CORE_AXES_H_

#include <Eigen/Geometry>
#include <optional>
#include <string>
#include <string_view>

namespace rigel {

// How a scene fact (an axis, the unit) was found.
enum class FactSource {
  kUnknown,   // nobody said and the data do not decide: a default is used
  kStated,    // the file says so (FBX GlobalSettings, glTF's fixed frame)
  kInferred,  // inferred from the body (the evidence says how)
  kUser,      // given by the user (--up, --forward, rigel.load options)
};

// "stated by the file", "inferred from the body", "given by the user", "unknown (default)".
std::string_view FactSourceText(FactSource source);
// "stated", "inferred", "user", "unknown" (JSON and Lua).
std::string_view FactSourceKey(FactSource source);

// A coordinate axis with a sign: axis 0 X, 1 Y, 2 Z; sign +1 or -1.
struct SignedAxis {
  int axis = 1;
  int sign = 1;
  Eigen::Vector3d Vector() const {
    Eigen::Vector3d v = Eigen::Vector3d::Zero();
    v[axis] = sign;
    return v;
  }
  bool operator==(const SignedAxis&) const = default;
};

// "+Y", "-Z".
std::string SignedAxisName(SignedAxis a);
// Parses "y", "Y", "+y", "-Z" (case-insensitive). nullopt for anything else.
std::optional<SignedAxis> ParseSignedAxis(std::string_view text);
// The signed axis nearest `v` (its largest component), +Y for a zero vector.
SignedAxis NearestSignedAxis(const Eigen::Vector3d& v);

// One axis fact: its value, how it was found, and the evidence in words ("" when stated).
struct AxisFact {
  SignedAxis value;
  FactSource source = FactSource::kUnknown;
  std::string evidence;
};

// The up axis as the retargeter takes it (1 Y, 2 Z): the scene's reading (stated, given, inferred
// or the format's default) when it is +Y or +Z; -1 otherwise (an X or negative up: the retargeter
// infers it from the body).
int RetargetUpAxis(const AxisFact& up);

// The axes a scene's data are in. Forward is the direction the figure faces. Defaults: +Y up,
// +Z forward (glTF's frame), unknown. Data are always read as right-handed coordinates; a file
// that states a left-handed system is noted in `right_handed` (FBX CoordAxis).
struct SceneAxes {
  AxisFact up{{1, 1}, FactSource::kUnknown, ""};
  AxisFact forward{{2, 1}, FactSource::kUnknown, ""};
  bool right_handed = true;
  FactSource handedness_source = FactSource::kUnknown;
  // FBX OriginalUpAxis: the up axis of the application that made the file (-1: not stated).
  SignedAxis original_up{-1, 1};
};

// glTF's frame: +Y up, +Z forward, stated by the format.
SceneAxes GltfAxes();

// The rotation that takes data in `axes` to +Y up, +Z forward (glTF's frame). Up wins when up and
// forward are the same axis (forward is then the next axis after up, as FBX's parity rule).
// Identity when the axes are already glTF's.
Eigen::Matrix3d RotationToGltfFrame(const SceneAxes& axes);

// The forward axis that goes with `up` when nothing says which: +Z for +Y up, -Y for +Z up (as
// Blender and 3ds Max), and the matching choice for the other axes.
SignedAxis DefaultForward(SignedAxis up);

// "+Y up (stated by the file), +Z forward (inferred from the body: ...)" on one line.
std::string DescribeAxes(const SceneAxes& axes);

}  // namespace rigel

#endif  // RIGEL_CORE_AXES_H_
