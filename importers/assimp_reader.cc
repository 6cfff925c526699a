#include "importers/assimp_reader.h"

#include <assimp/DefaultIOStream.h>
#include <assimp/DefaultIOSystem.h>
#include <assimp/MemoryIOWrapper.h>
#include <assimp/config.h>
#include <assimp/scene.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <Eigen/SVD>
#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "core/pose.h"
#include "importers/assimp_converter.h"
#include "importers/fbx_curves.h"
#include "importers/fbx_scan.h"
#include "importers/fbx_upgrade.h"
#include "importers/utf8.h"
#include "io/file_format.h"

namespace rigel {

namespace assimp_internal {

void Converter::Fail(const std::string& what) const {
  throw ImportError(fmt::format("{}: {}", path_, what));
}

Scene Converter::Run() {
  Flatten();
  ResolveHelpers();
  CollectAnimated();
  SelectJoints();
  ComputeRest();
  Scene out;
  out.source = path_;
  out.file_unit_metres = FileUnit();
  out.axes = FileAxes();
  PrepareRest();
  // One pass over every clip's frames: rotations (Euler) and translation offsets of every joint,
  // then the skeleton (which joints get position channels depends on them), then the clips.
  std::vector<Sampled> sampled;
  if (scene_.mNumAnimations == 0) {
    out.warnings.push_back(path_ + ": no animation; the clip is the one pose stored in the file");
    sampled.push_back(SampleAnimation(-1, ""));
  }
  for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
    const aiAnimation* anim = scene_.mAnimations[a];
    std::string name = anim->mName.C_Str();
    if (name.empty()) name = fmt::format("clip{}", a);
    sampled.push_back(SampleAnimation(static_cast<int>(a), name));
  }
  for (const Sampled& s : sampled) MarkAnimatedTranslations(s);
  BuildSkeleton(out);
  for (const Sampled& s : sampled) out.clips.push_back(ToClip(s, *out.skeleton));
  NoteComponentwiseScale(out);
  ConvertMeshes(out);
  SampleWeights(sampled, out);
  NoteUncarriedProperties();
  NoteNotCarried();
  if (nonuniform_scale_) NoteApproximation(sampled, out);
  out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
  return out;
}

void Converter::NoteApproximation(const std::vector<Sampled>& sampled, const Scene& out) {
  // Nothing silent: how far the approximation puts the joints and what they carry, measured
  // on every frame against the file's own transforms.
  const Approximation a = MeasureApproximation(sampled, out);
  // Within the file's own precision the channels hold it: nothing to say. Assimp keeps node
  // transforms and keys in single precision (about 1e-7 of a value); composed down a chain of
  // tens of joints that reaches about 1e-6 of the figure's size (wild/Rokoko_Newton: 7e-7), so
  // 1e-5 of the size (0.02 mm on a 1.8 m figure) is noise, not an approximation.
  if (!(std::max(a.joint.distance, a.carried.distance) <= 1e-5 * a.size)) {
    auto where = [](const Approximation::Worst& w) {
      return fmt::format("'{}', {}frame {} counted from 0", w.joint,
                         w.take.empty() ? "" : fmt::format("take '{}', ", w.take), w.frame);
    };
    auto share = [&a](double d) { return a.size > 0 ? 100 * d / a.size : 0.0; };
    warnings_.push_back(fmt::format(
        "{}: non-uniform or negative scale on '{}' (and maybe others) cannot be represented "
        "by rotation, translation and scale channels (a non-uniform rest scale, or shear under "
        "a non-uniformly scaled parent); motion is approximated: joints lie within {:.3g} file "
        "units of where the file puts them ({}), and points a bone's length from their joint "
        "(end sites, skinned vertices) up to {:.3g} ({:.3g} % of the figure's size, {:.4g}; "
        "worst {})",
        path_, nonuniform_name_, a.joint.distance, where(a.joint), a.carried.distance,
        share(a.carried.distance), a.size, where(a.carried)));
  }
}

namespace {

// A name for a message: as it is when UTF-8, else said so (names reach JSON reports).
std::string SafeName(std::string_view name) {
  return IsValidUtf8(name) ? std::string(name) : std::string("(a name that is not UTF-8)");
}

}  // namespace

void Converter::NoteNotCarried() {
  auto listed = [](const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 6;
    const std::size_t shown = std::min(names.size(), kShown);
    std::string s = fmt::format("{}", fmt::join(names.begin(), names.begin() + shown, ", "));
    if (names.size() > shown) s += fmt::format(" and {} more", names.size() - shown);
    return s;
  };
  std::vector<std::string> parts;
  if (!dropped_animated_.empty()) {
    parts.push_back(fmt::format("{} animated node(s) outside the skeleton ({})",
                                dropped_animated_.size(), listed(dropped_animated_)));
  }
  std::set<std::string, std::less<>> cameras_lights;
  std::vector<std::string> cameras, lights;
  for (unsigned i = 0; i < scene_.mNumCameras; ++i) {
    cameras.push_back(SafeName(scene_.mCameras[i]->mName.C_Str()));
    cameras_lights.insert(scene_.mCameras[i]->mName.C_Str());
  }
  for (unsigned i = 0; i < scene_.mNumLights; ++i) {
    lights.push_back(SafeName(scene_.mLights[i]->mName.C_Str()));
    cameras_lights.insert(scene_.mLights[i]->mName.C_Str());
  }
  if (!cameras.empty())
    parts.push_back(fmt::format("{} camera(s) ({})", cameras.size(), listed(cameras)));
  if (!lights.empty())
    parts.push_back(fmt::format("{} light(s) ({})", lights.size(), listed(lights)));
  // Nodes that are neither joints, their pivot helpers, mesh holders, end sites, cameras, lights
  // nor the animated trees named above: HumanIK effectors, locators, empty groups.
  std::vector<char> end_site(nodes_.size(), 0);
  for (const int i : end_site_nodes_) end_site[i] = 1;
  const std::set<std::string, std::less<>> animated(dropped_animated_.begin(),
                                                    dropped_animated_.end());
  std::vector<std::string> others;
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    if (node.helper || is_joint_[i] || end_site[i] || node.ai->mNumMeshes > 0) continue;
    if (cameras_lights.count(node.name) || animated.count(node.name)) continue;
    others.push_back(SafeName(node.name));
  }
  if (!others.empty()) {
    parts.push_back(
        fmt::format("{} other node(s) outside the skeleton ({})", others.size(), listed(others)));
  }
  int extra_uv = 0, colours = 0;
  std::set<unsigned> materials;
  for (unsigned m = 0; m < scene_.mNumMeshes && m < mesh_index_.size(); ++m) {
    if (mesh_index_[m] < 0) continue;
    const aiMesh& ai = *scene_.mMeshes[m];
    extra_uv += ai.mTextureCoords[1] != nullptr;
    colours += ai.mColors[0] != nullptr;
    if (ai.mMaterialIndex < scene_.mNumMaterials) materials.insert(ai.mMaterialIndex);
  }
  if (extra_uv > 0) parts.push_back(fmt::format("UV sets past the first on {} mesh(es)", extra_uv));
  if (colours > 0) parts.push_back(fmt::format("vertex colours on {} mesh(es)", colours));
  if (legacy_shapes_ > 0) {
    parts.push_back(
        fmt::format("{} blend shape(s) in FBX 7.1's older layout (Shape inside "
                    "Geometry)",
                    legacy_shapes_));
  }
  if (!materials.empty()) {
    parts.push_back(fmt::format("colours and textures of {} material(s) (their names are kept)",
                                materials.size()));
  }
  if (parts.empty()) return;
  warnings_.push_back(fmt::format("{}: not carried: {}", path_, fmt::join(parts, "; ")));
}

