#include "importers/scene_codec.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>

#include "core/skeleton_builder.h"
#include "importers/import_error.h"

namespace rigel {

namespace {

constexpr char kMagic[4] = {'R', 'G', 'S', 'C'};
constexpr std::uint32_t kVersion =
    6;  // 2: meshes; 3: axes; 4: blend shapes; 5: bone scale; 6: end site names

class Writer {
 public:
  Writer(std::string prefix, std::size_t reserve) : out_(std::move(prefix)) {
    out_.reserve(out_.size() + reserve);
  }
  template <typename T>
  void Pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void String(const std::string& s) {
    Pod(static_cast<std::uint64_t>(s.size()));
    out_.append(s);
  }
  void Doubles(std::span<const double> v) {
    Pod(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  void Vec3(const Eigen::Vector3d& v) {
    for (int i = 0; i < 3; ++i) Pod(v[i]);
  }
  // A count, then the elements' bytes (trivially copyable elements).
  template <typename T>
  void Array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    Pod(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  // A count, then N doubles per vector.
  template <int N>
  void Vectors(const std::vector<Eigen::Matrix<double, N, 1>>& v) {
    Pod(static_cast<std::uint64_t>(v.size()));
    for (const auto& x : v) {
      for (int i = 0; i < N; ++i) Pod(x[i]);
    }
  }
  void Isometry(const Eigen::Isometry3d& t) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) Pod(t.matrix()(r, c));
    }
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& context) : in_(bytes), context_(context) {}
  template <typename T>
  T Pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    Need(sizeof(T));
    T value;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::uint64_t Count(std::uint64_t max) {
    const auto n = Pod<std::uint64_t>();
    if (n > max) Fail(fmt::format("count {} exceeds {}", n, max));
    return n;
  }
  std::string String() {
    const std::uint64_t n = Count(in_.size());
    Need(n);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // The raw bytes of a double array (count first); copied out by the caller.
  std::string_view Doubles() {
    const std::uint64_t n = Count(in_.size() / sizeof(double));
    Need(n * sizeof(double));
    const std::string_view bytes = in_.substr(pos_, n * sizeof(double));
    pos_ += n * sizeof(double);
    return bytes;
  }
  Eigen::Vector3d Vec3() {
    Eigen::Vector3d v;
    for (int i = 0; i < 3; ++i) v[i] = Pod<double>();
    return v;
  }
  template <typename T>
  std::vector<T> Array() {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::uint64_t n = Count((in_.size() - pos_) / sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  template <int N>
  std::vector<Eigen::Matrix<double, N, 1>> Vectors() {
    const std::uint64_t n = Count((in_.size() - pos_) / (N * sizeof(double)));
    std::vector<Eigen::Matrix<double, N, 1>> v(n);
    for (auto& x : v) {
      for (int i = 0; i < N; ++i) x[i] = Pod<double>();
    }
    return v;
  }
  Eigen::Isometry3d Isometry() {
    Eigen::Isometry3d t = Eigen::Isometry3d::Identity();
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) t.matrix()(r, c) = Pod<double>();
    }
    return t;
  }
  bool AtEnd() const { return pos_ == in_.size(); }
  [[noreturn]] void Fail(const std::string& what) const {
    throw ImportError(
        fmt::format("{}: malformed scene data from the importer process ({})", context_, what));
  }

 private:
  void Need(std::uint64_t n) const {
    if (n > in_.size() - pos_) Fail("truncated");
  }
  std::string_view in_;
  const std::string& context_;
  std::size_t pos_ = 0;
};

// The up and forward axes with their provenance, handedness and the file's original up.
void ReadAxes(Reader& r, Scene& scene) {
  auto axis = [&r](int low) {
    const int a = r.Pod<std::int32_t>(), sign = r.Pod<std::int32_t>();
    if (a < low || a > 2 || (sign != 1 && sign != -1)) r.Fail("axes");
    return SignedAxis{a, sign};
  };
  auto source = [&r] {
    const int s = r.Pod<std::int32_t>();
    if (s < 0 || s > static_cast<int>(FactSource::kUser)) r.Fail("axes");
    return static_cast<FactSource>(s);
  };
  for (AxisFact* f : {&scene.axes.up, &scene.axes.forward}) {
    f->value = axis(0);
    f->source = source();
    f->evidence = r.String();
  }
  scene.axes.right_handed = r.Pod<std::int32_t>() != 0;
  scene.axes.handedness_source = source();
  scene.axes.original_up = axis(-1);
}

// One joint's name, rest transform, channels and scale inheritance.
void ReadJoint(Reader& r, RawSkeleton::Joint& joint) {
  joint.name = r.String();
  joint.rest_translation = r.Vec3();
  const double qw = r.Pod<double>(), qx = r.Pod<double>(), qy = r.Pod<double>(),
               qz = r.Pod<double>();
  joint.rest_orientation = Eigen::Quaterniond(qw, qx, qy, qz);
  const std::uint64_t num_channels = r.Count(9);
  for (std::uint64_t c = 0; c < num_channels; ++c) {
    const auto v = r.Pod<std::uint8_t>();
    if (v > static_cast<std::uint8_t>(ChannelType::kZscale)) r.Fail("channel type");
    joint.channels.push_back(static_cast<ChannelType>(v));
  }
  const auto inheritance = r.Pod<std::uint8_t>();
  if (inheritance > static_cast<std::uint8_t>(ScaleInheritance::kCompensate)) {
    r.Fail("scale inheritance");
  }
  joint.scale_inheritance = static_cast<ScaleInheritance>(inheritance);
}

// The joints (parents first) and end sites, built into a Skeleton.
std::unique_ptr<Skeleton> ReadSkeleton(Reader& r) {
  const auto num_joints = static_cast<int>(r.Count(Skeleton::kMaxJoints));
  std::vector<int> parents(num_joints);
  std::vector<RawSkeleton::Joint> joints(num_joints);
  for (int j = 0; j < num_joints; ++j) {
    parents[j] = r.Pod<std::int32_t>();
    if (parents[j] < -1 || parents[j] >= j) r.Fail("joint order");
    ReadJoint(r, joints[j]);
  }
  const std::uint64_t num_end_sites = r.Count(1u << 20);
  for (std::uint64_t i = 0; i < num_end_sites; ++i) {
    const int parent = r.Pod<std::int32_t>();
    if (parent < 0 || parent >= num_joints) r.Fail("end site parent");
    joints[parent].end_sites.push_back(r.Vec3());
    joints[parent].end_site_names.push_back(r.String());
  }
  // Assemble the tree bottom-up: children follow their parent, so moving from the last joint
  // back keeps each joint's children complete (in order) before the joint itself moves.
  std::vector<std::vector<int>> children(num_joints);
  RawSkeleton raw;
  std::vector<int> roots;
  for (int j = 0; j < num_joints; ++j) {
    (parents[j] < 0 ? roots : children[parents[j]]).push_back(j);
  }
  for (int j = num_joints - 1; j >= 0; --j) {
    for (const int c : children[j]) joints[j].children.push_back(std::move(joints[c]));
  }
  for (const int j : roots) raw.roots.push_back(std::move(joints[j]));
  std::string error;
  std::unique_ptr<Skeleton> skeleton = SkeletonBuilder().Build(raw, &error);
  if (!skeleton) r.Fail(error);
  return skeleton;
}

// One clip: its name, values (num_channels per frame) and blend shape weights.
Clip ReadClip(Reader& r, int num_channels) {
  std::string name = r.String();
  const int frames = r.Pod<std::int32_t>();
  const int channels = r.Pod<std::int32_t>();
  const double frame_time = r.Pod<double>();
  const std::string_view values = r.Doubles();
  if (frames < 0 || channels != num_channels ||
      values.size() !=
          static_cast<std::size_t>(frames) * static_cast<std::size_t>(channels) * sizeof(double)) {
    r.Fail("clip size");
  }
  Clip clip(frames, channels, frame_time);
  if (!values.empty()) std::memcpy(clip.values().data(), values.data(), values.size());
  clip.set_name(std::move(name));
  std::vector<WeightChannel> weight_channels(r.Count(1u << 20));
  for (WeightChannel& c : weight_channels) {
    c.mesh = r.String();
    c.target = r.String();
  }
  const std::string_view weights = r.Doubles();
  if (weights.size() !=
      static_cast<std::size_t>(frames) * weight_channels.size() * sizeof(double)) {
    r.Fail("clip weights size");
  }
  clip.SetWeightChannels(std::move(weight_channels));
  if (!weights.empty()) std::memcpy(clip.weight_values().data(), weights.data(), weights.size());
  return clip;
}

// One mesh, checked against the skeleton.
Mesh ReadMesh(Reader& r, const Skeleton& skeleton) {
  Mesh mesh;
  mesh.name = r.String();
  mesh.material = r.String();
  mesh.positions = r.Vectors<3>();
  mesh.normals = r.Vectors<3>();
  mesh.uvs = r.Vectors<2>();
  mesh.triangles = r.Array<std::uint32_t>();
  mesh.polygon_triangles = r.Array<std::uint32_t>();
  mesh.skin_joints = r.Array<int>();
  const std::uint64_t binds = r.Count(Skeleton::kMaxJoints);
  for (std::uint64_t b = 0; b < binds; ++b) mesh.bind_world.push_back(r.Isometry());
  mesh.vertex_joints = r.Array<std::array<std::uint16_t, Mesh::kMaxInfluences>>();
  mesh.vertex_weights = r.Array<std::array<float, Mesh::kMaxInfluences>>();
  mesh.attach_joint = r.Pod<std::int32_t>();
  mesh.attach_bind = r.Isometry();
  mesh.morph_targets.resize(r.Count(1u << 20));
  for (MorphTarget& t : mesh.morph_targets) {
    t.name = r.String();
    t.vertices = r.Array<std::uint32_t>();
    t.position_deltas = r.Vectors<3>();
    t.normal_deltas = r.Vectors<3>();
    t.default_weight = r.Pod<double>();
  }
  if (std::string fault = CheckMesh(skeleton, mesh); !fault.empty()) r.Fail(fault);
  return mesh;
}

}  // namespace

std::string EncodeScene(const Scene& scene) { return EncodeScene(scene, std::string()); }

std::string EncodeScene(const Scene& scene, std::string prefix) {
  std::size_t estimate = 4096 + scene.source.size();
  for (const std::string& s : scene.warnings) estimate += s.size() + 8;
  if (scene.skeleton) estimate += 128 * static_cast<std::size_t>(scene.skeleton->num_joints());
  for (const Clip& clip : scene.clips)
    estimate += 64 + clip.name().size() + 8 * (clip.values().size() + clip.weight_values().size());
  for (const Mesh& mesh : scene.meshes) {
    estimate += 256 + mesh.positions.size() * (2 * 24 + 16 + 8 + 16) + mesh.triangles.size() * 4 +
                mesh.polygon_triangles.size() * 4 + mesh.bind_world.size() * 96;
    for (const MorphTarget& t : mesh.morph_targets) estimate += 64 + t.vertices.size() * 52;
  }
  Writer w(std::move(prefix), estimate);
  w.Pod(kMagic);
  w.Pod(kVersion);
  w.String(scene.source);
  w.Pod(scene.file_unit_metres);
  w.Pod(scene.length_scale);
  for (const AxisFact* f : {&scene.axes.up, &scene.axes.forward}) {
    w.Pod(static_cast<std::int32_t>(f->value.axis));
    w.Pod(static_cast<std::int32_t>(f->value.sign));
    w.Pod(static_cast<std::int32_t>(f->source));
    w.String(f->evidence);
  }
  w.Pod(static_cast<std::int32_t>(scene.axes.right_handed));
  w.Pod(static_cast<std::int32_t>(scene.axes.handedness_source));
  w.Pod(static_cast<std::int32_t>(scene.axes.original_up.axis));
  w.Pod(static_cast<std::int32_t>(scene.axes.original_up.sign));
  w.Pod(static_cast<std::uint64_t>(scene.warnings.size()));
  for (const std::string& s : scene.warnings) w.String(s);
  const Skeleton& sk = *scene.skeleton;
  w.Pod(static_cast<std::uint64_t>(sk.num_joints()));
  for (int j = 0; j < sk.num_joints(); ++j) {
    w.Pod(static_cast<std::int32_t>(sk.parent(j)));
    w.String(sk.name(j));
    w.Vec3(sk.rest_translation(j));
    const Eigen::Quaterniond& q = sk.rest_orientation(j);
    w.Pod(q.w());
    w.Pod(q.x());
    w.Pod(q.y());
    w.Pod(q.z());
    const auto channels = sk.joint_channels(j);
    w.Pod(static_cast<std::uint64_t>(channels.size()));
    for (const ChannelType c : channels) w.Pod(static_cast<std::uint8_t>(c));
    w.Pod(static_cast<std::uint8_t>(sk.scale_inheritance(j)));
  }
  w.Pod(static_cast<std::uint64_t>(sk.end_sites().size()));
  for (const EndSite& e : sk.end_sites()) {
    w.Pod(static_cast<std::int32_t>(e.parent));
    w.Vec3(e.offset);
    w.String(e.name);
  }
  w.Pod(static_cast<std::uint64_t>(scene.clips.size()));
  for (const Clip& clip : scene.clips) {
    w.String(clip.name());
    w.Pod(static_cast<std::int32_t>(clip.num_frames()));
    w.Pod(static_cast<std::int32_t>(clip.num_channels()));
    w.Pod(clip.frame_time());
    w.Doubles(clip.values());
    w.Pod(static_cast<std::uint64_t>(clip.num_weights()));
    for (const WeightChannel& c : clip.weight_channels()) {
      w.String(c.mesh);
      w.String(c.target);
    }
    w.Doubles(clip.weight_values());
  }
  w.Pod(static_cast<std::uint64_t>(scene.meshes.size()));
  for (const Mesh& mesh : scene.meshes) {
    w.String(mesh.name);
    w.String(mesh.material);
    w.Vectors(mesh.positions);
    w.Vectors(mesh.normals);
    w.Vectors(mesh.uvs);
    w.Array(mesh.triangles);
    w.Array(mesh.polygon_triangles);
    w.Array(mesh.skin_joints);
    w.Pod(static_cast<std::uint64_t>(mesh.bind_world.size()));
    for (const Eigen::Isometry3d& b : mesh.bind_world) w.Isometry(b);
    w.Array(mesh.vertex_joints);
    w.Array(mesh.vertex_weights);
    w.Pod(static_cast<std::int32_t>(mesh.attach_joint));
    w.Isometry(mesh.attach_bind);
    w.Pod(static_cast<std::uint64_t>(mesh.morph_targets.size()));
    for (const MorphTarget& t : mesh.morph_targets) {
      w.String(t.name);
      w.Array(t.vertices);
      w.Vectors(t.position_deltas);
      w.Vectors(t.normal_deltas);
      w.Pod(t.default_weight);
    }
  }
  return w.Take();
}

Scene DecodeScene(std::string_view bytes, const std::string& context) {
  Reader r(bytes, context);
  const auto magic = r.Pod<std::array<char, 4>>();
  if (std::memcmp(magic.data(), kMagic, 4) != 0) r.Fail("bad magic");
  if (r.Pod<std::uint32_t>() != kVersion) r.Fail("version mismatch");
  Scene scene;
  scene.source = r.String();
  scene.file_unit_metres = r.Pod<double>();
  scene.length_scale = r.Pod<double>();
  ReadAxes(r, scene);
  const std::uint64_t num_warnings = r.Count(1u << 20);
  for (std::uint64_t i = 0; i < num_warnings; ++i) scene.warnings.push_back(r.String());
  scene.skeleton = ReadSkeleton(r);
  const std::uint64_t num_clips = r.Count(1u << 16);
  for (std::uint64_t i = 0; i < num_clips; ++i) {
    scene.clips.push_back(ReadClip(r, scene.skeleton->num_channels()));
  }
  const std::uint64_t num_meshes = r.Count(1u << 20);
  for (std::uint64_t i = 0; i < num_meshes; ++i) {
    scene.meshes.push_back(ReadMesh(r, *scene.skeleton));
  }
  if (!r.AtEnd()) r.Fail("trailing bytes");
  return scene;
}

}  // namespace rigel
