// The copy of an ASCII FBX 7.x file that Assimp reads (DensifyFbxCurves,
// importers/fbx_curves.h): the same as the binary one, on the text.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "importers/fbx_curves_internal.h"

namespace rigel::fbx_curves_internal {
namespace {

// ---- ASCII FBX 7.x: the same, on the text. Objects, properties and connections are one per
// line; a curve's arrays are `Name: *N {` blocks whose numbers follow `a:` up to the closing `}`.
// KeyAttrDataFloat holds each float's 32 bits written as an integer.

struct Line {
  std::size_t begin, end;  // without the newline
};

std::vector<Line> Lines(std::string_view d) {
  std::vector<Line> out;
  std::size_t at = 0;
  while (at < d.size()) {
    std::size_t nl = d.find('\n', at);
    if (nl == std::string_view::npos) nl = d.size();
    std::size_t end = nl;
    if (end > at && d[end - 1] == '\r') --end;
    out.push_back({at, end});
    at = nl + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

// The numbers of a text span (comma or space separated), as integers or doubles; false on a token
// that is neither.
bool Numbers(std::string_view text, std::vector<double>* out, std::vector<std::int64_t>* ints) {
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ',' || text[at] == ' ' || text[at] == '\t' ||
                                text[at] == '\n' || text[at] == '\r')) {
      ++at;
    }
    if (at >= text.size()) break;
    std::size_t e = at;
    while (e < text.size() && text[e] != ',' && text[e] != ' ' && text[e] != '\t' &&
           text[e] != '\n' && text[e] != '\r') {
      ++e;
    }
    const std::string_view tok = text.substr(at, e - at);
    std::int64_t i = 0;
    const auto [ip, iec] = std::from_chars(tok.data(), tok.data() + tok.size(), i);
    if (iec == std::errc() && ip == tok.data() + tok.size()) {
      if (ints) ints->push_back(i);
      out->push_back(static_cast<double>(i));
    } else {
      double v = 0;
      const auto [dp, dec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (dec != std::errc() || dp != tok.data() + tok.size()) return false;
      if (ints) {
        // An integer array (key times, float bits) holding a number no int64 holds: malformed.
        if (!(std::abs(v) < 9.2e18)) return false;
        ints->push_back(static_cast<std::int64_t>(v));
      }
      out->push_back(v);
    }
    at = e;
  }
  return true;
}

// The first integer after `tag` on an object or connection line.
std::optional<std::int64_t> IdAfter(std::string_view line, std::size_t from) {
  while (from < line.size() &&
         !(std::isdigit(static_cast<unsigned char>(line[from])) || line[from] == '-')) {
    ++from;
  }
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(line.data() + from, line.data() + line.size(), v);
  if (ec != std::errc() || p == line.data() + from) return std::nullopt;
  return v;
}

struct AsciiCurve {
  std::int64_t id = 0;
  std::size_t first_line = 0, last_line = 0;  // the object's lines, header to closing brace
  FbxCurveKeys keys;
  bool ok = false;
};

// Reads the AnimationCurve object whose header is line `i` of `d` into `c`: its keys and its last
// line; false when the file is not one to copy (a curve holding more than keys, or a block that
// does not close where it should).
bool ReadAsciiCurve(std::string_view d, const std::vector<Line>& lines, std::size_t i,
                    AsciiCurve* c) {
  auto text = [&](std::size_t k) {
    return d.substr(lines[k].begin, lines[k].end - lines[k].begin);
  };
  // The object's lines up to its closing brace; each array's numbers.
  int depth = 0;
  std::string_view array;
  std::string numbers;
  std::vector<double> flags, data, refs, values;
  std::vector<std::int64_t> data_bits, times;
  bool good = true;
  std::size_t j = i;
  for (; j < lines.size(); ++j) {
    const std::string_view u = Trim(text(j));
    if (!u.empty() && u[0] == ';') continue;
    const std::size_t colon = u.find(": *");
    if (depth == 1 && colon != std::string_view::npos) {
      array = u.substr(0, colon);
      numbers.clear();
    } else if (depth == 2 && u.rfind("a:", 0) == 0) {
      numbers.append(u.substr(2));
      numbers.push_back(',');
    } else if (depth == 2 && !u.empty() && u[0] != '}') {
      numbers.append(u);  // a continued array line
      numbers.push_back(',');
    }
    const int before = depth;
    // The rewrite keeps a curve's keys only (Default, KeyVer and the five key arrays): a
    // curve holding anything else is not rewritten, so nothing of the file is dropped.
    if (j > i && before == 1 && !u.empty() && u[0] != '}') {
      static constexpr std::string_view kKept[] = {
          "Default",      "KeyVer",           "KeyTime",        "KeyValueFloat",
          "KeyAttrFlags", "KeyAttrDataFloat", "KeyAttrRefCount"};
      const std::string_view name = u.substr(0, u.find(':'));
      if (std::find(std::begin(kKept), std::end(kKept), name) == std::end(kKept)) {
        return false;
      }
    }
    for (const char ch : u) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    // A curve holds properties and arrays only: a block opened at its top level that is not
    // an array ("KeyTime: *2 {"), or deeper nesting, is a file whose braces do not close
    // where they should (the curve would swallow the objects after it): no copy.
    if (j > i && (depth > 2 || (before == 1 && depth == 2 && colon == std::string_view::npos))) {
      return false;
    }
    if (depth == 1 && !array.empty()) {
      if (array == "KeyTime") {
        std::vector<double> tmp;
        good = good && Numbers(numbers, &tmp, &times);
      } else if (array == "KeyValueFloat") {
        good = good && Numbers(numbers, &values, nullptr);
      } else if (array == "KeyAttrFlags") {
        good = good && Numbers(numbers, &flags, nullptr);
      } else if (array == "KeyAttrDataFloat") {
        good = good && Numbers(numbers, &data, &data_bits);
      } else if (array == "KeyAttrRefCount") {
        good = good && Numbers(numbers, &refs, nullptr);
      }
      array = {};
    }
    if (depth <= 0 && j > i) break;
  }
  if (j >= lines.size()) return false;  // the curve's block never closes
  c->last_line = j;
  c->keys.times = std::move(times);
  c->keys.values.assign(values.begin(), values.end());
  // Flags and reference counts are 32-bit integers: another number is a malformed curve.
  const auto int32s = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) {
      return x >= -2147483648.0 && x <= 2147483647.0 && x == std::floor(x);
    });
  };
  if (!int32s(flags) || !int32s(refs)) {
    good = false;
    flags.clear();
    refs.clear();
  }
  c->keys.flags.assign(flags.begin(), flags.end());
  c->keys.refcount.assign(refs.begin(), refs.end());
  for (const std::int64_t b : data_bits) {
    c->keys.data.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  }
  c->ok = good && !c->keys.times.empty() && c->keys.times.size() == c->keys.values.size();
  return true;
}

