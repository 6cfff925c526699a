// SplineIkConstraint: results proven by FK against curves evaluated here by separate code (de
// Casteljau for Bézier, the Barry-Goldman pyramid for centripetal Catmull-Rom), sampled densely.
// validity_test.cc holds the validity matrix.
#include "core/constraints/spline_ik.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "constraint_test_util.h"

namespace rigel::constraints_test {
namespace spline_ik_test {
namespace {

using constraints::ControlPoint;
using constraints::CurveType;
using constraints::SplineIkConstraint;
using constraints::SplineTwist;
using V = Eigen::Vector3d;

//   hips (6 ch)
//    |-- s0 (6 ch, rest orientation) -- s1 -- s2 -- s3 (rest orientation) -- s4 -- End Site
//    |-- ctl (6 ch) -- c1 (6 ch), c2 (6 ch), c3 (6 ch)          (control joints)
//    |-- f0 (ZXY only) -- f1 -- f2 -- End Site                   (a root that cannot move)
//    `-- t0 (6 ch) -- t1 (6 ch) -- t2 (6 ch) -- t3 (6 ch)         (a chain that can stretch)
std::shared_ptr<const Skeleton> SplineTree() {
  const std::vector<C> six = {C::kXposition, C::kYposition, C::kZposition,
                              C::kZrotation, C::kXrotation, C::kYrotation};
  const std::vector<C> zxy = {C::kZrotation, C::kXrotation, C::kYrotation};
  RawSkeleton raw;
  RawSkeleton::Joint& hips = raw.roots.emplace_back();
  hips.name = "hips";
  hips.channels = six;
  RawSkeleton::Joint& s0 = AddChild(hips, "s0", V(0, 0.1, 0), six);
  s0.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.44, V(0, 1, 1).normalized()));
  RawSkeleton::Joint& s1 = AddChild(s0, "s1", V(0, 0.5, 0.05), zxy);
  RawSkeleton::Joint& s2 =
      AddChild(s1, "s2", V(0.02, 0.4, 0), {C::kXrotation, C::kYrotation, C::kZrotation});
  RawSkeleton::Joint& s3 = AddChild(s2, "s3", V(0, 0.35, -0.03), zxy);
  s3.rest_orientation = Eigen::Quaterniond(Eigen::AngleAxisd(0.17, V::UnitX()));
  RawSkeleton::Joint& s4 =
      AddChild(s3, "s4", V(0, 0.3, 0), {C::kYrotation, C::kXrotation, C::kZrotation});
  s4.end_sites.push_back(V(0, 0.25, 0));
  RawSkeleton::Joint& ctl = AddChild(hips, "ctl", V(1, 0, 0), six);
  AddChild(ctl, "c1", V(0, 1, 0), six);
  AddChild(ctl, "c2", V(0.5, 2, 0), six);
  AddChild(ctl, "c3", V(0, 3, 0.5), six);
  RawSkeleton::Joint& f0 = AddChild(hips, "f0", V(0.3, 0.2, 0.1), zxy);
  RawSkeleton::Joint& f1 = AddChild(f0, "f1", V(0, 0.6, 0), zxy);
  AddChild(f1, "f2", V(0, 0.5, 0), zxy).end_sites.push_back(V(0, 0.2, 0));
  RawSkeleton::Joint& t0 = AddChild(hips, "t0", V(-0.3, 0, 0), six);
  RawSkeleton::Joint& t1 = AddChild(t0, "t1", V(0, 0.4, 0), six);
  RawSkeleton::Joint& t2 = AddChild(t1, "t2", V(0, 0.3, 0.1), six);
  AddChild(t2, "t3", V(0, 0.5, 0), six);
  return testing::BuildOrDie(raw);
}

// --- Curves evaluated here, independently of core/constraints/spline_ik.cc ---------------------

// A curve as the test sees it: a parameter range [0, segments] and a point per parameter.
struct Curve {
  int segments = 0;
  std::function<V(double)> at;
};

// Piecewise cubic Bézier of 3k + 1 points, by de Casteljau.
Curve BezierCurve(const std::vector<V>& p) {
  Curve c;
  c.segments = static_cast<int>(p.size() - 1) / 3;
  c.at = [p, n = c.segments](double u) {
    const int k = std::clamp(static_cast<int>(std::floor(u)), 0, n - 1);
    const double t = u - k;
    std::array<V, 4> q = {p[3 * k], p[3 * k + 1], p[3 * k + 2], p[3 * k + 3]};
    for (int level = 3; level > 0; --level) {
      for (int i = 0; i < level; ++i) q[i] = (1 - t) * q[i] + t * q[i + 1];
    }
    return q[0];
  };
  return c;
}

// Centripetal Catmull-Rom through `p` (distinct consecutive points), ends reflected, by the
// Barry-Goldman pyramid on knots t(k+1) = t(k) + |P(k+1) - P(k)|^(1/2).
Curve CatmullRomCurve(const std::vector<V>& p) {
  std::vector<V> q = {2 * p[0] - p[1]};
  q.insert(q.end(), p.begin(), p.end());
  q.push_back(2 * p.back() - p[p.size() - 2]);
  Curve c;
  c.segments = static_cast<int>(p.size()) - 1;
  c.at = [q, n = c.segments](double u) {
    const int k = std::clamp(static_cast<int>(std::floor(u)), 0, n - 1);
    const V* P = &q[k];  // P[0..3]: the segment runs from P[1] to P[2]
    double t[4] = {0, 0, 0, 0};
    for (int i = 1; i < 4; ++i) t[i] = t[i - 1] + std::sqrt((P[i] - P[i - 1]).norm());
    const double x = t[1] + (u - k) * (t[2] - t[1]);
    auto lerp = [x](const V& a, const V& b, double ta, double tb) {
      return V((tb - x) / (tb - ta) * a + (x - ta) / (tb - ta) * b);
    };
    const V a1 = lerp(P[0], P[1], t[0], t[1]), a2 = lerp(P[1], P[2], t[1], t[2]),
            a3 = lerp(P[2], P[3], t[2], t[3]);
    const V b1 = lerp(a1, a2, t[0], t[2]), b2 = lerp(a2, a3, t[1], t[3]);
    return lerp(b1, b2, t[1], t[2]);
  };
  return c;
}

constexpr int kDense = 4000;  // samples per segment

// The parameter of the curve point nearest `x`: dense samples, then a golden-section refinement.
double NearestParameter(const Curve& c, const V& x) {
  const int n = c.segments * kDense;
  int best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= n; ++k) {
    const double d = (c.at(static_cast<double>(k) / kDense) - x).norm();
    if (d < best_d) best_d = d, best = k;
  }
  double lo = std::max(0.0, (best - 1.0) / kDense),
         hi = std::min(double(c.segments), (best + 1.0) / kDense);
  for (int i = 0; i < 200; ++i) {
    const double a = lo + (hi - lo) * 0.382, b = lo + (hi - lo) * 0.618;
    if ((c.at(a) - x).norm() < (c.at(b) - x).norm()) {
      hi = b;
    } else {
      lo = a;
    }
  }
  return 0.5 * (lo + hi);
}

