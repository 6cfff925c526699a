#include "exporters/fbx_writer.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

#include "core/channel.h"
#include "core/curves/key_reduction.h"
#include "core/euler.h"
#include "core/pose.h"
#include "exporters/export_check.h"
#include "exporters/fbx_internal.h"

namespace rigel {

using namespace fbx_internal;  // NOLINT: the writer and its records

namespace {

// The key attributes of an AnimationCurve whose `frames` keys all interpolate linearly: one
// attribute set (linear, default tangent weights) shared by every key.
void AddLinearKeyAttributes(Element& curve, int frames) {
  curve.Add("KeyAttrFlags", {std::vector<std::int32_t>{4 | 1 << 8 | 1 << 13 | 1 << 14}});
  float weight_bits;
  const std::int32_t kDefaultWeights = 218434821;
  std::memcpy(&weight_bits, &kDefaultWeights, 4);
  curve.Add("KeyAttrDataFloat", {std::vector<float>{0.0f, 0.0f, weight_bits, 0.0f}});
  curve.Add("KeyAttrRefCount", {std::vector<std::int32_t>{frames}});
}

static_assert(std::endian::native == std::endian::little, "the FBX writer assumes little endian");

constexpr std::int64_t kKTimePerSecond = 46186158000LL;
constexpr std::uint32_t kVersion = 7400;

class Encoder {
 public:
  std::string Encode(const std::vector<Element>& top) {
    out_.append("Kaydara FBX Binary  ", 20);
    out_.push_back('\0');
    out_.push_back('\x1a');
    out_.push_back('\0');
    U32(kVersion);
    for (const Element& e : top) Write(e, false);
    out_.append(13, '\0');
    static const unsigned char kFoot[16] = {0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66,
                                            0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26, 0x7e};
    out_.append(reinterpret_cast<const char*>(kFoot), 16);
    out_.append(4, '\0');
    std::size_t pad = ((out_.size() + 15) & ~std::size_t{15}) - out_.size();
    if (pad == 0) pad = 16;
    out_.append(pad, '\0');
    U32(kVersion);
    out_.append(120, '\0');
    static const unsigned char kMagic[16] = {0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e,
                                             0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b};
    out_.append(reinterpret_cast<const char*>(kMagic), 16);
    return std::move(out_);
  }

 private:
  template <typename T>
  void Pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void U32(std::uint32_t v) { Pod(v); }
  void Patch(std::size_t at, std::uint32_t v) { std::memcpy(out_.data() + at, &v, 4); }

  template <typename T>
  void Array(char code, const std::vector<T>& v) {
    out_.push_back(code);
    U32(static_cast<std::uint32_t>(v.size()));
    const std::size_t size = v.size() * sizeof(T);
    if (!compress_ || size == 0) {
      U32(0);  // no compression
      U32(static_cast<std::uint32_t>(size));
      out_.append(reinterpret_cast<const char*>(v.data()), size);
      return;
    }
    uLongf packed = compressBound(static_cast<uLong>(size));
    std::string deflated(packed, '\0');
    if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &packed,
                  reinterpret_cast<const Bytef*>(v.data()), static_cast<uLong>(size),
                  Z_DEFAULT_COMPRESSION) != Z_OK) {
      throw ExportError("FBX: deflating an array failed");
    }
    U32(1);  // deflate (zlib)
    U32(static_cast<std::uint32_t>(packed));
    out_.append(deflated.data(), packed);
  }

