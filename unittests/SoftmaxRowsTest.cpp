//===- SoftmaxRowsTest.cpp - The CUDA tier's typed row softmax ------------===//
//
// SoftmaxRows.h on the CPU: the per-thread passes of the CUDA optimized
// tier's softmax kernel run here over every thread of a block (the block
// reductions done in thread order), their results compared with softmax
// computed in double as the portable kernel does, for every dtype, both
// vector widths, blocks of one to 256 threads, rows a block does not
// divide, NaN and infinities, and in place. What the GPU runs is then
// checked without a GPU but for the launch itself.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/SoftmaxRows.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

using namespace traceir;

namespace {

/// Threads per block of the host run (the device takes a power of two from
/// 32 to 256 by the row's length; any count must give the same values).
int gThreads = 1;

/// The kernel's work for one block per row, thread by thread.
template <int32_t DT, int VEC> struct HostRun {
  static void run(const SoftmaxRowsPlan &p) {
    using R = SoftmaxRow<DT, VEC>;
    using T = typename R::T;
    using C = typename R::C;
    const int64_t B = gThreads;
    for (int64_t row = 0; row < p.rows; ++row) {
      const T *x = reinterpret_cast<const T *>(p.in) + row * p.n;
      T *y = reinterpret_cast<T *>(p.out) + row * p.n;
      C mx = C(-INFINITY), sum = 0;
      for (int64_t t = 0; t < B; ++t)
        mx = R::maxOf(mx, R::partialMax(x, p.n, t, B));
      for (int64_t t = 0; t < B; ++t)
        sum += R::partialSum(x, p.n, t, B, mx);
      for (int64_t t = 0; t < B; ++t)
        R::write(x, y, p.n, t, B, mx, sum, p.log);
    }
  }
};

/// Bytes aligned to 64, `offset` bytes in (to misalign on purpose).
struct Buffer {
  std::vector<char> bytes;
  char *at;
  Buffer(int64_t size, int64_t offset = 0)
      : bytes(static_cast<size_t>(size + 128)) {
    uintptr_t p = reinterpret_cast<uintptr_t>(bytes.data());
    at = bytes.data() + (64 - p % 64) % 64 + offset;
  }
};

/// softmax (or log_softmax) of each row in double, as the portable kernel
/// computes it.
std::vector<double> reference(const std::vector<double> &x, int64_t n,
                              bool log) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    const double *row = x.data() + r * n;
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i)
      mx = std::isnan(row[i]) || row[i] > mx ? row[i] : mx;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += std::exp(row[i] - mx);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] =
          log ? row[i] - mx - std::log(sum) : std::exp(row[i] - mx) / sum;
  }
  return y;
}

/// Runs the host kernel on `values` (rows of n) of dtype DT and checks every
/// result against the double reference within `tol` (relative, and
/// absolute near zero); NaN where the reference is NaN.
template <int32_t DT>
void check(const std::vector<double> &values, int64_t n, bool log, double tol,
           bool inPlace = false, int64_t misalign = 0) {
  using E = EwElt<DT>;
  using T = typename E::T;
  const int64_t count = static_cast<int64_t>(values.size());
  Buffer in(count * sizeof(T)), outBuf(count * sizeof(T), misalign);
  T *x = reinterpret_cast<T *>(in.at);
  std::vector<double> rounded(count);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = E::store(typename E::C(values[i]));
    rounded[i] = double(E::load(x[i]));
  }
  SoftmaxRowsPlan p;
  p.in = in.at;
  p.out = inPlace ? in.at : outBuf.at;
  p.dtype = DT;
  p.n = n;
  p.rows = count / n;
  p.log = log;
  p.vec = softmaxRowsVectorWidth(p);
  softmaxRowsDispatch<HostRun>(p);
  const std::vector<double> want = reference(rounded, n, log);
  const T *y = reinterpret_cast<const T *>(p.out);
  for (int64_t i = 0; i < count; ++i) {
    double got = double(E::load(y[i]));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
      continue;
    }
    if (std::isinf(want[i])) { // log_softmax of -inf
      EXPECT_EQ(got, want[i]) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got, want[i], tol * std::max(1.0, std::fabs(want[i])))
        << "element " << i << " of rows of " << n << ", vec " << p.vec << ", "
        << gThreads << " threads";
  }
}

std::vector<double> randomValues(int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 3.0);
  std::vector<double> v(count);
  for (double &x : v)
    x = dist(gen);
  return v;
}

template <int32_t DT> void everyShape(double tol) {
  for (int threads : {1, 32, 256})
    for (int64_t n : {1, 7, 64, 1000, 1030})
      for (bool log : {false, true}) {
        gThreads = threads;
        check<DT>(randomValues(3 * n, unsigned(n)), n, log, tol);
      }
}

TEST(SoftmaxRowsTest, MatchesThePortableKernel) {
  everyShape<F32>(2e-6);
  everyShape<F64>(1e-13);
  everyShape<F16>(2e-3);
  everyShape<BF16>(1e-2);
}

TEST(SoftmaxRowsTest, VectorWidth) {
  Buffer a(4096), b(4096), off(4096, 4);
  SoftmaxRowsPlan p;
  p.in = a.at;
  p.out = b.at;
  p.dtype = F32;
  p.n = 64;
  EXPECT_EQ(softmaxRowsVectorWidth(p), 4);
  p.dtype = F16;
  EXPECT_EQ(softmaxRowsVectorWidth(p), 8);
  p.dtype = F64;
  EXPECT_EQ(softmaxRowsVectorWidth(p), 2);
  // Rows that are not a whole number of vectors, or a misaligned base.
  p.dtype = F32;
  p.n = 66;
  EXPECT_EQ(softmaxRowsVectorWidth(p), 1);
  p.n = 64;
  p.out = off.at;
  EXPECT_EQ(softmaxRowsVectorWidth(p), 1);
  // A misaligned result runs element by element, with the same values.
  gThreads = 32;
  check<F32>(randomValues(128, 5), 64, false, 2e-6, false, 4);
}

TEST(SoftmaxRowsTest, NaNAndInfinities) {
  gThreads = 32;
  const double inf = INFINITY, nan = NAN;
  // A NaN makes its row NaN, and only its row; -inf is a zero probability
  // (a row of -inf alone is NaN, 0/0, as eager's); +inf makes its row NaN.
  std::vector<double> v = {1,    2,    nan,  4,    0, -inf, 1, -inf,
                           -inf, -inf, -inf, -inf, 3, inf,  1, 2};
  for (bool log : {false, true}) {
    check<F32>(v, 4, log, 2e-6);
    check<F16>(v, 4, log, 2e-3);
    check<F64>(v, 4, log, 1e-13);
  }
}

TEST(SoftmaxRowsTest, InPlace) {
  for (int threads : {1, 32}) {
    gThreads = threads;
    check<F32>(randomValues(4 * 96, 9), 96, false, 2e-6, /*inPlace=*/true);
    check<BF16>(randomValues(4 * 96, 9), 96, true, 1e-2, /*inPlace=*/true);
  }
}

} // namespace
