// FBX 6.x takes as FBX 7.4 animation stacks (fbx_upgrade.h).
//
// A 6.x take holds, per model, a Transform channel with T, R and S channels of X, Y and Z curves.
// Each curve's keys are one flat list: per key its time (ticks), value and interpolation ('C'
// constant, 'L' linear, 'U' cubic), then what that interpolation needs, by KeyVer (4003 to 4005):
//   'C' [4004+: 'n' holds the next key's value, else the key's own]
//   'U' slope mode, then its data, then weight modes:
//       's' / 'b' (user / broken): right slope, next key's left slope; weights: 4005 one mode
//       'a' (automatic): no data; weights: 4005 one mode
//       'p', 'q' (two values), 't' (TCB: three), 'd' (one): automatic tangents here
//   weight modes: 'n' (default thirds), 'a' (right weight, next key's left weight), 'r' (right
//   weight), 'l' (next key's left weight), 'c' (default)
// Slopes are in value per second, weights fractions of the interval, as in FBX 7.x key attributes.
// An automatic tangent (Maya's and 3ds Max's "auto", stored without slopes) is the slope of the
// chord between the neighbouring keys, flat at the first and last key and at a local extremum,
// and clamped so that neither handle passes the neighbouring key's value; it is written as a
// user tangent, so the 7.x evaluation (fbx_curves.h) reads the slope computed here.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "importers/fbx_curves.h"
#include "importers/fbx_scan.h"
#include "importers/fbx_upgrade_internal.h"

namespace rigel::fbx_upgrade {

using fbx_tree::Node;
using fbx_tree::Out;
using fbx_tree::Value;

namespace {

constexpr std::int32_t kTangentUser = 0x00000400;
constexpr std::int32_t kTangentBreak = 0x00000800;
constexpr double kThird = 1.0 / 3.0;

struct Key6 {
  std::int64_t time = 0;
  double value = 0;
  std::int32_t flags = fbx_key::kLinear;
  bool automatic = false;
  double right = 0, next_left = 0;  // slopes (value per second)
  double weight_right = kThird, next_weight_left = kThird;
};

// The flat key list of one curve, read value by value.
class KeyStream {
 public:
  explicit KeyStream(const Node& key) {
    for (const Value& v : key.values) {
      if (v.kind == Value::kArray) {
        for (double x : v.array) values_.push_back(Number(x));
      } else {
        values_.push_back(&v);
      }
    }
  }
  bool Done() const { return at_ >= values_.size(); }
  bool Time(std::int64_t* t) {
    const Value* v = Next();
    if (v == nullptr || v->kind != Value::kNumber) return false;
    if (v->is_int) return *t = v->i, true;
    if (!std::isfinite(v->d) || std::abs(v->d) > 9e18) return false;
    *t = static_cast<std::int64_t>(v->d);
    return true;
  }
  bool Real(double* x) {
    const Value* v = Next();
    if (v == nullptr || v->kind != Value::kNumber || !std::isfinite(v->d)) return false;
    *x = v->d;
    return true;
  }
  // A one-character mode ('U', 's', 'n', ...).
  bool Mode(char* c) {
    const Value* v = Next();
    if (v == nullptr || v->kind != Value::kString || v->s.size() != 1) return false;
    *c = v->s[0];
    return true;
  }

