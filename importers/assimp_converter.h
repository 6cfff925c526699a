// The Assimp front's converter (importers/assimp_reader.h describes what it makes of a scene),
// one concern per file:
//   assimp_reader.cc     reading through Assimp, the run in order, the file unit
//   assimp_hierarchy.cc  the node tree: helper chains, joint selection, rest poses, the skeleton
//   assimp_sampling.cc   frame timing, sampling every clip's channels, the clips
//   assimp_meshes.cc     meshes: geometry at bind, skin weights, rigid attachment
// Internal to rigel_io.
#ifndef RIGEL_IMPORTERS_ASSIMP_CONVERTER_H_
#define RIGEL_IMPORTERS_ASSIMP_CONVERTER_H_

#include <assimp/anim.h>
#include <assimp/matrix4x4.h>
#include <assimp/mesh.h>
#include <assimp/scene.h>

#include <Eigen/Geometry>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clip.h"
#include "core/scene.h"
#include "core/skeleton.h"
#include "importers/fbx_scan.h"

namespace rigel::assimp_internal {

// What Assimp's FBX reader puts between a node's name and its helper kind
// ("Hips_$AssimpFbx$_PreRotation").
constexpr std::string_view kHelperTag = "_$AssimpFbx$_";
// Limits on what one file may make: frames per clip, values per clip.
constexpr int kMaxFrames = 1'000'000;
constexpr double kMaxClipValues = 2e8;

// An Assimp (row-major) matrix as an Eigen transform.
Eigen::Affine3d ToEigen(const aiMatrix4x4& m);

// A rigid frame: the rotation and origin of a (possibly scaled) transform.
struct Frame {
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
};

// An FBX node's InheritType (0 RrSs, 1 RSrs, 2 Rrs; Assimp keeps it in the node's metadata), or
// -1 when it states none.
int InheritTypeOf(const aiNode& node);

// Removes scale from `t`. Sets *nonuniform when the axes' scales differ by more than 1e-4.
Frame ToFrame(const Eigen::Affine3d& t, bool* nonuniform);

struct Xform;     // importers/assimp_keys.h
struct Animated;  // importers/assimp_keys.h

// One node of the file's tree, flattened parent first.
struct Node {
  const aiNode* ai = nullptr;
  int parent = -1;
  std::string name;
  bool helper = false;
  std::string helper_kind;   // "PreRotation", "Translation", ... for helpers
  int owner = -1;            // helpers above a node: that node's index
  std::vector<int> helpers;  // real nodes: their helper chain above them
  Eigen::Affine3d static_local = Eigen::Affine3d::Identity();
  // The model's FBX InheritType is Rrs (2: the parent's scale is not inherited; Maya's segment
  // scale compensation). Set on the real node; `drop_parent_scale` is where it acts in the
  // static chain: the topmost helper above the node, or the node itself without helpers.
  bool inherit_rrs = false;
  bool drop_parent_scale = false;
  // InheritType RrSs (0): the parent's scale applies axis by axis after the child's rotation (no
  // shear). rigel composes it as the plain product (RSrs), the same while the parent's world
  // scale is uniform; NoteComponentwiseScale says where it is not.
  bool inherit_componentwise = false;
};

// Converts one aiScene read from `path` (used in messages) to a Scene. Throws ImportError.
class Converter {
 public:
  // `skeleton_models`: the names of the file's skeleton models (FBX LimbNodes, from ScanFbx);
  // they are joints whether or not a skin or an animation uses them.
  // `stacks`: the FBX animation stacks' stated ranges (ScanFbx), when Assimp read a copy of the
  // file whose stacks were widened (WidenFbxStacks): a take is as long as its stated range.
  Converter(const aiScene& scene, const std::string& path,
            std::vector<std::string> skeleton_models = {}, std::vector<FbxStackRange> stacks = {})
      : scene_(scene),
        path_(path),
        skeleton_models_(std::move(skeleton_models)),
        stacks_(std::move(stacks)) {}

  // Blend shapes the file holds in FBX 7.1's older layout (FbxScan::legacy_shapes), which Assimp
  // does not read: named in the refusal or the "not carried" warning.
  void set_legacy_shapes(int n) { legacy_shapes_ = n; }
  // The FBX states no frame rate and its keys (`key_spacing` seconds apart at the closest) are too
  // sparse to be frames: Assimp reads a copy keyed at `fps` (FbxDensified), whose spacing is not
  // the file's; every take is sampled at `fps` and the warning gives the file's own spacing.
  void set_assumed_rate(double fps, double key_spacing) {
    assumed_fps_ = fps;
    assumed_key_spacing_ = key_spacing;
  }

  // The whole conversion, once.
  Scene Run();

