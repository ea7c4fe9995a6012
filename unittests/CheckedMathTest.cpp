//===- CheckedMathTest.cpp - Overflow-checked size arithmetic -------------===//
//
// The edge cases a fuzzer found in shape arithmetic: every helper must say
// "does not fit" where the plain formula would wrap.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Support/CheckedMath.h"

#include "gtest/gtest.h"

#include <vector>

using namespace traceir;

namespace {

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;

TEST(CheckedMathTest, MulAddSub) {
  EXPECT_EQ(checkedMul(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
  EXPECT_FALSE(checkedMul(int64_t(1) << 32, int64_t(1) << 31));
  EXPECT_FALSE(checkedMul(kMin, -1));
  EXPECT_EQ(checkedMul(kMax, 1), kMax);
  EXPECT_FALSE(checkedAdd(kMax, 1));
  EXPECT_FALSE(checkedSub(kMin, 1));
  EXPECT_EQ(checkedSub(0, kMax), -kMax);
}

TEST(CheckedMathTest, Numel) {
  EXPECT_EQ(checkedNumel({}), 1);
  EXPECT_EQ(checkedNumel({kMax}), kMax);
  EXPECT_FALSE(checkedNumel({kMax, 2}));
  // 2^32 x 2^32 = 2^64: the runtime used to wrap it to 0 elements.
  EXPECT_FALSE(checkedNumel({int64_t(1) << 32, int64_t(1) << 32}));
  // A zero dim does not hide an overflowing product of the others.
  EXPECT_EQ(checkedNumel({0, kMax}), 0);
  EXPECT_FALSE(checkedNumel({0, kMax, 2}));
  EXPECT_FALSE(checkedNumel({2, -1}));
  EXPECT_FALSE(checkedNumel({-2, -3})); // a product of negatives is positive
}

TEST(CheckedMathTest, TensorBytes) {
  EXPECT_EQ(checkedTensorBytes(std::vector<int64_t>{int64_t(1) << 46}, 4),
            kMaxTensorBytes);
  EXPECT_FALSE(
      checkedTensorBytes(std::vector<int64_t>{(int64_t(1) << 46) + 1}, 4));
  EXPECT_FALSE(checkedTensorBytes(std::vector<int64_t>{kMax}, 8));
  EXPECT_EQ(checkedTensorBytes(std::vector<int64_t>{0, int64_t(1) << 60}, 8),
            0);
}

TEST(CheckedMathTest, WindowOutput) {
  // (5 + 2 - 2 - 1) / 1 + 1 = 5
  EXPECT_EQ(checkedWindowOutput(5, 3, 1, 1, 1), 5);
  EXPECT_EQ(checkedWindowOutput(4, 3, 2, 0, 1), 1);
  EXPECT_EQ(checkedWindowOutput(4, 3, 2, 0, 1, /*ceilMode=*/true), 2);
  // A pad of 2^62 doubles to 2^63: overflow, not a wrapped window.
  EXPECT_FALSE(checkedWindowOutput(5, 3, 1, int64_t(1) << 62, 1));
  EXPECT_FALSE(checkedWindowOutput(kMax, 1, 1, 1, 1));
  EXPECT_FALSE(checkedWindowOutput(5, kMax, 1, 0, kMax));
  EXPECT_FALSE(checkedWindowOutput(5, 3, 0, 0, 1)); // stride 0
  EXPECT_FALSE(checkedWindowOutput(5, 3, -1, 0, 1));
  EXPECT_FALSE(checkedWindowOutput(5, 3, 1, -1, 1));
  EXPECT_FALSE(checkedWindowOutput(2, 5, 1, 0, 1)); // kernel over the input
  EXPECT_EQ(checkedWindowOutput(1, 1, kMax, 0, 1, true), 1);
}

TEST(CheckedMathTest, ContiguousStrides) {
  std::vector<int64_t> strides;
  ASSERT_TRUE(checkedContiguousStrides(std::vector<int64_t>{2, 3, 4}, strides));
  EXPECT_EQ(strides, (std::vector<int64_t>{12, 4, 1}));
  ASSERT_TRUE(checkedContiguousStrides(std::vector<int64_t>{3, 0, 4}, strides));
  EXPECT_EQ(strides, (std::vector<int64_t>{4, 4, 1}));
  EXPECT_FALSE(checkedContiguousStrides(
      std::vector<int64_t>{1, int64_t(1) << 32, int64_t(1) << 32}, strides));
  EXPECT_FALSE(checkedContiguousStrides(std::vector<int64_t>{1, -2}, strides));
}

TEST(CheckedMathTest, ViewExtent) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(checkedViewExtent(V{2, 3}, V{3, 1}, 0), 6);
  EXPECT_EQ(checkedViewExtent(V{2, 3}, V{3, 1}, 4), 10);
  EXPECT_EQ(checkedViewExtent(V{}, V{}, 5), 6);
  EXPECT_EQ(checkedViewExtent(V{0, kMax}, V{1, 1}, 7), 0);
  // An expanded 2^32 x 2^32 view of one element: its numel overflows.
  EXPECT_FALSE(
      checkedViewExtent(V{int64_t(1) << 32, int64_t(1) << 32}, V{0, 0}, 0));
  EXPECT_FALSE(checkedViewExtent(V{2, 2}, V{kMax, 1}, 0));
  EXPECT_FALSE(checkedViewExtent(V{2}, V{1}, kMax));
  EXPECT_FALSE(checkedViewExtent(V{2}, V{-1}, 3));
  EXPECT_FALSE(checkedViewExtent(V{2}, V{1}, -1));
  EXPECT_FALSE(checkedViewExtent(V{2}, V{1, 1}, 0));
}

TEST(CheckedMathTest, NarrowStart) {
  EXPECT_EQ(checkedNarrowStart(9, 2, 3), 2);
  EXPECT_EQ(checkedNarrowStart(9, -3, 3), 6);
  EXPECT_EQ(checkedNarrowStart(9, 9, 0), 9);
  EXPECT_FALSE(checkedNarrowStart(9, 2, 8));
  // start + length wraps to a small number without the check.
  EXPECT_FALSE(checkedNarrowStart(9, 2, kMax));
  EXPECT_FALSE(checkedNarrowStart(9, kMin, 1));
  EXPECT_FALSE(checkedNarrowStart(9, -10, 1));
  EXPECT_FALSE(checkedNarrowStart(9, 0, -1));
}

} // namespace