  void WriteProperty(const Property& p) {
    std::visit(
        [this](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::int32_t>) {
            out_.push_back('I');
            Pod(v);
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            out_.push_back('L');
            Pod(v);
          } else if constexpr (std::is_same_v<T, double>) {
            out_.push_back('D');
            Pod(v);
          } else if constexpr (std::is_same_v<T, bool>) {
            out_.push_back('C');
            out_.push_back(v ? '\x01' : '\0');
          } else if constexpr (std::is_same_v<T, std::string>) {
            out_.push_back('S');
            U32(static_cast<std::uint32_t>(v.size()));
            out_.append(v);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            Array('f', v);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            Array('d', v);
          } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
            Array('l', v);
          } else {
            Array('i', v);
          }
        },
        p);
  }

  void Write(const Element& e, bool is_last) {
    const std::size_t start = out_.size();
    U32(0);  // end offset, patched below
    U32(static_cast<std::uint32_t>(e.props.size() + e.raw.size()));
    U32(0);  // property list length, patched below
    out_.push_back(static_cast<char>(e.name.size()));
    out_.append(e.name);
    const std::size_t props_start = out_.size();
    compress_ = e.compress;
    for (const Property& p : e.props) WriteProperty(p);
    compress_ = false;
    for (const Raw& r : e.raw) {
      out_.push_back('R');
      U32(static_cast<std::uint32_t>(r.bytes.size()));
      out_.append(r.bytes);
    }
    Patch(start + 8, static_cast<std::uint32_t>(out_.size() - props_start));
    const bool always = e.name == "AnimationStack" || e.name == "AnimationLayer";
    if (!e.children.empty()) {
      for (std::size_t i = 0; i < e.children.size(); ++i) {
        Write(e.children[i], i + 1 == e.children.size());
      }
      out_.append(13, '\0');
    } else if ((e.props.empty() && e.raw.empty()) || always) {
      if (!is_last) out_.append(13, '\0');
    }
    if (out_.size() > 0xFFFFFFFFu) throw ExportError("FBX 7.4 files are limited to 4 GiB");
    Patch(start, static_cast<std::uint32_t>(out_.size()));
  }

  std::string out_;
  bool compress_ = false;  // the element being written is Element::compress
};

// FBX RotationOrder enum of a rigel order: FBX names the axes in application order, rigel in
// product order (rigel ZYX = Rz * Ry * Rx = FBX eEulerXYZ = 0), so FBX's name is rigel's reversed.
std::int32_t FbxRotationOrder(EulerOrder order) {
  // EFbxRotationOrder: eEulerXYZ = 0, eEulerXZY, eEulerYZX, eEulerYXZ, eEulerZXY, eEulerZYX = 5.
  static constexpr std::array<std::string_view, 6> kFbxOrders = {"XYZ", "XZY", "YZX",
                                                                 "YXZ", "ZXY", "ZYX"};
  const std::string_view name = EulerOrderName(order);
  const std::string fbx_name(name.rbegin(), name.rend());
  const auto it = std::find(kFbxOrders.begin(), kFbxOrders.end(), fbx_name);
  return it == kFbxOrders.end() ? 0 : static_cast<std::int32_t>(it - kFbxOrders.begin());
}

// TimeMode for a frame rate (14 = custom, with CustomFrameRate).
std::int32_t TimeMode(double fps) {
  struct Mode {
    double fps;
    std::int32_t mode;
  };
  static constexpr Mode kModes[] = {{120, 1}, {100, 2}, {60, 3},    {50, 4},  {48, 5}, {30, 6},
                                    {25, 10}, {24, 11}, {1000, 12}, {96, 15}, {72, 16}};
  for (const Mode& m : kModes) {
    if (std::abs(fps - m.fps) < 1e-9 * m.fps) return m.mode;
  }
  return 14;
}

std::int64_t KTime(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * static_cast<double>(kKTimePerSecond)));
}

// How one joint's rotation is written.
struct JointPlan {
  bool native_order = false;  // channels written as they are
  EulerOrder order = EulerOrder::kZYX;
  Eigen::Vector3d pre_rotation_deg = Eigen::Vector3d::Zero();
  bool animate_translation = false;
  // Scale curves (the joint has scale channels) and the FBX InheritType: 1 RrSs, 2 Rrs (the
  // parent's scale left out: ScaleInheritance::kCompensate, on skeletons with scale).
  bool animate_scale = false;
  std::int32_t inherit_type = 1;
};

