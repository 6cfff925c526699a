// The Rig's setters and the name tables of its enums (core/ik/rig.h).
#include "core/ik/rig.h"

#include <utility>

namespace rigel::ik {

// ---------------------------------------------------------------------------------------------
// Names.

std::string_view TaskTypeName(TaskType type) {
  switch (type) {
    case TaskType::kPosition:
      return "position";
    case TaskType::kOrientation:
      return "orientation";
    case TaskType::kPose:
      return "pose";
    case TaskType::kAim:
      return "aim";
    case TaskType::kPole:
      return "pole";
  }
  return "?";
}

std::string_view MethodName(Method method) {
  switch (method) {
    case Method::kTranspose:
      return "transpose";
    case Method::kPseudoInverse:
      return "pseudo_inverse";
    case Method::kSvd:
      return "svd";
    case Method::kQr:
      return "qr";
    case Method::kDls:
      return "dls";
    case Method::kDlsAdaptive:
      return "dls_adaptive";
    case Method::kCcd:
      return "ccd";
    case Method::kTwoBone:
      return "two_bone";
  }
  return "?";
}

std::string_view StatusName(Status status) {
  switch (status) {
    case Status::kConverged:
      return "converged";
    case Status::kNotConverged:
      return "not_converged";
    case Status::kUnreachable:
      return "unreachable";
    case Status::kInvalidInput:
      return "invalid_input";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Rig.

Rig::Rig(std::shared_ptr<const Skeleton> skeleton) : skeleton_(std::move(skeleton)) {
  const size_t nc = skeleton_ ? skeleton_->num_channels() : 0;
  const size_t nj = skeleton_ ? skeleton_->num_joints() : 0;
  min.assign(nc, -kInf);
  max.assign(nc, kInf);
  locked.assign(nc, 0);
  preferred.assign(nc, 0.0);
  preferred_gain.assign(nc, 0.0);
  strength.assign(nj, 1.0);
}

int Rig::AddTask(const Task& task) {
  tasks.push_back(task);
  return static_cast<int>(tasks.size()) - 1;
}

void Rig::SetLimits(int channel, double lo, double hi) {
  min[channel] = lo;
  max[channel] = hi;
}

void Rig::Lock(int channel, bool lock) { locked[channel] = lock ? 1 : 0; }

void Rig::SetStrength(int joint, double s) { strength[joint] = s; }

void Rig::SetPreferred(int channel, double value, double gain) {
  preferred[channel] = value;
  preferred_gain[channel] = gain;
}

}  // namespace rigel::ik