// A curve's text: its header line, then Default, KeyVer and the five arrays.
void AppendAsciiCurve(std::string* result, std::string_view header, const std::string& pad,
                      const FbxCurveKeys& k, double value) {
  result->append(header);
  result->push_back('\n');
  auto array = [&](std::string_view name, std::size_t count, auto&& write) {
    *result +=
        pad + "\t" + std::string(name) + ": *" + std::to_string(count) + " {\n" + pad + "\t\ta: ";
    write();
    *result += "\n" + pad + "\t} \n";
  };
  char buf[32];
  *result += pad + "\tDefault: ";
  result->append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
  *result += "\n" + pad + "\tKeyVer: 4009\n";
  array("KeyTime", k.times.size(), [&] {
    for (std::size_t i = 0; i < k.times.size(); ++i) {
      if (i) result->push_back(',');
      *result += std::to_string(k.times[i]);
    }
  });
  array("KeyValueFloat", k.values.size(), [&] {
    for (std::size_t i = 0; i < k.values.size(); ++i) {
      if (i) result->push_back(',');
      result->append(buf, std::to_chars(buf, buf + sizeof(buf), k.values[i]).ptr);
    }
  });
  array("KeyAttrFlags", 1, [&] { *result += std::to_string(fbx_key::kLinear); });
  array("KeyAttrDataFloat", 4, [&] { *result += "0,0,0,0"; });
  array("KeyAttrRefCount", 1, [&] { *result += std::to_string(k.times.size()); });
  *result += pad + "}\n";
}

// Every `spheric` line of `text` (a RotationOrder record stating 6) stated 0 (XYZ).
void SphericAsXyzText(std::string_view spheric, std::string* text) {
  for (std::size_t at = text->find(spheric); at != std::string::npos;
       at = text->find(spheric, at + spheric.size())) {
    (*text)[at + spheric.size() - 1] = '0';
  }
}

// What DensifyAscii reads of an ASCII file in one pass over its lines.
struct AsciiDocument {
  int mode = 0;
  double custom = 0;
  Takes takes;
  std::vector<AsciiCurve> curves;
  // Curve nodes, their values and curves, for MissingAxisCurves; where connections begin.
  std::unordered_map<std::int64_t, CurveNodeAxes> nodes;
  std::int64_t next_id = 0;
  std::optional<std::size_t> first_link;
  std::vector<OpLink> op_links;
};