// Each joint's plan: its own Euler order when its rest orientation is the identity, else ZYX
// after a PreRotation of the rest orientation; translation curves when it has position channels.
std::vector<JointPlan> PlanJoints(const Skeleton& skeleton) {
  const int n = skeleton.num_joints();
  std::vector<JointPlan> plans(n);
  for (int j = 0; j < n; ++j) {
    JointPlan& plan = plans[j];
    // Only where it matters: without scale channels every scale is 1 (the rest's is folded).
    if (skeleton.has_scale() && skeleton.scale_inheritance(j) == ScaleInheritance::kCompensate) {
      plan.inherit_type = 2;
    }
    const Eigen::Quaterniond& rest = skeleton.rest_orientation(j);
    const bool identity_rest = std::abs(std::abs(rest.w()) - 1.0) < 1e-14;
    const std::optional<EulerOrder> order = skeleton.rotation_order(j);
    if (identity_rest && order) {
      plan.native_order = true;
      plan.order = *order;
    } else {
      plan.order = EulerOrder::kZYX;
      if (!identity_rest) {
        plan.pre_rotation_deg =
            MatrixToEuler(rest.toRotationMatrix(), EulerOrder::kZYX) * kDegPerRad;
      }
    }
    for (int axis = 0; axis < 3; ++axis) {
      if (skeleton.translation_channel(j, axis) >= 0) plan.animate_translation = true;
      if (skeleton.scale_channel(j, axis) >= 0) plan.animate_scale = true;
    }
  }
  return plans;
}

// The take name of clip `index` (0-based): its own, else "Take 001", ...
std::string TakeName(const Clip& clip, std::size_t index) {
  return clip.name().empty() ? fmt::format("Take {:03}", index + 1) : clip.name();
}

// FBXHeaderExtension, FileId, CreationTime and Creator: fixed, so that outputs are reproducible.
void AddHeader(std::vector<Element>& top) {
  Element header{"FBXHeaderExtension", {}, {}, {}};
  header.Add("FBXHeaderVersion", {std::int32_t{1003}});
  header.Add("FBXVersion", {static_cast<std::int32_t>(kVersion)});
  header.Add("EncryptionType", {std::int32_t{0}});
  Element& stamp = header.Add("CreationTimeStamp");
  stamp.Add("Version", {std::int32_t{1000}});
  for (const auto& [field, value] : std::vector<std::pair<const char*, int>>{{"Year", 1970},
                                                                             {"Month", 1},
                                                                             {"Day", 1},
                                                                             {"Hour", 0},
                                                                             {"Minute", 0},
                                                                             {"Second", 0},
                                                                             {"Millisecond", 0}}) {
    stamp.Add(field, {static_cast<std::int32_t>(value)});
  }
  header.Add("Creator", {std::string("rigel FBX writer")});
  top.push_back(std::move(header));
  Element file_id{"FileId", {}, {Raw{std::string("rigel-fbx-7400\x01\x02", 16)}}, {}};
  top.push_back(std::move(file_id));
  top.push_back({"CreationTime", {std::string("1970-01-01 00:00:00:000")}, {}, {}});
  top.push_back({"Creator", {std::string("rigel FBX writer")}, {}, {}});
}

// GlobalSettings: the data's axes (FbxOptions::axes), the unit, the frame rate and the longest
// take's time span.
void AddGlobalSettings(std::span<const Clip> clips, double unit_scale_factor,
                       const FbxOptions& options, std::vector<Element>& top) {
  double max_duration = 0;
  for (const Clip& c : clips) max_duration = std::max(max_duration, c.duration());
  const double fps = clips.front().frame_rate();
  Element settings{"GlobalSettings", {}, {}, {}};
  settings.Add("Version", {std::int32_t{1000}});
  Element& p = settings.Add("Properties70");
  const SignedAxis up = options.axes.up.value;
  // The stated or given forward; one inferred from the body is not written (as glTF: a clip's
  // figure faces any way while it moves).
  const AxisFact& stated = options.axes.forward;
  const bool known = stated.source == FactSource::kStated || stated.source == FactSource::kUser;
  const SignedAxis front =
      known && stated.value.axis != up.axis ? stated.value : DefaultForward(up);
  const SignedAxis coord = NearestSignedAxis(up.Vector().cross(front.Vector()));
  const SignedAxis original = options.axes.original_up.axis >= 0 ? options.axes.original_up : up;
  auto axis_props = [&p](const std::string& name, SignedAxis a) {
    p.Add("P", P(name.c_str(), "int", "Integer", "", {std::int32_t{a.axis}}));
    p.Add("P", P((name + "Sign").c_str(), "int", "Integer", "", {std::int32_t{a.sign}}));
  };
  axis_props("UpAxis", up);
  axis_props("FrontAxis", front);
  axis_props("CoordAxis", coord);
  axis_props("OriginalUpAxis", original);
  p.Add("P", P("UnitScaleFactor", "double", "Number", "", {unit_scale_factor}));
  p.Add("P", P("OriginalUnitScaleFactor", "double", "Number", "", {unit_scale_factor}));
  p.Add("P", P("DefaultCamera", "KString", "", "", {std::string("Producer Perspective")}));
  p.Add("P", P("TimeMode", "enum", "", "", {TimeMode(fps)}));
  p.Add("P", P("TimeSpanStart", "KTime", "Time", "", {std::int64_t{0}}));
  p.Add("P", P("TimeSpanStop", "KTime", "Time", "", {KTime(max_duration)}));
  p.Add("P", P("CustomFrameRate", "double", "Number", "", {fps}));
  top.push_back(std::move(settings));
}

