//===- TypedRowsTest.cpp - The CUDA tier's typed row kernels --------------===//
//
// TypedRows.h on the CPU: the per-thread passes of the CUDA optimized
// tier's softmax, layer_norm and eval batch_norm kernels run here over every
// thread of a block (the block reductions done in thread order), their results
// compared with the same ops computed in double as the portable kernels
// do, for every dtype, both vector widths, blocks of one to 256 threads,
// rows a block does not divide, NaN and infinities, and in place. What the
// GPU runs is then checked without a GPU but for the launches themselves.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/TypedRows.h"

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
  // softmax
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
  typedRowsDispatch<HostRun>(p);
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

TEST(TypedRowsTest, MatchesThePortableKernel) {
  everyShape<F32>(2e-6);
  everyShape<F64>(1e-13);
  everyShape<F16>(2e-3);
  everyShape<BF16>(1e-2);
}

TEST(TypedRowsTest, VectorWidth) {
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

TEST(TypedRowsTest, NaNAndInfinities) {
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

TEST(TypedRowsTest, InPlace) {
  for (int threads : {1, 32}) {
    gThreads = threads;
    check<F32>(randomValues(4 * 96, 9), 96, false, 2e-6, /*inPlace=*/true);
    check<BF16>(randomValues(4 * 96, 9), 96, true, 1e-2, /*inPlace=*/true);
  }
}

/// The layer_norm kernel's work for one block per row, thread by thread.
template <int32_t DT, int VEC> struct HostLayerNorm {
  static void run(const LayerNormRowsPlan &p) {
    using R = LayerNormRow<DT, VEC>;
    using T = typename R::T;
    using C = typename R::C;
    const int64_t B = gThreads;
    const T *w = reinterpret_cast<const T *>(p.weight);
    const T *b = reinterpret_cast<const T *>(p.bias);
    for (int64_t row = 0; row < p.rows; ++row) {
      const T *x = reinterpret_cast<const T *>(p.in) + row * p.n;
      T *y = reinterpret_cast<T *>(p.out) + row * p.n;
      C sum = 0, squares = 0;
      for (int64_t t = 0; t < B; ++t)
        sum += R::partialSum(x, p.n, t, B);
      C mean = sum / C(p.n);
      for (int64_t t = 0; t < B; ++t)
        squares += R::partialSquares(x, p.n, t, B, mean);
      C rstd = R::rstdOf(squares, p.n, p.eps);
      if (p.mean)
        ewStoreDouble(p.mean + row * ewSize(p.meanDtype), p.meanDtype, mean);
      if (p.rstd)
        ewStoreDouble(p.rstd + row * ewSize(p.rstdDtype), p.rstdDtype, rstd);
      for (int64_t t = 0; t < B; ++t)
        R::write(x, y, w, b, p.n, t, B, mean, rstd);
    }
  }
};

/// layer_norm over rows of n (weight and bias where `affine`) in dtype DT
/// against the portable kernel's double math, results and mean / rstd
/// (stored as f32) within `tol`.
template <int32_t DT>
void checkLayerNorm(int64_t rows, int64_t n, bool affine, double tol,
                    bool inPlace = false) {
  using E = EwElt<DT>;
  using T = typename E::T;
  const int64_t count = rows * n;
  Buffer in(count * sizeof(T)), out(count * sizeof(T)), wb(2 * n * sizeof(T));
  Buffer stats(2 * rows * sizeof(float));
  T *x = reinterpret_cast<T *>(in.at), *w = reinterpret_cast<T *>(wb.at);
  std::vector<double> xs = randomValues(count, unsigned(n)),
                      ps = randomValues(2 * n, unsigned(n + 1));
  for (int64_t i = 0; i < count; ++i) {
    x[i] = E::store(typename E::C(xs[i] + 5)); // a mean away from 0
    xs[i] = double(E::load(x[i]));
  }
  for (int64_t i = 0; i < 2 * n; ++i) {
    w[i] = E::store(typename E::C(ps[i]));
    ps[i] = double(E::load(w[i]));
  }
  LayerNormRowsPlan p;
  p.in = in.at;
  p.out = inPlace ? in.at : out.at;
  if (affine) {
    p.weight = wb.at;
    p.bias = wb.at + n * sizeof(T);
  }
  p.mean = stats.at;
  p.rstd = stats.at + rows * sizeof(float);
  p.dtype = DT;
  p.rows = rows;
  p.n = n;
  p.eps = 1e-5;
  p.vec = layerNormRowsVectorWidth(p);
  typedRowsDispatch<HostLayerNorm>(p);
  const T *y = reinterpret_cast<const T *>(p.out);
  const float *mean = reinterpret_cast<const float *>(p.mean),
              *rstd = reinterpret_cast<const float *>(p.rstd);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < n; ++j)
      m += xs[r * n + j];
    m /= double(n);
    for (int64_t j = 0; j < n; ++j)
      v += (xs[r * n + j] - m) * (xs[r * n + j] - m);
    double is = 1 / std::sqrt(v / double(n) + 1e-5);
    EXPECT_NEAR(mean[r], m, 1e-5 * std::max(1.0, std::fabs(m)));
    EXPECT_NEAR(rstd[r], is, std::max(tol, 1e-5) * is);
    for (int64_t j = 0; j < n; ++j) {
      double want = (xs[r * n + j] - m) * is;
      if (affine)
        want = want * ps[j] + ps[n + j];
      EXPECT_NEAR(double(E::load(y[r * n + j])), want,
                  tol * std::max(1.0, std::fabs(want)))
          << "row " << r << " element " << j << " of " << n << ", vec " << p.vec
          << ", " << gThreads << " threads";
    }
  }
}

