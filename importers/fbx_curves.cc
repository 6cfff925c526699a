#include "importers/fbx_curves.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "importers/fbx_scan.h"

namespace rigel {

namespace {

constexpr double kTicks = static_cast<double>(kFbxTicksPerSecond);
constexpr std::string_view kBinaryMagic("Kaydara FBX Binary  \0", 21);
constexpr int kMaxDepth = 64;
// A curve is keyed on at most this many frames (a day at 120 fps): more is not a curve rigel
// would sample, and the copy must stay bounded.
constexpr std::int64_t kMaxDenseKeys = 10'368'000;

// The frame rate of an FBX TimeMode (FbxTime::EMode); 0 for "default" and "custom", which the
// CustomFrameRate states.
double TimeModeRate(int mode) {
  switch (mode) {
    case 1:
      return 120;
    case 2:
      return 100;
    case 3:
      return 60;
    case 4:
      return 50;
    case 5:
      return 48;
    case 6:
      return 30;
    case 7:
      return 30;  // 30 drop frame
    case 8:
      return 30000.0 / 1001;  // NTSC drop frame
    case 9:
      return 30000.0 / 1001;  // NTSC full frame
    case 10:
      return 25;
    case 11:
      return 24;
    case 12:
      return 1000;
    case 13:
      return 24000.0 / 1001;
    case 15:
      return 96;
    case 16:
      return 72;
    case 17:
      return 60000.0 / 1001;
    case 18:
      return 120000.0 / 1001;
    default:
      return 0;
  }
}

// The attribute index of every key (through the reference counts); the last attribute covers
// keys past the counted ones, and a curve without attributes has none (-1: linear).
std::vector<int> KeyAttributes(const FbxCurveKeys& c) {
  std::vector<int> out(c.times.size(), -1);
  const int attrs = static_cast<int>(c.flags.size());
  if (attrs == 0) return out;
  std::size_t k = 0;
  for (int a = 0; a < attrs && k < out.size(); ++a) {
    const std::int64_t n = a < static_cast<int>(c.refcount.size()) ? c.refcount[a] : 0;
    for (std::int64_t i = 0; i < n && k < out.size(); ++i) out[k++] = a;
  }
  for (; k < out.size(); ++k) out[k] = attrs - 1;
  return out;
}

// Tangents of one key, in value per second, with their weights (fractions of the neighbouring
// intervals).
struct Tangent {
  double left = 0, right = 0;
  double weight_left = 1.0 / 3.0, weight_right = 1.0 / 3.0;
};

constexpr std::int32_t kTangentUser = 0x00000400;
constexpr std::int32_t kClamp = 0x00001000;
constexpr std::int32_t kTimeIndependent = 0x00002000;
constexpr std::int32_t kClampProgressive = 0x00004000;

// An automatic (spline) tangent at a key with neighbours on both sides, as Maya and the FBX SDK
// make them: the chord between the neighbours (time-independent) or its blend with the two
// one-sided slopes; `bias` (the attribute's stored value, in percent) leans it towards one side;
// clamped flat at a key equal to a neighbour (kClamp), and clamped so that neither handle passes
// its neighbour's value (kClampProgressive). Times in seconds.
double AutoTangent(double tp, double t, double tn, double vp, double v, double vn, double wl,
                   double wr, double bias, std::int32_t flags) {
  if ((flags & kClamp) && std::min(std::abs(vp - v), std::abs(vn - v)) <= 0.0) return 0.0;
  double slope = (vn - vp) / (tn - tp);
  if (!(flags & kTimeIndependent)) {
    const double left = (v - vp) / (t - tp), right = (vn - v) / (tn - t);
    const double at = (t - tp) / (tn - tp);
    slope = 0.5 * slope + 0.5 * (left * (1.0 - at) + right * at);
    const double lean = std::abs(bias) / 100.0;
    if (lean > 1e-4) {
      const double towards = bias > 0 ? right : left;
      const double sign_from = towards - slope;
      slope = slope * (1.0 - lean) + towards * lean;
      const double extra = lean - 5.0;  // past 500 %: a push that grows with its square
      if (extra > 0) {
        const double sign = (std::abs(sign_from) > 1e-5 ? sign_from : bias) > 0 ? 1.0 : -1.0;
        slope += extra * extra * sign * 40.0;
      }
    }
  }
  if (flags & kClampProgressive) {
    const double sign = slope >= 0 ? 1.0 : -1.0;
    double magnitude = sign * slope;
    const double left_range = wl * (t - tp), right_range = wr * (tn - t);
    double left_max = left_range > 0 ? sign * (v - vp) / left_range : 0.0;
    double right_max = right_range > 0 ? sign * (vn - v) / right_range : 0.0;
    if (!(left_max > 0)) left_max = 0;
    if (!(right_max > 0)) right_max = 0;
    magnitude = std::min({magnitude, left_max, right_max});
    slope = sign * magnitude;
  }
  return slope;
}

// An automatic tangent at the first or last key: the slope towards its one neighbour (flat when
// clamped progressively, or when clamped and equal to it).
double EdgeTangent(double dv, double dt, double bias, std::int32_t flags) {
  if (flags & kClampProgressive) return 0.0;
  if ((flags & kClamp) && std::abs(dv) <= 0.0) return 0.0;
  double slope = dv / dt;
  if (!(flags & kTimeIndependent)) {
    const double extra = std::abs(bias) / 100.0 - 5.0;
    if (extra > 0) slope += extra * extra * (bias > 0 ? 1.0 : -1.0) * 40.0;
  }
  return slope;
}

double Finite(float x) { return std::isfinite(x) ? static_cast<double>(x) : 0.0; }

// Every key's tangents, from its attribute: stored slopes (user and broken tangents), automatic
// tangents (with the stored values as their bias), TCB tangents from tension, continuity and bias,
// secants for linear keys. A key's left tangent is the previous key's "next left" unless its own
// mode computes it.
std::vector<Tangent> Tangents(const FbxCurveKeys& c, const std::vector<int>& attr) {
  const std::size_t n = std::min(c.times.size(), c.values.size());
  std::vector<Tangent> out(n);
  double next_left = 0, next_left_weight = 1.0 / 3.0;
  for (std::size_t k = 0; k < n; ++k) {
    Tangent& g = out[k];
    g.left = next_left;
    g.weight_left = next_left_weight;
    const int a = attr[k];
    const std::int32_t f = a < 0 ? fbx_key::kLinear : c.flags[a];
    const float* d = a < 0 || c.data.size() < 4 * (static_cast<std::size_t>(a) + 1)
                         ? nullptr
                         : &c.data[4 * static_cast<std::size_t>(a)];
    const double t = static_cast<double>(c.times[k]) / kTicks;
    const bool has_prev = k > 0 && c.times[k] > c.times[k - 1];
    const bool has_next = k + 1 < n && c.times[k + 1] > c.times[k];
    const double tp = k > 0 ? static_cast<double>(c.times[k - 1]) / kTicks : t;
    const double tn = k + 1 < n ? static_cast<double>(c.times[k + 1]) / kTicks : t;
    const double v = c.values[k];
    const double vp = k > 0 ? c.values[k - 1] : v, vn = k + 1 < n ? c.values[k + 1] : v;
    g.right = d ? Finite(d[0]) : 0.0;
    next_left = d ? Finite(d[1]) : 0.0;
    next_left_weight = 1.0 / 3.0;
    if (d && (f & (fbx_key::kWeightedRight | fbx_key::kWeightedNextLeft))) {
      const auto packed = std::bit_cast<std::uint32_t>(d[2]);
      if (f & fbx_key::kWeightedRight) g.weight_right = (packed & 0xffffu) * 1e-4;
      if (f & fbx_key::kWeightedNextLeft) next_left_weight = (packed >> 16) * 1e-4;
    }
    if (f & fbx_key::kConstant) {
      g.right = next_left = 0;
      g.weight_right = next_left_weight = 1.0 / 3.0;
    } else if (f & fbx_key::kCubic) {
      if ((f & fbx_key::kTangentTcb) && d) {
        // Kochanek-Bartels: tension, continuity and bias in the attribute's first three values.
        const double sl = has_prev ? (v - vp) / (t - tp) : 0.0;
        const double sr = has_next ? (vn - v) / (tn - t) : 0.0;
        const double edge = (has_prev && has_next) ? 0.5 : 1.0;
        const double tension = Finite(d[0]), cont = Finite(d[1]), bias = Finite(d[2]);
        g.left =
            edge * (1 - tension) * ((1 + bias) * (1 - cont) * sl + (1 - bias) * (1 + cont) * sr);
        g.right =
            edge * (1 - tension) * ((1 + bias) * (1 + cont) * sl + (1 - bias) * (1 - cont) * sr);
        next_left = 0;
      } else if (f & kTangentUser) {
        // Stored slopes: the right one here, the next key's left one ("break" keeps both).
      } else {
        // Automatic: the stored values are the bias (Maya's auto tangents store 0).
        const double bias_right = g.right, bias_left = -g.left;
        if (has_prev && has_next) {
          if (std::abs(g.left + g.right) <= 1e-4) {
            g.left = g.right =
                AutoTangent(tp, t, tn, vp, v, vn, g.weight_left, g.weight_right, bias_right, f);
          } else {
            g.left = AutoTangent(tp, t, tn, vp, v, vn, g.weight_left, g.weight_right, bias_left, f);
            g.right =
                AutoTangent(tp, t, tn, vp, v, vn, g.weight_left, g.weight_right, bias_right, f);
          }
        } else if (has_prev) {
          g.left = g.right = EdgeTangent(v - vp, t - tp, bias_left, f);
        } else if (has_next) {
          g.left = g.right = EdgeTangent(vn - v, tn - t, bias_right, f);
        } else {
          g.left = g.right = 0;
        }
      }
    } else {
      // Linear: the secant, both ways.
      g.weight_right = next_left_weight = 1.0 / 3.0;
      g.right = next_left = has_next ? (vn - v) / (tn - t) : 0.0;
    }
    g.weight_left = std::clamp(g.weight_left, 0.0, 1.0);
    g.weight_right = std::clamp(g.weight_right, 0.0, 1.0);
  }
  return out;
}

// Segment k..k+1 at time t (t0 <= t <= t1), from key k's interpolation.
double Segment(const FbxCurveKeys& c, const std::vector<Tangent>& g, std::size_t k, int a,
               std::int64_t t) {
  const double v0 = c.values[k], v1 = c.values[k + 1];
  const std::int64_t t0 = c.times[k], t1 = c.times[k + 1];
  if (t1 <= t0) return v1;
  const std::int32_t f = a < 0 ? fbx_key::kLinear : c.flags[a];
  const double x = static_cast<double>(t - t0) / static_cast<double>(t1 - t0);  // 0..1
  if (f & fbx_key::kConstant) return (f & fbx_key::kConstantNext) ? v1 : v0;
  if (!(f & fbx_key::kCubic)) return v0 + (v1 - v0) * x;
  const double dt = static_cast<double>(t1 - t0) / kTicks;
  const double w0 = g[k].weight_right, w1 = g[k + 1].weight_left;
  // Bezier in (time fraction, value): control points at w0 and 1 - w1 of the interval.
  const double y1 = v0 + g[k].right * w0 * dt, y2 = v1 - g[k + 1].left * w1 * dt;
  auto bez = [](double p0, double p1, double p2, double p3, double u) {
    const double m = 1.0 - u;
    return m * m * m * p0 + 3 * m * m * u * p1 + 3 * m * u * u * p2 + u * u * u * p3;
  };
  double u = x;
  if (std::abs(w0 - 1.0 / 3.0) > 1e-6 || std::abs(w1 - 1.0 / 3.0) > 1e-6) {
    // Weighted: the parameter whose time is x (the time polynomial is monotone for weights in
    // [0, 1]); bisection to double precision.
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
      u = 0.5 * (lo + hi);
      (bez(0, w0, 1.0 - w1, 1, u) < x ? lo : hi) = u;
    }
  }
  return bez(v0, y1, y2, v1, u);
}

}  // namespace

