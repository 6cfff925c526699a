// What an FBX file says about itself before Assimp reads it: its format version and the kind of
// every model (LimbNode, Null, Mesh, Camera, ...). Assimp keeps neither: it refuses files older
// than FBX 7.1 with a message about its own internals, and it drops the node attribute that makes
// a model a skeleton joint, so a skeleton that is neither skinned nor animated (a HumanIK
// character definition, a retarget target) looked like no skeleton at all.
//
// The scan reads the binary node records (FBX 7.x, 32- and 64-bit offsets, and the 6.x binary
// layout) or the ASCII text, with every offset and length checked against the file's size:
// untrusted input never reads outside the bytes it was given.
#ifndef RIGEL_IMPORTERS_FBX_SCAN_H_
#define RIGEL_IMPORTERS_FBX_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rigel {

struct FbxModelKind {
  std::string name;  // as Assimp names the node: without "Model::" or the binary "\0\1Model"
  std::string kind;  // "LimbNode", "Limb", "Null", "Mesh", "Root", "Camera", "" when unstated
};

// An animation stack's time range (LocalStart, LocalStop, in FBX ticks: 46186158000 a second) and
// where the file holds those values, so that a copy of the file can widen them (WidenFbxStacks).
struct FbxStackRange {
  std::string name;     // as Assimp names the animation: without "AnimStack::" or "\0\1AnimStack"
  std::int64_t id = 0;  // the object's id (0 when the file states none: FBX 6.x)
  std::int64_t start = 0, stop = 0;
  bool has_start = false, has_stop = false;
  // Binary: the byte offset of the 8-byte value. ASCII: the offset and length of its digits.
  std::size_t start_at = 0, start_len = 0, stop_at = 0, stop_len = 0;
};

// FBX time: ticks per second.
constexpr std::int64_t kFbxTicksPerSecond = 46186158000;

// An animation layer (AnimationLayer object) of a take: the stack it belongs to and how many
// animation curve nodes (animated properties) it carries.
struct FbxLayer {
  std::string name;  // without "AnimLayer::" or "\0\1AnimLayer"
  std::int64_t id = 0;
  std::int64_t stack = 0;  // id of its AnimationStack, 0 when connected to none
  int curve_nodes = 0;
};

struct FbxScan {
  bool binary = false;
  // FBXHeaderExtension/FBXVersion (7400 for FBX 7.4), else the binary header's version field;
  // 0 when the file states none.
  int version = 0;
  std::vector<FbxModelKind> models;
  std::vector<FbxStackRange> stacks;
  std::vector<FbxLayer> layers;
  // Blend shapes stored the FBX 7.1 way, as Shape records inside a Geometry (later versions use
  // BlendShape deformers): Assimp 5.2 does not read them.
  int legacy_shapes = 0;
};

// The names of the layers of `stack` that carry animation curves, in file order. More than one
// means the take blends layers (by weight, additively or by override), which Assimp 5.2 does not
// do: it reads every layer's curves as one, so a curve of a later layer replaces the earlier one.
std::vector<std::string> LayersWithCurves(const FbxScan& scan, const FbxStackRange& stack);

// Scans the bytes of an FBX file. nullopt when `bytes` is not an FBX file (neither the binary
// magic nor an ASCII FBX header); a truncated or corrupt binary file gives what was read up to the
// fault (Assimp reports the fault itself).
std::optional<FbxScan> ScanFbx(std::string_view bytes);

// A copy of the file's bytes in which every animation stack that states a range ends `margin`
// ticks later (LocalStop + margin); `scan` is ScanFbx of `bytes`. Assimp 5.2 drops the keys that
// lie past a stack's LocalStop (by more than 10000 ticks, 2e-7 s): a curve whose last key sits a
// fraction of a frame after the stated stop lost that key, and the take's last frame repeated the
// one before it. Reading the widened copy keeps those keys; the take's length stays the stated
// range (Converter). Stacks whose stated range is empty (no LocalStart, no LocalStop) are left:
// Assimp reads all their keys already.
std::string WidenFbxStacks(std::string bytes, const FbxScan& scan, std::int64_t margin);

// The oldest FBX version Assimp (and so rigel) reads: 7100 (FBX 2011).
constexpr int kOldestReadableFbx = 7100;

// "7.4" for 7400, "6.1" for 6100.
std::string FbxVersionName(int version);

// A skeleton joint's model kind: LimbNode (7.x), Limb and LimbNode (6.x), Root (MotionBuilder's
// skeleton root).
bool IsSkeletonKind(std::string_view kind);

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_FBX_SCAN_H_