double DistanceToCurve(const Curve& c, const V& x) {
  return (c.at(NearestParameter(c, x)) - x).norm();
}

// Arc length from parameter 0 to u by a dense polyline.
double ArcLengthTo(const Curve& c, double u) {
  const int n = static_cast<int>(std::ceil(u * 20000));
  double s = 0;
  V prev = c.at(0);
  for (int k = 1; k <= n; ++k) {
    const V next = c.at(u * k / n);
    s += (next - prev).norm();
    prev = next;
  }
  return s;
}

// The world points of the chain `names` (its joints, then the End Site of the last one if any),
// recomputed by FK.
std::vector<V> ChainPoints(const Skeleton& s, const Pose& pose, const std::vector<int>& joints) {
  Pose fresh(s);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(s);
  std::vector<V> out;
  for (const int j : joints) out.push_back(fresh.world[j].translation());
  for (const EndSite& e : s.end_sites()) {
    if (e.parent == joints.back()) out.push_back(fresh.world[joints.back()] * e.offset);
  }
  return out;
}

// The axis of bone i of `joints` in joint i's space in `pose`: the next joint's offset, or the
// last joint's End Site.
V LocalAxis(const Skeleton& s, const Pose& pose, const std::vector<int>& joints, size_t i) {
  if (i + 1 < joints.size()) {
    return pose.world[joints[i]].inverse() * pose.world[joints[i + 1]].translation();
  }
  for (const EndSite& e : s.end_sites()) {
    if (e.parent == joints.back()) return e.offset;
  }
  return V::Zero();
}

std::vector<ControlPoint> Fixed(const std::vector<V>& p) {
  std::vector<ControlPoint> out;
  for (const V& x : p) out.push_back({-1, x});
  return out;
}

