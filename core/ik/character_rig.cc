// The character rig's effectors. See character_rig.h.
#include "core/ik/character_rig.h"

#include "core/fail.h"
#include "core/ik/methods.h"

namespace rigel::ik {

int CharacterRig::AddEffector(const Task& given, const Target& target, std::string name,
                              std::string* error) {
  const Skeleton& s = rig.skeleton();
  Task task = given;
  if (task.joint < 0 || task.joint >= s.num_joints()) {
    Fail(error, "effector joint " + std::to_string(task.joint) + " is not a joint of the skeleton");
    return -1;
  }
  if (task.type == TaskType::kPole) {
    // Default chain for a pole on an end joint: its grandparent and parent (hip-knee-ankle).
    if (task.pole_mid < 0) task.pole_mid = s.parent(task.joint);
    if (task.pole_root < 0 && task.pole_mid >= 0) task.pole_root = s.parent(task.pole_mid);
    if (task.pole_mid < 0 || task.pole_root < 0 || !IsAncestor(s, task.pole_mid, task.joint) ||
        !IsAncestor(s, task.pole_root, task.pole_mid)) {
      Fail(error,
           "a pole needs root and mid joints that are ancestors of the effector joint (root "
           "above mid)");
      return -1;
    }
  }
  if (name.empty()) {
    name = task.type == TaskType::kPosition
               ? s.name(task.joint)
               : s.name(task.joint) + "." + std::string(TaskTypeName(task.type));
  }
  if (FindEffector(name) >= 0) {
    Fail(error, "effector '" + name + "' already exists (give another name)");
    return -1;
  }
  const int index = rig.AddTask(task);
  names.push_back(std::move(name));
  targets.push_back(target);
  return index;
}

int CharacterRig::FindEffector(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace rigel::ik
