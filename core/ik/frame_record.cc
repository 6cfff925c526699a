#include "core/ik/frame_record.h"

#include <algorithm>
#include <numbers>

namespace rigel::ik {

double FrameRecord::SwivelJumpDegrees() const {
  double jump = 0.0;
  for (const LimbSwivel& limb : limbs) jump = std::max(jump, limb.jump);
  return jump * 180.0 / std::numbers::pi;
}

bool FrameRecord::AnyDegeneratePole() const {
  return std::any_of(limbs.begin(), limbs.end(),
                     [](const LimbSwivel& limb) { return limb.pole_degenerate; });
}

void RecordFrame(int frame, const SolveReport& report, FrameRecord* record) {
  record->frame = frame;
  // Status, iterations, restarts, channels on a limit and limbs (the vectors keep their capacity).
  static_cast<SolveOutcome&>(*record) = report;
  const size_t n = std::min(report.position_error.size(), report.angle_error.size());
  record->effectors.resize(n);
  for (size_t t = 0; t < n; ++t) {
    record->effectors[t] = {static_cast<int>(t), report.position_error[t], report.angle_error[t]};
  }
}

void RecordFrame(int frame, const Rig& rig, std::span<const Target> targets,
                 const SolveReport& report, FrameRecord* record) {
  RecordFrame(frame, report, record);
  for (EffectorResidual& e : record->effectors) {
    if (e.task >= static_cast<int>(targets.size()) ||
        e.task >= static_cast<int>(rig.tasks.size())) {
      continue;
    }
    e.target = targets[e.task].position;
    e.active = rig.tasks[e.task].weight * targets[e.task].weight > 0.0;
  }
}

}  // namespace rigel::ik
