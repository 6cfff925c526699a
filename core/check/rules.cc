// The checks of core/check/plausibility.h. Every length is compared in output units: source
// lengths are multiplied by Comparison::scale first.
#include "core/check/rules.h"

#include <algorithm>
#include <cmath>

#include "core/retarget/contacts.h"
#include "core/retarget/evidence.h"

namespace rigel::check::internal {

namespace {

// Angle between two vectors in degrees (0 when either is zero).
double Degrees(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const double n = a.norm() * b.norm();
  if (!(n > 0)) return 0.0;
  return std::atan2(a.cross(b).norm(), a.dot(b)) * kDegPerRad;
}

// The 95th percentile of `values`.
double Percentile95(std::vector<double> values, int* frame) {
  std::vector<int> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const size_t k =
      std::min(values.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(values.size())));
  std::nth_element(order.begin(), order.begin() + k, order.end(),
                   [&values](int a, int b) { return values[a] < values[b]; });
  *frame = order[k];
  return values[order[k]];
}

// The mean position of `points` at frame f.
Eigen::Vector3d Mean(const Motion& m, int f, const std::vector<int>& points) {
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  for (const int p : points) sum += m.at(f, p);
  return sum / static_cast<double>(points.size());
}

}  // namespace

void CheckHeight(const Comparison& c, CheckReport* report) {
  const MeasuredSide& s = c.source;
  const MeasuredSide& o = c.output;
  if (s.parts.soles.empty() || o.parts.soles.empty()) return;
  report->ran.push_back("height");
  int fs = 0, fo = 0;
  const double hs = Percentile95(s.stand, &fs);
  const double ho = Percentile95(o.stand, &fo);
  const bool own = !(c.same_rig && c.job->kind != OutputKind::kRetarget) && s.rest_stand > 0;
  const double expected = own ? o.rest_stand * hs / s.rest_stand : c.scale * hs;
  if (!(expected > 0)) return;
  const double off = std::abs(ho / expected - 1.0);
  if (off <= kHeightRatio) return;
  Add(report, "height", ClipFrame(c, fo), off, kHeightRatio,
      Format("standing height %s, expected %s (%s); off by %.0f %% (limit %.0f %%)",
             Length(c, ho).c_str(), Length(c, expected).c_str(),
             own ? "the output skeleton's rest height, as tall as the source stands"
                 : "the source's, scaled",
             100 * off, 100 * kHeightRatio));
}

void CheckHipsHeight(const Comparison& c, CheckReport* report) {
  const MeasuredSide& s = c.source;
  const MeasuredSide& o = c.output;
  if (s.parts.soles.empty() || o.parts.soles.empty()) return;
  report->ran.push_back("hips_height");
  double worst = -1;
  int frame = 0;
  for (int f = 0; f < c.frames; ++f) {
    const double hs = Height(s.motion.at(f, s.parts.hips), s.side->up) - s.floor;
    const double ho = Height(o.motion.at(f, o.parts.hips), o.side->up) - c.floor;
    const double off = std::abs(ho - c.scale * hs) / c.hip;
    if (off > worst) {
      worst = off;
      frame = f;
    }
  }
  if (worst <= kHipsHeight) return;
  const double hs = Height(s.motion.at(frame, s.parts.hips), s.side->up) - s.floor;
  const double ho = Height(o.motion.at(frame, o.parts.hips), o.side->up) - c.floor;
  Add(report, "hips_height", ClipFrame(c, frame), worst, kHipsHeight,
      Format("hips %s above the floor, expected %s (the source's times %.3g); off by %.2f hip "
             "heights (limit %.2f)",
             Length(c, ho).c_str(), Length(c, c.scale * hs).c_str(), c.scale, worst, kHipsHeight));
}

namespace {

// The hips' cumulative path on the ground, per frame (output units after `scale`).
std::vector<double> Path(const MeasuredSide& m, int frames, double scale) {
  std::vector<double> path(frames, 0.0);
  for (int f = 1; f < frames; ++f) {
    const Eigen::Vector3d d = m.motion.at(f, m.parts.hips) - m.motion.at(f - 1, m.parts.hips);
    path[f] = path[f - 1] + scale * Horizontal(d, m.side->up).norm();
  }
  return path;
}

void CheckTravelDirection(const Comparison& c, CheckReport* report) {
  const MeasuredSide& s = c.source;
  const MeasuredSide& o = c.output;
  const int last = c.frames - 1;
  if (c.job->travel == TravelRule::kNone || !s.has_heading[0] || !o.has_heading[0]) return;
  const Eigen::Vector3d ds =
      s.heading[0] *
      Horizontal(s.motion.at(last, s.parts.hips) - s.motion.at(0, s.parts.hips), s.side->up);
  const Eigen::Vector3d dout =
      o.heading[0] *
      Horizontal(o.motion.at(last, o.parts.hips) - o.motion.at(0, o.parts.hips), o.side->up);
  if (c.scale * ds.norm() < kTravelMinimum * c.hip || dout.norm() < kTravelMinimum * c.hip) return;
  const double turn = Degrees(ds, dout);
  if (turn <= kTravelDegrees) return;
  Add(report, "travel", ClipFrame(c, last), turn, kTravelDegrees,
      Format("travels %.0f deg off the source's direction of travel, relative to the way the "
             "figure faces (limit %.0f deg)",
             turn, kTravelDegrees));
}

}  // namespace