 private:
  // Frame timing of an animation: frames per second, ticks per frame, number of frames.
  struct Timing {
    double fps = 30;
    double ticks_per_frame = 1;
    int frames = 1;
    // Where `fps` came from when the file states no rate (glTF never does; an FBX with time mode
    // "default" and no custom rate does not): the spacing of its keys, or the 30 assumed because
    // a single key has no spacing, or because its keys are too sparse to be frames (under 12 a
    // second). kStated otherwise.
    enum class RateSource { kStated, kKeySpacing, kAssumedSingleKey, kAssumedSparse };
    RateSource rate_source = RateSource::kStated;
    double key_spacing = 0;  // seconds, for kAssumedSparse
  };

  // One animation sampled on every frame: per frame and joint (in joints_ order) the channel
  // rotation as (x, y, z) Euler angles (ZYX, continuous) and the translation offset from the rest.
  struct Sampled {
    std::string name;
    int anim = -1;               // index of the aiAnimation (-1: the static pose)
    double ticks_per_frame = 1;  // of the animation's ticks
    double fps = 30;
    int frames = 0;
    std::unique_ptr<double[]> values;  // frames x joints x 6 (every value written: no zeroing)
    std::vector<char> moved;           // per joint: the translation left the rest on some frame
    // Animations that scale a joint (some channel's scale leaves its rest): per frame and joint
    // the joint's own scale minus 1 per axis (frames x joints x 3), and per joint whether it
    // left 1 on some frame. Empty otherwise.
    std::unique_ptr<double[]> scales;
    std::vector<char> scaled;
  };

  // Throws ImportError("<path>: <what>").
  [[noreturn]] void Fail(const std::string& what) const;

  // --- The node tree (assimp_hierarchy.cc).

  // nodes_ (parent first), index_by_name_ and children_ from the scene's node tree.
  void Flatten();
  // Ties each `$AssimpFbx$` helper chain to the real node below it (Node::owner, Node::helpers).
  void ResolveHelpers();
  // Node index a channel targets; a missing node is an error.
  int ChannelNode(const aiAnimation& anim, const aiNodeAnim& channel) const;
  // Per animation: node -> channel (duplicates are reported once, here).
  std::vector<const aiNodeAnim*> ChannelMap(const aiAnimation* anim);
  // maps_ and animated_: the nodes (helpers count for their owner) some animation moves.
  void CollectAnimated();
  // Assimp's stand-in for a file without meshes (its Collada reader adds one): a mesh skinned to
  // every node, with material "SkeletonMaterial", in a scene flagged incomplete. Its bones are not
  // the file's: with them every leaf (end) node would become a joint.
  bool IsGeneratedSkeletonMesh(const aiMesh& mesh) const;
  // The joints: skin bones, animated nodes, skeleton models (FBX LimbNodes) and their
  // ancestors; lone animated nodes outside the skeleton left out with a warning.
  void SelectJoints();
  // SelectJoints' steps: is_bone_ and bind_world_ from the meshes' skin bones.
  void MarkSkinBones();
  // is_joint_ and joint_parent_ for a file that animates only blend-shape weights: the nodes of
  // those meshes are its joints. Appends the roots found.
  void MarkMorphJoints(std::vector<int>& roots);
  // The error of a file without joints, saying what it does hold and what of it rigel does not
  // read.
  [[noreturn]] void FailNoSkeleton() const;
  // Per node: a skeleton model (an FBX LimbNode) that is a joint whether or not a skin or an
  // animation uses it; leaves only when the file has neither skin nor animated LimbNodes (else a
  // bare leaf LimbNode is the end of its parent bone: an end site). After is_bone_.
  std::vector<bool> SkeletonModels() const;
  // Every node's global transform from the static locals, inherit types applied; `rest_only`
  // leaves out the helpers' own rotation (the rest pose's chain).
  std::vector<Eigen::Affine3d> StaticGlobals(bool rest_only) const;
  // Rest transforms (full affine, world) of every joint and end site.
  void ComputeRest();
  // Rest frames, unique joint names, the translation tolerance and joint-local rests.
  void PrepareRest();
  // Notes the first node whose scale rotation and translation channels cannot carry.
  void NoteNonuniform(int node);
  // The skeleton of the joints (position channels where has_position_), into out.skeleton.
  void BuildSkeleton(Scene& out);

  // --- Meshes (assimp_meshes.cc).

  // Every mesh (but Assimp's generated skeleton mesh) into out.meshes, after BuildSkeleton.
  void ConvertMeshes(Scene& out);

  // --- Blend shapes (assimp_morph.cc).

