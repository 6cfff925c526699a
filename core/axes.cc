#include "core/axes.h"

#include <cctype>
#include <cmath>

namespace rigel {

std::string_view FactSourceText(FactSource source) {
  switch (source) {
    case FactSource::kStated:
      return "stated by the file";
    case FactSource::kInferred:
      return "inferred from the body";
    case FactSource::kUser:
      return "given by the user";
    case FactSource::kUnknown:
      break;
  }
  return "unknown (default)";
}

std::string_view FactSourceKey(FactSource source) {
  switch (source) {
    case FactSource::kStated:
      return "stated";
    case FactSource::kInferred:
      return "inferred";
    case FactSource::kUser:
      return "user";
    case FactSource::kUnknown:
      break;
  }
  return "unknown";
}

std::string SignedAxisName(SignedAxis a) {
  std::string s(1, a.sign < 0 ? '-' : '+');
  s += static_cast<char>('X' + a.axis);
  return s;
}

std::optional<SignedAxis> ParseSignedAxis(std::string_view text) {
  int sign = 1;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    sign = text.front() == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  if (text.size() != 1) return std::nullopt;
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text.front())));
  if (c < 'X' || c > 'Z') return std::nullopt;
  return SignedAxis{c - 'X', sign};
}

SignedAxis NearestSignedAxis(const Eigen::Vector3d& v) {
  if (!(v.squaredNorm() > 0)) return {};
  int axis = 0;
  v.cwiseAbs().maxCoeff(&axis);
  return {axis, v[axis] < 0 ? -1 : 1};
}

SceneAxes GltfAxes() {
  SceneAxes axes;
  axes.up = {{1, 1}, FactSource::kStated, "glTF 2.0 fixes +Y up"};
  axes.forward = {{2, 1}, FactSource::kStated, "glTF 2.0 fixes +Z forward"};
  axes.handedness_source = FactSource::kStated;
  return axes;
}

SignedAxis DefaultForward(SignedAxis up) {
  // The axis after up (X -> Y -> Z -> X) is forward for Y up (+Z) and Z up (Blender: -Y).
  switch (up.axis) {
    case 0:
      return {2, up.sign};
    case 1:
      return {2, up.sign};
    default:
      return {1, -up.sign};
  }
}

namespace {

// The forward axis writers use: the stated or given one when it is not the up axis, else
// DefaultForward(up). A forward inferred from the body is reported but not written: a clip's
// figure faces any way while it moves, and turning it would move every output about its up axis.
SignedAxis WrittenForward(const SceneAxes& axes) {
  const AxisFact& f = axes.forward;
  const bool known = f.source == FactSource::kStated || f.source == FactSource::kUser;
  if (known && f.value.axis != axes.up.value.axis) return f.value;
  return DefaultForward(axes.up.value);
}

}  // namespace

Eigen::Matrix3d RotationToGltfFrame(const SceneAxes& axes) {
  const Eigen::Vector3d up = axes.up.value.Vector();
  const Eigen::Vector3d forward = WrittenForward(axes).Vector();
  const Eigen::Vector3d right = up.cross(forward);  // glTF: X = Y x Z
  // Rows: the data's right, up and forward directions become X, Y and Z.
  Eigen::Matrix3d r;
  r.row(0) = right.transpose();
  r.row(1) = up.transpose();
  r.row(2) = forward.transpose();
  return r;
}

std::string DescribeAxes(const SceneAxes& axes) {
  auto one = [](const AxisFact& f, const char* what) {
    std::string s =
        SignedAxisName(f.value) + " " + what + " (" + std::string(FactSourceText(f.source));
    if (!f.evidence.empty()) s += ": " + f.evidence;
    return s + ")";
  };
  std::string s = one(axes.up, "up") + ", " + one(axes.forward, "forward");
  if (!axes.right_handed) s += ", left-handed (stated by the file)";
  if (axes.original_up.axis >= 0) {
    s += ", made " + SignedAxisName(axes.original_up) + " up (FBX OriginalUpAxis)";
  }
  return s;
}

int RetargetUpAxis(const AxisFact& up) {
  if (up.value.sign < 0 || up.value.axis == 0) return -1;
  return up.value.axis;
}

}  // namespace rigel
