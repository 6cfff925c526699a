#include "core/check/plausibility.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

#include "core/check/rules.h"
#include "core/scene.h"

namespace rigel::check {

CheckSide CheckSideOf(const Scene& scene, const Skeleton& skeleton, const Clip& clip) {
  CheckSide side;
  side.skeleton = &skeleton;
  side.clip = &clip;
  side.up = scene.axes.up.value;
  side.metres_per_unit = MetresPerUnitOrEstimate(scene);
  return side;
}

namespace internal {

std::string Format(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return buffer;
}

std::string Length(const Comparison& c, double value) {
  const double m = c.job->output.metres_per_unit;
  return m > 0 ? Format("%.3f m", value * m) : Format("%.4g units", value);
}

namespace {

// The heading frame of one frame: rows forward, left, up; false when left and right coincide
// on the ground.
bool Heading(const Motion& m, int f, const BodyParts& parts, SignedAxis up, Eigen::Matrix3d* out) {
  if (parts.left < 0 || parts.right < 0) return false;
  const Eigen::Vector3d u = up.Vector();
  Eigen::Vector3d left = Horizontal(m.at(f, parts.left) - m.at(f, parts.right), up);
  const double n = left.norm();
  if (!(n > 1e-9)) return false;
  left /= n;
  out->row(0) = left.cross(u);
  out->row(1) = left;
  out->row(2) = u;
  return true;
}

// The lowest sole and the standing height of frame f.
void Stand(const Motion& m, int f, const BodyParts& parts, SignedAxis up, double* lowest,
           double* stand) {
  double low = HUGE_VAL, high = -HUGE_VAL;
  for (const int p : parts.soles) low = std::min(low, Height(m.at(f, p), up));
  if (parts.humanoid) {
    high = Height(m.at(f, parts.head), up);
  } else {
    for (const int p : parts.soles) high = std::max(high, Height(m.at(f, p), up));
  }
  *lowest = parts.soles.empty() ? 0.0 : low;
  *stand = parts.soles.empty() ? 0.0 : high - low;
}

}  // namespace

MeasuredSide MeasureSide(const CheckSide& side, int count, int stride) {
  MeasuredSide s;
  s.side = &side;
  s.parts = FindBodyParts(*side.skeleton);
  s.tracked = TrackedJoints(*side.skeleton, s.parts);
  s.motion = TrackClip(*side.skeleton, side.clip, stride, count, &s.tracked);
  s.rest = TrackClip(*side.skeleton, nullptr, 1, -1, &s.tracked);
  const int frames = s.motion.frames;
  s.lowest.resize(frames);
  s.stand.resize(frames);
  s.heading.resize(frames);
  s.has_heading.resize(frames);
  s.floor = frames > 0 ? HUGE_VAL : 0.0;
  for (int f = 0; f < frames; ++f) {
    Stand(s.motion, f, s.parts, side.up, &s.lowest[f], &s.stand[f]);
    s.floor = std::min(s.floor, s.lowest[f]);
    s.has_heading[f] = Heading(s.motion, f, s.parts, side.up, &s.heading[f]);
  }
  Stand(s.rest, 0, s.parts, side.up, &s.rest_lowest, &s.rest_stand);
  s.rest_hip = Height(s.rest.at(0, s.parts.hips), side.up) - s.rest_lowest;
  s.rest_has_heading = Heading(s.rest, 0, s.parts, side.up, &s.rest_heading);
  return s;
}

}  // namespace internal

namespace {

using internal::Comparison;

bool SameRig(const Skeleton& a, const Skeleton& b) {
  if (&a == &b) return true;
  if (a.num_joints() != b.num_joints()) return false;
  for (int j = 0; j < a.num_joints(); ++j) {
    if (a.name(j) != b.name(j) || a.parent(j) != b.parent(j)) return false;
  }
  return true;
}

bool ValidAxis(SignedAxis a) { return a.axis >= 0 && a.axis <= 2 && (a.sign == 1 || a.sign == -1); }

// The scale, reference length and floor the output is held to (docs/checks.md, "Expectations").
void Expect(Comparison* c) {
  const internal::MeasuredSide& s = c->source;
  const internal::MeasuredSide& o = c->output;
  if (c->same_rig && c->job->kind != OutputKind::kRetarget) {
    c->scale = c->job->scale;
    c->floor = c->scale * s.floor;
  } else {
    c->scale = s.rest_hip > 0 && o.rest_hip > 0 ? o.rest_hip / s.rest_hip
               : s.rest_stand > 0               ? o.rest_stand / s.rest_stand
                                                : 1.0;
    c->floor = o.rest_lowest;
    const Clip* floor_clip = c->job->output_floor_clip;
    if (floor_clip != nullptr && floor_clip->num_frames() > 0) {
      const Motion m = TrackClip(*c->job->output.skeleton, floor_clip);
      c->floor = HUGE_VAL;
      for (int f = 0; f < m.frames; ++f) {
        for (const int p : o.parts.soles)
          c->floor = std::min(c->floor, Height(m.at(f, p), o.side->up));
      }
    }
  }
  c->hip = o.rest_hip > 0 ? o.rest_hip : c->scale * s.rest_hip;
  // A figure that is not a humanoid has no hips to measure by (its "hips" joint may be its lowest
  // point: a 7 cm chain's was 1e-6 above it, and a millimetre became three "hip heights"): half its
  // standing extent, which a standing human's hip height is, is its length scale.
  if (!o.parts.humanoid) {
    const double stand = o.rest_stand > 0 ? o.rest_stand : c->scale * s.rest_stand;
    if (stand > 0) c->hip = 0.5 * stand;
  }
  if (!(c->hip > 0)) c->hip = o.rest_stand > 0 ? o.rest_stand : 1.0;
}

}  // namespace

std::string PlausibilityJob::Validate() const {
  for (const CheckSide* side : {&source, &output}) {
    const char* which = side == &source ? "source" : "output";
    if (side->skeleton == nullptr || side->clip == nullptr) {
      return std::string("check: the ") + which + " skeleton or clip is missing";
    }
    if (!side->clip->matches(*side->skeleton)) {
      return internal::Format("check: the %s clip has %d channels, its skeleton %d", which,
                              side->clip->num_channels(), side->skeleton->num_channels());
    }
    if (!ValidAxis(side->up)) {
      return internal::Format("check: the %s up axis is not X, Y or Z with sign +1 or -1", which);
    }
    if (travel == TravelRule::kKept && !(side->metres_per_unit > 0)) {
      return internal::Format("check: travel kept in metres needs the %s unit", which);
    }
  }
  if (!std::isfinite(scale) || !(scale > 0)) return "check: scale must be finite and > 0";
  if (output_floor_clip != nullptr && !output_floor_clip->matches(*output.skeleton)) {
    return "check: the output floor clip does not fit the output skeleton";
  }
  return "";
}

CheckReport PlausibilityJob::Run() const {
  const std::string error = Validate();
  if (!error.empty()) throw std::invalid_argument(error);
  CheckReport report;
  Comparison c;
  c.job = this;
  c.clip_frames = std::min(source.clip->num_frames(), output.clip->num_frames());
  report.frames = c.clip_frames;
  if (c.clip_frames == 0) return report;
  // About 30 samples a second for the measures of the body; pops read every frame.
  c.stride = std::max(1, static_cast<int>(std::lround(1.0 / (30.0 * source.clip->frame_time()))));
  c.source = internal::MeasureSide(source, c.clip_frames, c.stride);
  c.output = internal::MeasureSide(output, c.clip_frames, c.stride);
  c.frames = c.source.motion.frames;
  c.same_rig = SameRig(*source.skeleton, *output.skeleton);
  Expect(&c);
  report.scale = c.scale;
  report.humanoid = c.source.parts.humanoid && c.output.parts.humanoid;
  internal::CheckHeight(c, &report);
  internal::CheckHipsHeight(c, &report);
  internal::CheckTravel(c, &report);
  internal::CheckGround(c, &report);
  internal::CheckOrientation(c, &report);
  internal::CheckLimbDirections(c, &report);
  internal::CheckBoneLengths(c, &report);
  internal::CheckFootSlide(c, &report);
  internal::CheckPops(c, &report);
  internal::CheckPoleFlips(c, &report);
  return report;
}

std::vector<std::string_view> CheckNames() {
  return {"height",         "hips_height", "travel",     "ground", "orientation",
          "limb_direction", "bone_length", "foot_slide", "pops",   "pole_flip"};
}

std::string DescribeFinding(const Finding& f) {
  return f.frame >= 0 ? internal::Format("%s: %s (worst frame %d)", f.check.c_str(),
                                         f.reason.c_str(), f.frame)
                      : f.check + ": " + f.reason;
}

}  // namespace rigel::check