void Converter::NoteComponentwiseScale(const Scene& out) {
  const Skeleton& s = *out.skeleton;
  std::vector<int> flagged;  // rigel joints whose node states RrSs, below a parent
  for (int k = 0; k < static_cast<int>(joints_.size()) && k < s.num_joints(); ++k) {
    if (nodes_[joints_[k]].inherit_componentwise && s.parent(k) >= 0) flagged.push_back(k);
  }
  if (flagged.empty()) return;
  std::vector<Eigen::Isometry3d> world(s.num_joints());
  std::vector<Eigen::Matrix3d> linear(s.num_joints());
  double worst = 0;
  int worst_joint = -1, worst_frame = 0, count = 0;
  const Clip* worst_clip = nullptr;
  std::vector<char> counted(s.num_joints(), 0);
  for (const Clip& clip : out.clips) {
    for (int f = 0; f < clip.num_frames(); ++f) {
      ForwardKinematicsScaled(s, clip.frame(f), world, linear);
      for (const int k : flagged) {
        const Eigen::Matrix3d& parent = linear[s.parent(k)];
        const Eigen::Array3d scale = parent.colwise().norm().transpose().array();
        if ((scale - scale.mean()).abs().maxCoeff() <= 1e-9 * scale.maxCoeff()) continue;
        // rigel's plain product, and the SDK's RrSs: the parent's rotation, then the joint's
        // rotation, then the parent's scale times the joint's, axis by axis.
        const Eigen::Matrix3d local = parent.inverse() * linear[k];
        const Eigen::Array3d own = local.colwise().norm().transpose().array();
        const Eigen::JacobiSVD<Eigen::Matrix3d> polar(parent,
                                                      Eigen::ComputeFullU | Eigen::ComputeFullV);
        const Eigen::Matrix3d rotation = polar.matrixU() * polar.matrixV().transpose();
        const Eigen::Matrix3d componentwise = rotation *
                                              (local * own.inverse().matrix().asDiagonal()) *
                                              (scale * own).matrix().asDiagonal();
        const double off = (linear[k] - componentwise).norm() / componentwise.norm();
        if (!(off > 1e-9)) continue;  // also NaN: a parent scaled to nothing has no axes to compare
        if (!counted[k]) ++count, counted[k] = 1;
        if (off > worst) worst = off, worst_joint = k, worst_frame = f, worst_clip = &clip;
      }
    }
  }
  if (worst_joint < 0) return;
  warnings_.push_back(fmt::format(
      "{}: {} joint(s) inherit their parent's scale axis by axis (FBX InheritType RrSs) under a "
      "parent scaled unevenly; rigel composes them as plain matrices (RSrs), which turns and "
      "scales their axes up to {:.3g} % from the file's (worst '{}', take '{}', frame {})",
      path_, count, 100 * worst, s.name(worst_joint), worst_clip->name(), worst_frame));
}

