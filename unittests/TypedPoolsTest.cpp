//===- TypedPoolsTest.cpp - The CUDA tier's typed 2-D pools ---------------===//
//
// TypedPools.h on the CPU: every output element of the CUDA optimized
// tier's max_pool2d and avg_pool2d, with 32- and 64-bit index arithmetic,
// against the portable per-element functions (Resample.h) on the same
// plans: max values and indices bit for bit (NaN, infinities, ties,
// padding, dilation, ceil mode's partial windows), averages within the
// dtype's rounding of a float sum (bit for bit in f64, summed in the same
// order), for every floating dtype; and which plans the typed kernel takes.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/TypedPools.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace traceir;

namespace {

/// PyTorch's pooling_output_shape: windows from -pad, the last starting
/// inside the input or its left padding.
int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d,
                bool ceil) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (span + (ceil ? s - 1 : 0)) / s + 1;
  if (ceil && (o - 1) * s >= in + p)
    --o;
  return o;
}

struct Case {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil;
};

template <int32_t DT> struct Data {
  using E = EwElt<DT>;
  using T = typename E::T;
  std::vector<T> in;
  std::vector<T> out0, out1;
  std::vector<int64_t> idx0, idx1;
};

/// Values with NaN, both infinities and ties among them.
template <int32_t DT>
void fill(std::vector<typename EwElt<DT>::T> &v, int64_t n, unsigned seed) {
  using E = EwElt<DT>;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 39);
  std::normal_distribution<double> normal;
  v.resize(static_cast<size_t>(n));
  for (auto &x : v) {
    int c = pick(rng);
    double d = c == 0   ? NAN
               : c == 1 ? INFINITY
               : c == 2 ? -INFINITY
               : c < 8  ? 0.5 // ties
                        : normal(rng);
    x = E::store(static_cast<typename E::C>(d));
  }
}

Planes3d planesOf(const Case &c, const char *in, char *out, int32_t dtype,
                  bool batched) {
  Planes3d x;
  x.in = in;
  x.out = out;
  x.inDtype = x.outDtype = dtype;
  x.N = c.N;
  x.C = c.C;
  x.H = c.H;
  x.W = c.W;
  x.OH = outSize(c.H, c.kh, c.sh, c.ph, c.dh, c.ceil);
  x.OW = outSize(c.W, c.kw, c.sw, c.pw, c.dw, c.ceil);
  x.inStrides[0] = batched ? c.C * c.H * c.W : 0;
  x.inStrides[1] = c.H * c.W;
  x.inStrides[2] = 0;
  x.inStrides[3] = c.W;
  x.inStrides[4] = 1;
  return x;
}

Window3d windowOf(const Case &c) {
  Window3d w;
  w.k[1] = c.kh;
  w.k[2] = c.kw;
  w.s[1] = c.sh;
  w.s[2] = c.sw;
  w.p[1] = c.ph;
  w.p[2] = c.pw;
  w.d[1] = c.dh;
  w.d[2] = c.dw;
  return w;
}

template <int32_t DT, typename I> void runTyped(const TypedPoolPlan &t) {
  for (int64_t k = 0; k < t.numel(); ++k)
    TypedPool<DT, I>::at(t, static_cast<I>(k));
}

/// Bitwise equal, or both NaN.
template <typename T> bool sameBits(T a, T b, bool nan) {
  return std::memcmp(&a, &b, sizeof a) == 0 || nan;
}

template <int32_t DT> void checkMax(const Case &c, unsigned seed) {
  using E = EwElt<DT>;
  for (bool batched : {true, false}) {
    Case cc = c;
    if (!batched)
      cc.N = 1;
    Data<DT> d;
    fill<DT>(d.in, cc.N * cc.C * cc.H * cc.W, seed);
    MaxPoolPlan p;
    p.x = planesOf(cc, reinterpret_cast<const char *>(d.in.data()), nullptr, DT,
                   batched);
    p.w = windowOf(cc);
    const int64_t n = p.x.numel();
    d.out0.assign(n, 0);
    d.idx0.assign(n, -7);
    p.x.out = reinterpret_cast<char *>(d.out0.data());
    p.indices = d.idx0.data();
    for (int64_t k = 0; k < n; ++k)
      maxPoolElement(p, k);
    for (bool wide : {false, true}) {
      d.out1.assign(n, 0);
      d.idx1.assign(n, -9);
      MaxPoolPlan q = p;
      q.x.out = reinterpret_cast<char *>(d.out1.data());
      q.indices = d.idx1.data();
      TypedPoolPlan t;
      ASSERT_TRUE(typedMaxPoolPlan(q, t));
      ASSERT_TRUE(t.narrow);
      if (wide)
        runTyped<DT, int64_t>(t);
      else
        runTyped<DT, int32_t>(t);
      for (int64_t k = 0; k < n; ++k) {
        bool nan =
            std::isnan(E::load(d.out0[k])) && std::isnan(E::load(d.out1[k]));
        ASSERT_TRUE(sameBits(d.out0[k], d.out1[k], nan))
            << "max element " << k << ": " << E::load(d.out0[k]) << " vs "
            << E::load(d.out1[k]) << (wide ? " (64-bit)" : " (32-bit)");
        ASSERT_EQ(d.idx0[k], d.idx1[k]) << "max index of element " << k;
      }
    }
  }
}

