#include "importers/fbx_upgrade.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "importers/fbx_tree.h"
#include "importers/fbx_upgrade_internal.h"

namespace rigel {
namespace fbx_upgrade {

using fbx_tree::Node;
using fbx_tree::Out;
using fbx_tree::Value;

Named SplitName(std::string_view raw) {
  const std::size_t sep = raw.find(std::string_view("\0\1", 2));
  if (sep != std::string_view::npos) {
    return {std::string(raw.substr(sep + 2)), std::string(raw.substr(0, sep))};
  }
  const std::size_t colon = raw.find("::");
  if (colon != std::string_view::npos) {
    return {std::string(raw.substr(0, colon)), std::string(raw.substr(colon + 2))};
  }
  return {"", std::string(raw)};
}

std::string BinaryName(std::string_view name, std::string_view cls) {
  std::string s(name);
  s.push_back('\0');
  s.push_back('\1');
  s += cls;
  return s;
}

namespace {

// How a 6.x property's numbers are typed in 7.4 (Assimp parses each type from one binary type).
enum class NumberType { kInt, kLong, kDouble };

NumberType TypeOf(std::string_view type) {
  static const std::set<std::string_view> kInts = {
      "bool", "Bool", "KBool", "enum", "Enum", "int", "Int", "Integer", "Visibility Inheritance"};
  if (kInts.count(type)) return NumberType::kInt;
  if (type == "KTime" || type == "ULongLong") return NumberType::kLong;
  return NumberType::kDouble;
}

std::int64_t AsLong(const Value& v) {
  if (v.is_int) return v.i;
  if (!std::isfinite(v.d) || std::abs(v.d) > 9.2e18) return 0;
  return static_cast<std::int64_t>(v.d);
}

std::int32_t AsInt(const Value& v) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(AsLong(v), INT32_MIN, INT32_MAX));
}

void PutNumber(const Value& v, NumberType t, Out& o) {
  if (t == NumberType::kInt) o.I(AsInt(v));
  if (t == NumberType::kLong) o.L(AsLong(v));
  if (t == NumberType::kDouble) o.D(v.d);
}

// Records whose numbers are arrays in FBX 7.x, with their element type: 6.x ASCII writes them as
// plain lists (and 6.x binary as arrays, or as lists in older files).
std::optional<char> ArrayType(std::string_view name) {
  static const std::map<std::string_view, char> kArrays = {
      {"Vertices", 'd'},  {"PolygonVertexIndex", 'i'},
      {"Edges", 'i'},     {"Normals", 'd'},
      {"NormalsW", 'd'},  {"NormalsIndex", 'i'},
      {"Binormals", 'd'}, {"BinormalsW", 'd'},
      {"Tangents", 'd'},  {"TangentsW", 'd'},
      {"UV", 'd'},        {"UVIndex", 'i'},
      {"Materials", 'i'}, {"Smoothing", 'i'},
      {"Colors", 'd'},    {"ColorIndex", 'i'},
      {"Indexes", 'i'},   {"Weights", 'd'},
      {"Transform", 'd'}, {"TransformLink", 'd'},
      {"Matrix", 'd'},    {"PolygonGroup", 'i'},
      {"EdgeCrease", 'd'}};
  const auto it = kArrays.find(name);
  if (it == kArrays.end()) return std::nullopt;
  return it->second;
}

void PutArray(const Node& n, char type, Out& o) {
  const std::vector<double> v = n.Numbers();
  if (type == 'd') {
    o.Doubles(v);
    return;
  }
  std::vector<std::int32_t> ints(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double x = std::isfinite(v[k]) ? v[k] : 0.0;
    ints[k] = static_cast<std::int32_t>(std::clamp(x, -2147483648.0, 2147483647.0));
  }
  o.Ints(ints);
}

}  // namespace

void CopyGeneric(const Node& n, Out& o, int depth) {
  if (depth > 16) return;
  Out& c = o.Add(n.name);
  if (const std::optional<char> type = ArrayType(n.name)) {
    PutArray(n, *type, c);
  } else {
    for (const Value& v : n.values) {
      if (v.kind == Value::kString) c.S(v.s);
      if (v.kind == Value::kNumber && v.is_int) {
        if (v.i >= INT32_MIN && v.i <= INT32_MAX) c.I(static_cast<std::int32_t>(v.i));
        if (v.i < INT32_MIN || v.i > INT32_MAX) c.L(v.i);
      }
      if (v.kind == Value::kNumber && !v.is_int) c.D(v.d);
      if (v.kind == Value::kArray) c.Doubles(v.array);
    }
  }
  for (const Node& k : n.children) CopyGeneric(k, c, depth + 1);
}