// Reads the frame rate, the takes' starts, the connections, the curve nodes and the curves of
// `d`; false when the file is not one to copy (ReadAsciiCurve).
bool ReadAsciiDocument(std::string_view d, const std::vector<Line>& lines, AsciiDocument* doc) {
  auto text = [&](std::size_t i) {
    return d.substr(lines[i].begin, lines[i].end - lines[i].begin);
  };
  int& mode = doc->mode;
  double& custom = doc->custom;
  Takes& takes = doc->takes;
  std::vector<AsciiCurve>& curves = doc->curves;
  std::unordered_map<std::int64_t, CurveNodeAxes>& nodes = doc->nodes;
  std::int64_t& next_id = doc->next_id;
  std::optional<std::size_t>& first_link = doc->first_link;
  std::vector<OpLink>& op_links = doc->op_links;
  bool have_mode = false, have_custom = false;
  std::optional<std::int64_t> stack;
  std::optional<std::int64_t> node;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = Trim(text(i));
    if (t.rfind("P: \"TimeMode\"", 0) == 0 && !have_mode) {
      if (const auto v = IdAfter(t, t.rfind(',') + 1))
        mode = static_cast<int>(*v), have_mode = true;
    } else if (t.rfind("P: \"CustomFrameRate\"", 0) == 0 && !have_custom) {
      std::vector<double> v;
      if (Numbers(t.substr(t.rfind(',') + 1), &v, nullptr) && v.size() == 1) {
        custom = v[0];
        have_custom = true;
      }
    } else if (t.rfind("AnimationStack:", 0) == 0) {
      stack = IdAfter(t, 15);
      if (stack) takes.stack_start.emplace(*stack, 0);
    } else if (stack && t.rfind("P: \"LocalStart\"", 0) == 0) {
      if (const auto v = IdAfter(t, t.rfind(',') + 1)) takes.stack_start[*stack] = *v;
    } else if (t.rfind("C: \"O", 0) == 0) {
      if (!first_link) first_link = i;
      const std::size_t c1 = t.find(',');
      const std::size_t c2 = c1 == std::string_view::npos ? c1 : t.find(',', c1 + 1);
      if (c2 != std::string_view::npos) {
        const auto child = IdAfter(t, c1 + 1), parent = IdAfter(t, c2 + 1);
        if (child && parent) takes.parent.emplace(*child, *parent);
        // "OP": the property, quoted after the third comma.
        const std::size_t c3 = t.find(',', c2 + 1);
        const std::size_t q1 = c3 == std::string_view::npos ? c3 : t.find('"', c3);
        const std::size_t q2 = q1 == std::string_view::npos ? q1 : t.find('"', q1 + 1);
        if (child && parent && q2 != std::string_view::npos && t.rfind("C: \"OP\"", 0) == 0) {
          op_links.push_back({*child, *parent, std::string(t.substr(q1 + 1, q2 - q1 - 1))});
        }
      }
    } else if (t.rfind("AnimationCurveNode:", 0) == 0) {
      node = IdAfter(t, 19);
      if (node) {
        nodes[*node];
        next_id = std::max(next_id, *node + 1);
      }
    } else if (node && t.rfind("P: \"d|", 0) == 0 && t.size() > 7 && t[7] == '"' && t[6] >= 'X' &&
               t[6] <= 'Z') {
      std::vector<double> v;
      if (Numbers(t.substr(t.rfind(',') + 1), &v, nullptr) && v.size() == 1) {
        nodes[*node].value[t[6] - 'X'] = v[0];
      }
    } else if (t.rfind("AnimationCurve:", 0) == 0) {
      stack.reset();
      node.reset();
      AsciiCurve c;
      c.first_line = i;
      if (const auto id = IdAfter(t, 15)) c.id = *id;
      next_id = std::max(next_id, c.id + 1);
      if (!ReadAsciiCurve(d, lines, i, &c)) return false;
      i = c.last_line;
      curves.push_back(std::move(c));
    } else if (!t.empty() && t.back() == '{' && t.find(':') != std::string_view::npos &&
               t.rfind("P", 0) != 0 && t.rfind("Properties70", 0) != 0) {
      stack.reset();  // another object
      node.reset();
      if (const auto id = IdAfter(t, t.find(':') + 1)) next_id = std::max(next_id, *id + 1);
    }
  }
  return true;
}

}  // namespace

