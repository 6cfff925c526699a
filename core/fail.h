// The error style of rigel's Validate and Build functions: they return false and, when the caller
// passed a string, say why in it.
#ifndef RIGEL_CORE_FAIL_H_
#define RIGEL_CORE_FAIL_H_

#include <string>
#include <utility>

namespace rigel {

// Sets *error (when given) to `message` and returns false.
inline bool Fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

}  // namespace rigel

#endif  // RIGEL_CORE_FAIL_H_