const std::vector<V> kBezier = {V(0, 0.1, 0),     V(0.3, 0.8, 0), V(0.9, 1.2, 0.4),
                                V(1.0, 2.0, 0.2), V(1.1, 2.8, 0), V(0.5, 3.1, -0.5),
                                V(0.2, 3.3, -0.2)};
const std::vector<V> kThrough = {V(0, 0.1, 0), V(0.2, 0.7, 0.1), V(0.1, 1.3, 0.5),
                                 V(-0.4, 1.8, 0.4), V(-0.5, 2.6, 0)};

class SplineIk : public ConstraintTest {
 protected:
  SplineIk() { s_ = SplineTree(); }
  int J(const char* name) const { return s_->FindJoint(name); }
  std::vector<int> Joints(std::initializer_list<const char*> names) const {
    std::vector<int> out;
    for (const char* n : names) out.push_back(J(n));
    return out;
  }
  SplineIkConstraint Spine(CurveType type, const std::vector<V>& p) const {
    SplineIkConstraint c;
    c.joints = Joints({"s0", "s1", "s2", "s3", "s4"});
    c.points = Fixed(p);
    c.curve = type;
    return c;
  }
  // The chain's points before (rest lengths) and the checks of a stretch-off fit: the root on
  // the curve's start, every point on the curve, each the first curve point after the previous
  // one at the bone's length from it.
  void ExpectFitted(const Curve& curve, const SplineIkConstraint& c, const Pose& before,
                    const Pose& after, double tol) {
    const std::vector<V> was = ChainPoints(*s_, before, c.joints);
    const std::vector<V> got = ChainPoints(*s_, after, c.joints);
    ASSERT_EQ(was.size(), got.size());
    EXPECT_LT((got[0] - curve.at(0)).norm(), tol) << "the root on the curve's start";
    double u_prev = 0;
    for (size_t i = 1; i < got.size(); ++i) {
      const double length = (was[i] - was[i - 1]).norm();
      EXPECT_NEAR((got[i] - got[i - 1]).norm(), length, tol) << "bone " << i << " keeps its length";
      if (length < 1e-12) continue;  // a zero-length bone: its tip is its head
      EXPECT_LT(DistanceToCurve(curve, got[i]), tol) << "point " << i << " on the curve";
      const double u = NearestParameter(curve, got[i]);
      EXPECT_GT(u, u_prev) << "point " << i << " after the previous one";
      // No curve point in between leaves the sphere about the head.
      for (int k = 1; k < 200; ++k) {
        const double x = u_prev + (u - u_prev) * k / 200.0;
        EXPECT_LE((curve.at(x) - got[i - 1]).norm(), length + tol) << "first exit, point " << i;
      }
      u_prev = u;
    }
  }
};

TEST_F(SplineIk, BezierTipsOnTheCurveLengthsKept) {
  const SplineIkConstraint c = Spine(CurveType::kBezier, kBezier);
  const Pose before = Posed(*s_);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectFitted(BezierCurve(kBezier), c, before, pose, 1e-9);
}

TEST_F(SplineIk, CatmullRomTipsOnTheCurveLengthsKept) {
  const SplineIkConstraint c = Spine(CurveType::kCatmullRom, kThrough);
  const Pose before = Posed(*s_, 2);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectFitted(CatmullRomCurve(kThrough), c, before, pose, 1e-9);
  // The curve goes through its points (the test's curve, checked against the points).
  const Curve curve = CatmullRomCurve(kThrough);
  for (size_t i = 0; i < kThrough.size(); ++i) {
    EXPECT_LT((curve.at(static_cast<double>(i)) - kThrough[i]).norm(), 1e-12);
  }
}

TEST_F(SplineIk, ControlJointsAreReadFromThePose) {
  SplineIkConstraint c = Spine(CurveType::kCatmullRom, {});
  c.points = {
      {J("s0"), V::Zero()}, {J("c1"), V::Zero()}, {J("c2"), V::Zero()}, {J("c3"), V::Zero()}};
  const Pose before = Posed(*s_, -1);
  std::vector<V> p;
  for (const ControlPoint& q : c.points) p.push_back(before.world[q.joint].translation());
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  ExpectFitted(CatmullRomCurve(p), c, before, pose, 1e-9);
}

