//===- ElementwisePlanTest.cpp - The typed elementwise loops' plan --------===//
//
// ElementwisePlan.h on the CPU: which launches the typed loops cover, the
// coalesced plan, the CUDA loop's vector width, and the CUDA loop's own
// per-thread body (ewTypedVector) run over every thread of a launch here,
// its results compared with the portable loop's (ewElement), so that what
// the GPU runs is checked without a GPU but for the launch itself.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/ElementwisePlan.h"
#include "TraceIR/Runtime/CPU/Optimized.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

using namespace traceir;

namespace {

/// Bytes aligned to 64 (as the allocators' buffers), with an offset in
/// elements to misalign on purpose.
struct Buffer {
  std::vector<char> bytes;
  char *at = nullptr;
  Buffer(int64_t size, int64_t offsetBytes = 0)
      : bytes(static_cast<size_t>(size + 128)) {
    uintptr_t p = reinterpret_cast<uintptr_t>(bytes.data());
    at = bytes.data() + ((64 - p % 64) % 64) + offsetBytes;
  }
};

int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &shape) {
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    st[d] = s;
    s *= shape[d];
  }
  return st;
}

/// A launch over a contiguous output of `shape` and dtype `dt`.
EwLaunch launchOf(EwOp op, int32_t dt, const std::vector<int64_t> &shape,
                  char *out) {
  EwLaunch L;
  L.op = op;
  L.rank = static_cast<int32_t>(shape.size());
  L.numel = numelOf(shape);
  L.out = out;
  L.outDtype = dt;
  std::vector<int64_t> st = contiguous(shape);
  for (int d = 0; d < L.rank; ++d) {
    L.shape[d] = shape[d];
    L.outStrides[d] = st[d];
  }
  return L;
}

void addTensor(EwLaunch &L, const char *data, int32_t dt,
               const std::vector<int64_t> &strides) {
  EwOperand &o = L.in[L.numOperands++];
  o.data = data;
  o.dtype = dt;
  for (int d = 0; d < L.rank; ++d)
    o.strides[d] = strides[d];
}

void addNumber(EwLaunch &L, double v) {
  EwOperand &o = L.in[L.numOperands++];
  o.number = v;
}

/// Fills n elements of dtype dt with values in [-3, 3].
void fill(char *p, int32_t dt, int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int64_t i = 0; i < n; ++i)
    ewStoreDouble(p + i * ewSize(dt), dt, u(gen));
}

/// Every thread of the CUDA typed loop, run on the host (for
/// ewTypedDispatch, as the CUDA launch).
template <int32_t DT, int N, int VEC> struct RunTyped {
  static void run(const EwLaunch &L, const EwPlan &p) {
    const uint32_t n = static_cast<uint32_t>(L.numel);
    for (uint32_t t = 0; t < (n + VEC - 1) / VEC; ++t)
      ewTypedVector<DT, N, VEC, uint32_t>(L, p, n, t);
  }
};

/// The typed loop at the width ewVectorWidth picks (and, where that is
/// wider than 1, also element by element) against the portable loop: each
/// output element within `tol` (relative) of the portable one, which
/// computes in double and rounds once.
void expectTypedMatchesPortable(EwLaunch L, int expectVec, double tol) {
  ASSERT_TRUE(ewTypedCovers(L));
  const EwPlan p = ewCoalesce(L);
  const int vec = ewVectorWidth(L, p);
  EXPECT_EQ(vec, expectVec);
  const int size = ewSize(L.outDtype);
  // The output's span (contiguous outputs only here).
  const int64_t bytes = L.numel * size;
  std::vector<char> want(static_cast<size_t>(bytes));
  EwLaunch P = L;
  P.out = want.data();
  bool dz = false;
  for (int64_t k = 0; k < L.numel; ++k)
    ewElement(P, k, dz);
  for (int width : {vec, 1}) {
    std::memset(L.out, 0x7f, static_cast<size_t>(bytes));
    ewTypedDispatch<RunTyped>(L, p, width);
    for (int64_t k = 0; k < L.numel; ++k) {
      double got = ewLoadDouble(L.out + k * size, L.outDtype);
      double ref = ewLoadDouble(want.data() + k * size, L.outDtype);
      ASSERT_NEAR(got, ref, tol * (1 + std::fabs(ref)))
          << "element " << k << " at width " << width;
    }
  }
}