void Converter::NoteUncarriedProperties() {
  // What rigel reads from a node's properties (its transform, pivots, rotation order) or what
  // means nothing once read; anything else on a joint is named in a warning.
  static const std::set<std::string, std::less<>> kRead = {
      "IsNull", "InheritType", "DefaultAttributeIndex", "RotationActive", "UserProperties"};
  std::set<std::string> names;
  int nodes = 0;
  for (const int j : joints_) {
    const aiMetadata* meta = nodes_[j].ai->mMetaData;
    if (meta == nullptr) continue;
    bool any = false;
    for (unsigned i = 0; i < meta->mNumProperties; ++i) {
      std::string key = meta->mKeys[i].C_Str();
      if (key == "UserProperties" && meta->mValues[i].mType == AI_AISTRING &&
          static_cast<const aiString*>(meta->mValues[i].mData)->length > 0) {
        key = "UserProperties (user-defined text)";
      } else if (kRead.count(key) != 0) {
        continue;
      }
      if (!IsValidUtf8(key)) key = "(a name that is not UTF-8)";
      names.insert(key);
      any = true;
    }
    nodes += any;
  }
  if (names.empty()) return;
  std::vector<std::string> shown(names.begin(), names.end());
  std::string more;
  if (shown.size() > 8) {
    more = fmt::format(" and {} more", shown.size() - 8);
    shown.resize(8);
  }
  warnings_.push_back(fmt::format(
      "{}: node properties not carried (rigel keeps transforms, animation and meshes) on {} "
      "joints: {}{}",
      path_, nodes, fmt::join(shown, ", "), more));
}