template <int32_t DT> void everyLayerNorm(double tol) {
  for (int threads : {1, 32, 256})
    for (int64_t n : {1, 7, 64, 768, 1030})
      for (bool affine : {false, true}) {
        gThreads = threads;
        checkLayerNorm<DT>(3, n, affine, tol);
      }
}

TEST(TypedRowsTest, LayerNormMatchesThePortableKernel) {
  everyLayerNorm<F32>(2e-5);
  everyLayerNorm<F64>(1e-12);
  everyLayerNorm<F16>(4e-3);
  everyLayerNorm<BF16>(2e-2);
}

TEST(TypedRowsTest, LayerNormVectorWidthAndInPlace) {
  Buffer a(4096), b(4096), off(4096, 8);
  LayerNormRowsPlan p;
  p.in = a.at;
  p.out = b.at;
  p.dtype = F32;
  p.n = 256;
  EXPECT_EQ(layerNormRowsVectorWidth(p), 4);
  p.weight = off.at; // a misaligned weight reads element by element
  EXPECT_EQ(layerNormRowsVectorWidth(p), 1);
  gThreads = 32;
  checkLayerNorm<F32>(4, 256, true, 2e-5, /*inPlace=*/true);
  checkLayerNorm<F16>(4, 256, false, 4e-3, /*inPlace=*/true);
}

/// Eval batch_norm's kernel for one block per plane, thread by thread.
template <int32_t DT, int VEC> struct HostChannelAffine {
  static void run(const ChannelAffinePlan &p) {
    using R = ChannelAffineRow<DT, VEC>;
    using T = typename R::T;
    using C = typename R::C;
    const int64_t B = gThreads;
    for (int64_t plane = 0; plane < p.N * p.C; ++plane) {
      const int64_t c = plane % p.C;
      double istd, scale, shift;
      channelScaleShift(p, c, istd, scale, shift);
      if (plane < p.C && p.saveMean) {
        ewStoreDouble(p.saveMean + c * ewSize(p.saveDtype), p.saveDtype,
                      p.mean.at(c));
        ewStoreDouble(p.saveIstd + c * ewSize(p.saveDtype), p.saveDtype, istd);
      }
      for (int64_t t = 0; t < B; ++t)
        R::write(reinterpret_cast<const T *>(p.in) + plane * p.S,
                 reinterpret_cast<T *>(p.out) + plane * p.S, p.S, t, B,
                 C(scale), C(shift));
    }
  }
};

