// The copy of a binary FBX 7.x file that Assimp reads (DensifyFbxCurves, importers/fbx_curves.h):
// the document read as a node tree with every offset checked, its curves rewritten, and written
// back.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "importers/fbx_curves_internal.h"

namespace rigel::fbx_curves_internal {
namespace {

// ---- Binary FBX 7.x: a node tree read with every offset checked, and written back.

struct Node {
  std::string_view name;
  std::string_view props;  // the property bytes as stored (into the file's bytes)
  std::string rewritten;   // the property bytes as rewritten, when `changed`
  bool changed = false;
  std::uint64_t num_props = 0;
  std::vector<Node> children;
  bool sentinel = false;  // the child list ends with a null record
};

class BinaryTree {
 public:
  BinaryTree(std::string_view d, bool wide) : d_(d), wide_(wide) {}

  // The top-level records from `at`; `*end` is where the top-level null record ends.
  bool Read(std::size_t at, std::vector<Node>* out, std::size_t* end) {
    return ReadList(at, d_.size(), 0, out, end, nullptr);
  }

 private:
  std::size_t Word() const { return wide_ ? 8 : 4; }
  bool Has(std::size_t at, std::size_t n) const { return at <= d_.size() && n <= d_.size() - at; }
  bool Get(std::size_t at, std::uint64_t* v) const {
    if (!Has(at, Word())) return false;
    if (wide_) {
      std::memcpy(v, d_.data() + at, 8);
    } else {
      std::uint32_t x = 0;
      std::memcpy(&x, d_.data() + at, 4);
      *v = x;
    }
    return true;
  }

  bool ReadList(std::size_t at, std::size_t end, int depth, std::vector<Node>* out,
                std::size_t* after, bool* sentinel) {
    if (depth > kMaxDepth) return false;
    const std::size_t header = 3 * Word() + 1;
    while (at < end) {
      std::uint64_t rec_end = 0, num = 0, len = 0;
      if (!Get(at, &rec_end) || !Get(at + Word(), &num) || !Get(at + 2 * Word(), &len)) {
        return false;
      }
      if (!Has(at + 3 * Word(), 1)) return false;
      const std::uint8_t name_len = static_cast<std::uint8_t>(d_[at + 3 * Word()]);
      if (rec_end == 0) {  // null record
        if (sentinel) *sentinel = true;
        *after = at + header;
        return Has(at, header);
      }
      const std::size_t name_at = at + header;
      if (rec_end <= at || rec_end > end || !Has(name_at, name_len) ||
          !Has(name_at + name_len, len) || name_at + name_len + len > rec_end) {
        return false;
      }
      Node n;
      n.name = d_.substr(name_at, name_len);
      n.num_props = num;
      n.props = d_.substr(name_at + name_len, len);
      const std::size_t children = name_at + name_len + len;
      if (children < rec_end) {
        std::size_t child_end = 0;
        if (!ReadList(children, rec_end, depth + 1, &n.children, &child_end, &n.sentinel)) {
          return false;
        }
      }
      out->push_back(std::move(n));
      at = rec_end;
    }
    *after = at;
    return true;
  }