std::string Converter::BlendShapeSummary() const {
  unsigned shapes = 0, meshes = 0, weight_tracks = 0;
  for (unsigned m = 0; m < scene_.mNumMeshes; ++m) {
    shapes += scene_.mMeshes[m]->mNumAnimMeshes;
    meshes += scene_.mMeshes[m]->mNumAnimMeshes > 0;
  }
  for (unsigned a = 0; a < scene_.mNumAnimations; ++a) {
    weight_tracks += scene_.mAnimations[a]->mNumMorphMeshChannels;
  }
  if (shapes == 0 && weight_tracks == 0) return "";
  return fmt::format(
      "{} blend shape(s) (morph targets) on {} mesh(es) and {} animated weight "
      "track(s)",
      shapes, meshes, weight_tracks);
}

double Converter::FileUnit() const {
  const std::string ext = LowerExtension(path_);
  if (ext == ".gltf" || ext == ".glb" || ext == ".dae") return 1.0;
  if (ext == ".fbx" && scene_.mMetaData) {
    for (unsigned i = 0; i < scene_.mMetaData->mNumProperties; ++i) {
      if (std::string_view(scene_.mMetaData->mKeys[i].C_Str()) != "UnitScaleFactor") continue;
      const aiMetadataEntry& e = scene_.mMetaData->mValues[i];
      double v = 0;
      if (e.mType == AI_DOUBLE) v = *static_cast<const double*>(e.mData);
      if (e.mType == AI_FLOAT) v = *static_cast<const float*>(e.mData);
      if (std::isfinite(v) && v > 0) return v / 100.0;
    }
    return 0.01;  // FBX default: centimetres
  }
  return 0.0;
}

namespace {

// An integer entry of the scene's metadata, or nullopt.
std::optional<int> MetaInt(const aiMetadata* meta, std::string_view key) {
  if (meta == nullptr) return std::nullopt;
  for (unsigned i = 0; i < meta->mNumProperties; ++i) {
    if (std::string_view(meta->mKeys[i].C_Str()) != key) continue;
    const aiMetadataEntry& e = meta->mValues[i];
    if (e.mType == AI_INT32) return *static_cast<const std::int32_t*>(e.mData);
    if (e.mType == AI_UINT64) return static_cast<int>(*static_cast<const std::uint64_t*>(e.mData));
  }
  return std::nullopt;
}

}  // namespace

SceneAxes Converter::FileAxes() const {
  const std::string ext = LowerExtension(path_);
  if (ext == ".gltf" || ext == ".glb") return GltfAxes();
  SceneAxes axes;
  if (ext != ".fbx") return axes;
  const aiMetadata* meta = scene_.mMetaData;
  const auto up = MetaInt(meta, "UpAxis"), front = MetaInt(meta, "FrontAxis"),
             coord = MetaInt(meta, "CoordAxis");
  auto sign = [meta](std::string_view key) { return MetaInt(meta, key).value_or(1) < 0 ? -1 : 1; };
  auto valid = [](std::optional<int> a) { return a && *a >= 0 && *a <= 2; };
  if (const auto original = MetaInt(meta, "OriginalUpAxis"); valid(original)) {
    axes.original_up = {*original, sign("OriginalUpAxisSign")};
  }
  if (!valid(up) || !valid(front) || !valid(coord) || *up == *front || *up == *coord ||
      *front == *coord) {
    // FBX's default (FBX SDK, Maya): +Y up, +Z front, +X coord.
    axes.up = {{1, 1}, FactSource::kStated, "FBX default (GlobalSettings states no axes)"};
    axes.forward = {{2, 1}, FactSource::kStated, "FBX default (GlobalSettings states no axes)"};
    return axes;
  }
  axes.up = {{*up, sign("UpAxisSign")}, FactSource::kStated, "FBX GlobalSettings UpAxis"};
  axes.forward = {
      {*front, sign("FrontAxisSign")}, FactSource::kStated, "FBX GlobalSettings FrontAxis"};
  const SignedAxis right{*coord, sign("CoordAxisSign")};
  axes.right_handed =
      right.Vector().cross(axes.up.value.Vector()).dot(axes.forward.value.Vector()) > 0;
  axes.handedness_source = FactSource::kStated;
  return axes;
}

}  // namespace assimp_internal