void CheckTravel(const Comparison& c, CheckReport* report) {
  report->ran.push_back("travel");
  const MeasuredSide& s = c.source;
  double factor = c.scale;
  if (c.job->travel == TravelRule::kKept) {
    factor = s.side->metres_per_unit / c.job->output.metres_per_unit;
  } else if (c.job->travel == TravelRule::kNone) {
    factor = 0.0;
  }
  const std::vector<double> want = Path(s, c.frames, factor);
  const std::vector<double> got = Path(c.output, c.frames, 1.0);
  const double expected = want.back(), path = got.back();
  int frame = 0;
  for (int f = 0; f < c.frames; ++f) {
    if (std::abs(got[f] - want[f]) > std::abs(got[frame] - want[frame])) frame = f;
  }
  const bool long_path = expected > kTravelSlack * c.hip;
  const double ratio = long_path ? path / expected : 0.0;
  const bool bad = long_path ? (ratio > kTravelRatio || ratio < 1.0 / kTravelRatio)
                             : path > expected + kTravelSlack * c.hip;
  if (bad) {
    Add(report, "travel", ClipFrame(c, frame), long_path ? ratio : path / c.hip,
        long_path ? kTravelRatio : kTravelSlack,
        long_path
            ? Format("the hips travel %s, expected %s; %.3g times as far (limit x%.2g)",
                     Length(c, path).c_str(), Length(c, expected).c_str(), ratio, kTravelRatio)
            : Format("the hips travel %s, expected %s; over by %.2f hip heights (limit "
                     "%.2f)",
                     Length(c, path).c_str(), Length(c, expected).c_str(),
                     (path - expected) / c.hip, kTravelSlack));
  }
  CheckTravelDirection(c, report);
}

void CheckGround(const Comparison& c, CheckReport* report) {
  const MeasuredSide& s = c.source;
  const MeasuredSide& o = c.output;
  if (s.parts.soles.empty() || o.parts.soles.empty()) return;
  report->ran.push_back("ground");
  double worst = 0;
  int frame = -1;
  for (int f = 0; f < c.frames; ++f) {
    const double under = (o.lowest[f] - c.floor) - c.scale * (s.lowest[f] - s.floor);
    if (under < worst) {
      worst = under;
      frame = f;
    }
  }
  if (-worst <= kGround * c.hip) return;
  Add(report, "ground", ClipFrame(c, frame), -worst / c.hip, kGround,
      Format("the lowest foot point is %s under the floor, where the source's is %s above it "
             "(scaled); %.2f hip heights lower (limit %.2f)",
             Length(c, c.floor - o.lowest[frame]).c_str(),
             Length(c, c.scale * (s.lowest[frame] - s.floor)).c_str(), -worst / c.hip, kGround));
}

namespace {

// Direction from `base` to the mean of `tip` at frame f, in the frame's heading frame (rest:
// f < 0); zero when undefined.
Eigen::Vector3d PartDirection(const MeasuredSide& m, int f, int base, const std::vector<int>& tip) {
  if (base < 0 || tip.empty()) return Eigen::Vector3d::Zero();
  const Motion& motion = f < 0 ? m.rest : m.motion;
  const int g = std::max(f, 0);
  const bool has = f < 0 ? m.rest_has_heading : static_cast<bool>(m.has_heading[f]);
  if (!has) return Eigen::Vector3d::Zero();
  const Eigen::Matrix3d& h = f < 0 ? m.rest_heading : m.heading[f];
  const Eigen::Vector3d d = Mean(motion, g, tip) - motion.at(g, base);
  // A part shorter than 1 % of the hip height has no direction to speak of.
  if (d.norm() < 0.01 * m.rest_hip) return Eigen::Vector3d::Zero();
  return h * d;
}

// The turn (degrees) between the output's part direction and the source's; with `from_rest`,
// between the output's and its rest direction turned as the source's turned from its rest.
double PartTurn(const Comparison& c, int f, int base_s, const std::vector<int>& tip_s, int base_o,
                const std::vector<int>& tip_o, bool from_rest) {
  const Eigen::Vector3d ds = PartDirection(c.source, f, base_s, tip_s);
  const Eigen::Vector3d dout = PartDirection(c.output, f, base_o, tip_o);
  // One rig: the same part, compared as it is (rest poses may differ: a BVH written from an FBX
  // folds the rest orientations into its channels, so its zero pose is not the bind pose).
  if (c.same_rig || !from_rest) return Degrees(ds, dout);
  const Eigen::Vector3d rs = PartDirection(c.source, -1, base_s, tip_s);
  const Eigen::Vector3d ro = PartDirection(c.output, -1, base_o, tip_o);
  if (rs.isZero() || ds.isZero() || ro.isZero() || dout.isZero()) return 0.0;
  const Eigen::Quaterniond swing = Eigen::Quaterniond::FromTwoVectors(rs, ds);
  return Degrees(swing * ro, dout);
}

// Wrist bend (degrees): the angle between the lower arm and the hand, less the rest pose's bend
// when `from_rest`; -1 when it is not measured: the hand has no tip 1 % of the hip height away,
// or its tip does not continue the lower arm in the rest pose (within 30 degrees: an end site
// beside the wrist makes an angle that is not the wrist's bend).
double WristBend(const MeasuredSide& m, int f, int arm, bool from_rest) {
  const std::array<int, 3>& l = m.parts.limbs[arm];
  const std::vector<int>& tip = m.parts.hand_tip[arm];
  if (l[1] < 0 || l[2] < 0 || tip.empty()) return -1.0;
  auto bend = [&](const Motion& motion, int g) {
    const Eigen::Vector3d hand = Mean(motion, g, tip) - motion.at(g, l[2]);
    if (hand.norm() < 0.01 * m.rest_hip) return -1.0;
    return Degrees(motion.at(g, l[2]) - motion.at(g, l[1]), hand);
  };
  const double rest = bend(m.rest, 0);
  if (rest < 0 || rest > 30.0) return -1.0;
  const double now = bend(m.motion, f);
  return now < 0 ? -1.0 : now - (from_rest ? rest : 0.0) + 180.0;  // offset: >= 0 when defined
}

}  // namespace