  std::string_view d_;
  bool wide_;
};

void PutWord(std::string* out, std::uint64_t v, bool wide) {
  if (wide) {
    out->append(reinterpret_cast<const char*>(&v), 8);
  } else {
    const auto x = static_cast<std::uint32_t>(v);
    out->append(reinterpret_cast<const char*>(&x), 4);
  }
}

void WriteNode(const Node& n, bool wide, std::string* out) {
  const std::size_t at = out->size();
  PutWord(out, 0, wide);  // end, patched below
  PutWord(out, n.num_props, wide);
  const std::string_view props = n.changed ? std::string_view(n.rewritten) : n.props;
  PutWord(out, props.size(), wide);
  out->push_back(static_cast<char>(n.name.size()));
  out->append(n.name);
  out->append(props);
  for (const Node& c : n.children) WriteNode(c, wide, out);
  if (n.sentinel) out->append(wide ? 25 : 13, '\0');
  const std::uint64_t end = out->size();
  if (wide) {
    std::memcpy(out->data() + at, &end, 8);
  } else {
    const auto x = static_cast<std::uint32_t>(end);
    std::memcpy(out->data() + at, &x, 4);
  }
}

// A binary array property ('l', 'f', 'd', 'i') of `props` at `*at` decoded into doubles; false
// on a fault or another type.
bool ReadArray(std::string_view props, std::size_t* at, std::vector<double>* out,
               std::vector<std::uint32_t>* bits = nullptr) {
  if (*at + 13 > props.size()) return false;
  const char type = props[*at];
  std::uint32_t count = 0, encoding = 0, stored = 0;
  std::memcpy(&count, props.data() + *at + 1, 4);
  std::memcpy(&encoding, props.data() + *at + 5, 4);
  std::memcpy(&stored, props.data() + *at + 9, 4);
  const std::size_t data_at = *at + 13;
  if (stored > props.size() - data_at) return false;
  const std::size_t size = type == 'l' || type == 'd' ? 8 : type == 'i' || type == 'f' ? 4 : 0;
  if (size == 0 || count > (256u << 20) / size) return false;
  std::string raw;
  if (encoding == 0) {
    if (stored != count * size) return false;
    raw.assign(props.substr(data_at, stored));
  } else if (encoding == 1) {
    raw.resize(count * size);
    uLongf got = static_cast<uLongf>(raw.size());
    if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &got,
                   reinterpret_cast<const Bytef*>(props.data() + data_at), stored) != Z_OK ||
        got != raw.size()) {
      return false;
    }
  } else {
    return false;
  }
  out->resize(count);
  if (bits) bits->resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* p = raw.data() + i * size;
    switch (type) {
      case 'l': {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        (*out)[i] = static_cast<double>(v);
        break;
      }
      case 'd': {
        double v;
        std::memcpy(&v, p, 8);
        (*out)[i] = v;
        break;
      }
      case 'i': {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        (*out)[i] = v;
        break;
      }
      default: {
        float v;
        std::memcpy(&v, p, 4);
        (*out)[i] = v;
        if (bits) std::memcpy(&(*bits)[i], p, 4);
      }
    }
  }
  *at = data_at + stored;
  return true;
}

// KeyTime arrays hold 64-bit integers that a double does not keep exactly past 2^53 ticks (54
// hours): read them as integers.
bool ReadTimes(std::string_view props, std::vector<std::int64_t>* out) {
  if (props.size() < 13 || props[0] != 'l') return false;
  std::uint32_t count = 0, encoding = 0, stored = 0;
  std::memcpy(&count, props.data() + 1, 4);
  std::memcpy(&encoding, props.data() + 5, 4);
  std::memcpy(&stored, props.data() + 9, 4);
  if (stored > props.size() - 13 || count > (256u << 20) / 8) return false;
  std::string raw;
  if (encoding == 0 && stored == count * 8ull) {
    raw.assign(props.substr(13, stored));
  } else if (encoding == 1) {
    raw.resize(count * 8ull);
    uLongf got = static_cast<uLongf>(raw.size());
    if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &got,
                   reinterpret_cast<const Bytef*>(props.data() + 13), stored) != Z_OK ||
        got != raw.size()) {
      return false;
    }
  } else {
    return false;
  }
  out->resize(count);
  if (count) std::memcpy(out->data(), raw.data(), raw.size());
  return true;
}

template <typename T>
std::string ArrayProperty(char type, const std::vector<T>& v) {
  std::string s(1, type);
  const auto count = static_cast<std::uint32_t>(v.size());
  const std::uint32_t encoding = 0, bytes = count * sizeof(T);
  s.append(reinterpret_cast<const char*>(&count), 4);
  s.append(reinterpret_cast<const char*>(&encoding), 4);
  s.append(reinterpret_cast<const char*>(&bytes), 4);
  s.append(reinterpret_cast<const char*>(v.data()), bytes);
  return s;
}