// Documents (one scene whose active take is the first clip) and References.
void AddDocuments(std::span<const Clip> clips, Build& build, std::vector<Element>& top) {
  const std::int64_t document_uid = build.Uid();
  Element docs{"Documents", {}, {}, {}};
  docs.Add("Count", {std::int32_t{1}});
  Element& doc = docs.Add("Document", {document_uid, std::string("Scene"), std::string("Scene")});
  Element& p = doc.Add("Properties70");
  p.Add("P", P("SourceObject", "object", "", "", {}));
  p.Add("P", P("ActiveAnimStackName", "KString", "", "",
               {clips.front().name().empty() ? std::string("Take 001") : clips.front().name()}));
  doc.Add("RootNode", {std::int64_t{0}});
  top.push_back(std::move(docs));
  top.push_back({"References", {}, {}, {}});
}

// What FormatFbx counts for Definitions.
struct ObjectCounts {
  int models = 0, stacks = 0, curve_nodes = 0, curves = 0;
};

// One LimbNode Model and its NodeAttribute under `parent` (0: the root); `plan` is null for an
// end site. Returns the model's uid.
std::int64_t AddModel(const std::string& model_name, const Eigen::Vector3d& translation,
                      const JointPlan* plan, std::int64_t parent, Build& build,
                      ObjectCounts& counts) {
  const std::int64_t id = build.Uid();
  const std::int64_t attr = build.Uid();
  Element& attribute = build.objects.Add(
      "NodeAttribute", {attr, NameClass(model_name, "NodeAttribute"), std::string("LimbNode")});
  Element& ap = attribute.Add("Properties70");
  ap.Add("P", P("Size", "double", "Number", "", {1.0}));
  attribute.Add("TypeFlags", {std::string("Skeleton")});
  Element& model =
      build.objects.Add("Model", {id, NameClass(model_name, "Model"), std::string("LimbNode")});
  model.Add("Version", {std::int32_t{232}});
  Element& p = model.Add("Properties70");
  p.Add("P", P("RotationActive", "bool", "", "", {std::int32_t{1}}));
  p.Add("P", P("InheritType", "enum", "", "", {plan ? plan->inherit_type : std::int32_t{1}}));
  p.Add("P", P("DefaultAttributeIndex", "int", "Integer", "", {std::int32_t{0}}));
  if (plan) {
    if (FbxRotationOrder(plan->order) != 0) {
      p.Add("P", P("RotationOrder", "enum", "", "", {FbxRotationOrder(plan->order)}));
    }
    if (!plan->pre_rotation_deg.isZero(0)) {
      p.Add("P", PVec("PreRotation", "Vector3D", "Vector", "", plan->pre_rotation_deg));
    }
  }
  p.Add("P", PVec("Lcl Translation", "Lcl Translation", "", "A", translation));
  p.Add("P", PVec("Lcl Rotation", "Lcl Rotation", "", "A", Eigen::Vector3d::Zero()));
  p.Add("P", PVec("Lcl Scaling", "Lcl Scaling", "", "A", Eigen::Vector3d::Ones()));
  model.Add("Shading", {true});
  model.Add("Culling", {std::string("CullingOff")});
  build.Connect(attr, id);
  build.Connect(id, parent);
  ++counts.models;
  return id;
}