  // The morph targets of `ai` (Assimp gives each as whole positions and normals: rigel keeps the
  // offsets from the mesh, of the vertices that move), placed like the mesh by `place`.
  // FBX in-between shapes are left out (with a warning): the channel's full shape is kept.
  void ConvertMorphTargets(const aiMesh& ai, const Eigen::Affine3d& place, Mesh* mesh);
  // The node an animation's morph channel drives (glTF: the node's name; FBX: "<model>*<n>"),
  // -1 when none. Of several nodes of that name, the one whose meshes have morph targets.
  int MorphChannelNode(const aiMeshMorphAnim& channel) const;
  // Nodes with meshes whose blend-shape weights some animation keys: the joints of a file that
  // animates only weights (no skeleton, no animated node).
  std::vector<int> MorphAnimatedNodes() const;
  // The weights of every clip (Clip::weight_channels from out.meshes), sampled from the morph
  // channels of the animation each was made from; after ConvertMeshes.
  void SampleWeights(const std::vector<Sampled>& sampled, Scene& out);

  // --- The file (assimp_reader.cc).

  // Scene::file_unit_metres from the format and the FBX UnitScaleFactor (0: unknown).
  double FileUnit() const;
  // The axes the file states: FBX GlobalSettings (UpAxis, FrontAxis, CoordAxis and their signs,
  // OriginalUpAxis), which Assimp exposes as scene metadata and does not apply to the nodes;
  // glTF's fixed +Y up, +Z forward. Other formats state nothing (inferred later).
  SceneAxes FileAxes() const;
  // Nothing silent: a warning naming the node properties of joints that rigel does not carry
  // (FBX user properties, rotation limits, display settings), from Assimp's node metadata.
  void NoteUncarriedProperties();
  // Joints whose InheritType is RrSs under a parent whose world scale is not uniform on some
  // frame: the warning gives how far the plain product (what rigel composes) turns and scales
  // their axes from the FBX SDK's RrSs, at the worst joint and frame.
  void NoteComponentwiseScale(const Scene& out);
  // Nothing silent: one warning that lists what the file holds and rigel does not carry (animated
  // and other nodes outside the skeleton, cameras, lights, UV sets past the first, vertex colours,
  // material properties beyond names), after ConvertMeshes.
  void NoteNotCarried();
  // "N blend shape(s) (morph targets) on M mesh(es) and K animated weight track(s)", or "" when
  // the file has none.
  std::string BlendShapeSummary() const;

  // --- Sampling (assimp_sampling.cc).

  // The common key spacing (ticks) when every channel with more than two keys is keyed on one
  // evenly spaced grid starting at 0 whose spacing is within 0.1% of `ticks_per_frame`; else 0.
  // The stated length of `anim` in its ticks when Assimp read it from a widened stack (stacks_: the
  // one stack of its name, which stated a range), computed as Assimp computes a stack's duration;
  // negative otherwise.
  double StatedStackDuration(const aiAnimation& anim) const;
  static double KeyGrid(const aiAnimation& anim, double ticks_per_frame);
  // Frame rate, ticks per frame and frame count of `anim` (null: one frame at 30 fps).
  Timing TimingOf(const aiAnimation* anim) const;
  // The frame rate an FBX file's GlobalSettings state, given Assimp's ticks per second `tps`:
  // `tps` for a fixed time mode, CustomFrameRate for TimeMode 0 ("default", which Assimp reads
  // as 1 tick a second) and 14 ("custom"), 0 when those give no positive rate (not stated).
  double FbxStatedRate(double tps) const;
  // A warning when `timing`'s rate is not the file's own (Timing::RateSource).
  void NoteRateSource(const Timing& timing, const std::string& name);
  // Samples animation `a` (-1: the static pose). Evaluates only the joints and their ancestors,
  // nodes whose chain to the root is static once, and walks every key list with a cursor.
  Sampled SampleAnimation(int a, const std::string& name);
  // SampleAnimation's steps and their working state (assimp_sampling.cc).
  struct Sampling;
  // The nodes to evaluate (joints and their ancestors), their storage slots and block size, the
  // static ones' globals, and the dynamic ones in `st.evaluate`.
  void PlanNodes(const std::vector<const aiNodeAnim*>& map, Sampling& st);
  // Node `i`'s local transform: fixed, or its channel's key lists ready to sample. Marks
  // `drop_on_owner` and `animated_scale` (a scale leaves its rest value).
  Animated AnimatedNode(int i, const std::vector<const aiNodeAnim*>& map, const Timing& timing,
                        std::vector<char>& drop_on_owner, bool* animated_scale);
  // The per-joint state: rest rotations, constant joints, the scale path's buffers.
  void PrepareJoints(Sampling& st, Sampled& out);
  // The globals of the dynamic nodes on frames first .. first + count - 1.
  void EvaluateNodes(Sampling& st, int first, int count);
  // Joint k's values on frames first .. first + count - 1 (EvaluateNodes done).
  void SampleJoint(Sampling& st, int k, int first, int count, Sampled& out);
  // The scale path's values replace the rigid path's when some joint does scale.
  void KeepScalePathOrNot(Sampling& st, Sampled& out);
  // One joint's values on one frame of an animation that scales (SampleAnimation): rigel's
  // world linear (the source's relative to the rest) and rotation frame per joint of the block
  // (`linear`, `frame`, joint k at k * block + b), the joint's rotation, translation (`v`, as
  // Sampled::values) and own scale minus 1 (`scale`); sets `moved` (translation left the rest)
  // and `scaled` (scale left 1). A local linear part that is not a rotation
  // times a scale along the joint's axes (shear under a non-uniformly scaled parent) is
  // approximated, and the first such node kept in `nonuniform` (NoteNonuniform if this path's
  // values are kept).
  void SampleScaled(int k, int parent_k, int b, int block, const Xform& g, const Xform* gp,
                    const std::vector<Eigen::Matrix3d>& to_rigel,
                    std::vector<Eigen::Matrix3d>& linear, std::vector<Eigen::Matrix3d>& frame,
                    const Eigen::Quaterniond& rest_inverse, Eigen::Vector3d& previous, double* v,
                    double* scale, char& moved, char& scaled, int& nonuniform, int j);
  // How far rigel's reading of a file that warned of non-uniform scale (NoteNonuniform) is from
  // the file: the largest distance between a joint's world position as the file composes it
  // (Assimp's node transforms, shear included) and as rigel's skeleton and clips give it (forward
  // kinematics), over every take, frame and joint, and the figure's size (the largest extent of
  // its joints' rest positions). Re-samples each take with record_world_ set; `sampled` and
  // `out.clips` are in the same order.
  // Also the largest distance, from where the file puts it, of a point a bone's reach from its
  // joint (its farthest child or end site at rest) that the joint carries (an end site, a
  // skinned vertex) when rigel's joint axes cannot follow the file's (scale, shear).
  struct Approximation {
    struct Worst {
      double distance = 0;
      std::string joint, take;
      int frame = 0;
    };
    Worst joint, carried;
    double size = 0;
  };
  Approximation MeasureApproximation(const std::vector<Sampled>& sampled, const Scene& out);
  // The warning for a file that NoteNonuniform marked, with MeasureApproximation's figures; none
  // when the channels hold the file within its single-precision noise (1e-5 of its size).
  void NoteApproximation(const std::vector<Sampled>& sampled, const Scene& out);
  // Sets has_position_ for animated joints whose local translation leaves the rest, and
  // has_scale_ for joints whose scale does.
  void MarkAnimatedTranslations(const Sampled& s);
  // The clip of `s` on the built skeleton.
  Clip ToClip(const Sampled& s, const Skeleton& skeleton);