namespace {

// A stream over a FILE* opened (and checked) by LinkCheckingIO.
class CheckedStream : public Assimp::DefaultIOStream {
 public:
  CheckedStream(FILE* f, const std::string& name) : Assimp::DefaultIOStream(f, name) {}
};

// Assimp's file access, with one check: a file the main file references (a glTF buffer or image
// uri, an FBX's external file) that has more than one link is refused. A hard link placed in the
// file's folder could otherwise make a reference read a file outside it, past the folder rule of
// the import child's confinement. The check is made on the opened descriptor (fstat), so the
// file read is the file checked.
//
// `main_bytes`, when not empty, are read in place of the main file (an FBX whose animation stacks
// were widened: WidenFbxStacks); they were read from the file this check opened first.
class LinkCheckingIO : public Assimp::DefaultIOSystem {
 public:
  LinkCheckingIO(const std::string& main, std::string main_bytes)
      : main_bytes_(std::move(main_bytes)) {
    struct stat st {};
    if (stat(main.c_str(), &st) == 0) main_ = {st.st_dev, st.st_ino};
  }
  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (file == nullptr || mode == nullptr || std::strpbrk(mode, "wa+") != nullptr) return nullptr;
    FILE* f = std::fopen(file, mode);
    if (f == nullptr) return nullptr;
    struct stat st {};
    const bool known = fstat(fileno(f), &st) == 0;
    const bool is_main = known && st.st_dev == main_.first && st.st_ino == main_.second;
    if (!known || (!is_main && st.st_nlink > 1)) {
      std::fclose(f);
      if (known) refused_.push_back(file);
      return nullptr;
    }
    if (is_main && !main_bytes_.empty()) {
      std::fclose(f);
      return new Assimp::MemoryIOStream(reinterpret_cast<const uint8_t*>(main_bytes_.data()),
                                        main_bytes_.size());
    }
    return new CheckedStream(f, file);
  }
  const std::vector<std::string>& refused() const { return refused_; }

 private:
  std::string main_bytes_;
  std::pair<dev_t, ino_t> main_{};
  std::vector<std::string> refused_;
};

}  // namespace

std::vector<std::string> AssimpExtensions() { return {".fbx", ".glb", ".gltf", ".dae"}; }

