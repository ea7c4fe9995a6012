//===- MemoryPlanTest.cpp - The memory plan's checker ---------------------===//
//
// MemoryPlan::verify, which a placement must pass (the planner's own and,
// later, one read back from the IR): buffers alive at once must not share
// bytes, and every offset must be aligned and inside the arena.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/MemoryPlan.h"

#include "gtest/gtest.h"

using namespace mlir::trace;

namespace {
MemoryPlan::Buffer buffer(unsigned storage, int64_t size, unsigned first,
                          unsigned last, int64_t offset) {
  MemoryPlan::Buffer b;
  b.storage = storage;
  b.size = size;
  b.first = first;
  b.last = last;
  b.offset = offset;
  return b;
}

TEST(MemoryPlanVerify, BuffersAliveAtDifferentTimesShareBytes) {
  // #0 dies at op 2, #1 is born at op 3 in its bytes; #2 lives beside both.
  std::vector<MemoryPlan::Buffer> b = {buffer(0, 128, 0, 2, 0),
                                       buffer(1, 64, 3, 5, 64),
                                       buffer(2, 64, 1, 4, 128)};
  EXPECT_EQ(MemoryPlan::verify(b, 192, 64), "");
}

TEST(MemoryPlanVerify, OverlapOfBuffersAliveAtOnceIsNamed) {
  // #1 is born at op 2, the op #0 dies after: both are alive there.
  std::vector<MemoryPlan::Buffer> b = {buffer(0, 128, 0, 2, 0),
                                       buffer(7, 64, 2, 5, 64)};
  EXPECT_EQ(MemoryPlan::verify(b, 192, 64),
            "storages #0 and #7 are alive at once and overlap");
}

TEST(MemoryPlanVerify, OffsetsAlignedAndInsideTheArena) {
  EXPECT_NE(MemoryPlan::verify({buffer(3, 64, 0, 1, 32)}, 128, 64)
                .find("storage #3 at offset 32"),
            std::string::npos);
  EXPECT_NE(MemoryPlan::verify({buffer(3, 128, 0, 1, 64)}, 128, 64), "");
  EXPECT_NE(MemoryPlan::verify({buffer(3, 64, 0, 1, -64)}, 128, 64), "");
  EXPECT_EQ(MemoryPlan::verify({buffer(3, 64, 0, 1, 64)}, 128, 64), "");
}
} // namespace
