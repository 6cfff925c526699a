// ImportError: the one exception importers throw. Its message is complete and ready for the
// user: "file:line: expected X, found Y" (or "file: reason" when no line applies).
#ifndef RIGEL_IMPORTERS_IMPORT_ERROR_H_
#define RIGEL_IMPORTERS_IMPORT_ERROR_H_

#include <stdexcept>
#include <string>

namespace rigel {

class ImportError : public std::runtime_error {
 public:
  explicit ImportError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace rigel

#endif  // RIGEL_IMPORTERS_IMPORT_ERROR_H_
