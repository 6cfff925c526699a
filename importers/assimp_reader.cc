#include "importers/assimp_reader.h"

#include <assimp/DefaultIOStream.h>
#include <assimp/DefaultIOSystem.h>
#include <assimp/MemoryIOWrapper.h>
#include <assimp/config.h>
#include <assimp/scene.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

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

#include "importers/assimp_converter.h"
#include "importers/fbx_scan.h"
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
  ConvertMeshes(out);
  SampleWeights(sampled, out);
  NoteUncarriedProperties();
  if (nonuniform_scale_) {
    warnings_.push_back(fmt::format(
        "{}: non-uniform or negative scale on '{}' (and maybe others) cannot be represented "
        "by rotation, translation and scale channels (a non-uniform rest scale, or shear under "
        "a non-uniformly scaled parent); motion is approximated",
        path_, nonuniform_name_));
  }
  out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
  return out;
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
  std::vector<std::string> limbs;
  std::vector<FbxStackRange> stacks;
  std::string widened;
};

// Keys this long past a stack's stated stop are read (WidenFbxStacks): an hour.
constexpr std::int64_t kStackMargin = 3600 * kFbxTicksPerSecond;

// Scans an FBX file (ScanFbx): refuses a version Assimp cannot read with rigel's own message,
// lists the skeleton models, and widens the animation stacks. Empty for other formats.
FbxPrepared ScanFbxFile(const std::string& path) {
  FbxPrepared out;
  if (LowerExtension(path) != ".fbx") return out;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) throw ImportError(fmt::format("{}: read error", path));
  const std::optional<FbxScan> scan = ScanFbx(bytes);
  if (!scan) return out;  // not FBX after all: Assimp says what it is
  if (scan->version > 0 && scan->version < kOldestReadableFbx) {
    throw ImportError(fmt::format(
        "{}: FBX {} ({}, version {}) is older than rigel reads: rigel reads FBX {} (FBX 2011) "
        "and later; save it again as FBX 2011 or later (Autodesk FBX Converter, Maya, 3ds Max, "
        "MotionBuilder)",
        path, FbxVersionName(scan->version), scan->binary ? "binary" : "ASCII", scan->version,
        FbxVersionName(kOldestReadableFbx)));
  }
  for (const FbxModelKind& m : scan->models) {
    if (IsSkeletonKind(m.kind)) out.limbs.push_back(m.name);
  }
  out.stacks = scan->stacks;
  bool widen = false;
  for (const FbxStackRange& s : scan->stacks) widen |= s.has_stop && (s.start != 0 || s.stop != 0);
  if (widen) out.widened = WidenFbxStacks(bytes, *scan, kStackMargin);
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
  return assimp_internal::Converter(*scene, path, std::move(fbx.limbs), std::move(fbx.stacks))
      .Run();
}

Scene ConvertAssimpScene(const aiScene& scene, const std::string& path) {
  return assimp_internal::Converter(scene, path).Run();
}

}  // namespace rigel