void CheckOrientation(const Comparison& c, CheckReport* report) {
  const BodyParts& ps = c.source.parts;
  const BodyParts& po = c.output.parts;
  if (!ps.humanoid || !po.humanoid) return;
  report->ran.push_back("orientation");
  const bool hands = c.job->kind != OutputKind::kBake;
  static const char* kParts[5] = {"left foot", "right foot", "head", "left hand", "right hand"};
  double worst = 0;
  int frame = 0, part = 0;
  for (int f = 0; f < c.frames; ++f) {
    for (int k = 0; k < 5; ++k) {
      double turn = 0;
      if (k < 2) {
        // By the toes' direction when both feet have toes; else each from its rest (the tip is
        // whatever the rig ends the foot with: an end site under the ankle, a heel).
        turn = PartTurn(c, f, ps.limbs[2 + k][2], ps.foot_tip[k], po.limbs[2 + k][2],
                        po.foot_tip[k], !(ps.toes[k] && po.toes[k]));
      } else if (k == 2) {
        turn = PartTurn(c, f, ps.head, ps.head_tip, po.head, po.head_tip, true);
      } else if (hands) {
        const double o = WristBend(c.output, f, k - 3, !c.same_rig);
        const double s = WristBend(c.source, f, k - 3, !c.same_rig);
        turn = o < 0 || s < 0 ? 0.0 : std::abs(o - s);
      }
      if (turn > worst) {
        worst = turn;
        frame = f;
        part = k;
      }
    }
  }
  if (worst <= kOrientationDegrees) return;
  Add(report, "orientation", ClipFrame(c, frame), worst, kOrientationDegrees,
      Format("the %s is turned %.0f deg from the source's%s (limit %.0f deg)", kParts[part], worst,
             part >= 3 ? " (bend at the wrist)"
             : c.same_rig || (part < 2 && ps.toes[part] && po.toes[part])
                 ? ""
                 : " (each from its rest direction)",
             kOrientationDegrees));
}

void CheckLimbDirections(const Comparison& c, CheckReport* report) {
  const BodyParts& ps = c.source.parts;
  const BodyParts& po = c.output.parts;
  if (!ps.humanoid || !po.humanoid || c.job->kind == OutputKind::kBake) return;
  report->ran.push_back("limb_direction");
  static const char* kSegments[4][2] = {{"left upper arm", "left lower arm"},
                                        {"right upper arm", "right lower arm"},
                                        {"left upper leg", "left lower leg"},
                                        {"right upper leg", "right lower leg"}};
  double worst = 0;
  int frame = 0, limb = 0, segment = 0;
  for (int f = 0; f < c.frames; ++f) {
    for (int k = 0; k < 4; ++k) {
      for (int i = 0; i < 2; ++i) {
        const int s0 = ps.limbs[k][i], s1 = ps.limbs[k][i + 1];
        const int o0 = po.limbs[k][i], o1 = po.limbs[k][i + 1];
        if (s0 < 0 || s1 < 0 || o0 < 0 || o1 < 0) continue;
        const double turn =
            Degrees(PartDirection(c.source, f, s0, {s1}), PartDirection(c.output, f, o0, {o1}));
        if (turn > worst) {
          worst = turn;
          frame = f;
          limb = k;
          segment = i;
        }
      }
    }
  }
  if (worst <= kLimbDegrees) return;
  Add(report, "limb_direction", ClipFrame(c, frame), worst, kLimbDegrees,
      Format("the %s points %.0f deg away from the source's (limit %.0f deg)",
             kSegments[limb][segment], worst, kLimbDegrees));
}

}  // namespace rigel::check::internal