  const aiScene& scene_;
  const std::string& path_;
  std::vector<std::string> skeleton_models_;
  std::vector<FbxStackRange> stacks_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> children_;
  std::unordered_map<std::string, int> index_by_name_;
  std::vector<bool> animated_;
  std::vector<bool> is_bone_;
  std::vector<bool> is_joint_;
  std::vector<bool> has_position_;
  std::vector<bool> has_scale_;  // joints with scale channels (some animation scales them)
  std::vector<int> joint_parent_;
  std::vector<int> joints_;
  std::vector<int> frame_index_;
  std::vector<Eigen::Affine3d> bind_world_;
  std::vector<Eigen::Affine3d> rest_world_;
  // Per aiMesh: its index in Scene::meshes, -1 when not carried (after ConvertMeshes).
  std::vector<int> mesh_index_;
  std::vector<Frame> rest_;
  std::vector<Frame> rest_local_;
  std::vector<std::string> names_;
  std::vector<std::pair<int, Eigen::Vector3d>> end_sites_;
  std::vector<int> end_site_nodes_;            // the nodes end_sites_ were read from
  std::vector<std::string> dropped_animated_;  // animated single-node trees left out
  std::vector<std::string> warnings_;
  std::vector<std::vector<const aiNodeAnim*>> maps_;  // [0]: none, [a + 1]: animation a
  double translation_tolerance_ = 1e-9;
  bool nonuniform_scale_ = false;
  bool pose_scales_rest_ = false;  // some skinned joint's pose scale is not its bind pose's
  // While MeasureApproximation re-samples: SampleAnimation writes the file's world position of
  // every joint on every frame here (frames x joints, joints_ order) and notes nothing.
  std::vector<Eigen::Vector3d>* record_world_ = nullptr;
  std::vector<Eigen::Matrix3d>* record_linear_ = nullptr;  // and its world linear part
  int legacy_shapes_ = 0;
  double assumed_fps_ = 0, assumed_key_spacing_ = 0;
  bool has_rrs_ = false;  // some node does not inherit its parent's scale
  std::string nonuniform_name_;
};

}  // namespace rigel::assimp_internal

#endif  // RIGEL_IMPORTERS_ASSIMP_CONVERTER_H_
