// Spline IK. See spline_ik.h.
#include "core/constraints/spline_ik.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/pose.h"
#include "core/pose_edit.h"
#include "core/skeleton.h"

namespace rigel::constraints {

namespace {

constexpr double kUnitTolerance = 1e-9;
constexpr int kIterations = 60;

// 5-point Gauss-Legendre nodes and weights on [-1, 1].
constexpr double kGaussX[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                               0.9061798459386640};
constexpr double kGaussW[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
                               0.4786286704993665, 0.2369268850561891};

// The End Site of `joint`, or null.
const EndSite* EndSiteOf(const Skeleton& s, int joint) {
  for (const EndSite& e : s.end_sites()) {
    if (e.parent == joint) return &e;
  }
  return nullptr;
}

// The parent's world transform of `joint` (identity for a root).
Eigen::Isometry3d ParentWorld(const Skeleton& s, const Pose& pose, int joint) {
  const int parent = s.parent(joint);
  return parent >= 0 ? pose.world[parent] : Eigen::Isometry3d::Identity();
}

// ApplyWorldRotation (constraint.h) without refreshing the joints below `joint`: its world
// rotation becomes slerp(own, desired, w); only its own world transform is updated.
bool WriteRotation(const Skeleton& s, Pose& pose, int joint, const Eigen::Matrix3d& desired,
                   double w, std::string* error) {
  const Eigen::Quaterniond own(pose.world[joint].linear());
  const Eigen::Quaterniond goal(desired);
  const Eigen::Quaterniond rotation = w >= 1.0 ? goal : own.slerp(w, goal);
  if (!SetJointWorldRotation(s, joint, Eigen::Quaterniond(ParentWorld(s, pose, joint).linear()),
                             rotation, pose.channels)) {
    if (error != nullptr)
      *error = "spline_ik: joint '" + s.name(joint) + "' needs three rotation channels";
    return false;
  }
  UpdateJointWorld(s, pose.channels, pose.world, joint);
  return true;
}

// ApplyWorldPosition likewise: the joint's world position becomes lerp(own, position, w).
bool WritePosition(const Skeleton& s, Pose& pose, int joint, const Eigen::Vector3d& position,
                   double w, std::string* error) {
  const Eigen::Vector3d own = pose.world[joint].translation();
  const Eigen::Vector3d goal = own + w * (position - own);
  if (!SetJointLocalPosition(s, joint, ParentWorld(s, pose, joint).inverse() * goal,
                             pose.channels)) {
    if (error != nullptr)
      *error = "spline_ik: joint '" + s.name(joint) + "' lacks position channels";
    return false;
  }
  UpdateJointWorld(s, pose.channels, pose.world, joint);
  return true;
}

// The signed angle about unit `axis` from `a` to `b` (both perpendicular to it).
double SignedAngle(const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                   const Eigen::Vector3d& axis) {
  return std::atan2(axis.dot(a.cross(b)), a.dot(b));
}

}  // namespace

// --- SplineCurve ---------------------------------------------------------------------------

bool SplineCurve::Build(CurveType type, const std::vector<Eigen::Vector3d>& p, bool measure) {
  control_.clear();
  cumulative_.clear();
  if (type == CurveType::kBezier) {
    if (p.size() < 4 || (p.size() - 1) % 3 != 0) return false;
    // Four per segment: P(3i), P(3i+1), P(3i+2), P(3i+3).
    for (size_t i = 0; i + 3 < p.size(); i += 3) {
      control_.insert(control_.end(), {p[i], p[i + 1], p[i + 2], p[i + 3]});
    }
  } else {
    double scale = 1.0;
    for (const Eigen::Vector3d& q : p) scale = std::max(scale, q.cwiseAbs().maxCoeff());
    std::vector<Eigen::Vector3d> q;
    q.reserve(p.size());
    for (const Eigen::Vector3d& x : p) {
      if (q.empty() || (x - q.back()).norm() > 1e-12 * scale) q.push_back(x);
    }
    const size_t m = q.size();
    if (m < 2) return false;
    for (size_t i = 0; i + 1 < m; ++i) {
      const Eigen::Vector3d& p1 = q[i];
      const Eigen::Vector3d& p2 = q[i + 1];
      const Eigen::Vector3d p0 = i > 0 ? q[i - 1] : Eigen::Vector3d(2 * q[0] - q[1]);
      const Eigen::Vector3d p3 = i + 2 < m ? q[i + 2] : Eigen::Vector3d(2 * q[m - 1] - q[m - 2]);
      // Centripetal knot intervals: |P(k+1) - P(k)|^(1/2), all > 0 (consecutive points differ).
      const double d0 = std::sqrt((p1 - p0).norm());
      const double d1 = std::sqrt((p2 - p1).norm());
      const double d2 = std::sqrt((p3 - p2).norm());
      // Hermite tangents of the segment over [t1, t2], scaled to t in [0, 1].
      const Eigen::Vector3d m1 = d1 * ((p1 - p0) / d0 - (p2 - p0) / (d0 + d1) + (p2 - p1) / d1);
      const Eigen::Vector3d m2 = d1 * ((p2 - p1) / d1 - (p3 - p1) / (d1 + d2) + (p3 - p2) / d2);
      control_.insert(control_.end(), {p1, p1 + m1 / 3.0, p2 - m2 / 3.0, p2});
    }
  }
  if (measure) Measure();
  return true;
}

Eigen::Vector3d SplineCurve::Position(double u) const {
  const int n = segments();
  u = std::clamp(u, 0.0, static_cast<double>(n));
  const int k = std::min(static_cast<int>(u), n - 1);
  const double t = u - k, s = 1 - t;
  const Eigen::Vector3d* c = &control_[4 * k];
  return s * s * s * c[0] + 3 * s * s * t * c[1] + 3 * s * t * t * c[2] + t * t * t * c[3];
}

Eigen::Vector3d SplineCurve::Derivative(double u) const {
  const int n = segments();
  u = std::clamp(u, 0.0, static_cast<double>(n));
  const int k = std::min(static_cast<int>(u), n - 1);
  const double t = u - k, s = 1 - t;
  const Eigen::Vector3d* c = &control_[4 * k];
  return 3 * (s * s * (c[1] - c[0]) + 2 * s * t * (c[2] - c[1]) + t * t * (c[3] - c[2]));
}

void SplineCurve::Measure() {
  // Arc length table: Gauss-Legendre on each sample interval.
  const int n = segments() * kSamples;
  cumulative_.resize(n + 1);
  cumulative_[0] = 0;
  for (int k = 0; k < n; ++k) {
    cumulative_[k + 1] = cumulative_[k] + Integrate(static_cast<double>(k) / kSamples,
                                                    static_cast<double>(k + 1) / kSamples);
  }
}

double SplineCurve::Integrate(double a, double b) const {
  double total = 0;
  while (a < b) {
    const double end = std::min(b, (std::floor(a * kSamples) + 1) / kSamples);
    double sum = 0;
    for (int g = 0; g < 5; ++g) {
      sum += kGaussW[g] * Derivative(0.5 * (a + end) + 0.5 * (end - a) * kGaussX[g]).norm();
    }
    total += 0.5 * (end - a) * sum;
    a = end;
  }
  return total;
}

bool SplineCurve::IsPoint(double tolerance) const {
  for (const Eigen::Vector3d& c : control_) {
    if ((c - control_.front()).norm() > tolerance) return false;
  }
  return true;
}

double SplineCurve::ArcLength(double u) const {
  const int n = segments() * kSamples;
  u = std::clamp(u, 0.0, static_cast<double>(segments()));
  const int k = std::min(static_cast<int>(u * kSamples), n - 1);
  const double a = static_cast<double>(k) / kSamples;
  double sum = 0;
  for (int g = 0; g < 5; ++g) {
    sum += kGaussW[g] * Derivative(0.5 * (a + u) + 0.5 * (u - a) * kGaussX[g]).norm();
  }
  return cumulative_[k] + 0.5 * (u - a) * sum;
}

double SplineCurve::ParameterAt(double s) const {
  const int n = segments() * kSamples;
  if (s <= 0) return 0;
  if (s >= length()) return segments();
  const int k =
      std::clamp(static_cast<int>(std::upper_bound(cumulative_.begin(), cumulative_.end(), s) -
                                  cumulative_.begin()) -
                     1,
                 0, n - 1);
  double lo = static_cast<double>(k) / kSamples, hi = static_cast<double>(k + 1) / kSamples;
  const double span = cumulative_[k + 1] - cumulative_[k];
  if (!(span > 0)) return lo;
  double u = lo + (s - cumulative_[k]) / span * (hi - lo);
  for (int i = 0; i < 50; ++i) {
    const double g = ArcLength(u) - s;
    if (std::abs(g) <= 1e-15 * std::max(1.0, length())) break;
    (g < 0 ? lo : hi) = u;
    const double speed = Derivative(u).norm();
    double next = speed > 0 ? u - g / speed : lo;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (next == u) break;
    u = next;
  }
  return u;
}

bool SplineCurve::SphereExit(const Eigen::Vector3d& center, double radius, double from,
                             double* u) const {
  const int n = segments() * kSamples;
  auto outside = [&](double x) { return (Position(x) - center).norm() >= radius; };
  double lo = from;
  for (int k = static_cast<int>(std::floor(from * kSamples)) + 1; k <= n; ++k) {
    const double x = static_cast<double>(k) / kSamples;
    if (!outside(x)) {
      lo = x;
      continue;
    }
    // Safeguarded Newton on f(x) = |Position(x) - center| - radius, f(lo) < 0 <= f(hi).
    double hi = x;
    double f_lo = (Position(lo) - center).norm() - radius;
    double f_hi = (Position(hi) - center).norm() - radius;
    double best = f_hi <= -f_lo ? hi : lo, best_f = std::min(f_hi, -f_lo);
    double x_n = lo + (hi - lo) * (-f_lo / (f_hi - f_lo));
    for (int i = 0; i < kIterations; ++i) {
      const Eigen::Vector3d d = Position(x_n) - center;
      const double dist = d.norm();
      const double f = dist - radius;
      if (std::abs(f) < best_f) {
        best = x_n;
        best_f = std::abs(f);
      }
      if (f < 0) {
        lo = x_n;
        f_lo = f;
      } else {
        hi = x_n;
        f_hi = f;
      }
      if (std::abs(f) <= 1e-15 * std::max(1.0, radius) || !(hi > lo)) break;
      const double slope = dist > 0 ? d.dot(Derivative(x_n)) / dist : 0.0;
      double next = slope != 0 ? x_n - f / slope : lo;
      if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
      if (next == x_n) break;
      x_n = next;
    }
    *u = best;
    return true;
  }
  return false;
}

// --- SplineIkConstraint ---------------------------------------------------------------------

bool SplineIkConstraint::Validate(const Skeleton& skeleton, std::string* error) const {
  const int n = skeleton.num_joints();
  auto name = [&](int j) { return "'" + skeleton.name(j) + "'"; };
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = "spline_ik: " + why;
    return false;
  };
  if (joints.empty()) return fail("no chain joint");
  for (size_t i = 0; i < joints.size(); ++i) {
    if (joints[i] < 0 || joints[i] >= n) {
      return fail("chain joint index " + std::to_string(joints[i]) + " out of range");
    }
    if (i > 0 && skeleton.parent(joints[i]) != joints[i - 1]) {
      return fail("chain joint " + name(joints[i]) + " is not a child of " + name(joints[i - 1]) +
                  " (the chain goes root to tip, each joint the parent of the next)");
    }
  }
  const int root = joints.front();
  const EndSite* end = EndSiteOf(skeleton, joints.back());
  double rest_length = end != nullptr ? end->offset.norm() : 0.0;
  for (size_t i = 1; i < joints.size(); ++i) {
    rest_length += skeleton.rest_translation(joints[i]).norm();
  }
  if (!(rest_length > 0)) {
    return fail("the chain " + name(root) + " .. " + name(joints.back()) +
                " has zero length (one joint without End Site, or coincident joints)");
  }
  if (!(influence >= 0.0 && influence <= 1.0)) return fail("influence must be in [0, 1]");
  if (points.size() < 2) {
    return fail(std::to_string(points.size()) + " control point(s); at least 2 are needed");
  }
  if (curve == CurveType::kBezier && (points.size() < 4 || (points.size() - 1) % 3 != 0)) {
    return fail("a Bezier curve needs 3k + 1 points (point, handle, handle, point, ...), got " +
                std::to_string(points.size()));
  }
  auto check_source_joint = [&](int j, const std::string& what) -> std::string {
    if (j < 0 || j >= n) return what + ": joint index " + std::to_string(j) + " out of range";
    if (IsDescendant(skeleton, j, root)) {
      return what + ": joint " + name(j) + " lies below the chain's root " + name(root) +
             " (it would move with the chain)";
    }
    return "";
  };
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string what = "control point " + std::to_string(i + 1);
    if (points[i].joint >= 0) {
      const std::string why = check_source_joint(points[i].joint, what);
      if (!why.empty()) return fail(why);
    } else if (!points[i].position.allFinite()) {
      return fail(what + " is not finite");
    }
  }
  if (twist == SplineTwist::kEnds) {
    if (!up_axis.allFinite() || std::abs(up_axis.norm() - 1) > kUnitTolerance) {
      return fail("up_axis must be unit length");
    }
    const UpSource* sources[2] = {&up_start, &up_end};
    const ControlPoint* fallback[2] = {&points.front(), &points.back()};
    for (int k = 0; k < 2; ++k) {
      const std::string what = k == 0 ? "up_start" : "up_end";
      const UpSource& src = *sources[k];
      if (src.joint >= 0) {
        const std::string why = check_source_joint(src.joint, what);
        if (!why.empty()) return fail(why);
      } else if (!src.vector.allFinite()) {
        return fail(what + " is not finite");
      } else if (src.vector.squaredNorm() == 0 && fallback[k]->joint < 0) {
        return fail(what + " is not given and the " + (k == 0 ? "first" : "last") +
                    " control point is not a joint (twist \"ends\" needs an up vector there)");
      }
    }
  }
  // Channels: the joints heading a bone rotate; with stretch the joints below the root move.
  const size_t rotating = end != nullptr ? joints.size() : joints.size() - 1;
  for (size_t i = 0; i < rotating; ++i) {
    if (!CheckRotationChannels(skeleton, "spline_ik", joints[i], error)) return false;
  }
  if (stretch) {
    for (size_t i = 1; i < joints.size(); ++i) {
      if (!CheckPositionChannels(skeleton, "spline_ik", joints[i], kAllAxes, error)) {
        if (error != nullptr) *error += " (stretch moves every chain joint below the root)";
        return false;
      }
    }
  }
  return true;
}