std::string ScalarProperty(char type, const void* v, std::size_t size) {
  std::string s(1, type);
  s.append(static_cast<const char*>(v), size);
  return s;
}
std::string LongProperty(std::int64_t v) { return ScalarProperty('L', &v, 8); }
std::string IntProperty(std::int32_t v) { return ScalarProperty('I', &v, 4); }
std::string DoubleProperty(double v) { return ScalarProperty('D', &v, 8); }
std::string StringProperty(std::string_view v) {
  const auto len = static_cast<std::uint32_t>(v.size());
  return ScalarProperty('S', &len, 4) + std::string(v);
}

// A record made by the copy (its name a literal, its properties encoded).
Node MadeNode(std::string_view name, std::string props, std::uint64_t num_props) {
  Node n;
  n.name = name;
  n.rewritten = std::move(props);
  n.changed = true;
  n.num_props = num_props;
  return n;
}

// The AnimationCurve record of a constant curve, and the connection that puts it on its node.
void AddAxisCurve(const AxisCurve& a, Node* objects, Node* connections) {
  std::vector<std::int64_t> times{a.t0};
  if (a.t1 != a.t0) times.push_back(a.t1);
  const std::vector<float> values(times.size(), static_cast<float>(a.value));
  Node curve =
      MadeNode("AnimationCurve",
               LongProperty(a.id) + StringProperty(std::string_view("\0\x01AnimCurve", 11)) +
                   StringProperty(""),
               3);
  curve.children.push_back(MadeNode("Default", DoubleProperty(a.value), 1));
  curve.children.push_back(MadeNode("KeyVer", IntProperty(4009), 1));
  curve.children.push_back(MadeNode("KeyTime", ArrayProperty('l', times), 1));
  curve.children.push_back(MadeNode("KeyValueFloat", ArrayProperty('f', values), 1));
  curve.children.push_back(
      MadeNode("KeyAttrFlags", ArrayProperty('i', std::vector<std::int32_t>{fbx_key::kLinear}), 1));
  curve.children.push_back(
      MadeNode("KeyAttrDataFloat", ArrayProperty('f', std::vector<float>{0, 0, 0, 0}), 1));
  curve.children.push_back(MadeNode(
      "KeyAttrRefCount",
      ArrayProperty('i', std::vector<std::int32_t>{static_cast<std::int32_t>(times.size())}), 1));
  curve.sentinel = true;
  objects->children.push_back(std::move(curve));
  static constexpr std::string_view kAxis[] = {"d|X", "d|Y", "d|Z"};
  connections->children.push_back(MadeNode("C",
                                           StringProperty("OP") + LongProperty(a.id) +
                                               LongProperty(a.node) + StringProperty(kAxis[a.axis]),
                                           4));
}