TEST_F(SplineIk, AChainLongerThanTheCurveRollsOffItsEnd) {
  const std::vector<V> p = {V(0, 0.1, 0), V(0.2, 0.6, 0.1), V(0.1, 1.1, 0.3)};  // ~1.1 < 1.8
  const SplineIkConstraint c = Spine(CurveType::kCatmullRom, p);
  const Pose before = Posed(*s_);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  const Curve curve = CatmullRomCurve(p);
  const std::vector<V> got = ChainPoints(*s_, pose, c.joints);
  // The bones whose tips lie on the curve: s0, s1 (0.5 + 0.4 of a ~1.1 curve).
  size_t i = 1;
  for (; i < got.size() && DistanceToCurve(curve, got[i]) < 1e-9; ++i) {
  }
  ASSERT_EQ(i, 3u) << "two bones on the curve";
  // Bone 2 (s2) crosses the end: it turns from where its fitted parent left it towards the point
  // of the end tangent's line at its length, by the part of its path on the curve.
  const size_t k = 2;
  const int j = c.joints[k];
  Pose mixed = pose;  // s2 with its own channels under the fitted parent
  for (const int ch : s_->rotation_channels(j)) mixed.channels[ch] = before.channels[ch];
  mixed.UpdateWorld(*s_);
  const V axis_local = LocalAxis(*s_, before, c.joints, k);
  const double length = axis_local.norm();
  const V head = got[k];
  const V end = curve.at(curve.segments);
  const V tangent = (end - curve.at(curve.segments - 1e-6)).normalized();
  const V e = end - head;
  const double v =
      -tangent.dot(e) + std::sqrt(std::pow(tangent.dot(e), 2) - e.squaredNorm() + length * length);
  const V aim = (end + v * tangent - head).normalized();
  const double on_curve =
      ArcLengthTo(curve, curve.segments) - ArcLengthTo(curve, NearestParameter(curve, head));
  const double fraction = on_curve / (on_curve + v);
  const V was = (mixed.world[j].linear() * axis_local).normalized();
  const double full = std::acos(std::clamp(was.dot(aim), -1.0, 1.0));
  const V expected = Eigen::AngleAxisd(fraction * full, was.cross(aim).normalized()) * was;
  EXPECT_GT(fraction, 0.05);
  EXPECT_LT(fraction, 0.95);
  EXPECT_LT(((got[k + 1] - head).normalized() - expected).norm(), 1e-6) << "partial turn";
  // The bones after it keep their channels (their pose relative to s2).
  for (size_t m = k + 1; m < c.joints.size(); ++m) {
    for (const int ch : s_->rotation_channels(c.joints[m])) {
      EXPECT_EQ(pose.channels[ch], before.channels[ch]) << "joint " << m;
    }
  }
}

TEST_F(SplineIk, StretchSpreadsTheJointsOverTheWholeCurve) {
  SplineIkConstraint c;
  c.joints = Joints({"t0", "t1", "t2", "t3"});
  const std::vector<V> p = {V(-0.3, 0, 0), V(-0.1, 0.9, 0.2), V(0.3, 1.6, 0.1), V(0.2, 2.4, -0.3)};
  c.points = Fixed(p);
  c.stretch = true;
  const Pose before = Posed(*s_, 0.5);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  const Curve curve = CatmullRomCurve(p);
  const std::vector<V> was = ChainPoints(*s_, before, c.joints);
  const std::vector<V> got = ChainPoints(*s_, pose, c.joints);
  std::vector<double> cumulated = {0};
  for (size_t i = 1; i < was.size(); ++i) {
    cumulated.push_back(cumulated.back() + (was[i] - was[i - 1]).norm());
  }
  const double total_arc = ArcLengthTo(curve, curve.segments);
  EXPECT_LT((got[0] - p[0]).norm(), 1e-9);
  EXPECT_LT((got.back() - p.back()).norm(), 1e-9) << "the tip at the curve's end";
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_LT(DistanceToCurve(curve, got[i]), 1e-9);
    const double arc = ArcLengthTo(curve, NearestParameter(curve, got[i]));
    EXPECT_NEAR(arc / total_arc, cumulated[i] / cumulated.back(), 1e-7) << "joint " << i;
  }
  // Each bone still points at the next joint along its own axis (rotation fitted too).
  Pose fresh(*s_);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(*s_);
  for (size_t i = 0; i + 1 < c.joints.size(); ++i) {
    const V axis = LocalAxis(*s_, before, c.joints, i).normalized();
    const V world_axis = fresh.world[c.joints[i]].linear() * axis;
    EXPECT_LT((world_axis - (got[i + 1] - got[i]).normalized()).norm(), 1e-9) << "bone " << i;
  }
}