namespace {

// The chain's bones on one frame: joint i to joint i + 1, the last joint to its End Site (when it
// has one); axis in the joint's space.
struct ChainBones {
  size_t count = 0;
  std::vector<Eigen::Vector3d> axis;
  std::vector<double> length;
  double total = 0;
};

ChainBones BonesOf(const Skeleton& skeleton, const Pose& pose, const std::vector<int>& joints) {
  const EndSite* end = EndSiteOf(skeleton, joints.back());
  ChainBones b;
  b.count = end != nullptr ? joints.size() : joints.size() - 1;
  b.axis.resize(b.count);
  b.length.resize(b.count);
  for (size_t i = 0; i < b.count; ++i) {
    const Eigen::Isometry3d& w = pose.world[joints[i]];
    b.axis[i] = i + 1 < joints.size()
                    ? Eigen::Vector3d(w.inverse() * pose.world[joints[i + 1]].translation())
                    : end->offset;
    b.length[i] = b.axis[i].norm();
    b.total += b.length[i];
  }
  return b;
}

// With stretch, the tips at proportional arc lengths along the curve.
void StretchedTips(const SplineCurve& spline, const ChainBones& b, const Eigen::Vector3d& start,
                   std::vector<Eigen::Vector3d>& tips) {
  double cumulated = 0;
  for (size_t i = 0; i < b.count; ++i) {
    cumulated += b.length[i];
    tips[i] = b.total > 0
                  ? spline.Position(spline.ParameterAt(cumulated / b.total * spline.length()))
                  : start;
  }
}

// Without stretch, each tip where the bone, from the previous tip, meets the curve; past the
// curve's end, on the line that extends it (and `weight`: the part of the turn that applies).
void RollingTips(const SplineCurve& spline, const ChainBones& b, const Eigen::Vector3d& start,
                 double tiny, std::vector<Eigen::Vector3d>& tips, std::vector<double>& weight) {
  // The line that extends the curve at its end: its end point and unit end tangent.
  const double last = spline.segments();
  const Eigen::Vector3d end_point = spline.Position(last);
  Eigen::Vector3d tangent = spline.Derivative(last);
  for (int k = spline.segments() * SplineCurve::kSamples - 1; k >= 0 && !(tangent.norm() > tiny);
       --k) {
    tangent = end_point - spline.Position(static_cast<double>(k) / SplineCurve::kSamples);
  }
  tangent.normalize();
  double u = 0;
  bool rolled_off = false;
  Eigen::Vector3d head = start;
  for (size_t i = 0; i < b.count; ++i) {
    if (rolled_off) {
      weight[i] = 0;  // past the end: the bone keeps its pose relative to its parent
      tips[i] = head;
      continue;
    }
    if (!(b.length[i] > tiny)) {
      tips[i] = head;
      continue;
    }
    double next = 0;
    if (spline.SphereExit(head, b.length[i], u, &next)) {
      u = next;
      tips[i] = spline.Position(u);
    } else {
      // Rolling off the end: the tip on the end tangent's line, |end_point + v tangent - head|
      // = length (v >= 0: the end point is inside the sphere), and the bone turns by the part
      // of its path (arc to the end, then v) that lies on the curve.
      const Eigen::Vector3d e = end_point - head;
      const double bt = tangent.dot(e), c = e.squaredNorm() - b.length[i] * b.length[i];
      const double v = -bt + std::sqrt(std::max(0.0, bt * bt - c));
      tips[i] = end_point + v * tangent;
      const double on_curve = spline.Integrate(u, spline.segments());
      weight[i] = on_curve > 0 || v > 0 ? on_curve / (on_curve + v) : 1.0;
      rolled_off = true;
    }
    head = tips[i];
  }
}

// Up vectors of kEnds (read before anything moves): per bone, or none (kKeep rolls).
std::vector<Eigen::Vector3d> EndsUps(const SplineIkConstraint& c, const Pose& pose,
                                     const ChainBones& b, const Eigen::Vector3d& start,
                                     const std::vector<Eigen::Vector3d>& tips,
                                     const std::vector<double>& weight, double tiny) {
  std::vector<Eigen::Vector3d> ups;
  auto source = [&](const UpSource& src, const ControlPoint& fallback) -> Eigen::Vector3d {
    if (src.joint >= 0) return pose.world[src.joint].linear() * c.up_axis;
    if (src.vector.squaredNorm() > 0) return src.vector;
    return pose.world[fallback.joint].linear() * c.up_axis;
  };
  const Eigen::Vector3d up_s = source(c.up_start, c.points.front());
  const Eigen::Vector3d up_e = source(c.up_end, c.points.back());
  // Chords of the bones that have one; transported up from the first to the last.
  std::vector<Eigen::Vector3d> chord(b.count, Eigen::Vector3d::Zero());
  std::vector<double> above(b.count, 0.0);  // chain length above each bone's head
  int first = -1, last = -1;
  double cumulated = 0;
  for (size_t i = 0; i < b.count; ++i) {
    const Eigen::Vector3d head = i == 0 ? start : tips[i - 1];
    above[i] = cumulated;
    cumulated += b.length[i];
    const Eigen::Vector3d ch = tips[i] - head;
    if (!(ch.norm() > tiny) || weight[i] == 0) continue;
    chord[i] = ch.normalized();
    if (first < 0) first = static_cast<int>(i);
    last = static_cast<int>(i);
  }
  if (first < 0) return ups;
  const Eigen::Vector3d& c0 = chord[first];
  Eigen::Vector3d u0 = up_s - up_s.dot(c0) * c0;
  if (!(u0.norm() > 1e-9 * up_s.norm())) return ups;
  ups.assign(b.count, Eigen::Vector3d::Zero());
  ups[first] = u0.normalized();
  for (int i = first + 1, prev = first; i <= last; ++i) {
    if (chord[i].squaredNorm() == 0) continue;
    Eigen::Vector3d u = Eigen::Quaterniond::FromTwoVectors(chord[prev], chord[i]) * ups[prev];
    ups[i] = (u - u.dot(chord[i]) * chord[i]).normalized();
    prev = i;
  }
  const Eigen::Vector3d& cl = chord[last];
  const Eigen::Vector3d e = up_e - up_e.dot(cl) * cl;
  const double theta =
      e.norm() > 1e-9 * up_e.norm() ? SignedAngle(ups[last], e.normalized(), cl) : 0.0;
  const double span = above[last] - above[first];
  for (int i = first; i <= last; ++i) {
    if (chord[i].squaredNorm() == 0) continue;
    const double f = span > 0 ? (above[i] - above[first]) / span : 0.0;
    ups[i] = Eigen::AngleAxisd(f * theta, chord[i]) * ups[i];
  }
  return ups;
}

// The chain's root onto the curve's start: moved when it has position channels, else it must
// already be there.
bool PlaceRoot(const SplineIkConstraint& c, const Skeleton& skeleton, Pose& pose,
               const Eigen::Vector3d& start, double total, std::string* error) {
  const int root = c.joints.front();
  bool root_moves = true;
  for (int a = 0; a < 3; ++a) root_moves = root_moves && skeleton.translation_channel(root, a) >= 0;
  if (root_moves) return WritePosition(skeleton, pose, root, start, c.influence, error);
  const double off = (pose.world[root].translation() - start).norm();
  if (off > 1e-9 * std::max(1.0, total)) {
    if (error != nullptr) {
      *error = "spline_ik: the chain's root '" + skeleton.name(root) +
               "' has no position channels and lies " + std::to_string(off) +
               " from the curve's start (make the root the first control point, or give it "
               "position channels)";
    }
    return false;
  }
  return true;
}

// Each bone onto its chord (turned about it towards its up in `ups` when there is one), and with
// stretch its child onto its tip, parents first; only the chain's world transforms are kept up to
// date on the way. Returns the number of bones written (all, unless a write failed).
size_t WriteBones(const SplineIkConstraint& c, const Skeleton& skeleton, Pose& pose,
                  const ChainBones& b, const Eigen::Vector3d& start,
                  const std::vector<Eigen::Vector3d>& tips, const std::vector<double>& weight,
                  const std::vector<Eigen::Vector3d>& ups, double tiny, std::string* error) {
  const Eigen::Vector3d& up_axis = c.up_axis;
  size_t written = 0;
  for (size_t i = 0; i < b.count; ++i) {
    const int j = c.joints[i];
    if (i > 0) UpdateJointWorld(skeleton, pose.channels, pose.world, j);  // its parent moved
    const Eigen::Vector3d head = i == 0 ? start : tips[i - 1];
    const Eigen::Vector3d ch = tips[i] - head;
    if (b.length[i] > tiny && ch.norm() > tiny && weight[i] > 0) {
      const Eigen::Matrix3d own = pose.world[j].linear();
      const Eigen::Vector3d dir = ch.normalized();
      const Eigen::Vector3d bone = b.axis[i] / b.length[i];
      Eigen::Matrix3d desired;
      Eigen::Vector3d up_local = up_axis - up_axis.dot(bone) * bone;
      if (!ups.empty() && ups[i].squaredNorm() > 0 && up_local.norm() > 1e-9) {
        up_local.normalize();
        Eigen::Matrix3d local_frame, world_frame;
        local_frame << bone, up_local, bone.cross(up_local);
        world_frame << dir, ups[i], dir.cross(ups[i]);
        desired = world_frame * local_frame.transpose();
      } else {
        desired = Eigen::Quaterniond::FromTwoVectors(own * bone, dir).toRotationMatrix() * own;
      }
      if (!WriteRotation(skeleton, pose, j, desired, c.influence * weight[i], error)) break;
    }
    if (c.stretch && i + 1 < c.joints.size()) {
      UpdateJointWorld(skeleton, pose.channels, pose.world, c.joints[i + 1]);
      if (!WritePosition(skeleton, pose, c.joints[i + 1], tips[i], c.influence, error)) break;
    }
    written = i + 1;
  }
  return written;
}

}  // namespace

