// FBX animation curves as their authors keyed them (issue 33 item 3).
//
// Assimp 5.2 reads an FBX curve's key times and values only, and interpolates linearly between
// keys whatever each key states. A hand-keyed Maya or MotionBuilder curve is cubic (Bezier, with
// automatic, user or broken tangents, weighted or not) or stepped, with keys frames apart: between
// its keys Assimp's values were not the author's (`ufbx/maya_pivot_offset`: a translation keyed
// 0 -> 20 over frames 1-12 with flat tangents eases in and out; linearly it is 1.8 units off at
// frame 4). Mocap and baked curves, keyed on every frame, are not affected.
//
// rigel therefore hands Assimp a copy of the file (never the file itself) in which every curve
// whose values between keys Assimp would get wrong carries a key on every frame of the take's
// frame grid between its first and last key, evaluated here as the FBX SDK evaluates curves, with
// linear interpolation: sampled on frames (as rigel samples), Assimp then reads the author's
// values. The frame grid is the file's stated frame rate (GlobalSettings TimeMode, or
// CustomFrameRate) from each take's LocalStart. A file that states no rate is left as it is when
// its keys are frames already (the sampler takes their spacing as the rate); keys too sparse to be
// frames get the rate the sampler assumes, 30 fps (a guess, said so by the reader), so that
// between them the curve is the author's and not Assimp's straight line.
#ifndef RIGEL_IMPORTERS_FBX_CURVES_H_
#define RIGEL_IMPORTERS_FBX_CURVES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rigel {

// One AnimationCurve: key times (FBX ticks, kFbxTicksPerSecond a second), values, and the key
// attributes (flags and 4 data floats each) with the number of consecutive keys each covers.
struct FbxCurveKeys {
  std::vector<std::int64_t> times;
  std::vector<float> values;
  std::vector<std::int32_t> flags;
  std::vector<float> data;  // 4 per attribute: right slope, next left slope, weights, velocities
  std::vector<std::int32_t> refcount;
};

// FBX key attribute flags (KeyAttrFlags), as the FBX SDK defines them.
namespace fbx_key {
constexpr std::int32_t kConstant = 0x00000002;
constexpr std::int32_t kLinear = 0x00000004;
constexpr std::int32_t kCubic = 0x00000008;
constexpr std::int32_t kConstantNext = 0x00000100;  // with kConstant: the next key's value
constexpr std::int32_t kTangentTcb = 0x00000200;
constexpr std::int32_t kWeightedRight = 0x01000000;
constexpr std::int32_t kWeightedNextLeft = 0x02000000;
constexpr std::int32_t kVelocityRight = 0x10000000;
constexpr std::int32_t kVelocityNextLeft = 0x20000000;
}  // namespace fbx_key

// The flags of key `k` (its attribute through the reference counts; linear when the curve states
// none).
std::int32_t FbxKeyFlags(const FbxCurveKeys& curve, std::size_t k);

// The curve's value at `t` (ticks), as the FBX SDK evaluates it: before the first key the first
// value and after the last the last (constant extrapolation); between keys k and k+1, key k's
// interpolation: constant (key k's value, or key k+1's with kConstantNext), linear, or cubic from
// key k's right slope and key k+1's left slope (stored on key k, in value per second), as a Bezier
// whose control points lie a third of the interval in (or at the stated weights when weighted).
double EvaluateFbxCurve(const FbxCurveKeys& curve, std::int64_t t);

struct FbxDensified {
  std::string bytes;                             // the copy for Assimp
  int curves = 0;                                // curves in the file
  int densified = 0;                             // curves given a key on every frame
  std::int64_t keys_before = 0, keys_after = 0;  // keys of the densified curves
  int velocity_curves = 0;  // curves with key velocities (evaluated without them)
  int tcb_curves = 0;       // curves with TCB tangents (evaluated from their stored slopes)
  // The file states no frame rate and its keys are too sparse to be frames: the grid is this
  // assumed rate (rigel's sampler takes it, and says so), `key_spacing` seconds the closest keys.
  double assumed_fps = 0;
  double key_spacing = 0;
  // Axes the file keys no curve on, on a node whose other axes are keyed, whose stated value
  // Assimp would read as 0 (1 for scale): given a constant curve of that value.
  int axes_completed = 0;
  // Nodes whose RotationOrder is 6 (eSphericXYZ, MotionBuilder), stated 0 (XYZ) in the copy: the
  // reading of the FBX importers of Blender and ufbx. Assimp 5.2 composed such a node's
  // pre-rotation, rotation and post-rotation otherwise (wild/orangeduck_100style-retarget: the
  // ankles turned about the parent's X, the toes 3.9 % of the height off).
  int spheric_orders = 0;
};

// The copy of an FBX file (binary 7.x or ASCII 7.x) whose curves Assimp would read wrong between
// frames are keyed on every frame; nullopt when no curve needs it, when the file states no frame
// rate and its keys are frames already, or when it is not a file this reads (Assimp then reads the
// original). A file that states no rate and keys sparsely is keyed at the assumed 30 fps. Every
// offset and length is checked against the bytes: a malformed file gives nullopt, never a read
// outside them.
std::optional<FbxDensified> DensifyFbxCurves(std::string_view bytes);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_FBX_CURVES_H_