std::int32_t FbxKeyFlags(const FbxCurveKeys& curve, std::size_t k) {
  const std::vector<int> attr = KeyAttributes(curve);
  return k < attr.size() && attr[k] >= 0 ? curve.flags[attr[k]] : fbx_key::kLinear;
}

double EvaluateFbxCurve(const FbxCurveKeys& c, std::int64_t t) {
  const std::size_t n = std::min(c.times.size(), c.values.size());
  if (n == 0) return 0.0;
  if (t <= c.times[0]) return c.values[0];
  if (t >= c.times[n - 1]) return c.values[n - 1];
  const std::size_t k =
      static_cast<std::size_t>(std::upper_bound(c.times.begin(), c.times.begin() + n, t) -
                               c.times.begin()) -
      1;
  const std::vector<int> attr = KeyAttributes(c);
  return Segment(c, Tangents(c, attr), k, attr[k], t);
}

namespace {

// Densifies one curve on the grid start + i * step (ticks, step may be fractional); false when
// Assimp's linear reading is already exact on every grid time (no grid time strictly inside a
// segment that is not linear).
// Whether Assimp's linear reading of `c` is wrong on some grid time start + i * step: a segment
// that is not linear with a grid time strictly inside it. Needs only the times and attributes.
bool NeedsKeys(const FbxCurveKeys& c, std::int64_t start, double step) {
  const std::size_t n = c.times.size();
  if (n < 2 || !(step > 0)) return false;
  bool any = false;
  for (const std::int32_t f : c.flags) any = any || (f & (fbx_key::kCubic | fbx_key::kConstant));
  if (!any) return false;
  const std::vector<int> attr = KeyAttributes(c);
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const std::int32_t f = attr[k] < 0 ? fbx_key::kLinear : c.flags[attr[k]];
    if (!(f & (fbx_key::kCubic | fbx_key::kConstant))) continue;
    const auto i =
        static_cast<std::int64_t>(std::floor(static_cast<double>(c.times[k] - start) / step)) + 1;
    if (start + static_cast<std::int64_t>(std::llround(static_cast<double>(i) * step)) <
        c.times[k + 1]) {
      return true;
    }
  }
  return false;
}

