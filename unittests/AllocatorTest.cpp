//===- AllocatorTest.cpp - The CPU allocator's block cache ---------------===//
//
// What a run's memory report and --memory-limit rely on: cached blocks are
// reused and stay counted until released, outputs a caller lets go come
// back to the cache, and a limit returns the cache before it fails.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/BlockCache.h"

#include <gtest/gtest.h>

using namespace traceir;

namespace {

// The allocator keeps no cache under AddressSanitizer (BlockCache.h).
#define SKIP_WITHOUT_CACHE()                                                   \
  if (!kCacheHostBlocks)                                                       \
  GTEST_SKIP() << "no block cache under AddressSanitizer"

constexpr size_t kBig = size_t(1) << 20;

TEST(CPUAllocatorTest, SmallBlocksAreNotCached) {
  auto a = createCPUAllocator();
  void *p = a->allocate(4000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(a->allocatedBytes(), 4032); // rounded to 64 bytes
  a->deallocate(p, 4000);
  EXPECT_EQ(a->allocatedBytes(), 0);
}

TEST(CPUAllocatorTest, FreedBlocksAreReusedAndCountedUntilReleased) {
  SKIP_WITHOUT_CACHE();
  auto a = createCPUAllocator();
  void *p = a->allocate(kBig);
  ASSERT_NE(p, nullptr);
  a->deallocate(p, kBig);
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig)); // held from the system
  // The same size, or a smaller one down to half, takes the cached block.
  void *q = a->allocate(kBig / 2 + 64);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig));
  a->deallocate(q, kBig / 2 + 64);
  // Below half of it, a block of its own.
  void *r = a->allocate(kBig / 4);
  EXPECT_NE(r, p);
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig + kBig / 4));
  a->deallocate(r, kBig / 4);
  a->releaseCache();
  EXPECT_EQ(a->allocatedBytes(), 0);
}

TEST(CPUAllocatorTest, AdoptedBlocksComeBackWhenTheCallerLetsGo) {
  SKIP_WITHOUT_CACHE();
  auto a = createCPUAllocator();
  void *p = a->allocate(kBig);
  ASSERT_NE(p, nullptr);
  std::shared_ptr<void> out = a->adopt(p, kBig);
  ASSERT_EQ(out.get(), p);
  EXPECT_EQ(a->allocatedBytes(), 0); // the caller's now
  out.reset();
  // The next allocation takes it back, counted again.
  void *q = a->allocate(kBig);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig));
  a->deallocate(q, kBig);
  // A cached block taken for a smaller output leaves the counts whole.
  void *half = a->allocate(kBig / 2 + 64);
  EXPECT_EQ(half, p);
  std::shared_ptr<void> smaller = a->adopt(half, kBig / 2 + 64);
  EXPECT_EQ(a->allocatedBytes(), 0);
  smaller.reset();
  void *again = a->allocate(kBig);
  EXPECT_EQ(again, p);
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig));
  a->deallocate(again, kBig);
  // An output that outlives its allocator frees its own block.
  void *s = a->allocate(kBig);
  std::shared_ptr<void> kept = a->adopt(s, kBig);
  a.reset();
  kept.reset();
}

TEST(CPUAllocatorTest, ALimitReturnsTheCacheBeforeItFails) {
  SKIP_WITHOUT_CACHE();
  auto a = createCPUAllocator();
  void *p = a->allocate(kBig);
  ASSERT_NE(p, nullptr);
  a->deallocate(p, kBig);
  a->setLimit(int64_t(kBig + kBig / 2));
  // The cached 1 MiB is too small to take, and with it held 1.25 MiB more
  // would pass the limit: the cache goes back to the system first.
  void *big = a->allocate(kBig + kBig / 4);
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(a->lastFailureWasLimit());
  EXPECT_EQ(a->allocatedBytes(), int64_t(kBig + kBig / 4));
  a->deallocate(big, kBig + kBig / 4);
  a->setLimit(std::nullopt);
}

} // namespace