namespace {

// What the FBX scan gives the conversion: the skeleton models the file names, its animation
// stacks' stated ranges, and the bytes Assimp reads instead of the file when a stack was widened.
struct FbxPrepared {
  int legacy_shapes = 0;
  std::vector<std::string> limbs;
  std::vector<FbxStackRange> stacks;
  std::string widened;  // the copy Assimp reads (stacks widened, curves keyed on frames), if any
  std::vector<std::string> notes;  // warnings of the preparation
  // The file states no frame rate and keys sparsely: the rate its copy is keyed at (see
  // FbxDensified), for the sampler to take (and say) instead of the copy's key spacing.
  double assumed_fps = 0, key_spacing = 0;
};

// The FBX 7.4 copy of an FBX 6.x file (UpgradeFbx6), with a warning naming what it does not
// carry; an older or unreadable file is refused with rigel's own message (Assimp's named its
// internals and the wrong versions).
std::string UpgradeOldFbx(const std::string& path, const FbxScan& scan, std::string_view bytes,
                          std::vector<std::string>* notes) {
  const std::string version = fmt::format("FBX {} ({}, version {})", FbxVersionName(scan.version),
                                          scan.binary ? "binary" : "ASCII", scan.version);
  // FBX 5.x keeps its models at the top level, outside the Objects and Connections sections the
  // upgrade reads; FBX 7.0 is neither 6.x nor a version Assimp reads.
  if (scan.version < kOldestUpgradableFbx || scan.version >= 7000) {
    throw ImportError(fmt::format(
        "{}: {} {}: rigel reads FBX 6.x (through its own upgrade to 7.4) and FBX {} (FBX 2011) "
        "and later; save it again as FBX 2011 or later (Autodesk FBX Converter, Maya, 3ds Max, "
        "MotionBuilder)",
        path, version,
        scan.version < kOldestUpgradableFbx ? "is older than rigel reads" : "is not read",
        FbxVersionName(kOldestReadableFbx)));
  }
  std::string why;
  std::optional<FbxUpgrade> up = UpgradeFbx6(bytes, &why);
  if (!up) {
    throw ImportError(fmt::format("{}: {} cannot be read: {}", path, version, why));
  }
  if (!up->dropped.empty()) {
    notes->push_back(fmt::format("{}: {} is read through an FBX 7.4 copy that does not carry {}",
                                 path, version, fmt::join(up->dropped, ", ")));
  }
  return std::move(up->bytes);
}

// Keys this long past a stack's stated stop are read (WidenFbxStacks): an hour.
constexpr std::int64_t kStackMargin = 3600 * kFbxTicksPerSecond;

// Scans an FBX file (ScanFbx): refuses a version Assimp cannot read with rigel's own message,
// lists the skeleton models, and widens the animation stacks. Empty for other formats.
FbxPrepared ScanFbxFile(const std::string& path) {
  FbxPrepared out;
  if (LowerExtension(path) != ".fbx") return out;
  // In one read (a character at a time took about 10 ms a 1.6 MB file).
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ImportError(fmt::format("{}: cannot open", path));
  const std::streamoff size = in.tellg();
  if (size < 0) throw ImportError(fmt::format("{}: read error", path));
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (size > 0 && !in.read(bytes.data(), size)) {
    throw ImportError(fmt::format("{}: read error", path));
  }
  std::optional<FbxScan> scan = ScanFbx(bytes);
  if (!scan) return out;  // not FBX after all: Assimp says what it is
  const bool upgraded = scan->version > 0 && scan->version < kOldestReadableFbx;
  if (upgraded) {
    bytes = UpgradeOldFbx(path, *scan, bytes, &out.notes);
    scan = ScanFbx(bytes);
    if (!scan) throw ImportError(fmt::format("{}: the FBX 7.4 copy of the file is not FBX", path));
  }
  for (const FbxStackRange& stack : scan->stacks) {
    const std::vector<std::string> layers = LayersWithCurves(*scan, stack);
    if (layers.size() < 2) continue;
    // Assimp reads every layer's curves as one (a later layer's curve replaces an earlier one's),
    // which is neither layer and not their blend: refused rather than read wrong.
    throw ImportError(fmt::format(
        "{}: take '{}' blends {} animation layers that carry curves ({}); rigel reads one layer "
        "per take and does not blend layers (weights, additive and override modes): merge them "
        "into one before export (Maya: Merge Layers or Bake Simulation; MotionBuilder: Plot to "
        "the base layer; 3ds Max: Collapse layers)",
        path, stack.name, layers.size(), fmt::join(layers, ", ")));
  }
  for (const FbxModelKind& m : scan->models) {
    if (IsSkeletonKind(m.kind)) out.limbs.push_back(m.name);
  }
  out.stacks = scan->stacks;
  out.legacy_shapes = scan->legacy_shapes;
  // Curves Assimp would interpolate wrong between frames (cubic, stepped) keyed on every frame.
  std::optional<FbxDensified> dense = DensifyFbxCurves(bytes);
  std::optional<FbxScan> dense_scan;
  if (dense) {
    dense_scan = ScanFbx(dense->bytes);
    if (!dense_scan || dense_scan->stacks.size() != scan->stacks.size()) {
      dense.reset();  // not the same file to the scan: read the original
    } else {
      if (dense->spheric_orders > 0) {
        out.notes.push_back(fmt::format(
            "{}: {} node(s) state the spheric rotation order (RotationOrder 6, eSphericXYZ), "
            "which rigel reads as XYZ, as the FBX importers of Blender and ufbx do",
            path, dense->spheric_orders));
      }
      if (dense->velocity_curves > 0 || dense->tcb_curves > 0) {
        out.notes.push_back(fmt::format(
            "{}: {} curve(s) with key velocities and {} with TCB tangents are evaluated from "
            "their stored slopes only (velocities and tension/continuity/bias are not applied)",
            path, dense->velocity_curves, dense->tcb_curves));
      }
    }
  }
  if (dense) {
    out.assumed_fps = dense->assumed_fps;
    out.key_spacing = dense->key_spacing;
  }
  const std::string& source = dense ? dense->bytes : bytes;
  const FbxScan& source_scan = dense ? *dense_scan : *scan;
  bool widen = false;
  for (const FbxStackRange& s : source_scan.stacks) {
    widen |= s.has_stop && (s.start != 0 || s.stop != 0);
  }
  if (widen) {
    out.widened = WidenFbxStacks(source, source_scan, kStackMargin);
  } else if (dense) {
    out.widened = std::move(dense->bytes);
  } else if (upgraded) {
    out.widened = std::move(bytes);
  }
  return out;
}

// A glTF's JSON: the whole .gltf file, or a .glb's first chunk (12-byte header, then the chunk's
// length, type "JSON" and bytes). Empty when the file is not that.
std::string GltfJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (LowerExtension(path) == ".gltf") {
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  char head[20];
  if (!in.read(head, sizeof(head)) || std::memcmp(head, "glTF", 4) != 0 ||
      std::memcmp(head + 16, "JSON", 4) != 0) {
    return "";
  }
  std::uint32_t length = 0;
  std::memcpy(&length, head + 12, 4);
  constexpr std::uint32_t kMaxJson = 256u << 20;
  if (length > kMaxJson) return "";
  std::string json(length, '\0');
  if (!in.read(json.data(), length)) return "";
  return json;
}

// Refuses a glTF whose required extensions compress its meshes in a way Assimp 5.2 does not
// decode (Draco, meshopt): Assimp's own error then named a missing node, not the cause.
void CheckGltfExtensions(const std::string& path) {
  const std::string ext = LowerExtension(path);
  if (ext != ".gltf" && ext != ".glb") return;
  const nlohmann::json j = nlohmann::json::parse(GltfJson(path), nullptr, false);
  if (!j.is_object() || !j.contains("extensionsRequired") || !j["extensionsRequired"].is_array())
    return;
  static constexpr std::string_view kUnread[] = {"KHR_draco_mesh_compression",
                                                 "EXT_meshopt_compression"};
  for (const auto& e : j["extensionsRequired"]) {
    if (!e.is_string()) continue;
    const std::string name = e.get<std::string>();
    for (const std::string_view unread : kUnread) {
      if (name != unread) continue;
      throw ImportError(fmt::format(
          "{}: the file requires the glTF extension {} (compressed meshes), which rigel does not "
          "read; decompress it first (for example with glTF-Transform or gltf-pipeline)",
          path, name));
    }
  }
}

}  // namespace