// The joints' models, then the end sites' (their names, else "<parent>_end"; made unique). Returns
// each joint's model uid.
std::vector<std::int64_t> AddSkeletonModels(const Skeleton& skeleton,
                                            const std::vector<JointPlan>& plans,
                                            double length_scale, Build& build,
                                            ObjectCounts& counts) {
  const int n = skeleton.num_joints();
  std::unordered_set<std::string> names(skeleton.names().begin(), skeleton.names().end());
  std::vector<std::int64_t> model_uid(n);
  for (int j = 0; j < n; ++j) {
    const int parent = skeleton.parent(j);
    model_uid[j] =
        AddModel(skeleton.name(j), length_scale * skeleton.rest_translation(j), &plans[j],
                 parent == Skeleton::kNoParent ? 0 : model_uid[parent], build, counts);
  }
  for (const EndSite& site : skeleton.end_sites()) {
    const std::string base = site.name.empty() ? skeleton.name(site.parent) + "_end" : site.name;
    std::string end_name = base;
    for (int k = 1; names.count(end_name); ++k) end_name = fmt::format("{}.{}", base, k);
    names.insert(end_name);
    AddModel(end_name, length_scale * site.offset, nullptr, model_uid[site.parent], build, counts);
  }
  return model_uid;
}

// One AnimationCurveNode ("T", "R" or "S") on `model`'s `property` in `layer`, with its three
// AnimationCurves (X, Y, Z) keyed at `times`.
void AddCurveNode(const char* kind, const char* property, std::int64_t model, std::int64_t layer,
                  const std::array<const std::vector<std::int64_t>*, 3>& times,
                  const std::array<std::vector<float>, 3>& values, Build& build,
                  ObjectCounts& counts) {
  const std::int64_t node = build.Uid();
  Element& cn = build.objects.Add("AnimationCurveNode",
                                  {node, NameClass(kind, "AnimCurveNode"), std::string("")});
  Element& cp = cn.Add("Properties70");
  static const char* kAxes[3] = {"d|X", "d|Y", "d|Z"};
  for (int a = 0; a < 3; ++a) {
    cp.Add("P", P(kAxes[a], "Number", "", "A", {static_cast<double>(values[a].front())}));
  }
  build.Connect(node, layer);
  build.connections.Add("C", {std::string("OP"), node, model, std::string(property)});
  ++counts.curve_nodes;
  for (int a = 0; a < 3; ++a) {
    const int frames = static_cast<int>(times[a]->size());
    const std::int64_t curve = build.Uid();
    Element& c =
        build.objects.Add("AnimationCurve", {curve, NameClass("", "AnimCurve"), std::string("")});
    c.Add("Default", {static_cast<double>(values[a].front())});
    c.Add("KeyVer", {std::int32_t{4008}});
    c.Add("KeyTime", {*times[a]});
    c.Add("KeyValueFloat", {values[a]});
    AddLinearKeyAttributes(c, frames);
    build.connections.Add("C", {std::string("OP"), curve, node, std::string(kAxes[a])});
    ++counts.curves;
  }
}

// The curve spec of a joint's plan (core/curves/key_reduction.h).
EulerCurveSpec CurveSpec(const JointPlan& plan) {
  EulerCurveSpec spec;
  spec.order = plan.order;
  spec.channel_values = plan.native_order;
  return spec;
}

// Joint j's values over `clip`: Euler angles in degrees in the plan's order, continuous from
// frame to frame (the file's own angles when the plan keeps them, turned into the equivalent
// nearest the previous frame's so the curve never wraps by 360 degrees: BVH values flip between
// +-180 on a turning hip), and (when animated) translations in output lengths.
void JointKeys(const Skeleton& skeleton, const Clip& clip, int j, const JointPlan& plan,
               double length_scale, std::array<std::vector<float>, 3>& rotation,
               std::array<std::vector<float>, 3>& translation) {
  const int frames = clip.num_frames();
  for (auto& v : rotation) v.resize(frames);
  if (plan.animate_translation) {
    for (auto& v : translation) v.resize(frames);
  }
  const std::vector<Eigen::Vector3d> angles = EulerCurve(skeleton, clip, j, CurveSpec(plan));
  for (int f = 0; f < frames; ++f) {
    const std::span<const double> row = clip.frame(f);
    for (int a = 0; a < 3; ++a) rotation[a][f] = static_cast<float>(angles[f][a] * kDegPerRad);
    if (plan.animate_translation) {
      for (int a = 0; a < 3; ++a) {
        const int c = skeleton.translation_channel(j, a);
        translation[a][f] = static_cast<float>(
            length_scale * (skeleton.rest_translation(j)[a] + (c >= 0 ? row[c] : 0.0)));
      }
    }
  }
}

