// The checks of core/check/plausibility.h that follow the motion frame to frame: bone lengths,
// foot slide on the source's contacts, pops and pole flips.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check/rules.h"
#include "core/clip_ops.h"
#include "core/pose.h"
#include "core/retarget/contacts.h"
#include "core/retarget/evidence.h"

namespace rigel::check::internal {

namespace {

// The lengths of the bones of `joints` in frame f (into `lengths`, by joint): the distance from a
// joint to its parent's joint, the joint's translation in its parent's space (rest translation
// plus position channels; rotations do not change it), times the parent's scale when
// `with_scale` and the skeleton has scale channels (FK with scale, into `world` and `linear`).
void BoneLengths(const Skeleton& s, const Clip& clip, int f, bool with_scale,
                 const std::vector<int>& joints, std::vector<double>* lengths,
                 std::vector<Eigen::Isometry3d>* world, std::vector<Eigen::Matrix3d>* linear) {
  const int n = s.num_joints();
  lengths->resize(n, 0.0);
  const bool scaled = with_scale && s.has_scale();
  if (scaled) {
    world->resize(n);
    linear->resize(n);
    ForwardKinematicsScaled(s, clip.frame(f), *world, *linear);
  }
  const std::span<const double> row = clip.frame(f);
  for (const int j : joints) {
    Eigen::Vector3d t = s.rest_translation(j);
    for (int axis = 0; axis < 3; ++axis) {
      const int ch = s.translation_channel(j, axis);
      if (ch >= 0) t[axis] += row[ch];
    }
    (*lengths)[j] = scaled ? ((*linear)[s.parent(j)] * t).norm() : t.norm();
  }
}

bool Moves(const Skeleton& s, int joint) {
  for (int axis = 0; axis < 3; ++axis) {
    if (s.translation_channel(joint, axis) >= 0) return true;
  }
  return false;
}

}  // namespace

void CheckBoneLengths(const Comparison& c, CheckReport* report) {
  report->ran.push_back("bone_length");
  const Skeleton& so = *c.job->output.skeleton;
  const Skeleton& ss = *c.job->source.skeleton;
  const Clip& co = *c.job->output.clip;
  const Clip& cs = *c.job->source.clip;
  const bool paired = c.same_rig;
  const double slack = kBoneSlack * c.hip;
  double worst = 0;
  int frame = 0, joint = -1;
  double got_at = 0, want_at = 0;
  // Without position channels (or scale, which moves the joints below it) a bone keeps its rest
  // length: only one rig's against the source's (a retarget's is its own by construction). Paired,
  // the lengths are world distances (scale included: BVH, which holds none, gives a scaled
  // source's joints position channels); alone, a rig's scale is its own intent and the check
  // reads the translations only.
  const bool scaled = paired && (so.has_scale() || ss.has_scale());
  std::vector<char> moves(so.num_joints(), 0);
  bool any = false;
  for (int j = 0; j < so.num_joints(); ++j) {
    moves[j] = scaled || Moves(so, j) || (paired && Moves(ss, j));
    any = any || moves[j];
  }
  const int frames = any ? c.frames : 1;
  // The bones each frame compares: in the first frame every bone (paired) or the moving ones, in
  // the others the moving ones; a joint the rig added (core/skeleton_edit.h: a locator, a prop)
  // with position channels of its own has no length to keep: the source has no such bone.
  std::vector<int> first, moving;
  for (int j = 0; j < so.num_joints(); ++j) {
    if (so.parent(j) < 0 || (!moves[j] && !paired)) continue;
    if (moves[j] && !paired && ss.FindJoint(so.name(j)) < 0) continue;
    first.push_back(j);
    if (moves[j]) moving.push_back(j);
  }
  std::vector<double> got_lengths, want_lengths;
  std::vector<Eigen::Isometry3d> world;
  std::vector<Eigen::Matrix3d> linear;
  for (int i = 0; i < frames; ++i) {
    const int f = ClipFrame(c, i);
    const std::vector<int>& bones = i == 0 ? first : moving;
    BoneLengths(so, co, f, scaled, bones, &got_lengths, &world, &linear);
    if (paired) BoneLengths(ss, cs, f, scaled, bones, &want_lengths, &world, &linear);
    for (const int j : bones) {
      const double got = got_lengths[j];
      const double want = paired ? c.scale * want_lengths[j] : so.rest_translation(j).norm();
      const double off = std::abs(got - want);
      if (off <= std::max(kBoneRatio * want, slack)) continue;
      const double relative = off / std::max(want, slack);
      if (relative > worst) {
        worst = relative;
        frame = f;
        joint = j;
        got_at = got;
        want_at = want;
      }
    }
  }
  if (joint < 0) return;
  Add(report, "bone_length", frame, worst, kBoneRatio,
      Format("bone %s -> %s is %s long, expected %s (%s); off by %.0f %% (limit %.0f %%)",
             so.name(so.parent(joint)).c_str(), so.name(joint).c_str(), Length(c, got_at).c_str(),
             Length(c, want_at).c_str(), paired ? "the source's, scaled" : "its rest length",
             100 * worst, 100 * kBoneRatio));
}

namespace {

// Positions of the feet of a side (track t = foot t), up made positive on axis up.axis, for the
// contact detector.
std::vector<Eigen::Vector3d> FeetTracks(const MeasuredSide& m, int frames, const int feet[2]) {
  std::vector<Eigen::Vector3d> tracks(static_cast<size_t>(frames) * 2);
  for (int f = 0; f < frames; ++f) {
    for (int t = 0; t < 2; ++t) {
      Eigen::Vector3d p = m.motion.at(f, feet[t]);
      p[m.side->up.axis] *= m.side->up.sign;
      tracks[static_cast<size_t>(f) * 2 + t] = p;
    }
  }
  return tracks;
}

// The largest horizontal distance of a foot from its mean position over frames [first, last].
double Excursion(const MeasuredSide& m, int foot, int first, int last, int* at) {
  Eigen::Vector3d mean = Eigen::Vector3d::Zero();
  for (int f = first; f <= last; ++f) mean += m.motion.at(f, foot);
  mean /= static_cast<double>(last - first + 1);
  double worst = 0;
  for (int f = first; f <= last; ++f) {
    const double d = Horizontal(m.motion.at(f, foot) - mean, m.side->up).norm();
    if (d >= worst) {
      worst = d;
      *at = f;
    }
  }
  return worst;
}

}  // namespace

void CheckFootSlide(const Comparison& c, CheckReport* report) {
  const BodyParts& ps = c.source.parts;
  const BodyParts& po = c.output.parts;
  if (!ps.humanoid || !po.humanoid) return;
  report->ran.push_back("foot_slide");
  const int feet_s[2] = {ps.limbs[2][2], ps.limbs[3][2]};
  const int feet_o[2] = {po.limbs[2][2], po.limbs[3][2]};
  retarget::ContactOptions options;
  options.up_axis = c.source.side->up.axis;
  options.scale = c.source.rest_hip > 0 ? c.source.rest_hip : 1.0;
  const std::vector<retarget::ContactWindow> windows =
      retarget::DetectContacts(FeetTracks(c.source, c.frames, feet_s), 2,
                               c.job->source.clip->frame_time() * c.stride, options);
  double worst = 0;
  int frame = 0, foot = 0;
  double got_at = 0, src_at = 0;
  for (const retarget::ContactWindow& w : windows) {
    int at_o = w.first, at_s = w.first;
    const double got = Excursion(c.output, feet_o[w.track], w.first, w.last, &at_o);
    const double src = c.scale * Excursion(c.source, feet_s[w.track], w.first, w.last, &at_s);
    if (got - src > worst) {
      worst = got - src;
      frame = at_o;
      foot = w.track;
      got_at = got;
      src_at = src;
    }
  }
  if (worst <= kFootSlide * c.hip) return;
  Add(report, "foot_slide", ClipFrame(c, frame), worst / c.hip, kFootSlide,
      Format("the %s foot slides %s during a contact of the source, whose foot moves %s "
             "(scaled); %.2f hip heights more (limit %.2f)",
             foot == 0 ? "left" : "right", Length(c, got_at).c_str(), Length(c, src_at).c_str(),
             worst / c.hip, kFootSlide));
}

namespace {

// The joints whose pops count: the hips, head, arms, legs and toes of a humanoid (where a
// transfer, an IK clean-up or a pole flips), every joint of anything else.
std::vector<int> PopJoints(const Skeleton& s, const BodyParts& b) {
  std::vector<int> joints;
  if (!b.humanoid) {
    for (int j = 0; j < s.num_joints(); ++j) joints.push_back(j);
    return joints;
  }
  joints = {b.hips, b.head};
  for (const auto& limb : b.limbs) {
    for (const int j : limb) {
      if (j >= 0) joints.push_back(j);
    }
  }
  for (const std::vector<int>& tip : b.foot_tip) {
    for (const int p : tip) {
      if (p < s.num_joints()) joints.push_back(p);
    }
  }
  return joints;
}

// The source's largest pop score over frames f-1 .. f+1 (scored on frames f-2 .. f+2 alone).
double SourcePopNear(const Comparison& c, const std::vector<int>& joints, int f) {
  const Clip& clip = *c.job->source.clip;
  const int first = std::max(0, f - 2), last = std::min(clip.num_frames() - 1, f + 2);
  std::vector<double> pop;
  std::vector<int> joint;
  retarget::MeasurePops(*c.job->source.skeleton, SliceClip(clip, first, last), &pop, &joint,
                        joints);
  double near = 0;
  for (int g = std::max(first, f - 1); g <= std::min(last, f + 1); ++g) {
    near = std::max(near, pop[g - first]);
  }
  return near;
}

}  // namespace

// The pop scores of `joints` over the first `frames` frames of `clip` (MeasurePops), computed only
// where a pop is possible. A joint's rotation from frame h-1 to h turns it by at most the sum of
// its rotation channels' changes (each channel turns about one axis, and rotation distance obeys
// the triangle inequality), so the score of frame g, the change of that rotation from (g-1 -> g)
// to (g -> g+1), is at most the sum of the two steps' bounds: frames where that stays under one
// pop are 0 without computing them; the others are scored by MeasurePops on the frames around.
void PopScoresWherePossible(const Skeleton& s, const Clip& clip, const std::vector<int>& joints,
                            int frames, std::vector<double>* pop, std::vector<int>* pop_joint) {
  pop->assign(frames, 0.0);
  pop_joint->assign(frames, -1);
  if (frames < 3) return;
  const double limit = kPopScore * retarget::kPopDegrees / kDegPerRad;
  std::vector<double> step(joints.size(), 0.0), next(joints.size());
  std::vector<bool> possible(frames, false);
  // Rows are read a frame after another, a few channels each, in a clip of megabytes: the
  // channels of the row kAhead frames on are asked for now, so they are in cache when it comes.
  constexpr int kAhead = 8;
  auto bound = [&](int h, std::vector<double>* out) {  // each joint's turn from h-1 to h
    const double* ahead = h + kAhead < frames ? clip.frame(h + kAhead).data() : nullptr;
    for (size_t k = 0; k < joints.size(); ++k) {
      double sum = 0;
      for (const int ch : s.rotation_channels(joints[k])) {
        if (ahead != nullptr) __builtin_prefetch(ahead + ch);
        sum += std::abs(clip.at(h, ch) - clip.at(h - 1, ch));
      }
      (*out)[k] = sum;
    }
  };
  bound(1, &step);
  for (int g = 1; g + 1 < frames; ++g) {
    bound(g + 1, &next);
    for (size_t k = 0; k < joints.size() && !possible[g]; ++k) {
      possible[g] = step[k] + next[k] >= limit;
    }
    std::swap(step, next);
  }
  for (int a = 1; a + 1 < frames; ++a) {
    if (!possible[a]) continue;
    int b = a;
    while (b + 2 < frames && possible[b + 1]) ++b;
    std::vector<double> part;
    std::vector<int> part_joint;
    retarget::MeasurePops(s, SliceClip(clip, a - 1, b + 1), &part, &part_joint, joints);
    for (int g = a; g <= b; ++g) {
      (*pop)[g] = part[g - a + 1];
      (*pop_joint)[g] = part_joint[g - a + 1];
    }
    a = b;
  }
}

void CheckPops(const Comparison& c, CheckReport* report) {
  report->ran.push_back("pops");
  std::vector<double> pop_o;
  std::vector<int> joint_o;
  // Every frame of the output where a pop is possible; the source's scores only around the
  // output's pops.
  PopScoresWherePossible(*c.job->output.skeleton, *c.job->output.clip,
                         PopJoints(*c.job->output.skeleton, c.output.parts), c.clip_frames, &pop_o,
                         &joint_o);
  const std::vector<int> source_joints = PopJoints(*c.job->source.skeleton, c.source.parts);
  int count = 0, frame = -1;
  for (int f = 0; f < c.clip_frames; ++f) {
    if (pop_o[f] < kPopScore) continue;
    if (pop_o[f] <= 2 * SourcePopNear(c, source_joints, f)) continue;
    ++count;
    if (frame < 0 || pop_o[f] > pop_o[frame]) frame = f;
  }
  if (frame < 0) return;
  Add(report, "pops", frame, pop_o[frame], kPopScore,
      Format("%d frame%s with a pop the source does not have; the worst scores %.2f at joint "
             "'%s' (limit %.2f, a %.0f deg snap)",
             count, count == 1 ? "" : "s", pop_o[frame],
             c.job->output.skeleton->name(joint_o[frame]).c_str(), kPopScore,
             retarget::kPopDegrees));
}

namespace {

// The bend plane normal of limb k at frame f, zero when the limb is nearly straight.
Eigen::Vector3d BendNormal(const MeasuredSide& m, int f, int k) {
  const std::array<int, 3>& l = m.parts.limbs[k];
  const Eigen::Vector3d a = m.motion.at(f, l[1]) - m.motion.at(f, l[0]);
  const Eigen::Vector3d b = m.motion.at(f, l[2]) - m.motion.at(f, l[1]);
  const Eigen::Vector3d n = a.cross(b);
  if (n.norm() < std::sin(kStraightDegrees / kDegPerRad) * a.norm() * b.norm()) {
    return Eigen::Vector3d::Zero();
  }
  return n;
}

// The turn of limb k's bend plane from frame f-1 to f (degrees), 0 when either has none.
double PlaneTurn(const MeasuredSide& m, int f, int k) {
  const Eigen::Vector3d a = BendNormal(m, f - 1, k);
  const Eigen::Vector3d b = BendNormal(m, f, k);
  if (a.isZero() || b.isZero()) return 0.0;
  return std::atan2(a.cross(b).norm(), a.dot(b)) * kDegPerRad;
}

}  // namespace

void CheckPoleFlips(const Comparison& c, CheckReport* report) {
  const BodyParts& ps = c.source.parts;
  const BodyParts& po = c.output.parts;
  if (!ps.humanoid || !po.humanoid) return;
  report->ran.push_back("pole_flip");
  static const char* kLimbs[4] = {"left elbow", "right elbow", "left knee", "right knee"};
  double worst = 0;
  int frame = 0, limb = 0;
  for (int k = 0; k < 4; ++k) {
    if (std::find(ps.limbs[k].begin(), ps.limbs[k].end(), -1) != ps.limbs[k].end() ||
        std::find(po.limbs[k].begin(), po.limbs[k].end(), -1) != po.limbs[k].end()) {
      continue;
    }
    for (int f = 1; f < c.frames; ++f) {
      const double turn = PlaneTurn(c.output, f, k);
      if (turn <= kFlipDegrees || turn <= 2 * PlaneTurn(c.source, f, k)) continue;
      if (turn > worst) {
        worst = turn;
        frame = f;
        limb = k;
      }
    }
  }
  if (worst <= 0) return;
  Add(report, "pole_flip", ClipFrame(c, frame), worst, kFlipDegrees,
      Format("the %s's bend plane turns %.0f deg in one frame, over twice the source's (limit "
             "%.0f deg)",
             kLimbs[limb], worst, kFlipDegrees));
}

}  // namespace rigel::check::internal