TEST(ElementwisePlan, CoversOneFloatingDtypeAndTheTypedOps) {
  Buffer a(64), b(64), o(64);
  EwLaunch L = launchOf(EwOp::Add, F32, {4}, o.at);
  addTensor(L, a.at, F32, {1});
  addTensor(L, b.at, F32, {1});
  EXPECT_TRUE(ewTypedCovers(L));
  L.in[1].dtype = F16; // mixed dtypes: the portable loop converts
  EXPECT_FALSE(ewTypedCovers(L));
  L.in[1].dtype = F32;
  L.numOperands = 1; // add takes two
  EXPECT_FALSE(ewTypedCovers(L));
  L.numOperands = 2;
  L.op = EwOp::Atan2; // not instantiated
  EXPECT_FALSE(ewTypedCovers(L));
  EwLaunch I = launchOf(EwOp::Add, I64, {4}, o.at);
  addTensor(I, a.at, I64, {1});
  addTensor(I, b.at, I64, {1});
  I.floating = false;
  EXPECT_FALSE(ewTypedCovers(I));
  EwLaunch S = launchOf(EwOp::Mul, BF16, {4}, o.at);
  addTensor(S, a.at, BF16, {1});
  addNumber(S, 0.125); // a Python number: any value
  EXPECT_TRUE(ewTypedCovers(S));
}

TEST(ElementwisePlan, CoalescesWhatEveryTensorWalksAsOne) {
  Buffer a(4096), b(4096), o(4096);
  // Contiguous with a size-1 dim: one run.
  EwLaunch L = launchOf(EwOp::Add, F32, {2, 1, 3, 4}, o.at);
  addTensor(L, a.at, F32, {12, 12, 4, 1});
  addNumber(L, 2);
  EwPlan p = ewCoalesce(L);
  ASSERT_EQ(p.rank, 1);
  EXPECT_EQ(p.shape[0], 24);
  EXPECT_EQ(p.is[0][0], 1);
  EXPECT_EQ(p.is[1][0], 0);
  // A bias along the last dim: rows and columns stay apart.
  EwLaunch B = launchOf(EwOp::Add, F32, {2, 3, 8}, o.at);
  addTensor(B, a.at, F32, {24, 8, 1});
  addTensor(B, b.at, F32, {0, 0, 1});
  p = ewCoalesce(B);
  ASSERT_EQ(p.rank, 2);
  EXPECT_EQ(p.shape[0], 6);
  EXPECT_EQ(p.shape[1], 8);
  EXPECT_EQ(p.is[1][0], 0);
  EXPECT_EQ(p.is[1][1], 1);
  // One element.
  EwLaunch E = launchOf(EwOp::Relu, F32, {1, 1}, o.at);
  addTensor(E, a.at, F32, {1, 1});
  p = ewCoalesce(E);
  ASSERT_EQ(p.rank, 1);
  EXPECT_EQ(p.shape[0], 1);
}

TEST(ElementwisePlan, TypedLoopMatchesPortableContiguous) {
  // A single run that ends in a partial vector: 37 = 9 * 4 + 1.
  Buffer a(4096), o(4096);
  fill(a.at, F32, 37, 1);
  EwLaunch L = launchOf(EwOp::Sigmoid, F32, {37}, o.at);
  addTensor(L, a.at, F32, {1});
  expectTypedMatchesPortable(L, 4, 1e-6);
  // f16 (8 a vector) and bf16, computed in float.
  fill(a.at, F16, 70, 2);
  EwLaunch H = launchOf(EwOp::Gelu, F16, {70}, o.at);
  addTensor(H, a.at, F16, {1});
  expectTypedMatchesPortable(H, 8, 1e-3);
  fill(a.at, BF16, 64, 3);
  EwLaunch G = launchOf(EwOp::Silu, BF16, {8, 8}, o.at);
  addTensor(G, a.at, BF16, {8, 1});
  expectTypedMatchesPortable(G, 8, 8e-3);
  // f64, two a vector, with alpha.
  Buffer b(4096);
  fill(a.at, F64, 30, 4);
  fill(b.at, F64, 30, 5);
  EwLaunch D = launchOf(EwOp::Sub, F64, {5, 6}, o.at);
  addTensor(D, a.at, F64, {6, 1});
  addTensor(D, b.at, F64, {6, 1});
  D.alpha = 0.5;
  expectTypedMatchesPortable(D, 2, 1e-15);
}

