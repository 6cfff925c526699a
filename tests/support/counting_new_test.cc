// The counting operator new (counting_new.h): every form counts once, and memory from each form
// is released by the matching delete without a sanitizer report (run under .ci/sanitize).
#include "support/counting_new.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace rigel::testing {
namespace {

struct alignas(64) Wide {
  double v[8];
};

// Makes `p` escape, so the compiler cannot elide the new/delete pair around it (C++14 allows
// eliding a new-expression whose result is not used otherwise).
template <class T>
T* Keep(T* p) {
  asm volatile("" : : "g"(p) : "memory");
  return p;
}

TEST(CountingNew, EveryFormCountsOnce) {
  auto counted = [](auto&& allocate_and_free) {
    const long before = AllocationCount();
    allocate_and_free();
    return AllocationCount() - before;
  };
  EXPECT_EQ(counted([] { delete Keep(new int(1)); }), 1);
  EXPECT_EQ(counted([] { delete[] Keep(new int[5]); }), 1);
  EXPECT_EQ(counted([] { delete Keep(new (std::nothrow) int(2)); }), 1);
  EXPECT_EQ(counted([] { delete[] Keep(new (std::nothrow) int[3]); }), 1);
  EXPECT_EQ(counted([] {
              Wide* w = Keep(new Wide());
              EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w) % 64, 0u);
              delete w;
            }),
            1);
  EXPECT_EQ(counted([] { delete[] Keep(new Wide[3]); }), 1);
  EXPECT_EQ(counted([] { delete Keep(new (std::nothrow) Wide()); }), 1);
  EXPECT_EQ(counted([] {
              void* p = ::operator new(10, std::align_val_t(128), std::nothrow);
              EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 128, 0u);
              ::operator delete(p, std::align_val_t(128), std::nothrow);
            }),
            1);
  EXPECT_EQ(counted([] { ::operator delete(::operator new(0)); }), 1);
  EXPECT_EQ(counted([] {}), 0);
}

// std::stable_sort takes its buffer with new (std::nothrow) and frees it with delete: the pair
// ASan reported as a mismatch when only operator new(size_t) was replaced.
TEST(CountingNew, StableSortBufferIsCountedAndReleased) {
  std::vector<int> v(1000);
  for (int i = 0; i < 1000; ++i) v[i] = (i * 7919) % 1000;
  const long before = AllocationCount();
  std::stable_sort(v.begin(), v.end());
  EXPECT_GE(AllocationCount() - before, 1);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
}

}  // namespace
}  // namespace rigel::testing