Out& Properties70(const Node* p60, Out& dst) {
  Out& p70 = dst.Add("Properties70");
  if (p60 == nullptr) return p70;
  for (const Node& p : p60->children) {
    if (p.name != "Property" || p.values.size() < 3) continue;
    Out& o = p70.Add("P");
    o.S(p.Str(0)).S(p.Str(1)).S("").S(p.Str(2));
    const NumberType t = TypeOf(p.Str(1));
    for (std::size_t k = 3; k < p.values.size(); ++k) {
      const Value& v = p.values[k];
      if (v.kind == Value::kString) o.S(v.s);
      if (v.kind == Value::kNumber) PutNumber(v, t, o);
    }
  }
  return p70;
}

std::int64_t Upgrader::Id(const std::string& key) {
  const auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  const std::int64_t id = next_id_++;
  ids_.emplace(key, id);
  return id;
}

std::optional<std::int64_t> Upgrader::Find(const std::string& key) const {
  const auto it = ids_.find(key);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void Upgrader::Header(const Node* header) {
  Out& h = top_.emplace_back("FBXHeaderExtension");
  h.Add("FBXHeaderVersion").I(1003);
  h.Add("FBXVersion").I(7400);
  const Node* creator = header ? header->Child("Creator") : nullptr;
  h.Add("Creator").S(creator ? creator->Str(0) : "");
}

// GlobalSettings: inside Objects in 6.1, at the top level in 6.0. A file whose settings state no
// TimeMode (3ds Max 2009 writes none) states its frame rate in Version5/Settings/FrameRate.
void Upgrader::Settings(const Node* settings, const Node* version5) {
  Out& g = top_.emplace_back("GlobalSettings");
  g.Add("Version").I(1000);
  const Node* p60 = settings ? settings->Child("Properties60") : nullptr;
  Out& p70 = Properties70(p60, g);
  if (p60 != nullptr) {
    for (const Node& p : p60->children) {
      if (p.Str(0) == "TimeMode") return;
    }
  }
  const Node* s = version5 ? version5->Child("Settings") : nullptr;
  const Node* rate = s ? s->Child("FrameRate") : nullptr;
  double fps = 0;
  if (rate && !rate->values.empty()) {
    const Value& v = rate->values[0];
    if (v.kind == Value::kNumber) fps = v.d;
    if (v.kind == Value::kString) fps = std::atof(v.s.c_str());
  }
  if (std::isfinite(fps) && fps > 0 && fps < 1e6) {
    p70.Add("P").S("TimeMode").S("enum").S("").S("").I(14);  // custom: CustomFrameRate
    p70.Add("P").S("CustomFrameRate").S("double").S("Number").S("").D(fps);
  }
}

void Upgrader::Model(const Node& m) {
  const Named n = SplitName(m.Str(0));
  const std::string kind(m.Str(1));
  const std::int64_t id = Id("Model::" + n.name);
  Out& o = objects_.Add("Model");
  o.L(id).S(BinaryName(n.name, "Model")).S(kind);
  o.Add("Version").I(232);
  Properties70(m.Child("Properties60"), o);
  o.Add("Shading").C('T');
  o.Add("Culling").S("CullingOff");
  const bool joint = kind == "LimbNode" || kind == "Limb" || kind == "Root";
  if (joint || kind == "Null") {
    const std::int64_t attr = Id("NodeAttribute::" + n.name);
    Out& a = objects_.Add("NodeAttribute");
    a.L(attr).S(BinaryName(n.name, "NodeAttribute")).S(joint ? "LimbNode" : "Null");
    a.Add("Properties70");
    a.Add("TypeFlags").S(joint ? "Skeleton" : "Null");
    Connect(attr, id);
  } else if (kind == "Mesh") {
    Mesh(m, n.name, id);
  } else if (!kind.empty()) {
    ++dropped_kinds_[kind];
  }
}

void Upgrader::Connect(std::int64_t child, std::int64_t parent, std::string_view property) {
  Out& c = connections_.Add("C");
  c.S(property.empty() ? "OO" : "OP").L(child).L(parent);
  if (!property.empty()) c.S(property);
}

void Upgrader::Connections(const Node& connections) {
  std::map<std::string, int> unresolved;  // by the class of the end not carried
  for (const Node& c : connections.children) {
    if (c.name != "Connect" || c.values.size() < 3) continue;
    const std::string_view type = c.Str(0);
    const Named child = SplitName(c.Str(1)), parent = SplitName(c.Str(2));
    const std::optional<std::int64_t> from = Find(child.Key());
    std::optional<std::int64_t> to = parent.Key() == "Model::Scene" ? 0 : Find(parent.Key());
    // A skin deforms the mesh's geometry (7.x), not its model (6.x).
    if (child.cls == "Deformer" && parent.cls == "Model") {
      to = Find("Geometry::" + parent.name);
    }
    if (!from || !to || (type != "OO" && type != "OP")) {
      ++unresolved[!from ? child.cls : !to ? parent.cls : std::string(type) + " type"];
      continue;
    }
    Connect(*from, *to, type == "OP" ? c.Str(3) : std::string_view());
  }
  for (const auto& [cls, count] : unresolved) {
    dropped_.push_back(fmt::format("{} connection(s) of {} objects", count, cls));
  }
}

void Upgrader::Objects(const Node& objects) {
  // Models first: every other object's connections and poses name them.
  for (const Node& o : objects.children) {
    if (o.name == "Model") Model(o);
  }
  for (const Node& o : objects.children) {
    if (o.name == "Model" || o.name == "GlobalSettings" || o.name == "SceneInfo") continue;
    if (o.name == "Deformer") {
      Deformer(o);
    } else if (o.name == "Pose") {
      Pose(o);
    } else if (o.name == "Material") {
      Material(o);
    } else {
      ++dropped_objects_[o.Str(1).empty() ? o.name : fmt::format("{} ({})", o.name, o.Str(1))];
    }
  }
}

void Upgrader::Material(const Node& m) {
  const Named n = SplitName(m.Str(0));
  Out& o = objects_.Add("Material");
  o.L(Id(n.Key())).S(BinaryName(n.name, "Material")).S("");
  o.Add("Version").I(102);
  const Node* shading = m.Child("ShadingModel");
  o.Add("ShadingModel").S(shading ? shading->Str(0) : "lambert");
  o.Add("MultiLayer").I(0);
  Properties70(m.Child("Properties60"), o);
}

std::vector<std::string> Upgrader::Dropped() const {
  std::vector<std::string> out = dropped_;
  for (const auto& [kind, count] : dropped_kinds_) {
    out.push_back(
        fmt::format("the {} attribute of {} model(s) (read as plain nodes)", kind, count));
  }
  for (const auto& [name, count] : dropped_objects_) {
    out.push_back(fmt::format("{} {} object(s)", count, name));
  }
  for (const auto& [name, count] : dropped_channels_) {
    out.push_back(fmt::format("{} animated '{}' channel(s)", count, name));
  }
  if (shapes_ > 0) {
    out.push_back(fmt::format(
        "{} blend shape(s) (Shape records unnamed or named twice in one mesh)", shapes_));
  }
  return out;
}

std::string Upgrader::Encode() {
  top_.push_back(std::move(objects_));
  top_.push_back(std::move(connections_));
  return fbx_tree::EncodeFbx74(top_);
}

}  // namespace fbx_upgrade

