#include "importers/fbx_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace rigel {
namespace {

constexpr std::string_view kBinaryMagic("Kaydara FBX Binary  \0", 21);
constexpr int kMaxDepth = 64;

// A model's name as Assimp gives it to the node: "Hips\0\1Model" (binary 7.x) and "Model::Hips"
// (ASCII, binary 6.x) both become "Hips".
std::string ModelName(std::string_view raw) {
  const std::size_t sep = raw.find(std::string_view("\0\1", 2));
  if (sep != std::string_view::npos) return std::string(raw.substr(0, sep));
  if (raw.rfind("Model::", 0) == 0) return std::string(raw.substr(7));
  return std::string(raw);
}

// An animation stack's name as Assimp gives it: "Take 001\0\1AnimStack" (binary) and
// "AnimStack::Take 001" (ASCII) both become "Take 001".
std::string StackName(std::string_view raw) {
  const std::size_t sep = raw.find(std::string_view("\0\1", 2));
  if (sep != std::string_view::npos) return std::string(raw.substr(0, sep));
  if (raw.rfind("AnimStack::", 0) == 0) return std::string(raw.substr(11));
  return std::string(raw);
}

// An animation layer's name: "BaseLayer\0\1AnimLayer" or "AnimLayer::BaseLayer".
std::string LayerName(std::string_view raw) {
  const std::size_t sep = raw.find(std::string_view("\0\1", 2));
  if (sep != std::string_view::npos) return std::string(raw.substr(0, sep));
  if (raw.rfind("AnimLayer::", 0) == 0) return std::string(raw.substr(11));
  return std::string(raw);
}

// The first integer after "Tag:" on an ASCII object or connection line (`AnimationLayer: 24255,
// "AnimLayer::X", "" {`, `C: "OO",1624515876736,1624514873152`), from `from`; nullopt if none.
std::optional<std::int64_t> AsciiInt(std::string_view line, std::size_t from) {
  std::size_t b = from;
  while (b < line.size() && !std::isdigit(static_cast<unsigned char>(line[b])) && line[b] != '-')
    ++b;
  if (b >= line.size()) return std::nullopt;
  const bool negative = line[b] == '-';
  std::size_t e = b + negative;
  std::int64_t v = 0;
  const std::size_t digits = e;
  for (; e < line.size() && std::isdigit(static_cast<unsigned char>(line[e])); ++e) {
    if (v > (INT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + (line[e] - '0');
  }
  if (e == digits) return std::nullopt;
  return negative ? -v : v;
}

// The binary node records, read with every offset checked against the buffer.
class BinaryReader {
 public:
  BinaryReader(std::string_view bytes, int header_version)
      : d_(bytes), wide_(header_version >= 7500) {}

  void Run(FbxScan* out, std::vector<std::int64_t>* curve_nodes,
           std::vector<std::pair<std::int64_t, std::int64_t>>* links) {
    out_ = out;
    curve_nodes_ = curve_nodes;
    links_ = links;
    ReadList(27, d_.size(), 0);
  }

 private:
  struct Record {
    std::uint64_t end = 0;
    std::uint64_t props = 0;  // number of properties
    std::uint64_t props_len = 0;
    std::string_view name;
    std::size_t props_at = 0;  // first property
  };

  bool Has(std::size_t at, std::size_t n) const { return at <= d_.size() && n <= d_.size() - at; }

  template <typename T>
  bool Get(std::size_t at, T* v) const {
    if (!Has(at, sizeof(T))) return false;
    std::memcpy(v, d_.data() + at, sizeof(T));
    return true;
  }

  // The record at `at`; false at the list's null record or on a fault.
  bool ReadRecord(std::size_t at, Record* r) const {
    const std::size_t word = wide_ ? 8 : 4;
    std::uint64_t f[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      if (wide_) {
        if (!Get(at + i * word, &f[i])) return false;
      } else {
        std::uint32_t v = 0;
        if (!Get(at + i * word, &v)) return false;
        f[i] = v;
      }
    }
    std::uint8_t name_len = 0;
    if (!Get(at + 3 * word, &name_len)) return false;
    if (f[0] == 0) return false;  // null record: end of the list
    const std::size_t name_at = at + 3 * word + 1;
    if (!Has(name_at, name_len) || f[0] <= at || f[0] > d_.size()) return false;
    r->end = f[0];
    r->props = f[1];
    r->props_len = f[2];
    r->name = d_.substr(name_at, name_len);
    r->props_at = name_at + name_len;
    return Has(r->props_at, static_cast<std::size_t>(std::min<std::uint64_t>(f[2], d_.size())));
  }

  // The string properties of a record, and its first integer property ('I' or 'L'), if any.
  void ReadProperties(const Record& r, std::vector<std::string_view>* strings,
                      std::int64_t* first_int, bool* has_int,
                      std::vector<std::int64_t>* ints = nullptr) const {
    std::size_t p = r.props_at;
    const std::size_t end = r.props_at + static_cast<std::size_t>(r.props_len);
    for (std::uint64_t i = 0; i < r.props && p < end; ++i) {
      const char code = d_[p++];
      std::size_t skip = 0;
      switch (code) {
        case 'Y':
          skip = 2;
          break;
        case 'C':
          skip = 1;
          break;
        case 'I': {
          std::int32_t v = 0;
          if (!*has_int && Get(p, &v)) *first_int = v, *has_int = true;
          if (ints && Get(p, &v)) ints->push_back(v);
          skip = 4;
          break;
        }
        case 'F':
          skip = 4;
          break;
        case 'D':
          skip = 8;
          break;
        case 'L': {
          std::int64_t v = 0;
          if (!*has_int && Get(p, &v)) *first_int = v, *has_int = true;
          if (ints && Get(p, &v)) ints->push_back(v);
          skip = 8;
          break;
        }
        case 'S':
        case 'R': {
          std::uint32_t len = 0;
          if (!Get(p, &len) || !Has(p + 4, len)) return;
          if (code == 'S') strings->push_back(d_.substr(p + 4, len));
          skip = 4 + std::size_t{len};
          break;
        }
        case 'f':
        case 'd':
        case 'l':
        case 'i':
        case 'b': {
          std::uint32_t count = 0, encoding = 0, stored = 0;
          if (!Get(p, &count) || !Get(p + 4, &encoding) || !Get(p + 8, &stored)) return;
          skip = 12 + std::size_t{stored};
          break;
        }
        default:
          return;  // unknown type code: stop reading this record's properties
      }
      if (!Has(p, skip)) return;
      p += skip;
    }
  }

  void ReadList(std::size_t at, std::size_t end, int depth) {
    if (depth > kMaxDepth) return;
    Record r;
    while (at < end && ReadRecord(at, &r)) {
      const std::size_t children = r.props_at + static_cast<std::size_t>(r.props_len);
      if (depth == 0 &&
          (r.name == "Objects" || r.name == "FBXHeaderExtension" || r.name == "Connections")) {
        ReadList(children, static_cast<std::size_t>(r.end), depth + 1);
      } else if (depth == 1 && r.name == "FBXVersion") {
        std::vector<std::string_view> s;
        std::int64_t v = 0;
        bool has = false;
        ReadProperties(r, &s, &v, &has);
        if (has && v > 0 && v < 100000) out_->version = static_cast<int>(v);
      } else if (depth == 1 && r.name == "AnimationStack") {
        std::vector<std::string_view> s;
        std::int64_t id = 0;
        bool has = false;
        ReadProperties(r, &s, &id, &has);
        FbxStackRange stack;
        stack.name = s.empty() ? "" : StackName(s[0]);
        stack.id = has ? id : 0;
        ReadStackRange(children, static_cast<std::size_t>(r.end), &stack);
        out_->stacks.push_back(std::move(stack));
      } else if (depth == 1 && r.name == "Geometry") {
        ReadList(children, static_cast<std::size_t>(r.end), depth + 1);
      } else if (depth == 2 && r.name == "Shape") {
        ++out_->legacy_shapes;
      } else if (depth == 1 && r.name == "AnimationLayer") {
        std::vector<std::string_view> s;
        std::int64_t id = 0;
        bool has = false;
        ReadProperties(r, &s, &id, &has);
        if (has) out_->layers.push_back({s.empty() ? "" : LayerName(s[0]), id, 0, 0});
      } else if (depth == 1 && r.name == "AnimationCurveNode") {
        std::vector<std::string_view> s;
        std::int64_t id = 0;
        bool has = false;
        ReadProperties(r, &s, &id, &has);
        if (has) curve_nodes_->push_back(id);
      } else if (depth == 1 && r.name == "C") {
        std::vector<std::string_view> s;
        std::vector<std::int64_t> ints;
        std::int64_t first = 0;
        bool has = false;
        ReadProperties(r, &s, &first, &has, &ints);
        if (!s.empty() && s[0] == "OO" && ints.size() >= 2) links_->push_back({ints[0], ints[1]});
      } else if (depth == 1 && r.name == "Model") {
        std::vector<std::string_view> s;
        std::int64_t id = 0;
        bool has = false;
        ReadProperties(r, &s, &id, &has);
        if (!s.empty()) {
          out_->models.push_back({ModelName(s[0]), s.size() > 1 ? std::string(s[1]) : ""});
        }
      }
      at = static_cast<std::size_t>(r.end);
    }
  }

  // The LocalStart and LocalStop of an AnimationStack's Properties70 (records between `at` and
  // `end`): P records whose strings start with the name and whose value is a 64-bit integer.
  void ReadStackRange(std::size_t at, std::size_t end, FbxStackRange* stack) const {
    Record props;
    while (at < end && ReadRecord(at, &props)) {
      if (props.name == "Properties70") {
        std::size_t p_at = props.props_at + static_cast<std::size_t>(props.props_len);
        Record p;
        while (p_at < static_cast<std::size_t>(props.end) && ReadRecord(p_at, &p)) {
          if (p.name == "P") ReadRangeValue(p, stack);
          p_at = static_cast<std::size_t>(p.end);
        }
      }
      at = static_cast<std::size_t>(props.end);
    }
  }

  // One P record: when its first string is LocalStart or LocalStop and its value (the first
  // non-string property) is an 'L', records the value and where it is.
  void ReadRangeValue(const Record& r, FbxStackRange* stack) const {
    std::size_t p = r.props_at;
    const std::size_t end = r.props_at + static_cast<std::size_t>(r.props_len);
    std::string_view first;
    for (std::uint64_t i = 0; i < r.props && p < end; ++i) {
      const char code = d_[p++];
      if (code == 'S') {
        std::uint32_t len = 0;
        if (!Get(p, &len) || !Has(p + 4, len)) return;
        if (i == 0) first = d_.substr(p + 4, len);
        p += 4 + std::size_t{len};
        continue;
      }
      std::int64_t v = 0;
      if (code != 'L' || !Get(p, &v)) return;
      if (first == "LocalStart") stack->start = v, stack->has_start = true, stack->start_at = p;
      if (first == "LocalStop") stack->stop = v, stack->has_stop = true, stack->stop_at = p;
      return;
    }
  }

  std::string_view d_;
  bool wide_;
  FbxScan* out_ = nullptr;
  std::vector<std::int64_t>* curve_nodes_ = nullptr;
  std::vector<std::pair<std::int64_t, std::int64_t>>* links_ = nullptr;
};

// The quoted strings of one ASCII line, in order.
std::vector<std::string_view> Quoted(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t p = 0;
  while ((p = line.find('"', p)) != std::string_view::npos) {
    const std::size_t q = line.find('"', p + 1);
    if (q == std::string_view::npos) break;
    out.push_back(line.substr(p + 1, q - p - 1));
    p = q + 1;
  }
  return out;
}

std::string_view TrimLeft(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// An ASCII P line of an animation stack: `P: "LocalStop", "KTime", "Time", "",46186158000`. Records
// the value and where its digits are (`line_at`: the line's offset in the file).
void ReadAsciiRange(std::string_view line, std::size_t line_at, FbxStackRange* stack) {
  const std::vector<std::string_view> q = Quoted(line);
  if (q.empty() || (q[0] != "LocalStart" && q[0] != "LocalStop")) return;
  const std::size_t comma = line.rfind(',');
  if (comma == std::string_view::npos) return;
  std::size_t b = comma + 1;
  while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
  std::size_t e = b + (b < line.size() && line[b] == '-');
  std::int64_t v = 0;
  const std::size_t digits = e;
  for (; e < line.size() && std::isdigit(static_cast<unsigned char>(line[e])); ++e) {
    if (v > (INT64_MAX - 9) / 10) return;
    v = v * 10 + (line[e] - '0');
  }
  if (e == digits) return;
  if (line[b] == '-') v = -v;
  const std::size_t at = line_at + b, len = e - b;
  if (q[0] == "LocalStart") stack->start = v, stack->has_start = true;
  if (q[0] == "LocalStart") stack->start_at = at, stack->start_len = len;
  if (q[0] == "LocalStop") stack->stop = v, stack->has_stop = true;
  if (q[0] == "LocalStop") stack->stop_at = at, stack->stop_len = len;
}

void ScanAscii(std::string_view d, FbxScan* out, std::vector<std::int64_t>* curve_nodes,
               std::vector<std::pair<std::int64_t, std::int64_t>>* links) {
  std::size_t at = 0;
  bool in_stack = false;
  while (at < d.size()) {
    std::size_t nl = d.find('\n', at);
    if (nl == std::string_view::npos) nl = d.size();
    const std::string_view raw = d.substr(at, nl - at);
    const std::string_view line = TrimLeft(raw);
    const std::size_t line_at = at + (raw.size() - line.size());
    at = nl + 1;
    if (line.rfind("AnimationStack:", 0) == 0) {
      const std::vector<std::string_view> q = Quoted(line);
      out->stacks.push_back({});
      out->stacks.back().name = q.empty() ? "" : StackName(q[0]);
      const std::size_t quote = line.find('"');
      if (const auto id = AsciiInt(line.substr(0, quote), 15)) out->stacks.back().id = *id;
      in_stack = true;
      continue;
    }
    if (line.rfind("Shape: \"", 0) == 0) ++out->legacy_shapes;
    if (line.rfind("AnimationLayer:", 0) == 0) {
      const std::vector<std::string_view> q = Quoted(line);
      const std::size_t quote = line.find('"');
      if (const auto id = AsciiInt(line.substr(0, quote), 15)) {
        out->layers.push_back({q.empty() ? "" : LayerName(q[0]), *id, 0, 0});
      }
    } else if (line.rfind("AnimationCurveNode:", 0) == 0) {
      const std::size_t quote = line.find('"');
      if (const auto id = AsciiInt(line.substr(0, quote), 19)) curve_nodes->push_back(*id);
    } else if (line.rfind("C:", 0) == 0) {
      const std::vector<std::string_view> q = Quoted(line);
      if (!q.empty() && q[0] == "OO") {
        const std::size_t after = line.find('"', line.find('"') + 1) + 1;
        const std::size_t comma = line.find(',', after);
        const auto child = AsciiInt(line, after);
        const auto parent = comma == std::string_view::npos
                                ? std::nullopt
                                : AsciiInt(line, line.find(',', comma + 1) + 1);
        if (child && parent) links->push_back({*child, *parent});
      }
    }
    // A stack's block ends at the next object (a line at the objects' own indentation).
    if (in_stack && line.rfind("P:", 0) == 0) {
      ReadAsciiRange(line, line_at, &out->stacks.back());
      continue;
    }
    if (in_stack && !line.empty() && line[0] != 'P' && line[0] != '}' &&
        line.rfind("Properties70", 0) != 0) {
      in_stack = false;
    }
    if (out->version == 0 && line.rfind("FBXVersion:", 0) == 0) {
      int v = 0;
      for (const char c : line.substr(11)) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
          v = v * 10 + (c - '0');
          if (v > 100000) break;
        } else if (c != ' ' && c != '\t') {
          break;
        }
      }
      if (v > 0 && v < 100000) out->version = v;
    } else if (line.rfind("Model:", 0) == 0) {
      const std::vector<std::string_view> q = Quoted(line);
      if (!q.empty() && q[0].rfind("Model::", 0) == 0) {
        out->models.push_back({ModelName(q[0]), q.size() > 1 ? std::string(q[1]) : ""});
      }
    }
  }
}

// Which layer each curve node animates for, and which stack each layer belongs to.
void ResolveLayers(const std::vector<std::int64_t>& curve_nodes,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& links, FbxScan* scan) {
  if (scan->layers.empty()) return;
  const std::unordered_set<std::int64_t> nodes(curve_nodes.begin(), curve_nodes.end());
  std::unordered_map<std::int64_t, std::size_t> layer_at;
  for (std::size_t i = 0; i < scan->layers.size(); ++i) layer_at.emplace(scan->layers[i].id, i);
  std::unordered_set<std::int64_t> stacks;
  for (const FbxStackRange& s : scan->stacks) stacks.insert(s.id);
  for (const auto& [child, parent] : links) {
    const auto layer = layer_at.find(parent);
    if (layer != layer_at.end() && nodes.count(child)) ++scan->layers[layer->second].curve_nodes;
    const auto owned = layer_at.find(child);
    if (owned != layer_at.end() && stacks.count(parent)) scan->layers[owned->second].stack = parent;
  }
}

}  // namespace

std::vector<std::string> LayersWithCurves(const FbxScan& scan, const FbxStackRange& stack) {
  std::vector<std::string> out;
  for (const FbxLayer& l : scan.layers) {
    if (l.stack == stack.id && stack.id != 0 && l.curve_nodes > 0) out.push_back(l.name);
  }
  return out;
}

std::optional<FbxScan> ScanFbx(std::string_view bytes) {
  FbxScan scan;
  std::vector<std::int64_t> curve_nodes;
  std::vector<std::pair<std::int64_t, std::int64_t>> links;
  if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic) {
    if (bytes.size() < 27) return std::nullopt;
    std::uint32_t header = 0;
    std::memcpy(&header, bytes.data() + 23, 4);
    scan.binary = true;
    BinaryReader(bytes, static_cast<int>(header)).Run(&scan, &curve_nodes, &links);
    if (scan.version == 0 && header < 100000) scan.version = static_cast<int>(header);
    ResolveLayers(curve_nodes, links, &scan);
    return scan;
  }
  // ASCII FBX starts with a "; FBX 7.5.0 project file" comment or the header extension.
  const std::string_view head = bytes.substr(0, 4096);
  if (head.find("FBXHeaderExtension") == std::string_view::npos &&
      head.find("; FBX ") == std::string_view::npos) {
    return std::nullopt;
  }
  ScanAscii(bytes, &scan, &curve_nodes, &links);
  ResolveLayers(curve_nodes, links, &scan);
  return scan;
}

std::string FbxVersionName(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 100);
}

std::string WidenFbxStacks(std::string bytes, const FbxScan& scan, std::int64_t margin) {
  // ASCII edits change lengths: applied from the end of the file back.
  struct Edit {
    std::size_t at, len;
    std::int64_t value;
  };
  std::vector<Edit> edits;
  for (const FbxStackRange& s : scan.stacks) {
    if (!s.has_stop || (s.start == 0 && s.stop == 0)) continue;
    if (s.stop > INT64_MAX - margin) continue;
    edits.push_back({s.stop_at, s.stop_len, s.stop + margin});
  }
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.at > b.at; });
  for (const Edit& e : edits) {
    if (scan.binary) {
      if (e.at > bytes.size() || bytes.size() - e.at < sizeof(std::int64_t)) continue;
      std::memcpy(bytes.data() + e.at, &e.value, sizeof(std::int64_t));
    } else {
      if (e.at > bytes.size() || bytes.size() - e.at < e.len) continue;
      bytes.replace(e.at, e.len, std::to_string(e.value));
    }
  }
  return bytes;
}

bool IsSkeletonKind(std::string_view kind) {
  return kind == "LimbNode" || kind == "Limb" || kind == "Root";
}

}  // namespace rigel