TEST(ElementwisePlan, TypedLoopMatchesPortableBroadcast) {
  Buffer a(8192), b(8192), o(8192);
  fill(a.at, F32, 2 * 3 * 8, 6);
  fill(b.at, F32, 8, 7);
  // A bias along the last dim: rows of 8, the bias read as a vector.
  EwLaunch L = launchOf(EwOp::Add, F32, {2, 3, 8}, o.at);
  addTensor(L, a.at, F32, {24, 8, 1});
  addTensor(L, b.at, F32, {0, 0, 1});
  expectTypedMatchesPortable(L, 4, 1e-6);
  // A per-channel scale (64x1x1 against NxCxHxW): broadcast along the
  // innermost dim, one value a vector.
  fill(b.at, F32, 3, 8);
  EwLaunch C = launchOf(EwOp::Mul, F32, {2, 3, 2, 4}, o.at);
  addTensor(C, a.at, F32, {24, 8, 4, 1});
  addTensor(C, b.at, F32, {0, 1, 0, 0});
  expectTypedMatchesPortable(C, 4, 1e-6);
  // Rows of 6 floats: a vector would cross a row, so one element a thread.
  EwLaunch R = launchOf(EwOp::Add, F32, {4, 6}, o.at);
  addTensor(R, a.at, F32, {6, 1});
  addTensor(R, b.at, F32, {0, 1});
  expectTypedMatchesPortable(R, 1, 1e-6);
  // clamp with number bounds.
  EwLaunch K = launchOf(EwOp::Clamp, F32, {48}, o.at);
  addTensor(K, a.at, F32, {1});
  addNumber(K, -1);
  addNumber(K, 0.5);
  expectTypedMatchesPortable(K, 4, 0);
  // copy_ into the output from operand 1.
  EwLaunch Y = launchOf(EwOp::Copy, F32, {48}, o.at);
  addTensor(Y, o.at, F32, {1});
  addTensor(Y, a.at, F32, {1});
  Y.operandIndex = 1;
  expectTypedMatchesPortable(Y, 4, 0);
}

TEST(ElementwisePlan, TypedLoopMatchesPortableStridedAndMisaligned) {
  Buffer a(8192), b(8192), o(8192);
  fill(a.at, F32, 64, 9);
  fill(b.at, F32, 64, 10);
  // A transposed operand: strided, one element a thread.
  EwLaunch T = launchOf(EwOp::Mul, F32, {4, 8}, o.at);
  addTensor(T, a.at, F32, {8, 1});
  addTensor(T, b.at, F32, {1, 4});
  expectTypedMatchesPortable(T, 1, 1e-6);
  // An operand one element past an aligned address.
  EwLaunch M = launchOf(EwOp::Add, F32, {32}, o.at);
  addTensor(M, a.at + 4, F32, {1});
  addTensor(M, b.at, F32, {1});
  expectTypedMatchesPortable(M, 1, 1e-6);
  // The output so.
  Buffer o2(8192, 4);
  EwLaunch N = launchOf(EwOp::Relu, F32, {32}, o2.at);
  addTensor(N, a.at, F32, {1});
  expectTypedMatchesPortable(N, 1, 0);
}

/// Ulps between a float result and the exact one (in double), measured in
/// the float nearest the exact one; 0 where both are the same inf or 0.
double ulpError(float got, double exact) {
  const float near = static_cast<float>(exact);
  if (got == near)
    return 0;
  if (std::isinf(near) || std::isinf(got))
    return INFINITY;
  const double ulp =
      std::fabs(double(std::nextafter(near, INFINITY)) - double(near));
  return std::fabs(double(got) - exact) / ulp;
}

/// Every 97th float bit pattern (44 million of them, both signs, every
/// exponent, subnormals, inf, NaN) through batch(x, y, n), which writes
/// f(x[i]) to y[i] for blocks of them, against libm's double function: at
/// most maxUlp ulps off, and NaN for NaN.
template <typename B, typename G>
void expectFloatBatchWithin(B batch, G exact, double maxUlp) {
  double worst = 0;
  uint32_t worstBits = 0;
  constexpr uint64_t kBlock = 1 << 16;
  std::vector<float> xs(kBlock), ys(kBlock);
  for (uint64_t u0 = 0; u0 <= 0xffffffffu; u0 += 97 * kBlock) {
    size_t n = 0;
    for (uint64_t u = u0; u <= 0xffffffffu && n < kBlock; u += 97, ++n) {
      const uint32_t bits = static_cast<uint32_t>(u);
      std::memcpy(&xs[n], &bits, sizeof(float));
    }
    batch(xs.data(), ys.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const float x = xs[i], got = ys[i];
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(got)) << "at bits " << bits;
        continue;
      }
      const double e = ulpError(got, exact(double(x)));
      if (e > worst) {
        worst = e;
        worstBits = bits;
      }
    }
  }
  EXPECT_LE(worst, maxUlp) << "worst at float bits 0x" << std::hex << worstBits;
}