// The three curves of a track keyed at `keys` (frames; empty: every frame): times and values per
// axis. A curve whose values at the keys are all equal gets one key (it does not move).
void KeyCurves(const std::array<std::vector<float>, 3>& dense,
               const std::vector<std::int64_t>& frame_times, const std::vector<int>& keys,
               std::array<std::vector<std::int64_t>, 3>& times,
               std::array<std::vector<float>, 3>& values) {
  for (int a = 0; a < 3; ++a) {
    times[a].clear();
    values[a].clear();
    for (const int f : keys) {
      times[a].push_back(frame_times[f]);
      values[a].push_back(dense[a][f]);
    }
    if (std::all_of(values[a].begin(), values[a].end(),
                    [&](float v) { return v == values[a].front(); })) {
      times[a].resize(1);
      values[a].resize(1);
    }
  }
}

// The blend-shape weights of `clip` as DeformPercent curves (percent: weight x 100) on the
// BlendShapeChannels of build.blend_channels, one per weight column, in `layer`.
void AddWeightCurves(const Clip& clip, std::int64_t layer, const std::vector<std::int64_t>& times,
                     const ClipKeys* keys, Build& build, ObjectCounts& counts) {
  const int frames = clip.num_frames();
  for (int w = 0; w < clip.num_weights() && w < static_cast<int>(build.blend_channels.size());
       ++w) {
    std::vector<float> values(frames);
    for (int f = 0; f < frames; ++f) values[f] = static_cast<float>(clip.weights(f)[w] * 100.0);
    std::vector<std::int64_t> key_times = times;
    if (keys != nullptr && w < static_cast<int>(keys->weights.size()) &&
        !keys->weights[w].empty()) {
      // The reduced keys (core/curves/key_reduction.h ReduceWeightKeys).
      std::vector<float> kept;
      key_times.clear();
      for (const int f : keys->weights[w]) {
        key_times.push_back(times[f]);
        kept.push_back(values[f]);
      }
      values = std::move(kept);
    }
    const std::int64_t node = build.Uid();
    Element& cn = build.objects.Add(
        "AnimationCurveNode", {node, NameClass("DeformPercent", "AnimCurveNode"), std::string("")});
    cn.Add("Properties70")
        .Add("P", P("d|DeformPercent", "Number", "", "A", {static_cast<double>(values.front())}));
    build.Connect(node, layer);
    build.connections.Add(
        "C", {std::string("OP"), node, build.blend_channels[w], std::string("DeformPercent")});
    ++counts.curve_nodes;
    const std::int64_t curve = build.Uid();
    Element& c =
        build.objects.Add("AnimationCurve", {curve, NameClass("", "AnimCurve"), std::string("")});
    c.Add("Default", {static_cast<double>(values.front())});
    c.Add("KeyVer", {std::int32_t{4008}});
    c.Add("KeyTime", {key_times});
    c.Add("KeyValueFloat", {values});
    // Linear keys, as the joints' curves: weights between two frames are interpolated as glTF's
    // LINEAR samplers interpolate them.
    AddLinearKeyAttributes(c, static_cast<int>(key_times.size()));
    build.connections.Add("C", {std::string("OP"), curve, node, std::string("d|DeformPercent")});
    ++counts.curves;
  }
}