// Densifies one curve on the grid start + i * step (ticks, step may be fractional); false when
// Assimp's linear reading is already exact on every grid time (NeedsKeys).
bool Densify(const FbxCurveKeys& c, std::int64_t start, double step, FbxCurveKeys* out) {
  const std::size_t n = std::min(c.times.size(), c.values.size());
  if (n < 2 || !(step > 0) || !NeedsKeys(c, start, step)) return false;
  const std::vector<int> attr = KeyAttributes(c);
  auto grid_index_after = [&](std::int64_t t) {  // the first i with start + i * step > t
    return static_cast<std::int64_t>(std::floor((static_cast<double>(t - start)) / step)) + 1;
  };
  auto grid_time = [&](std::int64_t i) {
    return start + static_cast<std::int64_t>(std::llround(static_cast<double>(i) * step));
  };
  const std::int64_t first = grid_index_after(c.times[0] - 1);     // first grid time >= t0
  const std::int64_t last = grid_index_after(c.times[n - 1]) - 1;  // last grid time <= tn
  if (last - first > kMaxDenseKeys) return false;
  out->times.clear();
  out->values.clear();
  const std::vector<Tangent> tangents = Tangents(c, attr);
  std::size_t seg = 0;
  auto add = [&](std::int64_t t) {
    if (!out->times.empty() && t <= out->times.back()) return;
    while (seg + 2 < n && c.times[seg + 1] <= t) ++seg;
    double v = t <= c.times[0]       ? c.values[0]
               : t >= c.times[n - 1] ? c.values[n - 1]
                                     : Segment(c, tangents, seg, attr[seg], t);
    if (!std::isfinite(v)) v = c.values[seg];
    out->times.push_back(t);
    out->values.push_back(static_cast<float>(v));
  };
  add(c.times[0]);
  for (std::int64_t i = first; i <= last; ++i) add(grid_time(i));
  add(c.times[n - 1]);
  out->flags = {fbx_key::kLinear};
  out->data = {0, 0, 0, 0};
  out->refcount = {static_cast<std::int32_t>(out->times.size())};
  return true;
}

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

