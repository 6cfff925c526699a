// A replacement of every global operator new and delete (plain, array, nothrow, aligned, sized)
// that counts allocations, for tests that prove a code path does not allocate. Link the object
// library rigel_counting_new into the test (tests/support/CMakeLists.txt); the replacements then
// apply to the whole test program.
//
// Every form is replaced, so each allocation and its release go through the same pair
// (malloc/free, or aligned_alloc/free): AddressSanitizer has no new/delete mismatch to report, and
// memory that libstdc++ allocates with `new (std::nothrow)` (std::stable_sort's buffer) is counted
// and freed consistently.
#ifndef RIGEL_TESTS_SUPPORT_COUNTING_NEW_H_
#define RIGEL_TESTS_SUPPORT_COUNTING_NEW_H_

namespace rigel::testing {

// Number of successful calls of any operator new form since the program started (all threads).
long AllocationCount();

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_SUPPORT_COUNTING_NEW_H_