// Take `index`: an AnimationStack and its BaseLayer, curve nodes T (animated translation), R and
// S (joints with scale channels) per joint, keyed on every frame or, for T and R, at `keys`
// (core/curves/key_reduction.h) when given.
void AddTake(const Skeleton& skeleton, const Clip& clip, std::size_t index,
             const std::vector<JointPlan>& plans, const std::vector<std::int64_t>& model_uid,
             double length_scale, const ClipKeys* keys, Build& build, ObjectCounts& counts) {
  const std::string stack_name = TakeName(clip, index);
  const std::int64_t stack = build.Uid();
  const std::int64_t layer = build.Uid();
  const std::int64_t stop = KTime(clip.duration());
  Element& st = build.objects.Add("AnimationStack",
                                  {stack, NameClass(stack_name, "AnimStack"), std::string("")});
  Element& sp = st.Add("Properties70");
  sp.Add("P", P("LocalStart", "KTime", "Time", "", {std::int64_t{0}}));
  sp.Add("P", P("LocalStop", "KTime", "Time", "", {stop}));
  sp.Add("P", P("ReferenceStart", "KTime", "Time", "", {std::int64_t{0}}));
  sp.Add("P", P("ReferenceStop", "KTime", "Time", "", {stop}));
  build.objects.Add("AnimationLayer",
                    {layer, NameClass("BaseLayer", "AnimLayer"), std::string("")});
  build.Connect(layer, stack);
  ++counts.stacks;
  const int frames = clip.num_frames();
  std::vector<std::int64_t> times(frames);
  for (int f = 0; f < frames; ++f) times[f] = KTime(f * clip.frame_time());
  const std::array<const std::vector<std::int64_t>*, 3> every = {&times, &times, &times};
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    std::array<std::vector<float>, 3> rotation, translation;
    JointKeys(skeleton, clip, j, plans[j], length_scale, rotation, translation);
    // Scale channels are keyed on every frame (key reduction covers translation and rotation).
    auto add_scale = [&] {
      if (!plans[j].animate_scale) return;
      std::array<std::vector<float>, 3> scaling;
      for (auto& v : scaling) v.resize(frames);
      for (int f = 0; f < frames; ++f) {
        const Eigen::Vector3d sv = LocalScale(skeleton, j, clip.frame(f));
        for (int a = 0; a < 3; ++a) scaling[a][f] = static_cast<float>(sv[a]);
      }
      AddCurveNode("S", "Lcl Scaling", model_uid[j], layer, every, scaling, build, counts);
    };
    if (keys == nullptr) {
      if (plans[j].animate_translation) {
        AddCurveNode("T", "Lcl Translation", model_uid[j], layer, every, translation, build,
                     counts);
      }
      AddCurveNode("R", "Lcl Rotation", model_uid[j], layer, every, rotation, build, counts);
      add_scale();
      continue;
    }
    std::array<std::vector<std::int64_t>, 3> key_times;
    std::array<std::vector<float>, 3> key_values;
    const std::array<const std::vector<std::int64_t>*, 3> keyed = {&key_times[0], &key_times[1],
                                                                   &key_times[2]};
    const JointKeyFrames& joint_keys = keys->joints[j];
    if (plans[j].animate_translation) {
      KeyCurves(translation, times,
                joint_keys.translation.empty() ? std::vector<int>{0} : joint_keys.translation,
                key_times, key_values);
      AddCurveNode("T", "Lcl Translation", model_uid[j], layer, keyed, key_values, build, counts);
    }
    KeyCurves(rotation, times,
              joint_keys.rotation.empty() ? std::vector<int>{0} : joint_keys.rotation, key_times,
              key_values);
    AddCurveNode("R", "Lcl Rotation", model_uid[j], layer, keyed, key_values, build, counts);
    add_scale();
  }
  AddWeightCurves(clip, layer, times, keys, build, counts);
}

// Definitions: object counts; no property templates (every property is written explicitly).
void AddDefinitions(const Build& build, const ObjectCounts& n, std::vector<Element>& top) {
  Element defs{"Definitions", {}, {}, {}};
  defs.Add("Version", {std::int32_t{100}});
  const std::vector<std::pair<const char*, int>> counts = {
      {"GlobalSettings", 1},         {"Model", n.models + build.mesh_models},
      {"NodeAttribute", n.models},   {"Geometry", build.geometries},
      {"Material", build.materials}, {"Deformer", build.deformers},
      {"Pose", build.poses},         {"AnimationStack", n.stacks},
      {"AnimationLayer", n.stacks},  {"AnimationCurveNode", n.curve_nodes},
      {"AnimationCurve", n.curves}};
  int total = 0;
  for (const auto& c : counts) total += c.second;
  defs.Add("Count", {static_cast<std::int32_t>(total)});
  for (const auto& [type, count] : counts) {
    if (count == 0) continue;
    defs.Add("ObjectType", {std::string(type)}).Add("Count", {static_cast<std::int32_t>(count)});
  }
  top.push_back(std::move(defs));
}