const Node* Child(const Node& n, std::string_view name) {
  for (const Node& c : n.children) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The times and attributes of an AnimationCurve node (what NeedsKeys looks at); false when it
// is not one this reads.
bool ReadCurveTiming(const Node& n, FbxCurveKeys* c) {
  const Node* t = Child(n, "KeyTime");
  if (!t || !ReadTimes(t->props, &c->times)) return false;
  std::vector<double> tmp;
  std::size_t at = 0;
  if (const Node* f = Child(n, "KeyAttrFlags"); f && ReadArray(f->props, &at, &tmp)) {
    c->flags.assign(tmp.begin(), tmp.end());
  }
  if (const Node* r = Child(n, "KeyAttrRefCount"); r && (at = 0, ReadArray(r->props, &at, &tmp))) {
    c->refcount.assign(tmp.begin(), tmp.end());
  }
  return true;
}

// Its values and attribute data.
bool ReadCurveValues(const Node& n, FbxCurveKeys* c) {
  const Node* v = Child(n, "KeyValueFloat");
  std::vector<double> values;
  std::size_t at = 0;
  if (!v || !ReadArray(v->props, &at, &values) || values.size() != c->times.size()) return false;
  c->values.assign(values.begin(), values.end());
  std::vector<double> tmp;
  std::vector<std::uint32_t> bits;
  if (const Node* d = Child(n, "KeyAttrDataFloat");
      d && (at = 0, ReadArray(d->props, &at, &tmp, &bits))) {
    c->data.resize(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) c->data[i] = std::bit_cast<float>(bits[i]);
  }
  return true;
}

void WriteCurve(const FbxCurveKeys& c, Node* n) {
  for (Node& child : n->children) {
    if (child.name == "KeyTime") {
      child.rewritten = ArrayProperty('l', c.times);
    } else if (child.name == "KeyValueFloat") {
      child.rewritten = ArrayProperty('f', c.values);
    } else if (child.name == "KeyAttrFlags") {
      child.rewritten = ArrayProperty('i', c.flags);
    } else if (child.name == "KeyAttrDataFloat") {
      child.rewritten = ArrayProperty('f', c.data);
    } else if (child.name == "KeyAttrRefCount") {
      child.rewritten = ArrayProperty('i', c.refcount);
    } else {
      continue;
    }
    child.changed = true;
  }
}

// A P record's first string and its values: int (I, L), double (D, F).
struct PValue {
  std::string_view name;
  std::vector<double> numbers;
};

PValue ReadP(const Node& p) {
  PValue out;
  std::size_t at = 0;
  const std::string_view s = p.props;
  for (std::uint64_t i = 0; i < p.num_props && at < s.size(); ++i) {
    const char code = s[at++];
    auto need = [&](std::size_t n) { return n <= s.size() - at; };
    switch (code) {
      case 'S':
      case 'R': {
        std::uint32_t len = 0;
        if (!need(4)) return out;
        std::memcpy(&len, s.data() + at, 4);
        if (!need(4 + std::size_t{len})) return out;
        if (i == 0) out.name = s.substr(at + 4, len);
        at += 4 + std::size_t{len};
        break;
      }
      case 'I': {
        std::int32_t v = 0;
        if (!need(4)) return out;
        std::memcpy(&v, s.data() + at, 4);
        out.numbers.push_back(v);
        at += 4;
        break;
      }
      case 'L': {
        std::int64_t v = 0;
        if (!need(8)) return out;
        std::memcpy(&v, s.data() + at, 8);
        out.numbers.push_back(static_cast<double>(v));
        at += 8;
        break;
      }
      case 'D': {
        double v = 0;
        if (!need(8)) return out;
        std::memcpy(&v, s.data() + at, 8);
        out.numbers.push_back(v);
        at += 8;
        break;
      }
      case 'F': {
        float v = 0;
        if (!need(4)) return out;
        std::memcpy(&v, s.data() + at, 4);
        out.numbers.push_back(v);
        at += 4;
        break;
      }
      case 'C':
        at += 1;
        break;
      case 'Y':
        at += 2;
        break;
      default:
        return out;
    }
  }
  return out;
}

// The first integer property of a record (an object's id).
std::optional<std::int64_t> FirstId(const Node& n) {
  if (n.props.size() >= 9 && n.props[0] == 'L') {
    std::int64_t v;
    std::memcpy(&v, n.props.data() + 1, 8);
    return v;
  }
  if (n.props.size() >= 5 && n.props[0] == 'I') {
    std::int32_t v;
    std::memcpy(&v, n.props.data() + 1, 4);
    return v;
  }
  return std::nullopt;
}

// The connections' child -> parent links (for the take each curve belongs to), and the "OP"
// ones with the property they connect to.
void ReadConnections(const Node& connections, Takes* takes, std::vector<OpLink>* op_links) {
  for (const Node& c : connections.children) {
    if (c.name != "C" || c.props.size() < 1) continue;
    // "OO"/"OP", child, parent.
    std::size_t at = 0;
    const std::string_view s = c.props;
    if (s[at] != 'S' || s.size() < 5) continue;
    std::uint32_t len = 0;
    std::memcpy(&len, s.data() + 1, 4);
    at = 5 + std::size_t{len};
    if (at + 18 > s.size() || s[at] != 'L' || s[at + 9] != 'L') continue;
    std::int64_t child = 0, parent = 0;
    std::memcpy(&child, s.data() + at + 1, 8);
    std::memcpy(&parent, s.data() + at + 10, 8);
    takes->parent.emplace(child, parent);
    at += 18;
    if (at + 5 <= s.size() && s[at] == 'S') {  // "OP": the property
      std::memcpy(&len, s.data() + at + 1, 4);
      if (len <= s.size() - at - 5) {
        op_links->push_back({child, parent, std::string(s.substr(at + 5, len))});
      }
    }
  }
}

// The constant curves the copy adds on axes Assimp would read without their stated value
// (MissingAxisCurves), from the curve nodes, the curves' spans and the connections.
std::vector<AxisCurve> MissingAxes(const Node& objects, const std::vector<OpLink>& op_links) {
  std::unordered_map<std::int64_t, CurveNodeAxes> nodes;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t next_id = 0;
  for (const Node& o : objects.children) {
    const auto id = FirstId(o);
    if (!id) continue;
    next_id = std::max(next_id, *id + 1);
    if (o.name == "AnimationCurve") {
      FbxCurveKeys c;
      if (ReadCurveTiming(o, &c) && !c.times.empty()) {
        spans.emplace(*id, std::pair{c.times.front(), c.times.back()});
      }
    } else if (o.name == "AnimationCurveNode") {
      CurveNodeAxes& n = nodes[*id];
      if (const Node* p70 = Child(o, "Properties70")) {
        for (const Node& p : p70->children) {
          const PValue v = ReadP(p);
          if (v.name.size() == 3 && v.name.substr(0, 2) == "d|" && !v.numbers.empty() &&
              v.name[2] >= 'X' && v.name[2] <= 'Z') {
            n.value[v.name[2] - 'X'] = v.numbers[0];
          }
        }
      }
    }
  }
  ApplyOpLinks(op_links, &nodes);
  return MissingAxisCurves(nodes, spans, next_id);
}

// RotationOrder 6 (eSphericXYZ) stated 0 (XYZ) in every Properties70 under `n` (models and the
// models' template); `*count` counts them.
void SphericAsXyz(Node* n, int* count) {
  for (Node& c : n->children) {
    if (c.name == "P" && n->name == "Properties70") {
      const PValue v = ReadP(c);
      if (v.name != "RotationOrder" || v.numbers.empty() || v.numbers.back() != 6) continue;
      const std::string_view raw = c.changed ? std::string_view(c.rewritten) : c.props;
      if (raw.size() < 5 || raw[raw.size() - 5] != 'I') continue;
      c.rewritten = std::string(raw.substr(0, raw.size() - 4)) + std::string(4, '\0');
      c.changed = true;
      ++*count;
    } else if (c.name != "AnimationCurve") {
      SphericAsXyz(&c, count);
    }
  }
}

// Each AnimationStack's LocalStart, for the grid its curves are keyed on.
void ReadStackStarts(const Node& objects, Takes* takes) {
  for (const Node& o : objects.children) {
    if (o.name != "AnimationStack") continue;
    const auto id = FirstId(o);
    if (!id) continue;
    std::int64_t start = 0;
    if (const Node* p70 = Child(o, "Properties70")) {
      for (const Node& p : p70->children) {
        const PValue v = ReadP(p);
        if (v.name == "LocalStart" && !v.numbers.empty()) {
          // An 'L' read as a double: exact below 2^53 ticks (54 hours).
          start = static_cast<std::int64_t>(v.numbers[0]);
        }
      }
    }
    takes->stack_start.emplace(*id, start);
  }
}

}  // namespace