Scene ReadWithAssimp(const std::string& path) {
  FbxPrepared fbx = ScanFbxFile(path);
  CheckGltfExtensions(path);
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_ALL_GEOMETRY_LAYERS, false);
  // Textures are never used: not reading them saves time and memory on character files.
  // Materials are read for their names, which meshes carry through.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_TEXTURES, false);
  // Every curve is kept: by default Assimp drops a channel whose keys equal the node's own rest
  // transform, so a joint keyed at rest (a one-frame T-pose, a leaf joint that never turns) lost
  // its animation and, with it, its place in the skeleton.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_OPTIMIZE_EMPTY_ANIMATION_CURVES, false);
  auto* io = new LinkCheckingIO(path, std::move(fbx.widened));
  importer.SetIOHandler(io);  // the importer owns it
  const aiScene* scene = nullptr;
  try {
    scene = importer.ReadFile(path, 0);
  } catch (const std::exception& e) {
    throw ImportError(fmt::format("{}: Assimp failed: {}", path, e.what()));
  }
  if (!scene && !io->refused().empty()) {
    throw ImportError(fmt::format(
        "{}: the referenced file '{}' has more than one link (a hard link): refused (a file may "
        "only reference files of its own folder; copy it instead of linking it)",
        path, io->refused().front()));
  }
  if (!scene) {
    std::string why = importer.GetErrorString();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw ImportError(
        fmt::format("{}: cannot read ({})", path, why.empty() ? "unknown Assimp error" : why));
  }
  assimp_internal::Converter converter(*scene, path, std::move(fbx.limbs), std::move(fbx.stacks));
  converter.set_legacy_shapes(fbx.legacy_shapes);
  if (fbx.assumed_fps > 0) converter.set_assumed_rate(fbx.assumed_fps, fbx.key_spacing);
  Scene out = converter.Run();
  out.warnings.insert(out.warnings.end(), fbx.notes.begin(), fbx.notes.end());
  return out;
}

Scene ConvertAssimpScene(const aiScene& scene, const std::string& path) {
  return assimp_internal::Converter(scene, path).Run();
}

}  // namespace rigel