// Zero-phase Butterworth low-pass filtering. See filter.h.
#include "core/curves/filter.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include "core/channel.h"
#include "core/euler.h"
#include "core/ik/two_bone.h"
#include "core/pose.h"
#include "core/retarget/contacts.h"
#include "core/retarget/humanoid.h"

namespace rigel {

std::vector<Biquad> ButterworthLowPass(int order, double cutoff_hz, double sample_rate_hz) {
  if (order < 1 || order > 8) {
    throw std::invalid_argument("Butterworth order must be 1..8, got " + std::to_string(order));
  }
  if (!(sample_rate_hz > 0) || !std::isfinite(sample_rate_hz) || !(cutoff_hz > 0) ||
      !(cutoff_hz < sample_rate_hz / 2)) {
    throw std::invalid_argument("cutoff must be in (0, " + std::to_string(sample_rate_hz / 2) +
                                ") Hz (half the frame rate), got " + std::to_string(cutoff_hz));
  }
  // scipy.signal.butter: prototype poles -exp(i pi m / 2N), m = -N+1, -N+3, ..., N-1; cutoff
  // pre-warped (normalised: fs = 2); bilinear transform p -> (4 + p) / (4 - p); zeros at -1.
  const double wn = 2.0 * cutoff_hz / sample_rate_hz;
  const double warped = 4.0 * std::tan(kPi * wn / 2.0);
  std::vector<Biquad> sections;
  for (int m = -order + 1; m <= 0; m += 2) {
    const std::complex<double> analog =
        -std::exp(std::complex<double>(0, kPi * m / (2.0 * order))) * warped;
    const std::complex<double> z = (4.0 + analog) / (4.0 - analog);
    if (m == 0) {  // the real pole of an odd order: a first-order section
      const double p = z.real();
      const double g = (1 - p) / 2;  // unit gain at DC
      sections.push_back({g, g, 0.0, 1.0, -p, 0.0});
    } else {
      const double a1 = -2 * z.real(), a2 = std::norm(z);
      const double g = (1 + a1 + a2) / 4;
      sections.push_back({g, 2 * g, g, 1.0, a1, a2});
    }
  }
  // scipy orders the sections with the poles nearest the unit circle last.
  std::stable_sort(sections.begin(), sections.end(),
                   [](const Biquad& a, const Biquad& b) { return a[5] < b[5]; });
  return sections;
}

namespace {

// sosfilt_zi: per section, the state at rest for a unit step at the cascade's input.
std::vector<std::array<double, 2>> SteadyStates(std::span<const Biquad> sections) {
  std::vector<std::array<double, 2>> zi;
  double scale = 1.0;
  for (const Biquad& s : sections) {
    const double h = (s[0] + s[1] + s[2]) / (s[3] + s[4] + s[5]);
    const double z1 = s[2] - s[5] * h;
    const double z0 = s[1] - s[4] * h + z1;
    zi.push_back({scale * z0, scale * z1});
    scale *= h;
  }
  return zi;
}

// One pass of the cascade (transposed direct form II) over `x` in place, from the states
// `zi` times `x0`.
void Cascade(std::span<const Biquad> sections, const std::vector<std::array<double, 2>>& zi,
             double x0, std::vector<double>& x) {
  for (std::size_t k = 0; k < sections.size(); ++k) {
    const Biquad& s = sections[k];
    double z0 = zi[k][0] * x0, z1 = zi[k][1] * x0;
    for (double& v : x) {
      const double y = s[0] * v + z0;
      z0 = s[1] * v - s[4] * y + z1;
      z1 = s[2] * v - s[5] * y;
      v = y;
    }
  }
}

}  // namespace

std::vector<double> FiltFilt(std::span<const Biquad> sections, std::span<const double> x) {
  const int n = static_cast<int>(x.size());
  if (n <= 1 || sections.empty()) return std::vector<double>(x.begin(), x.end());
  int first_order = 0;
  for (const Biquad& s : sections) first_order += s[2] == 0 && s[5] == 0;
  const int taps = 2 * static_cast<int>(sections.size()) + 1 - first_order;
  const int edge = std::min(3 * taps, n - 1);
  std::vector<double> ext;
  ext.reserve(n + 2 * edge);
  for (int i = edge; i >= 1; --i) ext.push_back(2 * x[0] - x[i]);
  ext.insert(ext.end(), x.begin(), x.end());
  for (int i = n - 2; i >= n - 1 - edge; --i) ext.push_back(2 * x[n - 1] - x[i]);
  const std::vector<std::array<double, 2>> zi = SteadyStates(sections);
  Cascade(sections, zi, ext.front(), ext);
  std::reverse(ext.begin(), ext.end());
  Cascade(sections, zi, ext.front(), ext);
  std::reverse(ext.begin(), ext.end());
  return std::vector<double>(ext.begin() + edge, ext.begin() + edge + n);
}

namespace {

void FilterRotation(const Skeleton& skeleton, const Clip& clip, int j,
                    std::span<const Biquad> sections, Clip& out) {
  const std::span<const int> rc = skeleton.rotation_channels(j);
  const int frames = clip.num_frames();
  const auto layout = skeleton.channels();
  if (rc.size() < 3) {
    // One or two axes: the angles themselves (unwrapped), which stay on their axes.
    for (const int c : rc) {
      std::vector<double> v(frames);
      for (int f = 0; f < frames; ++f) {
        v[f] = f == 0 ? clip.at(f, c) : WrapNear(clip.at(f, c), v[f - 1]);
      }
      const std::vector<double> y = FiltFilt(sections, v);
      for (int f = 0; f < frames; ++f) out.at(f, c) = y[f] + (clip.at(f, c) - v[f]);
    }
    return;
  }
  std::array<std::vector<double>, 4> q;
  for (auto& v : q) v.resize(frames);
  Eigen::Quaterniond previous = Eigen::Quaterniond::Identity();
  for (int f = 0; f < frames; ++f) {
    Eigen::Quaterniond r = Eigen::Quaterniond::Identity();
    for (const int c : rc) {
      r = r * Eigen::Quaterniond(
                  Eigen::AngleAxisd(clip.at(f, c), Eigen::Vector3d::Unit(ChannelAxis(layout[c]))));
    }
    if (f > 0 && r.dot(previous) < 0) r.coeffs() = -r.coeffs();
    previous = r;
    for (int k = 0; k < 4; ++k) q[k][f] = r.coeffs()[k];
  }
  for (auto& v : q) v = FiltFilt(sections, v);
  for (int f = 0; f < frames; ++f) {
    Eigen::Quaterniond r;
    r.coeffs() << q[0][f], q[1][f], q[2][f], q[3][f];
    r.normalize();
    SetRotationChannels(skeleton, j, r.toRotationMatrix(), out.frame(f), clip.frame(f));
  }
}

// Pins the feet of `out` where they were in `clip` over the contacts found on `clip`.
void KeepContacts(const Skeleton& skeleton, const Clip& clip, const FilterOptions& options,
                  Clip& out, FilterReport& report) {
  using retarget::Role;
  const retarget::HumanoidJoints humanoid = retarget::ClassifyHumanoid(skeleton);
  struct Leg {
    int upper, lower, foot;
  };
  std::vector<Leg> legs;
  for (const auto& [u, l, f] :
       {std::array<Role, 3>{Role::kLeftUpperLeg, Role::kLeftLowerLeg, Role::kLeftFoot},
        std::array<Role, 3>{Role::kRightUpperLeg, Role::kRightLowerLeg, Role::kRightFoot}}) {
    if (humanoid[u] >= 0 && humanoid[l] >= 0 && humanoid[f] >= 0) {
      legs.push_back({humanoid[u], humanoid[l], humanoid[f]});
    }
  }
  if (legs.empty() || clip.num_frames() < 3) return;
  std::vector<int> feet;
  for (const Leg& leg : legs) feet.push_back(leg.foot);
  Pose pose(skeleton);
  pose.SetFromRow(skeleton, clip.frame(0));
  retarget::ContactOptions contact;
  contact.up_axis = options.up_axis;
  contact.scale = retarget::FigureHipHeight(skeleton, pose.world, options.up_axis);
  const std::vector<retarget::ContactWindow> windows =
      retarget::DetectContacts(skeleton, clip, feet, contact);
  std::vector<Eigen::Isometry3d> world(skeleton.num_joints());
  for (const retarget::ContactWindow& w : windows) {
    const Leg& leg = legs[w.track];
    Eigen::Vector3d pin = Eigen::Vector3d::Zero();
    std::vector<Eigen::Matrix3d> orientation;
    for (int f = w.first; f <= w.last; ++f) {
      ForwardKinematics(skeleton, clip.frame(f), world);
      pin += world[leg.foot].translation();
      orientation.push_back(world[leg.foot].linear());
    }
    pin /= (w.last - w.first + 1);
    ++report.contacts;
    for (int f = w.first; f <= w.last; ++f) {
      const std::span<double> row = out.frame(f);
      ForwardKinematics(skeleton, row, world);
      bool reached = true;
      ik::TwoBoneJob job =
          ik::TwoBoneJob::OnLimb(skeleton, row, world, leg.upper, leg.lower, leg.foot);
      job.target = pin;
      job.reached = &reached;
      if (!job.Run()) continue;
      if (!reached) ++report.unreached;
      ForwardKinematics(skeleton, row, world);
      // The foot keeps its unfiltered world orientation.
      const int parent = skeleton.parent(leg.foot);
      const Eigen::Matrix3d parent_world = parent == Skeleton::kNoParent
                                               ? Eigen::Matrix3d::Identity()
                                               : Eigen::Matrix3d(world[parent].linear());
      const Eigen::Matrix3d local = parent_world.transpose() * orientation[f - w.first];
      const Eigen::Matrix3d channel_rotation =
          skeleton.rest_orientation(leg.foot).toRotationMatrix().transpose() * local;
      SetRotationChannels(skeleton, leg.foot, channel_rotation, row, row);
    }
  }
}

}  // namespace

Clip FilterClip(const Skeleton& skeleton, const Clip& clip, const FilterOptions& options,
                FilterReport* report) {
  if (!clip.matches(skeleton)) throw std::invalid_argument("the clip does not match the skeleton");
  const std::vector<Biquad> sections =
      ButterworthLowPass(options.order, options.cutoff_hz, clip.frame_rate());
  std::vector<char> chosen(skeleton.num_joints(), options.joints.empty() ? 1 : 0);
  for (const int j : options.joints) {
    if (j < 0 || j >= skeleton.num_joints()) {
      throw std::invalid_argument("joint index " + std::to_string(j) + " out of range");
    }
    chosen[j] = 1;
  }
  FilterReport local;
  FilterReport& r = report ? *report : local;
  r = {};
  Clip out = clip;
  if (clip.num_frames() < 2) return out;
  for (int j = 0; j < skeleton.num_joints(); ++j) {
    if (!chosen[j]) continue;
    ++r.joints_filtered;
    if (options.positions) {
      for (int a = 0; a < 3; ++a) {
        const int c = skeleton.translation_channel(j, a);
        if (c < 0) continue;
        std::vector<double> v(clip.num_frames());
        for (int f = 0; f < clip.num_frames(); ++f) v[f] = clip.at(f, c);
        const std::vector<double> y = FiltFilt(sections, v);
        for (int f = 0; f < clip.num_frames(); ++f) out.at(f, c) = y[f];
      }
    }
    if (options.rotations) FilterRotation(skeleton, clip, j, sections, out);
  }
  if (options.keep_contacts) KeepContacts(skeleton, clip, options, out, r);
  return out;
}

}  // namespace rigel