 private:
  const Value* Number(double x) {
    owned_.push_back(std::make_unique<Value>());
    owned_.back()->d = x;
    return owned_.back().get();
  }
  const Value* Next() { return at_ < values_.size() ? values_[at_++] : nullptr; }
  std::vector<const Value*> values_;
  std::vector<std::unique_ptr<Value>> owned_;
  std::size_t at_ = 0;
};

bool ReadWeights(KeyStream& s, int count, Key6* k) {
  for (int w = 0; w < count; ++w) {
    char mode = 0;
    if (!s.Mode(&mode)) return false;
    if (mode == 'a' && !(s.Real(&k->weight_right) && s.Real(&k->next_weight_left))) return false;
    if (mode == 'r' && !s.Real(&k->weight_right)) return false;
    if (mode == 'l' && !s.Real(&k->next_weight_left)) return false;
    if (mode != 'n' && mode != 'a' && mode != 'r' && mode != 'l' && mode != 'c') return false;
  }
  return true;
}

bool ReadCubic(KeyStream& s, int key_ver, Key6* k) {
  char slope = 0;
  if (!s.Mode(&slope)) return false;
  k->flags = fbx_key::kCubic;
  double ignored = 0;
  int weights = 0;
  if (slope == 's' || slope == 'b') {
    if (!s.Real(&k->right) || !s.Real(&k->next_left)) return false;
    k->flags |= kTangentUser | (slope == 'b' ? kTangentBreak : 0);
    weights = key_ver == 4003 ? 0 : 1;
  } else if (slope == 'a') {
    k->automatic = true;
    weights = key_ver <= 4004 ? 0 : 1;
  } else if (slope == 'p' || slope == 'q') {
    if (!s.Real(&ignored) || !s.Real(&ignored)) return false;
    k->automatic = true;
    weights = key_ver <= 4004 ? 1 : 2;
  } else if (slope == 't') {
    for (int i = 0; i < 3; ++i) {
      if (!s.Real(&ignored)) return false;
    }
    k->automatic = true;
  } else if (slope == 'd') {
    if (!s.Real(&ignored)) return false;
    k->automatic = true;
    weights = 1;
  } else {
    return false;
  }
  return ReadWeights(s, weights, k);
}

bool ReadKeys(const Node& channel, int key_ver, std::vector<Key6>* keys) {
  const Node* key = channel.Child("Key");
  if (key == nullptr) return true;
  KeyStream s(*key);
  while (!s.Done()) {
    Key6 k;
    char mode = 0;
    if (!s.Time(&k.time) || !s.Real(&k.value) || !s.Mode(&mode)) return false;
    if (mode == 'U') {
      if (!ReadCubic(s, key_ver, &k)) return false;
    } else if (mode == 'L') {
      k.flags = fbx_key::kLinear;
    } else if (mode == 'C') {
      k.flags = fbx_key::kConstant;
      char next = 0;
      if (key_ver >= 4004 && !s.Mode(&next)) return false;
      if (next == 'n') k.flags |= fbx_key::kConstantNext;
    } else {
      return false;
    }
    if (!keys->empty() && k.time < keys->back().time) return false;
    keys->push_back(k);
  }
  const Node* count = channel.Child("KeyCount");
  const std::vector<double> n = count ? count->Numbers() : std::vector<double>{};
  return n.empty() || n[0] == static_cast<double>(keys->size());
}

// The automatic tangent of key k (see the file comment).
double AutoSlope(const std::vector<Key6>& keys, std::size_t k) {
  if (k == 0 || k + 1 >= keys.size()) return 0.0;
  const Key6 &p = keys[k - 1], &c = keys[k], &n = keys[k + 1];
  const double tp = static_cast<double>(p.time) / kFbxTicksPerSecond;
  const double t = static_cast<double>(c.time) / kFbxTicksPerSecond;
  const double tn = static_cast<double>(n.time) / kFbxTicksPerSecond;
  if (!(tn > tp) || !(t > tp) || !(tn > t)) return 0.0;
  if ((c.value - p.value) * (n.value - c.value) <= 0) return 0.0;
  double slope = (n.value - p.value) / (tn - tp);
  const double max_left =
      std::abs(c.value - p.value) / (std::max(p.next_weight_left, 1e-6) * (t - tp));
  const double max_right =
      std::abs(n.value - c.value) / (std::max(c.weight_right, 1e-6) * (tn - t));
  const double limit = std::min(max_left, max_right);
  if (std::abs(slope) > limit) slope = std::copysign(limit, slope);
  return slope;
}

float PackWeights(double right, double next_left) {
  auto q = [](double w) {
    return static_cast<std::uint32_t>(std::lround(std::clamp(w, 0.0, 1.0) * 1e4)) & 0xffffu;
  };
  const std::uint32_t bits = q(right) | q(next_left) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// An AnimationCurve record of `keys`: one attribute per key.
void WriteCurve(std::vector<Key6> keys, double def, std::int64_t id, Out& objects) {
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (!keys[k].automatic) continue;
    const double slope = AutoSlope(keys, k);
    keys[k].right = slope;
    keys[k].flags |= kTangentUser;
    if (k > 0) keys[k - 1].next_left = slope;
  }
  std::vector<std::int64_t> times;
  std::vector<float> values, data;
  std::vector<std::int32_t> flags, refs;
  for (const Key6& k : keys) {
    times.push_back(k.time);
    values.push_back(static_cast<float>(k.value));
    std::int32_t f = k.flags;
    const bool weighted =
        std::abs(k.weight_right - kThird) > 1e-4 || std::abs(k.next_weight_left - kThird) > 1e-4;
    if (weighted) f |= fbx_key::kWeightedRight | fbx_key::kWeightedNextLeft;
    flags.push_back(f);
    data.insert(data.end(), {static_cast<float>(k.right), static_cast<float>(k.next_left),
                             PackWeights(k.weight_right, k.next_weight_left), 0.0f});
    refs.push_back(1);
  }
  Out& c = objects.Add("AnimationCurve");
  c.L(id).S(BinaryName("", "AnimCurve")).S("");
  c.Add("Default").D(def);
  c.Add("KeyVer").I(4008);
  c.Add("KeyTime").Longs(times);
  c.Add("KeyValueFloat").Floats(values);
  c.Add("KeyAttrFlags").Ints(flags);
  c.Add("KeyAttrDataFloat").Floats(data);
  c.Add("KeyAttrRefCount").Ints(refs);
}

double DefaultOf(const Node& channel) {
  const Node* d = channel.Child("Default");
  const std::vector<double> v = d ? d->Numbers() : std::vector<double>{};
  return v.empty() || !std::isfinite(v[0]) ? 0.0 : v[0];
}

int KeyVer(const Node& channel) {
  const Node* v = channel.Child("KeyVer");
  const std::vector<double> n = v ? v->Numbers() : std::vector<double>{};
  return n.empty() ? 4005 : static_cast<int>(std::clamp(n[0], 0.0, 100000.0));
}

bool HasKeys(const Node& n, int depth = 0) {
  if (n.Child("Key") != nullptr) return true;
  if (depth > 8) return false;
  for (const Node& c : n.children) {
    if (c.name == "Channel" && HasKeys(c, depth + 1)) return true;
  }
  return false;
}

}  // namespace

bool Upgrader::TransformChannel(const Node& transform, std::int64_t model, std::int64_t layer,
                                std::string* why) {
  static const std::map<std::string_view, const char*> kProperty = {
      {"T", "Lcl Translation"}, {"R", "Lcl Rotation"}, {"S", "Lcl Scaling"}};
  for (const Node& trs : transform.children) {
    if (trs.name != "Channel") continue;
    const auto property = kProperty.find(trs.Str(0));
    if (property == kProperty.end()) {
      if (HasKeys(trs)) ++dropped_channels_[fmt::format("Transform|{}", trs.Str(0))];
      continue;
    }
    if (!HasKeys(trs)) continue;
    const std::int64_t node = next_id_++;
    Out& cn = objects_.Add("AnimationCurveNode");
    cn.L(node).S(BinaryName(trs.Str(0), "AnimCurveNode")).S("");
    Out& p70 = cn.Add("Properties70");
    for (const Node& axis : trs.children) {
      if (axis.name != "Channel") continue;
      const std::string_view a = axis.Str(0);
      if (a != "X" && a != "Y" && a != "Z") continue;
      const std::string prop = fmt::format("d|{}", a);
      p70.Add("P").S(prop).S("Number").S("").S("A").D(DefaultOf(axis));
      std::vector<Key6> keys;
      if (!ReadKeys(axis, KeyVer(axis), &keys)) {
        *why = fmt::format("the keys of channel {}|{} are malformed", trs.Str(0), a);
        return false;
      }
      if (keys.empty()) continue;
      const std::int64_t curve = next_id_++;
      WriteCurve(std::move(keys), DefaultOf(axis), curve, objects_);
      Connect(curve, node, prop);
    }
    Connect(node, layer);
    Connect(node, model, property->second);
  }
  return true;
}

bool Upgrader::ShapeChannel(const Node& c, std::int64_t channel, std::int64_t layer,
                            std::string* why) {
  std::vector<Key6> keys;
  if (!ReadKeys(c, KeyVer(c), &keys)) {
    *why = fmt::format("the keys of blend shape channel '{}' are malformed", c.Str(0));
    return false;
  }
  if (keys.empty()) return true;
  const std::int64_t node = next_id_++, curve = next_id_++;
  Out& cn = objects_.Add("AnimationCurveNode");
  cn.L(node).S(BinaryName("DeformPercent", "AnimCurveNode")).S("");
  cn.Add("Properties70").Add("P").S("d|DeformPercent").S("Number").S("").S("A").D(DefaultOf(c));
  WriteCurve(std::move(keys), DefaultOf(c), curve, objects_);
  Connect(curve, node, "d|DeformPercent");
  Connect(node, layer);
  Connect(node, channel, "DeformPercent");
  return true;
}

bool Upgrader::Take(const Node& take, std::string* why) {
  const std::string name(take.Str(0));
  const std::int64_t stack = next_id_++, layer = next_id_++;
  Out& s = objects_.Add("AnimationStack");
  s.L(stack).S(BinaryName(name, "AnimStack")).S("");
  Out& p70 = s.Add("Properties70");
  for (const char* range : {"LocalTime", "ReferenceTime"}) {
    const Node* r = take.Child(range);
    if (r == nullptr || r->values.size() < 2 || r->values[0].kind != Value::kNumber ||
        r->values[1].kind != Value::kNumber) {
      continue;
    }
    const bool local = std::strcmp(range, "LocalTime") == 0;
    auto ticks = [](const Value& v) {
      return v.is_int ? v.i : static_cast<std::int64_t>(std::clamp(v.d, -9e18, 9e18));
    };
    p70.Add("P")
        .S(local ? "LocalStart" : "ReferenceStart")
        .S("KTime")
        .S("Time")
        .S("")
        .L(ticks(r->values[0]));
    p70.Add("P")
        .S(local ? "LocalStop" : "ReferenceStop")
        .S("KTime")
        .S("Time")
        .S("")
        .L(ticks(r->values[1]));
  }
  Out& l = objects_.Add("AnimationLayer");
  l.L(layer).S(BinaryName("BaseLayer", "AnimLayer")).S("");
  l.Add("Properties70");  // Assimp reads an object without children as malformed
  Connect(layer, stack);
  for (const Node& m : take.children) {
    if (m.name != "Model") continue;
    const std::string model_name = SplitName(m.Str(0)).name;
    const std::optional<std::int64_t> model = Find("Model::" + model_name);
    for (const Node& c : m.children) {
      if (c.name != "Channel") continue;
      const std::optional<std::int64_t> shape =
          Find(fmt::format("BlendShapeChannel::{}::{}", model_name, c.Str(0)));
      bool ok = true;
      if (c.Str(0) == "Transform" && model) {
        ok = TransformChannel(c, *model, layer, why);
      } else if (shape) {
        ok = ShapeChannel(c, *shape, layer, why);
      } else if (HasKeys(c)) {
        ++dropped_channels_[model ? std::string(c.Str(0)) : "(of models not in the file)"];
      }
      if (!ok) {
        *why = fmt::format("take '{}', model '{}': {}", name, model_name, *why);
        return false;
      }
    }
  }
  return true;
}

bool Upgrader::Takes(const Node& takes, std::string* why) {
  for (const Node& t : takes.children) {
    if (t.name == "Take" && !Take(t, why)) return false;
  }
  return true;
}

}  // namespace rigel::fbx_upgrade