// An AnimationCurveNode that animates a node's Lcl Translation, Rotation or Scaling: the value it
// states on each axis (its d|X, d|Y, d|Z) and the curve on each (0: none).
struct CurveNodeAxes {
  char property = 0;  // 'T', 'R', 'S'; 0 when it animates something else
  std::array<std::optional<double>, 3> value;
  std::array<std::int64_t, 3> curve{0, 0, 0};
};

// A constant curve the copy adds on an axis the file keys no curve on.
struct AxisCurve {
  std::int64_t id = 0, node = 0;
  int axis = 0;
  double value = 0;
  std::int64_t t0 = 0, t1 = 0;  // the span of the node's other curves
};

// Assimp 5.2 reads an axis without a curve, on a node whose other axes are keyed, as 0 (1 for
// scale) where the node's pivots make it split the node into its helper chain, instead of the
// value the curve node states (the FBX SDK's): ufbx/maya_keyframe_offset's cube, keyed on Z, lay
// 2 units below its Y. The copy gives every such axis a constant curve of the stated value.
std::vector<AxisCurve> MissingAxisCurves(
    const std::unordered_map<std::int64_t, CurveNodeAxes>& nodes,
    const std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>>& spans,
    std::int64_t next_id) {
  std::vector<AxisCurve> out;
  std::vector<std::int64_t> ids;
  for (const auto& entry : nodes) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());  // the file's order of ids, whatever the map's
  for (const std::int64_t id : ids) {
    const CurveNodeAxes& n = nodes.at(id);
    if (n.property == 0) continue;
    std::optional<std::pair<std::int64_t, std::int64_t>> span;
    for (const std::int64_t c : n.curve) {
      const auto s = c ? spans.find(c) : spans.end();
      if (s == spans.end()) continue;
      span = span ? std::pair{std::min(span->first, s->second.first),
                              std::max(span->second, s->second.second)}
                  : s->second;
    }
    if (!span) continue;  // no axis keyed: Assimp keeps the node's own transform
    const double assimp_default = n.property == 'S' ? 1.0 : 0.0;
    for (int a = 0; a < 3; ++a) {
      if (n.curve[a] != 0 || !n.value[a] || *n.value[a] == assimp_default) continue;
      out.push_back({next_id++, id, a, *n.value[a], span->first, span->second});
    }
  }
  return out;
}