std::optional<FbxDensified> DensifyBinary(std::string_view bytes) {
  if (bytes.size() < 27) return std::nullopt;
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 23, 4);
  if (version < 7000) return std::nullopt;
  const bool wide = version >= 7500;
  std::vector<Node> top;
  std::size_t end = 0;
  if (!BinaryTree(bytes, wide).Read(27, &top, &end)) return std::nullopt;
  // Frame rate and take starts.
  int mode = 0;
  double custom = 0;
  Takes takes;
  Node* objects = nullptr;
  Node* connections = nullptr;
  std::vector<OpLink> op_links;
  for (Node& n : top) {
    if (n.name == "GlobalSettings") {
      if (const Node* p70 = Child(n, "Properties70")) {
        for (const Node& p : p70->children) {
          const PValue v = ReadP(p);
          if (v.name == "TimeMode" && !v.numbers.empty()) mode = static_cast<int>(v.numbers[0]);
          if (v.name == "CustomFrameRate" && !v.numbers.empty()) custom = v.numbers[0];
        }
      }
    } else if (n.name == "Objects") {
      objects = &n;
    } else if (n.name == "Connections") {
      ReadConnections(n, &takes, &op_links);
      connections = &n;
    }
  }
  if (objects == nullptr || connections == nullptr) return std::nullopt;
  FbxDensified out;
  double fps = StatedRate(mode, custom);
  if (!(fps > 0)) {
    std::vector<std::int64_t> times;
    for (const Node& o : objects->children) {
      FbxCurveKeys c;
      if (o.name == "AnimationCurve" && ReadCurveTiming(o, &c)) {
        times.insert(times.end(), c.times.begin(), c.times.end());
      }
    }
    fps = out.assumed_fps = UnstatedRate(std::move(times), &out.key_spacing);
  }
  const std::vector<AxisCurve> added = MissingAxes(*objects, op_links);
  out.axes_completed = static_cast<int>(added.size());
  for (Node& n : top) {
    if (n.name == "Objects" || n.name == "Definitions") SphericAsXyz(&n, &out.spheric_orders);
  }
  if (!(fps > 0) && added.empty() && out.spheric_orders == 0) return std::nullopt;
  ReadStackStarts(*objects, &takes);
  const double step = fps > 0 ? kTicks / fps : 0;  // 0: no rate, no keys added on frames
  for (Node& o : objects->children) {
    if (o.name != "AnimationCurve") continue;
    ++out.curves;
    FbxCurveKeys c;
    if (!ReadCurveTiming(o, &c)) continue;
    const auto id = FirstId(o);
    const std::int64_t start = takes.StartOf(id ? *id : 0);
    if (!NeedsKeys(c, start, step) || !ReadCurveValues(o, &c)) continue;
    FbxCurveKeys dense;
    if (!Densify(c, start, step, &dense)) continue;
    for (std::size_t a = 0; a < c.flags.size(); ++a) {
      if (c.flags[a] & (fbx_key::kVelocityRight | fbx_key::kVelocityNextLeft)) {
        ++out.velocity_curves;
        break;
      }
    }
    for (std::size_t a = 0; a < c.flags.size(); ++a) {
      if ((c.flags[a] & fbx_key::kCubic) && (c.flags[a] & fbx_key::kTangentTcb)) {
        ++out.tcb_curves;
        break;
      }
    }
    ++out.densified;
    out.keys_before += static_cast<std::int64_t>(c.times.size());
    out.keys_after += static_cast<std::int64_t>(dense.times.size());
    WriteCurve(dense, &o);
  }
  if (out.densified == 0 && added.empty() && out.spheric_orders == 0) return std::nullopt;
  for (const AxisCurve& a : added) AddAxisCurve(a, objects, connections);
  out.bytes.reserve(bytes.size() + static_cast<std::size_t>(out.keys_after) * 12);
  out.bytes.append(bytes.substr(0, 27));
  for (const Node& n : top) WriteNode(n, wide, &out.bytes);
  out.bytes.append(wide ? 25 : 13, '\0');
  out.bytes.append(bytes.substr(std::min(end, bytes.size())));  // the footer, as it was
  return out;
}

}  // namespace rigel::fbx_curves_internal
