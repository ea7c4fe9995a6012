//===- MemoryPlanTest.cpp - The memory plan's checker ---------------------===//
//
// MemoryPlan::verify, which a placement must pass (the planner's own and
// one read back from the IR): buffers alive at once must not share bytes,
// and every offset must be aligned and inside the arena. MemoryPlan::place,
// the planner itself, on buffers of a real graph and on random ones.
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

// ConvNeXt-tiny's forward graph at the zoo's size (bench/memory_plan.py):
// its 118 planned buffers as {size in 64-byte units, first, last}. No
// fixed order reaches the bound (greedy by size takes 1.22 times it); the
// local search does.
TEST(MemoryPlanPlace, LocalSearchReachesTheBoundWhereOrdersDoNot) {
  const unsigned convnext[][3] = {
      {384, 0, 3},     {384, 2, 19},    {384, 5, 8},     {384, 7, 10},
      {1536, 9, 12},   {1536, 11, 14},  {384, 13, 17},   {384, 16, 34},
      {384, 20, 23},   {384, 22, 25},   {1536, 24, 27},  {1536, 26, 29},
      {384, 28, 32},   {384, 31, 49},   {384, 35, 38},   {384, 37, 40},
      {1536, 39, 42},  {1536, 41, 44},  {384, 43, 47},   {384, 46, 52},
      {384, 51, 55},   {192, 54, 70},   {192, 56, 59},   {192, 58, 61},
      {768, 60, 63},   {768, 62, 65},   {192, 64, 68},   {192, 67, 85},
      {192, 71, 74},   {192, 73, 76},   {768, 75, 78},   {768, 77, 80},
      {192, 79, 83},   {192, 82, 100},  {192, 86, 89},   {192, 88, 91},
      {768, 90, 93},   {768, 92, 95},   {192, 94, 98},   {192, 97, 103},
      {192, 102, 106}, {96, 105, 121},  {96, 107, 110},  {96, 109, 112},
      {384, 111, 114}, {384, 113, 116}, {96, 115, 119},  {96, 118, 136},
      {96, 122, 125},  {96, 124, 127},  {384, 126, 129}, {384, 128, 131},
      {96, 130, 134},  {96, 133, 151},  {96, 137, 140},  {96, 139, 142},
      {384, 141, 144}, {384, 143, 146}, {96, 145, 149},  {96, 148, 166},
      {96, 152, 155},  {96, 154, 157},  {384, 156, 159}, {384, 158, 161},
      {96, 160, 164},  {96, 163, 181},  {96, 167, 170},  {96, 169, 172},
      {384, 171, 174}, {384, 173, 176}, {96, 175, 179},  {96, 178, 196},
      {96, 182, 185},  {96, 184, 187},  {384, 186, 189}, {384, 188, 191},
      {96, 190, 194},  {96, 193, 211},  {96, 197, 200},  {96, 199, 202},
      {384, 201, 204}, {384, 203, 206}, {96, 205, 209},  {96, 208, 226},
      {96, 212, 215},  {96, 214, 217},  {384, 216, 219}, {384, 218, 221},
      {96, 220, 224},  {96, 223, 241},  {96, 227, 230},  {96, 229, 232},
      {384, 231, 234}, {384, 233, 236}, {96, 235, 239},  {96, 238, 244},
      {96, 243, 247},  {48, 246, 262},  {48, 248, 251},  {48, 250, 253},
      {192, 252, 255}, {192, 254, 257}, {48, 256, 260},  {48, 259, 277},
      {48, 263, 266},  {48, 265, 268},  {192, 267, 270}, {192, 269, 272},
      {48, 271, 275},  {48, 274, 292},  {48, 278, 281},  {48, 280, 283},
      {192, 282, 285}, {192, 284, 287}, {48, 286, 290},  {48, 289, 294},
      {48, 293, 297},  {48, 296, 301}};
  std::vector<MemoryPlan::Buffer> buffers;
  unsigned positions = 0;
  for (auto [units, first, last] : convnext) {
    buffers.push_back(buffer(buffers.size(), 64 * units, first, last, 0));
    positions = std::max(positions, last + 1);
  }
  MemoryPlan::Placement p = MemoryPlan::place(buffers, positions);
  EXPECT_EQ(p.lowerBoundBytes, 221184);
  EXPECT_EQ(p.greedyBySizeBytes, 270336);
  EXPECT_EQ(p.arenaBytes, p.lowerBoundBytes);
  EXPECT_EQ(p.order, "local search");
  EXPECT_EQ(MemoryPlan::verify(buffers, p.arenaBytes, 64), "");
}

// Random buffers: every placement verifies, and lies between the bound
// and greedy by size's arena.
TEST(MemoryPlanPlace, RandomBuffersPlaceBetweenBoundAndGreedyBySize) {
  uint64_t state = 12345;
  auto next = [&](unsigned bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return unsigned(state >> 33) % bound;
  };
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<MemoryPlan::Buffer> buffers;
    unsigned positions = 8 + next(120);
    unsigned n = 1 + next(60);
    for (unsigned i = 0; i < n; ++i) {
      unsigned first = next(positions);
      unsigned last = first + next(positions - first);
      buffers.push_back(buffer(i, 64 * (1 + next(32)), first, last, 0));
    }
    MemoryPlan::Placement p = MemoryPlan::place(buffers, positions);
    EXPECT_EQ(MemoryPlan::verify(buffers, p.arenaBytes, 64), "") << trial;
    EXPECT_LE(p.lowerBoundBytes, p.arenaBytes) << trial;
    EXPECT_LE(p.arenaBytes, p.greedyBySizeBytes) << trial;
    int64_t end = 0;
    for (const MemoryPlan::Buffer &b : buffers)
      end = std::max(end, b.offset + b.size);
    EXPECT_EQ(end, p.arenaBytes) << trial;
  }
}
} // namespace