TEST_F(SplineIk, KeepTwistTurnsEachBoneByTheSmallestRotation) {
  const SplineIkConstraint c = Spine(CurveType::kBezier, kBezier);
  const Pose before = Posed(*s_, 1.5);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  // For each bone: the rotation from its orientation with its parent already fitted and its own
  // channels as they were, to the fitted one, turns about an axis perpendicular to the bone.
  for (size_t i = 0; i < c.joints.size(); ++i) {
    const int j = c.joints[i];
    Pose mixed = pose;
    for (const int ch : s_->rotation_channels(j)) mixed.channels[ch] = before.channels[ch];
    mixed.UpdateWorld(*s_);
    const Eigen::Matrix3d was = mixed.world[j].linear();
    const Eigen::Matrix3d now = Fk(*s_, pose, j).linear();
    const Eigen::AngleAxisd turn(now * was.transpose());
    const V axis_local = LocalAxis(*s_, before, c.joints, i);
    const V bone_was = (was * axis_local).normalized();
    const V bone_now = (now * axis_local).normalized();
    if (turn.angle() < 1e-9) continue;
    EXPECT_NEAR(turn.axis().dot(bone_was), 0, 1e-9) << "bone " << i;
    EXPECT_NEAR(turn.axis().dot(bone_now), 0, 1e-9) << "bone " << i;
  }
}

TEST_F(SplineIk, EndsTwistRollsFromTheStartUpToTheEndUp) {
  // A straight curve along world Y: parallel transport keeps the up, so the roll about Y grows
  // with the chain length above each bone, from the start's up (X) to the end's (Z).
  SplineIkConstraint c;
  c.joints = Joints({"t0", "t1", "t2", "t3"});
  c.points = Fixed({V(-0.3, 0, 0), V(-0.3, 1, 0), V(-0.3, 2, 0)});
  c.twist = SplineTwist::kEnds;
  c.up_axis = V(0, 0, 1);
  c.up_start.vector = V(1, 0.3, 0);  // its part off the chord: +X
  c.up_end.vector = V(0, 0.2, 1);    // +Z
  Pose before = Posed(*s_, 0.7);
  for (const char* name : {"t1", "t2", "t3"}) {  // rest bone lengths: 1.2 in all, on a curve of 2
    for (int a = 0; a < 3; ++a) before.channels[s_->translation_channel(J(name), a)] = 0;
  }
  before.UpdateWorld(*s_);
  Pose pose = before;
  const std::vector<V> was = ChainPoints(*s_, pose, c.joints);
  ASSERT_TRUE(Run(c, pose)) << error_;
  std::vector<double> above = {0};
  for (size_t i = 1; i + 1 < was.size(); ++i)
    above.push_back(above.back() + (was[i] - was[i - 1]).norm());
  Pose fresh(*s_);
  fresh.channels = pose.channels;
  fresh.UpdateWorld(*s_);
  for (size_t i = 0; i + 1 < c.joints.size(); ++i) {
    const Eigen::Matrix3d r = fresh.world[c.joints[i]].linear();
    const V bone = LocalAxis(*s_, before, c.joints, i).normalized();
    EXPECT_LT((r * bone - V::UnitY()).norm(), 1e-9) << "bone " << i << " along the curve";
    const V up = r * (c.up_axis - c.up_axis.dot(bone) * bone).normalized();
    // Angle from +X towards +Z about -Y... measured in the XZ plane: X at 0, Z at 90 degrees.
    const double angle = std::atan2(up.z(), up.x());
    EXPECT_NEAR(angle, M_PI / 2 * above[i] / above.back(), 1e-9) << "bone " << i;
  }
}

TEST_F(SplineIk, InfluenceZeroLeavesThePoseAndHalfIsHalfway) {
  SplineIkConstraint c = Spine(CurveType::kBezier, kBezier);
  Pose full = Posed(*s_);
  ASSERT_TRUE(Run(c, full)) << error_;
  c.influence = 0;
  const Pose before = Posed(*s_);
  Pose pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  for (size_t ch = 0; ch < pose.channels.size(); ++ch) {
    EXPECT_NEAR(pose.channels[ch], before.channels[ch], 1e-12) << "channel " << ch;
  }
  c.influence = 0.5;
  pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  const int root = c.joints[0];
  ExpectHalfway(Fk(*s_, pose, root).linear(), before.world[root].linear(),
                Fk(*s_, full, root).linear());
  EXPECT_LT((Fk(*s_, pose, root).translation() -
             0.5 * (before.world[root].translation() + Fk(*s_, full, root).translation()))
                .norm(),
            1e-12);
}

