// Shared by the libFuzzer harnesses: FUZZ_CHECK stops the run (abort, so libFuzzer saves the
// input as a crash) when a property the harness checks does not hold.
#ifndef RIGEL_TESTS_FUZZ_FUZZ_CHECK_H_
#define RIGEL_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

// Aborts with "file:line: property failed: <condition> (<message>)".
#define FUZZ_CHECK(condition, message)                                                          \
  do {                                                                                          \
    if (!(condition)) {                                                                         \
      std::fprintf(stderr, "%s:%d: property failed: %s (%s)\n", __FILE__, __LINE__, #condition, \
                   static_cast<const char*>(message));                                          \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

#endif  // RIGEL_TESTS_FUZZ_FUZZ_CHECK_H_