/// The same for a scalar function f.
template <typename F, typename G>
void expectFloatFunctionWithin(F f, G exact, double maxUlp) {
  expectFloatBatchWithin(
      [&](const float *x, float *y, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          y[i] = f(x[i]);
      },
      exact, maxUlp);
}

// The float functions the optimized CPU loops and CUDA's typed loops
// inline in place of libm's (Elementwise.h), over the whole float range.
TEST(ElementwiseFloatMath, ExpWithinOneAndAHalfUlp) {
  expectFloatFunctionWithin([](float x) { return ewExpFloat(x); },
                            [](double x) { return std::exp(x); }, 1.5);
  const float inf = INFINITY;
  EXPECT_EQ(ewExpFloat(inf), inf);
  EXPECT_EQ(ewExpFloat(-inf), 0.0f);
  EXPECT_EQ(ewExpFloat(89.0f), inf); // past FLT_MAX
  EXPECT_EQ(ewExpFloat(-104.0f), 0); // below half the least subnormal
  EXPECT_EQ(ewExpFloat(0.0f), 1.0f);
  EXPECT_EQ(ewExpFloat(-0.0f), 1.0f);
  // Subnormal results, rounded once: e^-100 is 3.72e-44 (27 x 2^-149).
  EXPECT_EQ(ewExpFloat(-100.0f), std::exp(-100.0f));
}

#if defined(__x86_64__) && defined(__GNUC__)
// The AVX-512 variant's float exp (ExpAVX512.cpp, the vector functions its
// loops call): 16, 8 and 4 lanes and the scalar function.
TEST(ElementwiseFloatMath, AVX512ExpWithinOneAndAHalfUlp) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl"))
    GTEST_SKIP() << "this CPU has no AVX-512 (F and VL)";
  namespace v = cpu::optimized::avx512;
  auto exact = [](double x) { return std::exp(x); };
  expectFloatBatchWithin(v::expFloats, exact, 1.5); // 16 lanes
  // In pieces of 15: a masked vector each.
  expectFloatBatchWithin(
      [](const float *x, float *y, int64_t n) {
        for (int64_t i = 0; i < n; i += 15)
          v::expFloats(x + i, y + i, std::min<int64_t>(15, n - i));
      },
      exact, 1.5);
  // The 8- and 4-lane and scalar functions give the 16 lanes' bits: a
  // row's result does not depend on where rows or threads split it.
  std::vector<float> xs, wide, narrow;
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 9973) {
    float x;
    uint32_t u = static_cast<uint32_t>(b);
    std::memcpy(&x, &u, sizeof x);
    xs.push_back(x);
  }
  wide.resize(xs.size());
  narrow.resize(xs.size());
  v::expFloats(xs.data(), wide.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); i += 15)
    v::expFloatsNarrow(xs.data() + i, narrow.data() + i,
                       std::min<int64_t>(15, xs.size() - i));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!(std::isnan(wide[i]) && std::isnan(narrow[i]))) {
      ASSERT_EQ(wide[i], narrow[i]) << "e^" << xs[i];
    }
  }
  // ewExpFloat's exact cases (above), at 16 (masked), 8, 4 and 1 lanes.
  const float in[] = {INFINITY, -INFINITY, 89.0f,   -104.0f,
                      0.0f,     -0.0f,     -100.0f, NAN};
  const float want[] = {INFINITY, 0.0f, INFINITY,          0.0f,
                        1.0f,     1.0f, std::exp(-100.0f), NAN};
  float got[std::size(in)];
  for (size_t n : {std::size(in), size_t(4), size_t(1)}) {
    v::expFloats(in, got, static_cast<int64_t>(n));
    float narrowGot[std::size(in)];
    v::expFloatsNarrow(in, narrowGot, static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      if (!std::isnan(want[i])) {
        EXPECT_EQ(narrowGot[i], want[i]) << "e^" << in[i] << ", n " << n;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i]));
      else
        EXPECT_EQ(got[i], want[i]) << "e^" << in[i] << ", n " << n;
    }
  }
}
#endif

TEST(ElementwiseFloatMath, TanhWithinSevenUlp) {
  expectFloatFunctionWithin([](float x) { return ewTanhFloat(x); },
                            [](double x) { return std::tanh(x); }, 7.0);
  EXPECT_TRUE(std::signbit(ewTanhFloat(-0.0f)));
  EXPECT_EQ(ewTanhFloat(INFINITY), 1.0f);
  EXPECT_EQ(ewTanhFloat(-INFINITY), -1.0f);
  EXPECT_EQ(ewTanhFloat(1e-30f), 1e-30f);
}

} // namespace
