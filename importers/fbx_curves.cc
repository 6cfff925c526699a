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

#include "importers/fbx_curves_internal.h"
#include "importers/fbx_scan.h"

namespace rigel {

using fbx_curves_internal::kMaxDenseKeys;
using fbx_curves_internal::kTicks;

namespace {

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

namespace fbx_curves_internal {

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

void ApplyOpLinks(const std::vector<OpLink>& links,
                  std::unordered_map<std::int64_t, CurveNodeAxes>* nodes) {
  for (const OpLink& l : links) {
    if (const auto n = nodes->find(l.parent); n != nodes->end() && l.property.size() == 3 &&
                                              l.property.substr(0, 2) == "d|" &&
                                              l.property[2] >= 'X' && l.property[2] <= 'Z') {
      n->second.curve[l.property[2] - 'X'] = l.child;
    } else if (const auto m = nodes->find(l.child); m != nodes->end()) {
      m->second.property = LclProperty(l.property);
    }
  }
}

}  // namespace fbx_curves_internal

std::optional<FbxDensified> DensifyFbxCurves(std::string_view bytes) {
  using fbx_curves_internal::kBinaryMagic;
  if (bytes.substr(0, kBinaryMagic.size()) == kBinaryMagic)
    return fbx_curves_internal::DensifyBinary(bytes);
  // ASCII FBX 7.x (6.x files are refused before this).
  const std::string_view head = bytes.substr(0, 4096);
  if (head.find("; FBX 7.") == std::string_view::npos) return std::nullopt;
  return fbx_curves_internal::DensifyAscii(bytes);
}

}  // namespace rigel