template <int32_t DT>
void checkAvg(const Case &c, bool includePad, int64_t divisor, double rtol,
              unsigned seed) {
  using E = EwElt<DT>;
  Data<DT> d;
  fill<DT>(d.in, c.N * c.C * c.H * c.W, seed);
  // Finite values: a sum with an infinity of each sign is NaN in any order.
  for (auto &x : d.in)
    if (!std::isfinite(E::load(x)))
      x = E::store(typename E::C(1.25));
  AvgPoolPlan p;
  Case cc = c;
  cc.dh = cc.dw = 1;
  p.x = planesOf(cc, reinterpret_cast<const char *>(d.in.data()), nullptr, DT,
                 true);
  p.w = windowOf(cc);
  p.countIncludePad = includePad;
  p.divisor = divisor;
  const int64_t n = p.x.numel();
  d.out0.assign(n, 0);
  d.out1.assign(n, 0);
  p.x.out = reinterpret_cast<char *>(d.out0.data());
  for (int64_t k = 0; k < n; ++k)
    avgPoolElement(p, k);
  AvgPoolPlan q = p;
  q.x.out = reinterpret_cast<char *>(d.out1.data());
  TypedPoolPlan t;
  ASSERT_TRUE(typedAvgPoolPlan(q, t));
  runTyped<DT, int32_t>(t);
  for (int64_t k = 0; k < n; ++k) {
    double want = E::load(d.out0[k]), got = E::load(d.out1[k]);
    if (rtol == 0)
      ASSERT_TRUE(sameBits(d.out0[k], d.out1[k], false))
          << "avg element " << k << ": " << want << " vs " << got;
    else
      ASSERT_NEAR(got, want, rtol * (std::fabs(want) + 1))
          << "avg element " << k;
  }
}

const Case kCases[] = {
    // N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, ceil
    {2, 3, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, false}, // resnet's stem pool
    {2, 3, 9, 11, 3, 2, 2, 1, 1, 1, 1, 2, true},  // dilated, ceil mode
    {1, 4, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, false},  // non-overlapping
    {3, 2, 7, 5, 5, 3, 3, 2, 2, 1, 1, 1, true},   // partial last windows
    {2, 2, 1, 13, 1, 4, 1, 3, 0, 2, 1, 1, true},  // a single row
};

} // namespace

TEST(TypedPoolsTest, MaxMatchesThePortableElementBitForBit) {
  unsigned seed = 1;
  for (const Case &c : kCases) {
    checkMax<F32>(c, seed++);
    checkMax<F64>(c, seed++);
    checkMax<F16>(c, seed++);
    checkMax<BF16>(c, seed++);
  }
}

TEST(TypedPoolsTest, AvgMatchesThePortableElement) {
  unsigned seed = 100;
  for (const Case &c : kCases)
    for (bool includePad : {true, false})
      for (int64_t divisor : {int64_t(0), int64_t(3)}) {
        // f64 sums in the same order: the same bits.
        checkAvg<F64>(c, includePad, divisor, 0, seed++);
        checkAvg<F32>(c, includePad, divisor, 1e-6, seed++);
        // A float sum rounded to the dtype: one of its ulps at most.
        checkAvg<F16>(c, includePad, divisor, 1e-3, seed++);
        checkAvg<BF16>(c, includePad, divisor, 8e-3, seed++);
      }
}

TEST(TypedPoolsTest, WhichPlansItTakes) {
  std::vector<float> buf(2 * 3 * 9 * 11);
  const Case c = kCases[0];
  MaxPoolPlan p;
  p.x = planesOf(c, reinterpret_cast<const char *>(buf.data()), nullptr, F32,
                 true);
  p.w = windowOf(c);
  TypedPoolPlan t;
  EXPECT_TRUE(typedMaxPoolPlan(p, t));
  EXPECT_TRUE(t.narrow);
  EXPECT_EQ(t.planes, 6);
  EXPECT_EQ(t.numel(), 6 * 5 * 6);

  auto declines = [&](auto edit) {
    MaxPoolPlan q = p;
    edit(q);
    TypedPoolPlan u;
    return !typedMaxPoolPlan(q, u);
  };
  // Channels last, a strided row, a 3-D pool, an integer or mixed dtype.
  EXPECT_TRUE(declines([](MaxPoolPlan &q) {
    q.x.inStrides[1] = 1;
    q.x.inStrides[4] = 3;
  }));
  EXPECT_TRUE(declines([](MaxPoolPlan &q) { q.x.inStrides[3] = 22; }));
  EXPECT_TRUE(declines([](MaxPoolPlan &q) {
    q.x.D = q.x.OD = 2;
    q.w.k[0] = 2;
  }));
  EXPECT_TRUE(
      declines([](MaxPoolPlan &q) { q.x.inDtype = q.x.outDtype = I64; }));
  EXPECT_TRUE(declines([](MaxPoolPlan &q) { q.x.outDtype = F64; }));

  // Past 2^30 elements, or a window reaching that far: 64-bit arithmetic.
  auto narrow = [&](auto edit) {
    MaxPoolPlan q = p;
    edit(q);
    TypedPoolPlan u;
    EXPECT_TRUE(typedMaxPoolPlan(q, u));
    return u.narrow;
  };
  EXPECT_FALSE(narrow([](MaxPoolPlan &q) {
    q.x.N = int64_t(1) << 22; // 1.25e9 input elements
    q.x.inStrides[0] = int64_t(3) * 9 * 11;
  }));
  EXPECT_FALSE(narrow([](MaxPoolPlan &q) { q.w.d[2] = int64_t(1) << 40; }));
  EXPECT_FALSE(narrow([](MaxPoolPlan &q) { q.w.s[1] = int64_t(1) << 62; }));
  EXPECT_FALSE(narrow([](MaxPoolPlan &q) { q.w.p[1] = int64_t(1) << 31; }));
  EXPECT_TRUE(narrow([](MaxPoolPlan &q) { q.w.s[1] = 1000; }));
}