std::optional<FbxUpgrade> UpgradeFbx6(std::string_view bytes, std::string* why) {
  using fbx_tree::Node;
  const std::optional<fbx_tree::Document> doc = fbx_tree::ReadFbxTree(bytes);
  if (!doc) {
    *why = "the file's records are malformed (a length, offset or value outside the file)";
    return std::nullopt;
  }
  if (doc->version >= 7000) {
    *why = fmt::format("it is FBX {} (version {}), not 6.x", doc->version / 1000, doc->version);
    return std::nullopt;
  }
  const Node *header = nullptr, *objects = nullptr, *connections = nullptr, *takes = nullptr,
             *version5 = nullptr, *settings = nullptr;
  for (const Node& n : doc->top) {
    if (n.name == "FBXHeaderExtension") header = &n;
    if (n.name == "Objects") objects = &n;
    if (n.name == "Connections") connections = &n;
    if (n.name == "Takes") takes = &n;
    if (n.name == "Version5") version5 = &n;
    if (n.name == "GlobalSettings") settings = &n;
  }
  if (objects == nullptr || connections == nullptr) {
    *why =
        "it has no Objects and Connections sections (FBX 5.x and earlier keep their models at "
        "the top level, which rigel does not read)";
    return std::nullopt;
  }
  if (const Node* g = objects->Child("GlobalSettings")) settings = g;
  fbx_upgrade::Upgrader up;
  up.Header(header);
  up.Settings(settings, version5);
  up.Objects(*objects);
  up.Connections(*connections);
  if (takes != nullptr && !up.Takes(*takes, why)) return std::nullopt;
  FbxUpgrade out;
  out.dropped = up.Dropped();
  out.bytes = up.Encode();
  return out;
}

}  // namespace rigel
