// The message an importer's error carries, for the tests of the importers' messages.
#ifndef RIGEL_TESTS_SUPPORT_IMPORT_ERROR_OF_H_
#define RIGEL_TESTS_SUPPORT_IMPORT_ERROR_OF_H_

#include <string>

#include "importers/import_error.h"

namespace rigel::testing {

// The message of the ImportError that `read()` throws, or "(no error)" when it throws none.
template <typename Read>
std::string ImportErrorOf(Read&& read) {
  try {
    read();
  } catch (const ImportError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SUPPORT_IMPORT_ERROR_OF_H_
