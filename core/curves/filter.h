// Zero-phase Butterworth low-pass filtering of clips (the standard filter for motion capture).
//
// The filter is a cascade of second-order sections (biquads) designed as scipy.signal.butter
// (N, cutoff, fs=frame rate, output='sos') designs them (analog prototype, bilinear transform with
// the cutoff pre-warped), run forward and then backward as scipy.signal.sosfiltfilt runs it:
// odd extension of 3 * (2 * sections + 1) samples at each end (less one per first-order
// section), each pass started in the sections' steady state for the first sample (sosfilt_zi).
// The result has no phase lag; its gain is the square of the filter's (-6 dB at the cutoff).
#ifndef RIGEL_CORE_CURVES_FILTER_H_
#define RIGEL_CORE_CURVES_FILTER_H_

#include <array>
#include <span>
#include <vector>

#include "core/clip.h"
#include "core/skeleton.h"

namespace rigel {

// One second-order section: b0 b1 b2 a0 a1 a2 (a0 = 1), scipy's sos row.
using Biquad = std::array<double, 6>;

// The sections of an order-`order` (1..8) low-pass Butterworth filter with cutoff `cutoff_hz`
// for samples `sample_rate_hz` apart (0 < cutoff < sample_rate / 2). Throws
// std::invalid_argument otherwise.
std::vector<Biquad> ButterworthLowPass(int order, double cutoff_hz, double sample_rate_hz);

// `x` filtered forward and backward by `sections` (sosfiltfilt). A signal shorter than the
// extension is extended by as many samples as it has minus one (scipy refuses it); one sample
// comes back unchanged.
std::vector<double> FiltFilt(std::span<const Biquad> sections, std::span<const double> x);

struct FilterOptions {
  // Cutoff frequency in Hz (> 0, below half the clip's frame rate). Default 6 Hz.
  double cutoff_hz = 6.0;
  // Butterworth order of one pass (1..8). Default 2 (a 4th-order zero-phase response).
  int order = 2;
  // Joints to filter (indices); empty: every joint.
  std::vector<int> joints;
  // Filter position channels. Default true.
  bool positions = true;
  // Filter rotations. Default true.
  bool rotations = true;
  // Keep planted feet planted: the humanoid's foot contacts (core/retarget/contacts.h) are
  // found on the clip before filtering and, on their frames, each leg is solved back (two-bone
  // IK, core/ik/two_bone.h) so the foot is where it was, with its world orientation. Default true.
  bool keep_contacts = true;
  // Up axis for the contacts (0 X, 1 Y, 2 Z). Default Y.
  int up_axis = 1;
};

// What FilterClip did.
struct FilterReport {
  int joints_filtered = 0;
  // Contact windows kept, and the frames where a leg could not reach its pinned foot.
  int contacts = 0;
  int unreached = 0;
};

// `clip` (matching `skeleton`) low-pass filtered. Position channels are filtered as numbers. A
// joint's rotation is filtered as its channel rotation's quaternion, made sign-continuous over
// the clip, each component filtered, then normalised and written back into the joint's channels
// nearest their unfiltered values (no Euler wraps reach the filter, and Euler angles are never
// filtered). Blend-shape weights are kept. Throws std::invalid_argument for options out of range.
Clip FilterClip(const Skeleton& skeleton, const Clip& clip, const FilterOptions& options,
                FilterReport* report = nullptr);

}  // namespace rigel

#endif  // RIGEL_CORE_CURVES_FILTER_H_
