// Assimp key lists sampled frame by frame (importers/assimp_sampling.cc): a cursor per key list,
// linear / slerp blends between keys, and the transforms (similarity or general) composed down
// the node tree. Internal to rigel_io.
#ifndef RIGEL_IMPORTERS_ASSIMP_KEYS_H_
#define RIGEL_IMPORTERS_ASSIMP_KEYS_H_

#include <assimp/anim.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <cmath>

namespace rigel::assimp_internal {

// One key list of a channel with a cursor: `next` is the first key with a time > the last sampled
// time. Frames are sampled in increasing time, so the cursor only moves forward (no searches).
template <typename Key>
struct KeyTrack {
  const Key* keys = nullptr;
  unsigned count = 0;
  unsigned next = 0;
  // Ticks within which a frame takes a key exactly (see Reset).
  double snap = 0;

  // Points the track at `n` keys sampled every `ticks_per_frame` ticks. A list keyed on frames
  // (every key within 1% of a frame of one) snaps: a frame that falls on a key takes it exactly,
  // so a clip keyed on every frame at a rate that is not a whole number (BVH's "Frame Time:
  // .0083333") or stored as float seconds (glTF) survives being resampled at the snapped rate. A
  // list keyed between frames (ProAnimationBank's jog: keys 0.005 frame before a frame, a quarter
  // frame apart) does not: its frames are interpolated, as Blender and the FBX SDK do, not moved
  // onto the nearest key.
  void Reset(const Key* k, unsigned n, double ticks_per_frame) {
    keys = k;
    count = n;
    next = 0;
    const double tolerance = 0.01 * ticks_per_frame;
    snap = tolerance;
    for (unsigned i = 0; i < n && snap > 0; ++i) {
      const double frames = k[i].mTime / ticks_per_frame;
      if (std::abs(frames - std::round(frames)) * ticks_per_frame > tolerance) snap = 0;
    }
  }
  // Moves to time `t`; returns false when there are no keys. Sets *at to the key within `snap`
  // ticks of `t`, else *at = -1 and *lo, *hi, *a to the keys around `t` and the blend (before the
  // first key or after the last, *at is that key).
  bool Seek(double t, int* at, int* lo, int* hi, double* a) {
    if (count == 0) return false;
    while (next < count && keys[next].mTime <= t) ++next;
    const int i = static_cast<int>(next);
    *at = -1;
    if (i > 0 && std::abs(keys[i - 1].mTime - t) <= snap) {
      *at = i - 1;
    } else if (i < static_cast<int>(count) && std::abs(keys[i].mTime - t) <= snap) {
      *at = i;
    } else if (i == 0) {
      *at = 0;
    } else if (i >= static_cast<int>(count)) {
      *at = static_cast<int>(count) - 1;
    } else {
      *lo = i - 1;
      *hi = i;
      const double t0 = keys[i - 1].mTime, t1 = keys[i].mTime;
      *a = t1 > t0 ? (t - t0) / (t1 - t0) : 0.0;
    }
    return true;
  }
};

template <typename Key>
bool AllKeysEqual(const Key* keys, unsigned count) {
  for (unsigned k = 1; k < count; ++k) {
    if (!(keys[k].mValue == keys[0].mValue)) return false;
  }
  return count > 0;
}

inline Eigen::Vector3d ToVector(const aiVector3D& v) { return Eigen::Vector3d(v.x, v.y, v.z); }

inline Eigen::Vector3d SampleVector(KeyTrack<aiVectorKey>& track, double t,
                                    const Eigen::Vector3d& fallback) {
  int at, lo = 0, hi = 0;
  double a = 0;
  if (!track.Seek(t, &at, &lo, &hi, &a)) return fallback;
  if (at >= 0) return ToVector(track.keys[at].mValue);
  return (1.0 - a) * ToVector(track.keys[lo].mValue) + a * ToVector(track.keys[hi].mValue);
}

// q / |q|. Keys are float quaternions, 1e-7 off unit length: one Newton step for 1/sqrt(|q|^2)
// leaves 1e-14, without the square root and divisions (which dominated sampling).
inline Eigen::Quaterniond Normalized(const Eigen::Quaterniond& q) {
  const double n = q.squaredNorm();
  if (std::abs(n - 1.0) > 1e-6) return q.normalized();
  const double f = 1.5 - 0.5 * n;
  return Eigen::Quaterniond(q.w() * f, q.x() * f, q.y() * f, q.z() * f);
}

inline Eigen::Quaterniond SampleRotation(KeyTrack<aiQuatKey>& track, double t,
                                         const Eigen::Quaterniond& fallback) {
  int at, lo = 0, hi = 0;
  double a = 0;
  if (!track.Seek(t, &at, &lo, &hi, &a)) return fallback;
  auto q = [&](int k) {
    const aiQuaternion& v = track.keys[k].mValue;
    return Normalized(Eigen::Quaterniond(v.w, v.x, v.y, v.z));
  };
  if (at >= 0) return q(at);
  return Normalized(q(lo).slerp(a, q(hi)));
}

// The uniform scale s > 0 when `m` = s * (rotation) to within `tolerance` (relative), else 0.
inline double SimilarityScale(const Eigen::Matrix3d& m, double tolerance) {
  const Eigen::Matrix3d g = m.transpose() * m;
  const double s2 = g.trace() / 3.0;
  if (!(s2 > 0) || !std::isfinite(s2) || m.determinant() <= 0) return 0.0;
  if ((g - s2 * Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > tolerance * s2) return 0.0;
  return std::sqrt(s2);
}

// A transform: translation `o`, and either a rotation `q` times a positive uniform scale `s`
// (s > 0), or a general linear part `m` (s == 0: non-uniform or negative scale).
struct Xform {
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  Eigen::Vector3d o = Eigen::Vector3d::Zero();
  double s = 1.0;
  Eigen::Matrix3d m = Eigen::Matrix3d::Identity();

  Eigen::Matrix3d Linear() const { return s > 0 ? Eigen::Matrix3d(s * q.toRotationMatrix()) : m; }
};

// The rotation of a linear map: its orthonormal polar factor (the map without its scale).
inline Eigen::Matrix3d RotationOf(const Eigen::Matrix3d& m) {
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(m, Eigen::ComputeFullU | Eigen::ComputeFullV);
  return svd.matrixU() * svd.matrixV().transpose();
}

// parent * local. With `drop_parent_scale` (FBX inherit type Rrs, Maya's segment scale
// compensation), the child's origin is placed by the whole parent but its axes turn with the
// parent's rotation only: the parent's scale does not reach the child's rotation and scale.
inline void Compose(const Xform& parent, const Xform& local, Xform* out,
                    bool drop_parent_scale = false) {
  if (drop_parent_scale) {
    const Eigen::Matrix3d pm = parent.Linear();
    out->o = pm * local.o + parent.o;
    if (parent.s > 0 && local.s > 0) {
      out->q = parent.q * local.q;
      out->s = local.s;
    } else {
      const Eigen::Matrix3d r = parent.s > 0 ? parent.q.toRotationMatrix() : RotationOf(pm);
      out->m.noalias() = r * local.Linear();
      out->s = 0;
    }
    return;
  }
  if (parent.s > 0 && local.s > 0) {
    out->q = parent.q * local.q;
    out->s = parent.s * local.s;
    out->o = parent.o + parent.s * (parent.q * local.o);
  } else {
    const Eigen::Matrix3d pm = parent.Linear();
    out->m.noalias() = pm * local.Linear();
    out->o = pm * local.o + parent.o;
    out->s = 0;
  }
}

// parent * local for whole transforms, `drop_parent_scale` as in Compose.
inline Eigen::Affine3d ComposeAffine(const Eigen::Affine3d& parent, const Eigen::Affine3d& local,
                                     bool drop_parent_scale) {
  if (!drop_parent_scale) return parent * local;
  Eigen::Affine3d out = Eigen::Affine3d::Identity();
  out.translation() = parent * local.translation();
  out.linear() = RotationOf(parent.linear()) * local.linear();
  return out;
}

// A file transform as an Xform; near-similarities are re-orthonormalised (float matrices).
inline Xform ToXform(const Eigen::Affine3d& t) {
  Xform x;
  x.o = t.translation();
  x.s = SimilarityScale(t.linear(), 1e-5);
  if (x.s > 0) {
    x.q = Eigen::Quaterniond(Eigen::Matrix3d(t.linear() / x.s)).normalized();
  } else {
    x.m = t.linear();
  }
  return x;
}

// A node evaluated frame by frame: its channel's key lists (a list whose keys are all equal is
// its fallback value instead) or, without a channel, its fixed local transform.
struct Animated {
  int node;
  const aiNodeAnim* channel;  // null: `fixed` is the local transform
  KeyTrack<aiVectorKey> position, scaling;
  KeyTrack<aiQuatKey> rotation;
  Eigen::Vector3d fallback_t, fallback_s;
  Eigen::Quaterniond fallback_q;
  Xform fixed;
  bool drop_parent_scale = false;  // Compose's inherit type Rrs
};

// s when `sv` = (s, s, s) with s > 0 (to within 1e-6, relative), else 0.
inline double UniformScale(const Eigen::Vector3d& sv) {
  const double smax = sv.cwiseAbs().maxCoeff();
  return (sv.minCoeff() > 0 && sv.maxCoeff() - sv.minCoeff() <= 1e-6 * smax) ? sv.x() : 0.0;
}

// The local transform of `e` at `tick`.
inline void SampleLocal(Animated& e, double tick, Xform* x) {
  x->o = SampleVector(e.position, tick, e.fallback_t);
  x->q = SampleRotation(e.rotation, tick, e.fallback_q);
  if (e.scaling.count == 0 && e.fixed.s > 0) {  // constant uniform scale, decided once
    x->s = e.fixed.s;
    return;
  }
  const Eigen::Vector3d sv = SampleVector(e.scaling, tick, e.fallback_s);
  x->s = UniformScale(sv);
  if (x->s == 0) x->m = x->q.toRotationMatrix() * sv.asDiagonal();
}

}  // namespace rigel::assimp_internal

#endif  // RIGEL_IMPORTERS_ASSIMP_KEYS_H_