TEST_F(SplineIk, ARootWithoutPositionChannelsStaysOrFails) {
  SplineIkConstraint c;
  c.joints = Joints({"f0", "f1", "f2"});
  c.points = Fixed({V(0, 0, 0), V(0.5, 1, 0), V(0.2, 2, 0.3)});
  Pose pose = Posed(*s_);
  EXPECT_FALSE(Run(c, pose));
  EXPECT_NE(error_.find("the chain's root 'f0' has no position channels"), std::string::npos)
      << error_;
  // With the root as the first control point it works, and the root stays.
  c.points.front() = {J("f0"), V::Zero()};
  const Pose before = Posed(*s_);
  pose = before;
  ASSERT_TRUE(Run(c, pose)) << error_;
  std::vector<V> p = {before.world[J("f0")].translation(), V(0.5, 1, 0), V(0.2, 2, 0.3)};
  ExpectFitted(CatmullRomCurve(p), c, before, pose, 1e-9);
}

TEST_F(SplineIk, DegenerateInputsGiveNoNaN) {
  auto finite = [](const Pose& p) {
    return std::all_of(p.channels.begin(), p.channels.end(),
                       [](double x) { return std::isfinite(x); });
  };
  // Every control point at one place: no curve, the pose is left as it is.
  {
    const SplineIkConstraint c =
        Spine(CurveType::kCatmullRom, {V(1, 1, 1), V(1, 1, 1), V(1, 1, 1)});
    const Pose before = Posed(*s_);
    Pose pose = before;
    ASSERT_TRUE(Run(c, pose)) << error_;
    EXPECT_EQ(pose.channels, before.channels);
  }
  // Repeated points count once.
  {
    const std::vector<V> p = {V(0, 0.1, 0),     V(0, 0.1, 0),     V(0.2, 0.7, 0.1),
                              V(0.2, 0.7, 0.1), V(0.1, 1.3, 0.5), V(-0.4, 1.8, 0.4),
                              V(-0.5, 2.6, 0)};
    const SplineIkConstraint c = Spine(CurveType::kCatmullRom, p);
    const Pose before = Posed(*s_);
    Pose pose = before;
    ASSERT_TRUE(Run(c, pose)) << error_;
    ExpectFitted(CatmullRomCurve(kThrough), c, before, pose, 1e-9);
  }
  // Handles on their points (zero end tangents) and a chain longer than the curve: the bones on
  // the curve and the one rolling off it all lie on the segment's line.
  {
    const std::vector<V> p = {V(0, 0.1, 0), V(0, 0.1, 0), V(0.5, 1, 0), V(0.5, 1, 0)};
    const SplineIkConstraint c = Spine(CurveType::kBezier, p);
    Pose pose = Posed(*s_);
    ASSERT_TRUE(Run(c, pose)) << error_;
    EXPECT_TRUE(finite(pose));
    const std::vector<V> got = ChainPoints(*s_, pose, c.joints);
    const V dir = V(0.5, 0.9, 0).normalized();
    for (size_t i = 0; i < 3; ++i) {
      const V d = got[i] - V(0, 0.1, 0);
      EXPECT_LT((d - d.dot(dir) * dir).norm(), 1e-9) << "point " << i << " on the segment's line";
    }
  }
  // A zero-length bone (s1 moved onto s0 by position channels is not possible: s1 has none;
  // use the stretch chain with t1 onto t0).
  {
    SplineIkConstraint c;
    c.joints = Joints({"t0", "t1", "t2", "t3"});
    c.points = Fixed({V(-0.3, 0, 0), V(-0.1, 0.9, 0.2), V(0.3, 1.6, 0.1)});
    Pose pose = Posed(*s_);
    for (const char* name : {"t1", "t2", "t3"}) {  // rest lengths (0.3, 0.5), but t1 on t0
      const int j = J(name);
      for (int a = 0; a < 3; ++a) {
        pose.channels[s_->translation_channel(j, a)] =
            j == J("t1") ? -s_->rest_translation(j)[a] : 0;
      }
    }
    pose.UpdateWorld(*s_);
    const Pose before = pose;
    ASSERT_TRUE(Run(c, pose)) << error_;
    EXPECT_TRUE(finite(pose));
    ExpectFitted(CatmullRomCurve({V(-0.3, 0, 0), V(-0.1, 0.9, 0.2), V(0.3, 1.6, 0.1)}), c, before,
                 pose, 1e-9);
  }
}

}  // namespace
}  // namespace spline_ik_test
}  // namespace rigel::constraints_test