std::optional<FbxDensified> DensifyAscii(std::string_view d) {
  const std::vector<Line> lines = Lines(d);
  auto text = [&](std::size_t i) {
    return d.substr(lines[i].begin, lines[i].end - lines[i].begin);
  };
  AsciiDocument doc;
  if (!ReadAsciiDocument(d, lines, &doc)) return std::nullopt;
  const int mode = doc.mode;
  const double custom = doc.custom;
  const Takes& takes = doc.takes;
  const std::vector<AsciiCurve>& curves = doc.curves;
  const std::int64_t next_id = doc.next_id;
  const std::optional<std::size_t>& first_link = doc.first_link;
  ApplyOpLinks(doc.op_links, &doc.nodes);
  const std::unordered_map<std::int64_t, CurveNodeAxes>& nodes = doc.nodes;
  FbxDensified out;
  double fps = StatedRate(mode, custom);
  if (!(fps > 0)) {
    std::vector<std::int64_t> times;
    for (const AsciiCurve& c : curves) {
      if (c.ok) times.insert(times.end(), c.keys.times.begin(), c.keys.times.end());
    }
    fps = out.assumed_fps = UnstatedRate(std::move(times), &out.key_spacing);
  }
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> spans;
  for (const AsciiCurve& c : curves) {
    if (c.ok) spans.emplace(c.id, std::pair{c.keys.times.front(), c.keys.times.back()});
  }
  std::vector<AxisCurve> added = MissingAxisCurves(nodes, spans, next_id);
  // RotationOrder 6 (eSphericXYZ) read as XYZ (SphericAsXyz): the lines that state it.
  constexpr std::string_view kSpheric = "P: \"RotationOrder\", \"enum\", \"\", \"\",6";
  std::vector<std::size_t> spheric;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (Trim(text(i)) == kSpheric) spheric.push_back(i);
  }
  out.spheric_orders = static_cast<int>(spheric.size());
  // The added curves go before the first curve, their connections before the first connection.
  if (curves.empty() || !first_link || *first_link < curves.back().last_line) added.clear();
  out.axes_completed = static_cast<int>(added.size());
  if (!(fps > 0) && added.empty() && spheric.empty()) return std::nullopt;
  const double step = fps > 0 ? kTicks / fps : 0;  // 0: no rate, no keys added on frames
  std::string result;
  std::size_t copied = 0;  // bytes of `d` already in `result`
  if (!added.empty()) {
    const std::string_view first = text(curves.front().first_line);
    const std::string pad(first.substr(0, first.find_first_not_of(" \t")));
    result.append(d.substr(0, lines[curves.front().first_line].begin));
    copied = lines[curves.front().first_line].begin;
    for (const AxisCurve& a : added) {
      FbxCurveKeys k;
      k.times = {a.t0};
      if (a.t1 != a.t0) k.times.push_back(a.t1);
      k.values.assign(k.times.size(), static_cast<float>(a.value));
      AppendAsciiCurve(
          &result, pad + "AnimationCurve: " + std::to_string(a.id) + ", \"AnimCurve::\", \"\" {",
          pad, k, a.value);
    }
  }
  for (const AsciiCurve& c : curves) {
    ++out.curves;
    if (!c.ok) continue;
    FbxCurveKeys dense;
    if (!Densify(c.keys, takes.StartOf(c.id), step, &dense)) continue;
    ++out.densified;
    out.keys_before += static_cast<std::int64_t>(c.keys.times.size());
    out.keys_after += static_cast<std::int64_t>(dense.times.size());
    for (const std::int32_t f : c.keys.flags) {
      if (f & (fbx_key::kVelocityRight | fbx_key::kVelocityNextLeft)) {
        ++out.velocity_curves;
        break;
      }
    }
    // The object rewritten: its header line, then the five arrays.
    const std::string_view header = text(c.first_line);
    const std::size_t indent = header.find_first_not_of(" \t");
    const std::string pad(header.substr(0, indent == std::string_view::npos ? 0 : indent));
    result.append(d.substr(copied, lines[c.first_line].begin - copied));
    AppendAsciiCurve(&result, header, pad, dense, 0.0);
    copied = c.last_line + 1 < lines.size() ? lines[c.last_line + 1].begin : d.size();
  }
  if (out.densified == 0 && added.empty() && spheric.empty()) return std::nullopt;
  if (!added.empty()) {
    const std::size_t at = lines[*first_link].begin;
    const std::string_view link = text(*first_link);
    const std::string pad(link.substr(0, link.find_first_not_of(" \t")));
    result.append(d.substr(copied, at - copied));
    copied = at;
    static constexpr std::string_view kAxis[] = {"d|X", "d|Y", "d|Z"};
    for (const AxisCurve& a : added) {
      result += pad + "C: \"OP\"," + std::to_string(a.id) + "," + std::to_string(a.node) + ", \"" +
                std::string(kAxis[a.axis]) + "\"\n";
    }
  }
  result.append(d.substr(copied));
  out.bytes = std::move(result);
  // The spheric lines are unchanged by the rewrite above (models, not curves).
  if (!spheric.empty()) SphericAsXyzText(kSpheric, &out.bytes);
  return out;
}

}  // namespace rigel::fbx_curves_internal