/// Eval batch_norm of [N, C, S] in dtype DT with f32 parameters (weight and
/// bias strided 2 apart, as a view may give them) against the portable
/// kernel's math in double, and the saved statistics.
template <int32_t DT>
void checkBatchNorm(int64_t N, int64_t C, int64_t S, bool affine, double tol) {
  using E = EwElt<DT>;
  using T = typename E::T;
  const int64_t count = N * C * S;
  Buffer in(count * sizeof(T)), out(count * sizeof(T));
  Buffer params(8 * C * sizeof(float)), saved(2 * C * sizeof(double));
  T *x = reinterpret_cast<T *>(in.at);
  std::vector<double> xs = randomValues(count, unsigned(S));
  for (int64_t i = 0; i < count; ++i) {
    x[i] = E::store(typename E::C(xs[i]));
    xs[i] = double(E::load(x[i]));
  }
  // weight and bias interleaved (stride 2), then mean and var.
  float *pf = reinterpret_cast<float *>(params.at);
  std::vector<double> rnd = randomValues(4 * C, unsigned(C));
  for (int64_t c = 0; c < C; ++c) {
    pf[2 * c] = float(rnd[c]);
    pf[2 * c + 1] = float(rnd[C + c]);
    pf[2 * C + c] = float(rnd[2 * C + c]);
    pf[3 * C + c] = float(std::fabs(rnd[3 * C + c]) + 0.1);
  }
  ChannelAffinePlan p;
  p.in = in.at;
  p.out = out.at;
  p.dtype = DT;
  p.N = N;
  p.C = C;
  p.S = S;
  if (affine) {
    p.weight = {params.at, F32, 2};
    p.bias = {params.at + sizeof(float), F32, 2};
  }
  p.mean = {params.at + 2 * C * sizeof(float), F32, 1};
  p.var = {params.at + 3 * C * sizeof(float), F32, 1};
  p.eps = 1e-5;
  p.saveMean = saved.at;
  p.saveIstd = saved.at + C * sizeof(double);
  p.saveDtype = F64;
  p.vec = channelAffineVectorWidth(p);
  typedRowsDispatch<HostChannelAffine>(p);
  const T *y = reinterpret_cast<const T *>(out.at);
  const double *sm = reinterpret_cast<const double *>(p.saveMean),
               *si = reinterpret_cast<const double *>(p.saveIstd);
  for (int64_t c = 0; c < C; ++c) {
    double mean = pf[2 * C + c], istd = 1 / std::sqrt(pf[3 * C + c] + 1e-5);
    EXPECT_EQ(sm[c], mean);
    EXPECT_NEAR(si[c], istd, 1e-14 * istd);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        int64_t i = (n * C + c) * S + s;
        double want = (xs[i] - mean) * istd;
        if (affine)
          want = want * pf[2 * c] + pf[2 * c + 1];
        EXPECT_NEAR(double(E::load(y[i])), want,
                    tol * std::max(1.0, std::fabs(want)))
            << "n " << n << " c " << c << " s " << s << ", vec " << p.vec
            << ", " << gThreads << " threads";
      }
  }
}

TEST(TypedRowsTest, EvalBatchNormMatchesThePortableKernel) {
  for (int threads : {1, 32, 256})
    for (int64_t S : {1, 7, 64, 196, 3136})
      for (bool affine : {false, true}) {
        gThreads = threads;
        checkBatchNorm<F32>(2, 3, S, affine, 1e-5);
        checkBatchNorm<F64>(2, 3, S, affine, 1e-12);
        checkBatchNorm<F16>(2, 3, S, affine, 4e-3);
        checkBatchNorm<BF16>(2, 3, S, affine, 2e-2);
      }
}

} // namespace
