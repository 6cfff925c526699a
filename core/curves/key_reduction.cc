// Key reduction with a world-space bound. See key_reduction.h.
//
// How the keys are chosen:
//  1. Budget. A rotation error of a joint moves every point below it by at most the angle times
//     the point's distance from the joint; a translation error moves them by itself. Along any
//     root-to-leaf path the errors add up. Joint j's share of the bound is 1 / L_j, L_j the
//     largest number of animated tracks on a root-to-leaf path through j (so shares along any path
//     add up to at most 1); its rotation tolerance is that share over R_j, the farthest point its
//     rotation moves (descendant joints plus the virtual-vertex distance, end sites) on any frame.
//  2. Greedy keys per track: from a key, the farthest frame such that every frame between stays
//     within the track's tolerance under every interpolation (exponential then binary search).
//  3. Measure: the reduced clip's world error by forward kinematics on every frame, under every
//     interpolation. The budgets are worst cases (errors of a chain rarely add up), so the whole
//     budget is scaled by the largest factor whose measured error is within the bound (tried
//     doubling, then bisected); if even the plain budget fails, smaller factors; else every frame
//     is a key.
#include "core/curves/key_reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/channel.h"
#include "core/pose.h"

namespace rigel {

namespace {

using Quat = Eigen::Quaterniond;
using Vec3 = Eigen::Vector3d;

enum class Interp { kSlerp, kNlerp, kEuler };

// The dense tracks of a clip and its dense world transforms.
struct Tracks {
  int frames = 0;
  int joints = 0;
  std::vector<char> has_rotation, has_translation;
  // [joint * frames + f]
  std::vector<Quat> rotation;
  std::vector<Vec3> translation;
  std::vector<Vec3> euler;  // when euler curves are given
  std::vector<EulerOrder> euler_order;
};

Vec3 ChannelTranslation(const Skeleton& skeleton, int joint, std::span<const double> row) {
  Vec3 t = Vec3::Zero();
  for (int a = 0; a < 3; ++a) {
    const int c = skeleton.translation_channel(joint, a);
    if (c >= 0) t[a] = row[c];
  }
  return t;
}

Tracks MakeTracks(const Skeleton& skeleton, const Clip& clip, const KeyReductionOptions& options) {
  Tracks t;
  t.frames = clip.num_frames();
  t.joints = skeleton.num_joints();
  const std::size_t size = static_cast<std::size_t>(t.frames) * t.joints;
  t.rotation.resize(size);
  t.translation.resize(size);
  t.has_rotation.assign(t.joints, 0);
  t.has_translation.assign(t.joints, 0);
  for (int j = 0; j < t.joints; ++j) {
    t.has_rotation[j] = !skeleton.rotation_channels(j).empty();
    for (int a = 0; a < 3; ++a) {
      if (skeleton.translation_channel(j, a) >= 0) t.has_translation[j] = 1;
    }
    Quat previous = Quat::Identity();
    for (int f = 0; f < t.frames; ++f) {
      Quat q = LocalQuaternion(skeleton, j, clip.frame(f));
      if (q.dot(previous) < 0) q.coeffs() = -q.coeffs();
      previous = q;
      t.rotation[static_cast<std::size_t>(j) * t.frames + f] = q;
      t.translation[static_cast<std::size_t>(j) * t.frames + f] =
          ChannelTranslation(skeleton, j, clip.frame(f));
    }
  }
  if (!options.euler_curves.empty()) {
    t.euler.resize(size);
    t.euler_order.resize(t.joints);
    for (int j = 0; j < t.joints; ++j) {
      t.euler_order[j] = options.euler_curves[j].order;
      const std::vector<Vec3> e = EulerCurve(skeleton, clip, j, options.euler_curves[j]);
      std::copy(e.begin(), e.end(), t.euler.begin() + static_cast<std::ptrdiff_t>(j) * t.frames);
    }
  }
  return t;
}

// sin(half the angle) between two unit quaternions (either sign).
double HalfAngleSine(const Quat& a, const Quat& b) { return (a.conjugate() * b).vec().norm(); }

Quat Interpolate(const Tracks& t, int joint, int a, int b, int f, Interp how) {
  const std::size_t base = static_cast<std::size_t>(joint) * t.frames;
  if (a == b || f == a) return t.rotation[base + a];
  if (f == b) return t.rotation[base + b];
  const double s = static_cast<double>(f - a) / (b - a);
  switch (how) {
    case Interp::kSlerp:
      return t.rotation[base + a].slerp(s, t.rotation[base + b]);
    case Interp::kNlerp: {
      Quat q;
      q.coeffs() = (1 - s) * t.rotation[base + a].coeffs() + s * t.rotation[base + b].coeffs();
      return q.normalized();
    }
    case Interp::kEuler: {
      const Vec3 e = (1 - s) * t.euler[base + a] + s * t.euler[base + b];
      return EulerToQuaternion(t.euler_order[joint], e);
    }
  }
  return t.rotation[base + a];
}

Vec3 InterpolateTranslation(const Tracks& t, int joint, int a, int b, int f) {
  const std::size_t base = static_cast<std::size_t>(joint) * t.frames;
  if (a == b || f == a) return t.translation[base + a];
  const double s = static_cast<double>(f - a) / (b - a);
  return (1 - s) * t.translation[base + a] + s * t.translation[base + b];
}

// The interpolations a rotation key must hold for.
std::vector<Interp> Interpolations(const Tracks& t) {
  std::vector<Interp> out = {Interp::kSlerp, Interp::kNlerp};
  if (!t.euler.empty()) out.push_back(Interp::kEuler);
  return out;
}

// Whether every frame in (a, b) of a track is within tolerance between keys a and b (b == a:
// holding a's value until the last frame).
bool RotationSpanHolds(const Tracks& t, int joint, int a, int b, double sine_tolerance,
                       const std::vector<Interp>& interps) {
  const std::size_t base = static_cast<std::size_t>(joint) * t.frames;
  const int end = a == b ? t.frames : b;
  for (int f = a + 1; f < end; ++f) {
    for (const Interp how : interps) {
      if (HalfAngleSine(t.rotation[base + f], Interpolate(t, joint, a, b, f, how)) >
          sine_tolerance) {
        return false;
      }
    }
  }
  return true;
}

bool TranslationSpanHolds(const Tracks& t, int joint, int a, int b, double tolerance) {
  const std::size_t base = static_cast<std::size_t>(joint) * t.frames;
  const int end = a == b ? t.frames : b;
  for (int f = a + 1; f < end; ++f) {
    if ((t.translation[base + f] - InterpolateTranslation(t, joint, a, b, f)).norm() > tolerance) {
      return false;
    }
  }
  return true;
}

// Greedy keys of one track: `holds(a, b)` says whether keys a and b (b == a: one key held to the
// end) reproduce the frames between.
template <typename Holds>
std::vector<int> GreedyKeys(int frames, const Holds& holds) {
  std::vector<int> keys = {0};
  if (frames <= 1 || holds(0, 0)) return keys;
  const int last = frames - 1;
  int a = 0;
  while (a < last) {
    int good = a + 1, bad = -1;
    for (int step = 2;; step *= 2) {
      const int candidate = std::min(a + step, last);
      if (holds(a, candidate)) {
        good = candidate;
        if (candidate == last) break;
      } else {
        bad = candidate;
        break;
      }
    }
    if (bad > 0) {
      while (bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        if (holds(a, mid)) {
          good = mid;
        } else {
          bad = mid;
        }
      }
    }
    keys.push_back(good);
    a = good;
  }
  return keys;
}

// The per-joint tolerances of a unit scale: rotation (radians) and translation (clip units).
struct Budget {
  std::vector<double> rotation, translation;
};

Budget MakeBudget(const Skeleton& skeleton, const Tracks& tracks, const Clip& clip,
                  double error_units, double vertex_units) {
  const int n = skeleton.num_joints();
  std::vector<int> terms(n), up(n), down(n, 0);
  for (int j = 0; j < n; ++j) {
    terms[j] = tracks.has_rotation[j] + tracks.has_translation[j];
    const int p = skeleton.parent(j);
    up[j] = terms[j] + (p == Skeleton::kNoParent ? 0 : up[p]);
  }
  for (int j = n - 1; j >= 0; --j) {
    const int p = skeleton.parent(j);
    if (p != Skeleton::kNoParent) down[p] = std::max(down[p], terms[j] + down[j]);
  }
  // Farthest point each joint's rotation moves, over every frame.
  std::vector<double> reach(n, vertex_units);
  std::vector<Eigen::Isometry3d> world(n);
  const auto sites = skeleton.end_sites();
  for (int f = 0; f < clip.num_frames(); ++f) {
    ForwardKinematics(skeleton, clip.frame(f), world);
    for (int d = 0; d < n; ++d) {
      const Vec3 x = world[d].translation();
      for (int a = skeleton.parent(d); a != Skeleton::kNoParent; a = skeleton.parent(a)) {
        reach[a] = std::max(reach[a], (x - world[a].translation()).norm() + vertex_units);
      }
    }
    for (const EndSite& site : sites) {
      const Vec3 x = world[site.parent] * site.offset;
      for (int a = site.parent; a != Skeleton::kNoParent; a = skeleton.parent(a)) {
        reach[a] = std::max(reach[a], (x - world[a].translation()).norm());
      }
    }
  }
  Budget budget;
  budget.rotation.resize(n);
  budget.translation.resize(n);
  for (int j = 0; j < n; ++j) {
    const double share = error_units / std::max(1, up[j] + down[j]);
    budget.rotation[j] = share / std::max(reach[j], 1e-12);
    budget.translation[j] = share;
  }
  return budget;
}

std::vector<JointKeyFrames> KeysAt(const Tracks& t, const Budget& budget, double scale) {
  const std::vector<Interp> interps = Interpolations(t);
  std::vector<JointKeyFrames> keys(t.joints);
  for (int j = 0; j < t.joints; ++j) {
    if (t.has_rotation[j]) {
      const double angle = std::min(budget.rotation[j] * scale, 3.0);
      const double sine = std::sin(angle / 2);
      keys[j].rotation = GreedyKeys(
          t.frames, [&](int a, int b) { return RotationSpanHolds(t, j, a, b, sine, interps); });
    }
    if (t.has_translation[j]) {
      const double tolerance = budget.translation[j] * scale;
      keys[j].translation = GreedyKeys(
          t.frames, [&](int a, int b) { return TranslationSpanHolds(t, j, a, b, tolerance); });
    }
  }
  return keys;
}

// The dense world transforms of every frame, as rotations and positions.
struct World {
  std::vector<Quat> rotation;
  std::vector<Vec3> position;
};

// FK of the tracks' frame f with each joint's rotation and translation from `rotation` and
// `translation` (channel values, per joint).
void TrackFk(const Skeleton& skeleton, const std::vector<Quat>& rotation,
             const std::vector<Vec3>& translation, std::vector<Quat>& world_q,
             std::vector<Vec3>& world_x) {
  const int n = skeleton.num_joints();
  for (int j = 0; j < n; ++j) {
    const int p = skeleton.parent(j);
    const Vec3 t = skeleton.rest_translation(j) + translation[j];
    const Quat local = skeleton.rest_orientation(j) * rotation[j];
    if (p == Skeleton::kNoParent) {
      world_q[j] = local;
      world_x[j] = t;
    } else {
      world_q[j] = world_q[p] * local;
      world_x[j] = world_x[p] + world_q[p] * t;
    }
  }
}

// The largest error (clip units) of the keys against the dense tracks, under every interpolation;
// stops early (returning what it found) once it passes `limit`.
double MeasureKeys(const Skeleton& skeleton, const Tracks& t,
                   const std::vector<JointKeyFrames>& keys, double vertex_units,
                   double limit = std::numeric_limits<double>::infinity()) {
  const int n = t.joints;
  std::vector<Quat> dense_q(n), q(n), wq(n), dq(n);
  std::vector<Vec3> dense_t(n), tr(n), wx(n), dx(n);
  // Per joint, the key span of the current frame.
  std::vector<std::size_t> rk(n, 0), tk(n, 0);
  double worst = 0;
  const std::vector<Interp> interps = Interpolations(t);
  const auto sites = skeleton.end_sites();
  for (int f = 0; f < t.frames; ++f) {
    for (int j = 0; j < n; ++j) {
      const std::size_t base = static_cast<std::size_t>(j) * t.frames;
      dense_q[j] = t.rotation[base + f];
      dense_t[j] = t.translation[base + f];
      const std::vector<int>& r = keys[j].rotation;
      while (rk[j] + 1 < r.size() && r[rk[j] + 1] <= f) ++rk[j];
      const std::vector<int>& s = keys[j].translation;
      while (tk[j] + 1 < s.size() && s[tk[j] + 1] <= f) ++tk[j];
      if (s.empty()) {
        tr[j] = dense_t[j];
      } else {
        const int a = s[tk[j]], b = tk[j] + 1 < s.size() ? s[tk[j] + 1] : a;
        tr[j] = InterpolateTranslation(t, j, a, b, f);
      }
    }
    TrackFk(skeleton, dense_q, dense_t, dq, dx);
    for (const Interp how : interps) {
      for (int j = 0; j < n; ++j) {
        const std::vector<int>& r = keys[j].rotation;
        if (r.empty()) {
          q[j] = dense_q[j];
        } else {
          const int a = r[rk[j]], b = rk[j] + 1 < r.size() ? r[rk[j] + 1] : a;
          q[j] = Interpolate(t, j, a, b, f, how);
        }
      }
      TrackFk(skeleton, q, tr, wq, wx);
      for (int j = 0; j < n; ++j) {
        const double e = (wx[j] - dx[j]).norm() + vertex_units * 2 * HalfAngleSine(wq[j], dq[j]);
        worst = std::max(worst, e);
      }
      for (const EndSite& site : sites) {
        const Vec3 a = dx[site.parent] + dq[site.parent] * site.offset;
        const Vec3 b = wx[site.parent] + wq[site.parent] * site.offset;
        worst = std::max(worst, (a - b).norm());
      }
      if (worst > limit) return worst;
    }
  }
  return worst;
}

long long CountKeys(const std::vector<JointKeyFrames>& keys) {
  long long count = 0;
  for (const JointKeyFrames& k : keys) count += k.rotation.size() + k.translation.size();
  return count;
}

std::vector<JointKeyFrames> EveryFrame(const Tracks& t) {
  std::vector<int> all(t.frames);
  for (int f = 0; f < t.frames; ++f) all[f] = f;
  std::vector<JointKeyFrames> keys(t.joints);
  for (int j = 0; j < t.joints; ++j) {
    if (t.has_rotation[j]) keys[j].rotation = all;
    if (t.has_translation[j]) keys[j].translation = all;
  }
  return keys;
}

}  // namespace

std::vector<Eigen::Vector3d> EulerCurve(const Skeleton& skeleton, const Clip& clip, int joint,
                                        const EulerCurveSpec& spec) {
  const int frames = clip.num_frames();
  std::vector<Vec3> out(frames);
  const std::span<const int> rc = skeleton.rotation_channels(joint);
  const auto layout = skeleton.channels();
  Vec3 previous = Vec3::Zero();
  for (int f = 0; f < frames; ++f) {
    const std::span<const double> row = clip.frame(f);
    Vec3 xyz = Vec3::Zero();
    if (spec.channel_values) {
      for (const int c : rc) xyz[ChannelAxis(layout[c])] = row[c];
      if (f > 0) xyz = EulerNearest(spec.order, xyz, previous);
    } else {
      Eigen::Matrix3d r = Eigen::Matrix3d::Identity();
      for (const int c : rc) r = r * AxisRotation(ChannelAxis(layout[c]), row[c]);
      xyz = MatrixToEulerNear(r, spec.order, previous);
    }
    previous = xyz;
    out[f] = xyz;
  }
  return out;
}

ClipKeys ReduceKeys(const Skeleton& skeleton, const Clip& clip,
                    const KeyReductionOptions& options) {
  if (!(options.max_error > 0) || !std::isfinite(options.max_error)) {
    throw std::invalid_argument("key reduction: max_error must be a positive number of metres");
  }
  if (!(options.virtual_vertex >= 0) || !std::isfinite(options.virtual_vertex)) {
    throw std::invalid_argument("key reduction: virtual_vertex must be >= 0 metres");
  }
  if (!(options.metres_per_unit > 0) || !std::isfinite(options.metres_per_unit)) {
    throw std::invalid_argument("key reduction: metres_per_unit must be > 0");
  }
  if (!clip.matches(skeleton) || clip.num_frames() < 1) {
    throw std::invalid_argument("key reduction: the clip does not match the skeleton");
  }
  if (!options.euler_curves.empty() &&
      static_cast<int>(options.euler_curves.size()) != skeleton.num_joints()) {
    throw std::invalid_argument("key reduction: euler_curves must have one entry per joint");
  }
  const double error_units = options.max_error / options.metres_per_unit;
  const double vertex_units = options.virtual_vertex / options.metres_per_unit;
  const Tracks tracks = MakeTracks(skeleton, clip, options);
  const Budget budget = MakeBudget(skeleton, tracks, clip, error_units, vertex_units);
  // The measured error must leave room for the float32 values files store.
  const double target = 0.98 * error_units;

  ClipKeys result;
  result.dense_keys = CountKeys(EveryFrame(tracks));
  std::vector<JointKeyFrames> best;
  double best_error = 0;
  auto attempt = [&](double scale) {
    std::vector<JointKeyFrames> keys = KeysAt(tracks, budget, scale);
    const double error = MeasureKeys(skeleton, tracks, keys, vertex_units, target);
    if (error > target) return false;
    best = std::move(keys);
    best_error = error;
    return true;
  };
  double good = 0, bad = 0;
  if (attempt(1.0)) {
    good = 1.0;
    for (double s = 2.0; s <= 64.0; s *= 2) {
      if (!attempt(s)) {
        bad = s;
        break;
      }
      good = s;
    }
    for (int i = 0; i < 3 && bad > 0; ++i) {
      const double mid = std::sqrt(good * bad);
      if (attempt(mid)) {
        good = mid;
      } else {
        bad = mid;
      }
    }
  } else {
    for (double s = 0.5; s >= 1.0 / 256; s /= 2) {
      if (attempt(s)) break;
    }
  }
  if (best.empty()) {
    best = EveryFrame(tracks);
    best_error = MeasureKeys(skeleton, tracks, best, vertex_units);
  }
  result.joints = std::move(best);
  result.keys = CountKeys(result.joints);
  result.max_error = best_error * options.metres_per_unit;
  return result;
}

double WorldError(const Skeleton& skeleton, const Clip& reference, const Clip& approximation,
                  double metres_per_unit, double virtual_vertex) {
  const int n = skeleton.num_joints();
  std::vector<Eigen::Isometry3d> a(n), b(n);
  const double vertex_units = virtual_vertex / metres_per_unit;
  double worst = 0;
  const int frames = std::min(reference.num_frames(), approximation.num_frames());
  for (int f = 0; f < frames; ++f) {
    ForwardKinematics(skeleton, reference.frame(f), a);
    ForwardKinematics(skeleton, approximation.frame(f), b);
    for (int j = 0; j < n; ++j) {
      const Quat qa(a[j].linear()), qb(b[j].linear());
      worst = std::max(worst, (a[j].translation() - b[j].translation()).norm() +
                                  vertex_units * 2 * HalfAngleSine(qa, qb));
    }
    for (const EndSite& site : skeleton.end_sites()) {
      worst = std::max(worst, (a[site.parent] * site.offset - b[site.parent] * site.offset).norm());
    }
  }
  return worst * metres_per_unit;
}

}  // namespace rigel