bool SplineIkConstraint::Run(const Skeleton& skeleton, Pose& pose, int, State&,
                             std::string* error) const {
  if (!Validate(skeleton, error)) return false;
  // The curve of this frame.
  std::vector<Eigen::Vector3d> p(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    p[i] = points[i].joint >= 0 ? Eigen::Vector3d(pose.world[points[i].joint].translation())
                                : points[i].position;
  }
  SplineCurve spline;
  double scale = 1.0;
  for (const Eigen::Vector3d& q : p) scale = std::max(scale, q.cwiseAbs().maxCoeff());
  // The arc length table only for stretch (proportional arc lengths).
  if (!spline.Build(curve, p, stretch) || spline.IsPoint(1e-12 * scale)) return true;  // a point

  const ChainBones bones = BonesOf(skeleton, pose, joints);
  const double tiny = 1e-12 * std::max(scale, bones.total);

  // Where the tips go (full influence): tips[i] is bone i's, heads are the previous tips.
  std::vector<Eigen::Vector3d> tips(bones.count);
  std::vector<double> weight(bones.count, 1.0);  // the part of each bone's turn that applies
  const Eigen::Vector3d start = spline.Position(0);
  if (stretch) {
    StretchedTips(spline, bones, start, tips);
  } else {
    RollingTips(spline, bones, start, tiny, tips, weight);
  }
  const std::vector<Eigen::Vector3d> ups =
      twist == SplineTwist::kEnds ? EndsUps(*this, pose, bones, start, tips, weight, tiny)
                                  : std::vector<Eigen::Vector3d>();

  // Write, parents first: the root onto the curve's start, then each bone onto its chord. Only
  // the chain's world transforms are kept up to date on the way (each joint's from its parent,
  // just written); the joints below the root are refreshed once at the end.
  if (!PlaceRoot(*this, skeleton, pose, start, bones.total, error)) return false;
  const size_t written =
      WriteBones(*this, skeleton, pose, bones, start, tips, weight, ups, tiny, error);
  pose.UpdateWorld(skeleton, joints.front());
  return written == bones.count;
}

}  // namespace rigel::constraints