// Takes: the current take and one Take per clip with its time span.
void AddTakes(std::span<const Clip> clips, std::vector<Element>& top) {
  Element takes{"Takes", {}, {}, {}};
  takes.Add("Current",
            {clips.front().name().empty() ? std::string("Take 001") : clips.front().name()});
  for (std::size_t ci = 0; ci < clips.size(); ++ci) {
    const std::string take_name = TakeName(clips[ci], ci);
    Element& take = takes.Add("Take", {take_name});
    take.Add("FileName", {take_name + ".tak"});
    const std::int64_t stop = KTime(clips[ci].duration());
    take.Add("LocalTime", {std::int64_t{0}, stop});
    take.Add("ReferenceTime", {std::int64_t{0}, stop});
  }
  top.push_back(std::move(takes));
}

}  // namespace

std::string FormatFbx(const Skeleton& skeleton, std::span<const Clip> clips,
                      const FbxOptions& options, const std::string& name) {
  CheckClipsForExport(skeleton, clips, name, options.meshes);
  // Lengths are written in metres when the unit is known (UnitScaleFactor 100), else as they are
  // (UnitScaleFactor 1, read as centimetres). Blender builds its armature in float32 in file units
  // and gives zero-length bones a 0.01 length: with coordinates of thousands (a 25 m CMU skeleton
  // in centimetres) such a bone's direction is off by degrees, and the joints below it by 3e-4 of
  // the height. In metres the same bone is 100 times more exact.
  const double length_scale = options.metres_per_unit > 0 ? options.metres_per_unit : 1.0;
  const double unit_scale_factor = options.metres_per_unit > 0 ? 100.0 : 1.0;
  Build build;
  ObjectCounts counts;
  const std::vector<JointPlan> plans = PlanJoints(skeleton);
  std::vector<Element> top;
  AddHeader(top);
  AddGlobalSettings(clips, unit_scale_factor, options, top);
  AddDocuments(clips, build, top);
  // Objects in uid order: models (joints, end sites), meshes, then the takes' animation.
  const std::vector<std::int64_t> model_uid =
      AddSkeletonModels(skeleton, plans, length_scale, build, counts);
  for (const Mesh& mesh : options.meshes) {
    if (std::string fault = CheckMesh(skeleton, mesh); !fault.empty()) {
      throw ExportError(name + ": " + fault);
    }
  }
  AddMeshes(skeleton, options.meshes, length_scale, model_uid, build);
  if (!options.keys.empty() && options.keys.size() != clips.size()) {
    throw ExportError(
        fmt::format("{}: {} key sets for {} clips", name, options.keys.size(), clips.size()));
  }
  for (std::size_t ci = 0; ci < clips.size(); ++ci) {
    const ClipKeys* keys = options.keys.empty() ? nullptr : &options.keys[ci];
    if (keys && static_cast<int>(keys->joints.size()) != skeleton.num_joints()) {
      throw ExportError(name + ": the key set does not match the skeleton");
    }
    AddTake(skeleton, clips[ci], ci, plans, model_uid, length_scale, keys, build, counts);
  }
  AddDefinitions(build, counts, top);
  top.push_back(std::move(build.objects));
  top.push_back(std::move(build.connections));
  AddTakes(clips, top);
  return Encoder().Encode(top);
}

std::vector<EulerCurveSpec> FbxEulerCurves(const Skeleton& skeleton) {
  std::vector<EulerCurveSpec> specs;
  for (const JointPlan& plan : PlanJoints(skeleton)) specs.push_back(CurveSpec(plan));
  return specs;
}

void WriteFbx(const Skeleton& skeleton, std::span<const Clip> clips, const std::string& path,
              const FbxOptions& options) {
  WriteFileAtomically(path, FormatFbx(skeleton, clips, options, path));
}

}  // namespace rigel
