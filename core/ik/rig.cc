// The Rig's setters and the name tables of its enums (core/ik/rig.h).
#include "core/ik/rig.h"

#include <array>
#include <cstddef>
#include <utility>

#include "core/enum_names.h"
#include "core/ik/methods.h"

namespace rigel::ik {

// ---------------------------------------------------------------------------------------------
// Names.

namespace {

constexpr std::array<std::string_view, 4> kStatusNames = {"converged", "not_converged",
                                                          "unreachable", "invalid_input"};
static_assert(kStatusNames.size() == static_cast<std::size_t>(Status::kInvalidInput) + 1);

}  // namespace

// The spellings are the tables' of core/ik/methods.h, the ones scripts type.
std::string_view TaskTypeName(TaskType type) { return EnumName(type, kTaskTypeNames); }

std::string_view MethodName(Method method) {
  return static_cast<std::size_t>(method) < kMethodTable.size() ? RowOf(method).name : "?";
}

std::string_view StatusName(Status status) { return EnumName(status, kStatusNames); }

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
  bone_limits.assign(nj, BoneLimit{});
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

void Rig::SetCone(int joint, double max_angle) {
  BoneLimit& b = bone_limits[joint];
  b = BoneLimit{};
  b.kind = BoneLimit::Kind::kCone;
  b.max_angle = max_angle;
}

void Rig::SetHinge(int joint, const Eigen::Vector3d& axis, double lo, double hi) {
  BoneLimit& b = bone_limits[joint];
  b = BoneLimit{};
  b.kind = BoneLimit::Kind::kHinge;
  const double n = axis.norm();
  b.axis = n > 0 ? Eigen::Vector3d(axis / n) : axis;
  b.min = lo;
  b.max = hi;
}

void Rig::ClearBoneLimit(int joint) { bone_limits[joint] = BoneLimit{}; }

}  // namespace rigel::ik
