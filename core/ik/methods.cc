#include "core/ik/methods.h"

namespace rigel::ik {

const MethodRow* FindMethod(std::string_view name) {
  for (const MethodRow& row : kMethodTable) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

}  // namespace rigel::ik