char LclProperty(std::string_view name) {
  return name == "Lcl Translation" ? 'T'
         : name == "Lcl Rotation"  ? 'R'
         : name == "Lcl Scaling"   ? 'S'
                                   : 0;
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

// Frame rate the file states; 0 when none.
double StatedRate(int mode, double custom) {
  if (mode == 0 || mode == 14) return custom > 0 && std::isfinite(custom) ? custom : 0.0;
  return TimeModeRate(mode);
}

// The grid of a file that states no frame rate, as rigel's sampler decides it
// (Converter::TimingOf): keys at least a twelfth of a second apart at the closest are too sparse
// to be frames, and 30 fps is assumed (and said); closer keys are frames already, and nothing
// between them needs keys (0). `times`: every curve's key times.
double UnstatedRate(std::vector<std::int64_t> times, double* key_spacing) {
  std::sort(times.begin(), times.end());
  std::int64_t closest = 0;
  for (std::size_t k = 1; k < times.size(); ++k) {
    const std::int64_t dt = times[k] - times[k - 1];
    if (dt > 0 && (closest == 0 || dt < closest)) closest = dt;
  }
  constexpr double kSparseFps = 12, kAssumedFps = 30;
  if (closest == 0 || kTicks / static_cast<double>(closest) >= kSparseFps) return 0;
  *key_spacing = static_cast<double>(closest) / kTicks;
  return kAssumedFps;
}

// Which stack's start each curve keys from: curve -> curve node -> layer -> stack.
struct Takes {
  std::unordered_multimap<std::int64_t, std::int64_t> parent;  // OO/OP child -> parents
  std::unordered_map<std::int64_t, std::int64_t> stack_start;
  // The LocalStart of the stack above `curve` (curve -> curve node -> layer -> stack), else the
  // first stack's.
  std::int64_t StartOf(std::int64_t curve) const {
    std::vector<std::int64_t> level{curve};
    for (int hop = 0; hop < 3 && !level.empty(); ++hop) {
      std::vector<std::int64_t> next;
      for (const std::int64_t at : level) {
        const auto [b, e] = parent.equal_range(at);
        for (auto p = b; p != e; ++p) {
          if (const auto s = stack_start.find(p->second); s != stack_start.end()) return s->second;
          next.push_back(p->second);
        }
      }
      level = std::move(next);
    }
    return stack_start.empty() ? 0 : stack_start.begin()->second;
  }
};

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
  struct Link {
    std::int64_t child, parent;
    std::string property;
  };
  std::vector<Link> op_links;
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
      for (const Node& c : n.children) {
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
        takes.parent.emplace(child, parent);
        at += 18;
        if (at + 5 <= s.size() && s[at] == 'S') {  // "OP": the property
          std::memcpy(&len, s.data() + at + 1, 4);
          if (len <= s.size() - at - 5) {
            op_links.push_back({child, parent, std::string(s.substr(at + 5, len))});
          }
        }
      }
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
  // Axes Assimp would read without their stated value (MissingAxisCurves).
  std::unordered_map<std::int64_t, CurveNodeAxes> nodes;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t next_id = 0;
  for (const Node& o : objects->children) {
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
  for (const Link& l : op_links) {
    if (const auto n = nodes.find(l.parent); n != nodes.end() && l.property.size() == 3 &&
                                             l.property.substr(0, 2) == "d|" &&
                                             l.property[2] >= 'X' && l.property[2] <= 'Z') {
      n->second.curve[l.property[2] - 'X'] = l.child;
    } else if (const auto m = nodes.find(l.child); m != nodes.end()) {
      m->second.property = LclProperty(l.property);
    }
  }
  const std::vector<AxisCurve> added = MissingAxisCurves(nodes, spans, next_id);
  out.axes_completed = static_cast<int>(added.size());
  // RotationOrder 6 (eSphericXYZ) stated 0 (XYZ), on models and in the models' template.
  const auto spheric_as_xyz = [&out](Node& n, const auto& self) -> void {
    for (Node& c : n.children) {
      if (c.name == "P" && n.name == "Properties70") {
        const PValue v = ReadP(c);
        if (v.name != "RotationOrder" || v.numbers.empty() || v.numbers.back() != 6) continue;
        const std::string_view raw = c.changed ? std::string_view(c.rewritten) : c.props;
        if (raw.size() < 5 || raw[raw.size() - 5] != 'I') continue;
        c.rewritten = std::string(raw.substr(0, raw.size() - 4)) + std::string(4, '\0');
        c.changed = true;
        ++out.spheric_orders;
      } else if (c.name != "AnimationCurve") {
        self(c, self);
      }
    }
  };
  for (Node& n : top) {
    if (n.name == "Objects" || n.name == "Definitions") spheric_as_xyz(n, spheric_as_xyz);
  }
  if (!(fps > 0) && added.empty() && out.spheric_orders == 0) return std::nullopt;
  for (const Node& o : objects->children) {
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
    takes.stack_start.emplace(*id, start);
  }
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

std::optional<FbxDensified> DensifyAscii(std::string_view d) {
  const std::vector<Line> lines = Lines(d);
  auto text = [&](std::size_t i) {
    return d.substr(lines[i].begin, lines[i].end - lines[i].begin);
  };
  int mode = 0;
  double custom = 0;
  bool have_mode = false, have_custom = false;
  Takes takes;
  std::optional<std::int64_t> stack;
  std::vector<AsciiCurve> curves;
  // Curve nodes, their values and curves, for MissingAxisCurves; where connections begin.
  std::unordered_map<std::int64_t, CurveNodeAxes> nodes;
  std::optional<std::int64_t> node;
  std::int64_t next_id = 0;
  std::optional<std::size_t> first_link;
  struct Link {
    std::int64_t child, parent;
    std::string property;
  };
  std::vector<Link> op_links;
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
            return std::nullopt;
          }
        }
        for (const char ch : u) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
        // A curve holds properties and arrays only: a block opened at its top level that is not
        // an array ("KeyTime: *2 {"), or deeper nesting, is a file whose braces do not close
        // where they should (the curve would swallow the objects after it): no copy.
        if (j > i &&
            (depth > 2 || (before == 1 && depth == 2 && colon == std::string_view::npos))) {
          return std::nullopt;
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
      if (j >= lines.size()) return std::nullopt;  // the curve's block never closes
      c.last_line = j;
      i = c.last_line;
      c.keys.times = std::move(times);
      c.keys.values.assign(values.begin(), values.end());
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
      c.keys.flags.assign(flags.begin(), flags.end());
      c.keys.refcount.assign(refs.begin(), refs.end());
      for (const std::int64_t b : data_bits) {
        c.keys.data.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
      }
      c.ok = good && !c.keys.times.empty() && c.keys.times.size() == c.keys.values.size();
      curves.push_back(std::move(c));
    } else if (!t.empty() && t.back() == '{' && t.find(':') != std::string_view::npos &&
               t.rfind("P", 0) != 0 && t.rfind("Properties70", 0) != 0) {
      stack.reset();  // another object
      node.reset();
      if (const auto id = IdAfter(t, t.find(':') + 1)) next_id = std::max(next_id, *id + 1);
    }
  }
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
  for (const Link& l : op_links) {
    if (const auto n = nodes.find(l.parent); n != nodes.end() && l.property.size() == 3 &&
                                             l.property.substr(0, 2) == "d|" &&
                                             l.property[2] >= 'X' && l.property[2] <= 'Z') {
      n->second.curve[l.property[2] - 'X'] = l.child;
    } else if (const auto m = nodes.find(l.child); m != nodes.end()) {
      m->second.property = LclProperty(l.property);
    }
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
  // A curve's text: its header line, then Default, KeyVer and the five arrays.
  auto write_curve = [&](std::string_view header, const std::string& pad, const FbxCurveKeys& k,
                         double value) {
    result.append(header);
    result.push_back('\n');
    auto array = [&](std::string_view name, std::size_t count, auto&& write) {
      result +=
          pad + "\t" + std::string(name) + ": *" + std::to_string(count) + " {\n" + pad + "\t\ta: ";
      write();
      result += "\n" + pad + "\t} \n";
    };
    char buf[32];
    result += pad + "\tDefault: ";
    result.append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
    result += "\n" + pad + "\tKeyVer: 4009\n";
    array("KeyTime", k.times.size(), [&] {
      for (std::size_t i = 0; i < k.times.size(); ++i) {
        if (i) result.push_back(',');
        result += std::to_string(k.times[i]);
      }
    });
    array("KeyValueFloat", k.values.size(), [&] {
      for (std::size_t i = 0; i < k.values.size(); ++i) {
        if (i) result.push_back(',');
        result.append(buf, std::to_chars(buf, buf + sizeof(buf), k.values[i]).ptr);
      }
    });
    array("KeyAttrFlags", 1, [&] { result += std::to_string(fbx_key::kLinear); });
    array("KeyAttrDataFloat", 4, [&] { result += "0,0,0,0"; });
    array("KeyAttrRefCount", 1, [&] { result += std::to_string(k.times.size()); });
    result += pad + "}\n";
  };
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
      write_curve(pad + "AnimationCurve: " + std::to_string(a.id) + ", \"AnimCurve::\", \"\" {",
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
    write_curve(header, pad, dense, 0.0);
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
  if (!spheric.empty()) {  // the lines are unchanged by the rewrite above (models, not curves)
    for (std::size_t at = out.bytes.find(kSpheric); at != std::string::npos;
         at = out.bytes.find(kSpheric, at + kSpheric.size())) {
      out.bytes[at + kSpheric.size() - 1] = '0';
    }
  }
  return out;
}

}  // namespace

std::optional<FbxDensified> DensifyFbxCurves(std::string_view bytes) {
  if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic) return DensifyBinary(bytes);
  // ASCII FBX 7.x (6.x files are refused before this).
  const std::string_view head = bytes.substr(0, 4096);
  if (head.find("; FBX 7.") == std::string_view::npos) return std::nullopt;
  return DensifyAscii(bytes);
}

}  // namespace rigel
