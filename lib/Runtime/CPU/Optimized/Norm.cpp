//===- Norm.cpp - Optimized softmax, norms and reductions -----------------===//
//
// Built once per CPU variant (Optimized.h, Dispatch.cpp), as Elementwise.cpp.
//
// The fused row and channel kernels of ATen's SoftMaxKernel.cpp,
// layer_norm_kernel.cpp, group_norm_kernel.cpp and batch_norm_kernel.cpp:
// typed loops computing in the dtype's opmath (float for f32, f16 and bf16,
// double for f64). softmax subtracts the row's max, exponentiates, sums and
// scales (log_softmax subtracts the log of the sum); along an inner dim
// (inner > 1) it vectorizes across the inner elements instead. layer_norm
// and group_norm take each row's mean and variance in two passes, then
// (x * rstd - mean * rstd) * w + b; eval batch norm folds its statistics
// into one scale and shift per channel. sum, mean, amax and amin
// (ATen's ReduceOps kernels) reduce rows in lanes or columns across the
// inner elements. Every row (or inner block) is computed by one thread in
// a fixed order, so results do not depend on the thread count (a long
// row's blocks, split over threads, are combined in that same order). The
// entry points (cpu::fast::*, in the base variant only) decode the
// arguments with the portable kernels' own functions and return false for
// the dtypes and layouts they do not cover.
//
//===----------------------------------------------------------------------===//

#include "Loops.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#ifndef TRACEIR_LOOPS_ONLY
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"
#endif

using namespace traceir;
using namespace traceir::cpu::optimized;

namespace {

/// The max of n > 0 elements (a NaN gives a NaN row anyway: exp(NaN - m)
/// enters its sum).
template <int32_t DT>
TRACEIR_VARIANT_TARGET typename Elt<DT>::C rowMax(const typename Elt<DT>::T *x,
                                                  int64_t n) {
  using E = Elt<DT>;
  using C = typename E::C;
  C acc[kLanes];
  for (int k = 0; k < kLanes; ++k)
    acc[k] = E::load(x[0]);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    // Without the pragma GCC 12 left this a scalar compare and move per
    // element (a third of attention's time at 64 keys); with it, one max.
    TRACEIR_OMP_SIMD
    for (int k = 0; k < kLanes; ++k) {
      C v = E::load(x[j + k]);
      acc[k] = v > acc[k] ? v : acc[k];
    }
  }
  C tail = acc[0];
  for (; j < n; ++j) {
    C v = E::load(x[j]);
    tail = v > tail ? v : tail;
  }
  C m = maxLanes(acc);
  return tail > m ? tail : m;
}

/// The sum of f(load(x[j])) over n elements, in lanes, each block of
/// kBlock elements added into a double (f64: the same) so that long rows
/// keep float's rounding per block only (ATen's cascade sum).
constexpr int64_t kBlock = kReduceBlock;
template <int32_t DT, typename F>
TRACEIR_VARIANT_TARGET double rowSum(const typename Elt<DT>::T *x, int64_t n,
                                     F f) {
  using E = Elt<DT>;
  using C = typename E::C;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t e = std::min(n, b + kBlock), j = b;
    C acc[kLanes] = {}, tail = 0;
    for (; j + kLanes <= e; j += kLanes)
      for (int k = 0; k < kLanes; ++k)
        acc[k] += f(E::load(x[j + k]));
    // The tail apart: added into a lane, it made GCC 12 keep the lanes in
    // scalar registers (and rebuild the vector for every row).
    for (; j < e; ++j)
      tail += f(E::load(x[j]));
    total += combineLanes(acc) + tail;
  }
  return total;
}

/// softmax of one contiguous row of n > 0 elements.
template <int32_t DT>
TRACEIR_VARIANT_TARGET void softmaxRow(const typename Elt<DT>::T *__restrict x,
                                       typename Elt<DT>::T *__restrict y,
                                       int64_t n, bool log) {
  using E = Elt<DT>;
  using C = typename E::C;
  using T = typename E::T;
  const C m = rowMax<DT>(x, n);
  if constexpr (std::is_same_v<T, C>) {
    // The exps go to the result, then are summed and scaled there.
    C sum;
    if (n <= kBlock) {
      // One block: the exps summed as they are stored, in rowSum's lanes
      // and order (the same sum), one pass fewer over the row (5% of
      // attention's softmax over 64 keys).
      C acc[kLanes] = {};
      int64_t j = 0;
      for (; j + kLanes <= n; j += kLanes) {
        TRACEIR_OMP_SIMD
        for (int k = 0; k < kLanes; ++k) {
          C e = Math::exp(x[j + k] - m);
          y[j + k] = e;
          acc[k] += e;
        }
      }
      C tail = 0;
      for (; j < n; ++j) {
        y[j] = Math::exp(x[j] - m);
        tail += y[j];
      }
      sum = combineLanes(acc) + tail;
    } else {
      TRACEIR_OMP_SIMD
      for (int64_t j = 0; j < n; ++j)
        y[j] = Math::exp(x[j] - m);
      sum = static_cast<C>(rowSum<DT>(y, n, [](C v) { return v; }));
    }
    if (log) {
      C ls = std::log(sum);
      TRACEIR_IVDEP
      for (int64_t j = 0; j < n; ++j)
        y[j] = x[j] - m - ls;
    } else {
      C inv = C(1) / sum;
      TRACEIR_IVDEP
      for (int64_t j = 0; j < n; ++j)
        y[j] *= inv;
    }
  } else {
    // A 16-bit result cannot hold the exps: they are computed again.
    C sum =
        static_cast<C>(rowSum<DT>(x, n, [m](C v) { return Math::exp(v - m); }));
    C ls = std::log(sum), inv = C(1) / sum;
    for (int64_t j = 0; j < n; ++j) {
      C v = E::load(x[j]) - m;
      y[j] = E::store(log ? v - ls : Math::exp(v) * inv);
    }
  }
}

/// Inner elements per block of the strided softmax: its max and sum
/// accumulators live on the stack.
constexpr int64_t kInnerBlock = 256;

/// softmax over dim of block [i0, i0 + nb) of the inner elements of one
/// outer index: x and y point at (o, 0, i0); element d is d * inner away.
template <int32_t DT>
TRACEIR_VARIANT_TARGET void
softmaxColumns(const typename Elt<DT>::T *__restrict x,
               typename Elt<DT>::T *__restrict y, int64_t dim, int64_t inner,
               int64_t nb, bool log) {
  using E = Elt<DT>;
  using C = typename E::C;
  using T = typename E::T;
  C m[kInnerBlock], s[kInnerBlock];
  for (int64_t k = 0; k < nb; ++k) {
    m[k] = E::load(x[k]);
    s[k] = 0;
  }
  for (int64_t d = 1; d < dim; ++d) {
    const T *xd = x + d * inner;
    TRACEIR_OMP_SIMD
    for (int64_t k = 0; k < nb; ++k) {
      C v = E::load(xd[k]);
      m[k] = v > m[k] ? v : m[k];
    }
  }
  for (int64_t d = 0; d < dim; ++d) {
    const T *xd = x + d * inner;
    T *yd = y + d * inner;
    TRACEIR_OMP_SIMD
    for (int64_t k = 0; k < nb; ++k) {
      C e = Math::exp(E::load(xd[k]) - m[k]);
      if constexpr (std::is_same_v<T, C>)
        yd[k] = e;
      s[k] += e;
    }
  }
  if (log) {
    for (int64_t k = 0; k < nb; ++k)
      s[k] = std::log(s[k]);
    for (int64_t d = 0; d < dim; ++d) {
      const T *xd = x + d * inner;
      T *yd = y + d * inner;
      TRACEIR_IVDEP
      for (int64_t k = 0; k < nb; ++k)
        yd[k] = E::store(E::load(xd[k]) - m[k] - s[k]);
    }
    return;
  }
  for (int64_t k = 0; k < nb; ++k)
    s[k] = C(1) / s[k];
  for (int64_t d = 0; d < dim; ++d) {
    const T *xd = x + d * inner;
    T *yd = y + d * inner;
    TRACEIR_OMP_SIMD
    for (int64_t k = 0; k < nb; ++k) {
      if constexpr (std::is_same_v<T, C>)
        yd[k] *= s[k];
      else
        yd[k] = E::store(Math::exp(E::load(xd[k]) - m[k]) * s[k]);
    }
  }
}

template <int32_t DT>
TRACEIR_VARIANT_TARGET void softmaxChunk(const SoftmaxRows &r, int64_t b,
                                         int64_t e) {
  using T = typename Elt<DT>::T;
  const T *x = reinterpret_cast<const T *>(r.in);
  T *y = reinterpret_cast<T *>(r.out);
  if (r.inner == 1) {
    for (int64_t o = b; o < e; ++o)
      softmaxRow<DT>(x + o * r.dim, y + o * r.dim, r.dim, r.log);
    return;
  }
  int64_t blocks = (r.inner + kInnerBlock - 1) / kInnerBlock;
  for (int64_t t = b; t < e; ++t) {
    int64_t o = t / blocks, i0 = (t % blocks) * kInnerBlock;
    int64_t off = o * r.dim * r.inner + i0;
    softmaxColumns<DT>(x + off, y + off, r.dim, r.inner,
                       std::min(kInnerBlock, r.inner - i0), r.log);
  }
}

template <int32_t DT> void softmaxTyped(const SoftmaxRows &r) {
  // Tasks: rows, or (outer, inner block) pairs; each is one thread's.
  int64_t width = r.inner == 1 ? 1 : std::min(kInnerBlock, r.inner);
  int64_t tasks = r.inner == 1
                      ? r.outer
                      : r.outer * ((r.inner + kInnerBlock - 1) / kInnerBlock);
  int64_t grain = std::max<int64_t>(1, cpu::grainSize() / (r.dim * width));
  cpu::parallelFor(tasks, grain,
                   [&](int64_t b, int64_t e) { softmaxChunk<DT>(r, b, e); });
}

//===--- Reductions (ReduceRows) ------------------------------------------===//

using RK = ReduceRows::Kind;

/// amax's (Max) or amin's choice between a and b: NaN where either is (a
/// NaN `a` loses no compare). Two selects, not `||`, whose branch kept
/// GCC 12 from vectorizing the lanes (a row max took 4x eager's).
template <bool Max, typename C> inline C pick(C a, C b) {
  C m = (Max ? b > a : b < a) ? b : a;
  return b != b ? b : m;
}

/// One reduction's steps, for its kind K: `add` folds an element into an
/// accumulator (from `start`, or from the first element for an extremum),
/// `combine` folds blocks' values in order (summed from 0, picked from the
/// first), `finish` makes the output (mean divides the sum by the count).
template <RK K> struct Reducer {
  static constexpr bool kSum = K == RK::Sum || K == RK::Mean;
  template <typename C> static C add(C acc, C v) {
    if constexpr (kSum)
      return acc + v;
    else
      return pick<K == RK::Max>(acc, v);
  }
  static double combine(double acc, double v, bool first) {
    return kSum ? acc + v : first ? v : add(acc, v);
  }
  static double finish(double v, int64_t dim) {
    return K == RK::Mean ? v / static_cast<double>(dim) : v;
  }
};

/// amax or amin of n > 0 contiguous elements, in lanes: four vectors of
/// them at a time (four chains of compares a row's ops overlap in: one
/// chain left a row of 64 floats 1.3x eager's time), folded into one.
template <int32_t DT, RK K>
TRACEIR_VARIANT_TARGET typename Elt<DT>::C rowPick(const typename Elt<DT>::T *x,
                                                   int64_t n) {
  using E = Elt<DT>;
  using C = typename E::C;
  using R = Reducer<K>;
#ifdef TRACEIR_VARIANT_PICKF_ROW
  if constexpr (std::is_same_v<typename E::T, float>)
    return TRACEIR_VARIANT_PICKF_ROW(x, n, K == RK::Max);
#endif
  constexpr int kWide = 4 * kLanes;
  C acc[kLanes];
  for (int k = 0; k < kLanes; ++k)
    acc[k] = E::load(x[0]);
  int64_t j = 0;
  if (n >= kWide) {
    C wide[kWide];
    TRACEIR_OMP_SIMD
    for (int k = 0; k < kWide; ++k)
      wide[k] = E::load(x[k]);
    for (j = kWide; j + kWide <= n; j += kWide) {
      TRACEIR_OMP_SIMD
      for (int k = 0; k < kWide; ++k)
        wide[k] = R::add(wide[k], E::load(x[j + k]));
    }
    TRACEIR_OMP_SIMD
    for (int k = 0; k < kLanes; ++k)
      acc[k] = R::add(R::add(wide[k], wide[k + kLanes]),
                      R::add(wide[k + 2 * kLanes], wide[k + 3 * kLanes]));
  }
  for (; j + kLanes <= n; j += kLanes) {
    TRACEIR_OMP_SIMD
    for (int k = 0; k < kLanes; ++k)
      acc[k] = R::add(acc[k], E::load(x[j + k]));
  }
  C tail = acc[0];
  for (; j < n; ++j)
    tail = R::add(tail, E::load(x[j]));
  return R::add(treeLanes(acc, [](C a, C b) { return R::add(a, b); }), tail);
}

/// Block b (kBlock elements, the last maybe fewer) of row o: its sum
/// (rowSum's lanes and order), or its extremum.
template <int32_t DT, RK K>
TRACEIR_VARIANT_TARGET double reduceBlock(const ReduceRows &r, int64_t o,
                                          int64_t b) {
  using E = Elt<DT>;
  using C = typename E::C;
  const typename E::T *x =
      reinterpret_cast<const typename E::T *>(r.in) + o * r.dim + b * kBlock;
  const int64_t n = std::min(kBlock, r.dim - b * kBlock);
  if constexpr (Reducer<K>::kSum)
    return rowSum<DT>(x, n, [](C v) { return v; });
  else
    return rowPick<DT, K>(x, n);
}

template <int32_t DT>
void storeReduced(const ReduceRows &r, int64_t k, double v) {
  using E = Elt<DT>;
  reinterpret_cast<typename E::T *>(r.out)[k] =
      E::store(static_cast<typename E::C>(v));
}

/// Columns [i0, i0 + W) of outer index o where inner > 1, each `inner`
/// apart, reduced across them at once (W accumulators in registers), sums
/// in blocks of kBlock rows added into doubles as rowSum's blocks.
template <int32_t DT, RK K, int W>
TRACEIR_VARIANT_TARGET void reduceColumns(const ReduceRows &r, int64_t o,
                                          int64_t i0, int64_t w) {
  using E = Elt<DT>;
  using C = typename E::C;
  using T = typename E::T;
  using R = Reducer<K>;
  const T *x = reinterpret_cast<const T *>(r.in) + o * r.dim * r.inner + i0;
  // W columns where w == W (a loop the compiler unrolls into registers),
  // else w < W of them.
  const int64_t n = W ? W : w;
  double total[kInnerBlock];
  for (int64_t d0 = 0; d0 < r.dim; d0 += kBlock) {
    const int64_t d1 = std::min(r.dim, d0 + kBlock);
    C acc[W ? W : kInnerBlock];
    for (int64_t k = 0; k < n; ++k)
      acc[k] = R::kSum ? C(0) : E::load(x[d0 * r.inner + k]);
    for (int64_t d = R::kSum ? d0 : d0 + 1; d < d1; ++d) {
      const T *xd = x + d * r.inner;
      TRACEIR_OMP_SIMD
      for (int64_t k = 0; k < n; ++k)
        acc[k] = R::add(acc[k], E::load(xd[k]));
    }
    for (int64_t k = 0; k < n; ++k)
      total[k] = R::combine(d0 == 0 ? 0.0 : total[k], acc[k], d0 == 0);
  }
  for (int64_t k = 0; k < n; ++k)
    storeReduced<DT>(r, o * r.inner + i0 + k, R::finish(total[k], r.dim));
}

/// Rows [b, e) of the inner == 1 case, each by its blocks in order.
template <int32_t DT, RK K>
TRACEIR_VARIANT_TARGET void reduceRowRange(const ReduceRows &r, int64_t blocks,
                                           int64_t b, int64_t e) {
  using R = Reducer<K>;
  for (int64_t o = b; o < e; ++o) {
    double v = 0;
    for (int64_t k = 0; k < blocks; ++k)
      v = R::combine(v, reduceBlock<DT, K>(r, o, k), k == 0);
    storeReduced<DT>(r, o, R::finish(v, r.dim));
  }
}

/// Blocks [b, e) of the rows (row t / blocks, block t % blocks) into
/// r.partials.
template <int32_t DT, RK K>
TRACEIR_VARIANT_TARGET void
reducePartialRange(const ReduceRows &r, int64_t blocks, int64_t b, int64_t e) {
  for (int64_t t = b; t < e; ++t)
    r.partials[t] = reduceBlock<DT, K>(r, t / blocks, t % blocks);
}

/// Columns per task of the inner > 1 case, and per register tile of it.
constexpr int64_t kColumnTile = 64;

template <int32_t DT, RK K> void reduceKind(const ReduceRows &r) {
  using R = Reducer<K>;
  const int64_t grain = cpu::grainSize();
  if (r.inner > 1) {
    const int64_t blocks = (r.inner + kInnerBlock - 1) / kInnerBlock;
    const int64_t width = std::min(kInnerBlock, r.inner);
    cpu::parallelFor(
        r.outer * blocks, std::max<int64_t>(1, grain / (r.dim * width)),
        [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) {
            const int64_t o = t / blocks, i0 = t % blocks * kInnerBlock;
            const int64_t i1 = std::min(r.inner, i0 + kInnerBlock);
            int64_t i = i0;
            for (; i + kColumnTile <= i1; i += kColumnTile)
              reduceColumns<DT, K, kColumnTile>(r, o, i, kColumnTile);
            if (i < i1)
              reduceColumns<DT, K, 0>(r, o, i, i1 - i);
          }
        });
    return;
  }
  const int64_t blocks = (r.dim + kBlock - 1) / kBlock;
  if (r.partials) {
    // Few long rows: their blocks over the threads, then each row's
    // combined in order (as one thread would).
    cpu::parallelFor(r.outer * blocks, std::max<int64_t>(1, grain / kBlock),
                     [&](int64_t b, int64_t e) {
                       reducePartialRange<DT, K>(r, blocks, b, e);
                     });
    for (int64_t o = 0; o < r.outer; ++o) {
      double v = 0;
      for (int64_t b = 0; b < blocks; ++b)
        v = R::combine(v, r.partials[o * blocks + b], b == 0);
      storeReduced<DT>(r, o, R::finish(v, r.dim));
    }
    return;
  }
  cpu::parallelFor(
      r.outer, std::max<int64_t>(1, grain / r.dim),
      [&](int64_t b, int64_t e) { reduceRowRange<DT, K>(r, blocks, b, e); });
}

template <int32_t DT> void reduceTyped(const ReduceRows &r) {
  switch (r.kind) {
  case RK::Sum:
    return reduceKind<DT, RK::Sum>(r);
  case RK::Mean:
    return reduceKind<DT, RK::Mean>(r);
  case RK::Max:
    return reduceKind<DT, RK::Max>(r);
  case RK::Min:
    return reduceKind<DT, RK::Min>(r);
  }
}

/// One row of layer_norm or group_norm (NormRows).
template <int32_t DT>
TRACEIR_VARIANT_TARGET void normRow(const NormRows &r, int64_t o) {
  using E = Elt<DT>;
  using C = typename E::C;
  using T = typename E::T;
  const int64_t n = r.inner;
  const T *x = reinterpret_cast<const T *>(r.in) + o * n;
  T *y = reinterpret_cast<T *>(r.out) + o * n;
  const T *w = reinterpret_cast<const T *>(r.weight);
  const T *bias = reinterpret_cast<const T *>(r.bias);
  const C mean = static_cast<C>(rowSum<DT>(x, n, [](C v) { return v; }) / n);
  const C var = static_cast<C>(
      rowSum<DT>(x, n, [mean](C v) { return (v - mean) * (v - mean); }) / n);
  const C rstd = C(1) / std::sqrt(var + static_cast<C>(r.eps));
  if (r.mean) {
    r.mean[o] = mean;
    r.rstd[o] = rstd;
  }
  const C shift = -mean * rstd;
  if (r.groups == 1) {
    // layer_norm: ATen's (x * rstd - mean * rstd) * w + b.
    TRACEIR_IVDEP
    for (int64_t j = 0; j < n; ++j) {
      C v = E::load(x[j]) * rstd + shift;
      if (w)
        v *= E::load(w[j]);
      if (bias)
        v += E::load(bias[j]);
      y[j] = E::store(v);
    }
    return;
  }
  // group_norm: a scale and shift per channel of the group, over its span.
  int64_t c0 = (o % r.groups) * (n / r.span);
  for (int64_t c = 0; c < n / r.span; ++c) {
    C sc = rstd * (w ? E::load(w[c0 + c]) : C(1));
    C sh = (bias ? E::load(bias[c0 + c]) : C(0)) - mean * sc;
    const T *xc = x + c * r.span;
    T *yc = y + c * r.span;
    TRACEIR_IVDEP
    for (int64_t s = 0; s < r.span; ++s)
      yc[s] = E::store(E::load(xc[s]) * sc + sh);
  }
}

template <int32_t DT>
TRACEIR_VARIANT_TARGET void normChunk(const NormRows &r, int64_t b, int64_t e) {
  for (int64_t o = b; o < e; ++o)
    normRow<DT>(r, o);
}

template <int32_t DT> void normRowsTyped(const NormRows &r) {
  int64_t grain = std::max<int64_t>(1, cpu::grainSize() / r.inner);
  cpu::parallelFor(r.rows, grain,
                   [&](int64_t b, int64_t e) { normChunk<DT>(r, b, e); });
}

template <int32_t DT, bool Clamp>
TRACEIR_VARIANT_TARGET void affineChunk(const ChannelAffine &a, int64_t b,
                                        int64_t e) {
  using E = Elt<DT>;
  using C = typename E::C;
  using T = typename E::T;
  const T *x = reinterpret_cast<const T *>(a.in);
  T *y = reinterpret_cast<T *>(a.out);
  // hardtanh's comparisons (ewCompute's), in the compute type: clamping
  // before the store gives what the store and a separate in-place pass
  // would, rounding being monotonic.
  const C lo = Clamp ? static_cast<C>(a.act->lo) : C(0),
          hi = Clamp ? static_cast<C>(a.act->hi) : C(0);
  for (int64_t p = b; p < e; ++p) {
    const int64_t c = p % a.C;
    const C sc = static_cast<C>(a.scale[c]), sh = static_cast<C>(a.shift[c]);
    const T *xp = x + p * a.S;
    T *yp = y + p * a.S;
    TRACEIR_IVDEP
    for (int64_t s = 0; s < a.S; ++s) {
      C v = E::load(xp[s]) * sc + sh;
      if constexpr (Clamp)
        v = v < lo ? lo : v > hi ? hi : v;
      yp[s] = E::store(v);
    }
  }
}

template <int32_t DT> void channelAffineTyped(const ChannelAffine &a) {
  // Tasks: the N * C planes of S elements.
  int64_t grain = std::max<int64_t>(1, cpu::grainSize() / a.S);
  cpu::parallelFor(a.N * a.C, grain, [&](int64_t b, int64_t e) {
    if (a.act)
      affineChunk<DT, true>(a, b, e);
    else
      affineChunk<DT, false>(a, b, e);
  });
}

/// hardtanh's comparisons (ewCompute's) in place, a compare-and-select an
/// element.
TRACEIR_VARIANT_TARGET void clampRun(float *p, int64_t n, float lo, float hi) {
  TRACEIR_IVDEP
  for (int64_t i = 0; i < n; ++i)
    p[i] = p[i] < lo ? lo : p[i] > hi ? hi : p[i];
}

/// Calls Fn<DT>(arg) for a floating dtype.
#define TRACEIR_NORM_DISPATCH(FN, DTYPE, ARG)                                  \
  switch (DTYPE) {                                                             \
  case F32:                                                                    \
    return FN<F32>(ARG);                                                       \
  case F64:                                                                    \
    return FN<F64>(ARG);                                                       \
  case F16:                                                                    \
    return FN<F16>(ARG);                                                       \
  case BF16:                                                                   \
    return FN<BF16>(ARG);                                                      \
  default:                                                                     \
    return;                                                                    \
  }

} // namespace

void cpu::optimized::TRACEIR_CPU_VARIANT::softmax(const SoftmaxRows &r) {
  TRACEIR_NORM_DISPATCH(softmaxTyped, r.dtype, r)
}
void cpu::optimized::TRACEIR_CPU_VARIANT::reduceRows(const ReduceRows &r) {
  TRACEIR_NORM_DISPATCH(reduceTyped, r.dtype, r)
}
void cpu::optimized::TRACEIR_CPU_VARIANT::normRows(const NormRows &r) {
  TRACEIR_NORM_DISPATCH(normRowsTyped, r.dtype, r)
}
namespace {
/// anyNaN's scan, built for the variant's target (as the other loops here)
/// rather than the baseline's: blocks the compiler vectorizes, no early
/// exit inside one.
TRACEIR_VARIANT_TARGET bool anyNaNScan(const float *p, int64_t n) {
  constexpr int64_t kScanBlock = 1024;
  for (int64_t i = 0; i < n; i += kScanBlock) {
    int bad = 0;
    for (int64_t j = i, end = std::min(n, i + kScanBlock); j < end; ++j)
      bad |= p[j] != p[j];
    if (bad)
      return true;
  }
  return false;
}
} // namespace

bool cpu::optimized::TRACEIR_CPU_VARIANT::anyNaN(const float *p, int64_t n) {
  return anyNaNScan(p, n);
}
void cpu::optimized::TRACEIR_CPU_VARIANT::clampFloats(float *p, int64_t n,
                                                      const Epilogue &act) {
  clampRun(p, n, float(act.lo), float(act.hi));
}
void cpu::optimized::TRACEIR_CPU_VARIANT::channelAffine(
    const ChannelAffine &a) {
  TRACEIR_NORM_DISPATCH(channelAffineTyped, a.dtype, a)
}
#undef TRACEIR_NORM_DISPATCH

#ifndef TRACEIR_LOOPS_ONLY
//===--- The kernels: cpu::fast::* (Ops.def's FAST_CPU) -------------------===//
//
// Each decodes and checks its arguments as the portable kernel does
// (returning true when that failed: the context holds the error), then
// returns false, having written nothing, for what the loops above do not
// cover: a dtype other than f32, f64, f16 or bf16, operands of mixed
// dtypes, non-contiguous inputs or results, zero-size tensors, training
// batch norm.

namespace {
bool coveredDtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 ||
         d == DType::BF16;
}

/// in and result 0: one covered dtype, contiguous, not empty.
bool denseSameDtype(const Tensor &in, const Tensor &out) {
  return coveredDtype(in.dtype) && out.dtype == in.dtype && in.isContiguous() &&
         out.isContiguous() && in.numel() > 0;
}

bool softmaxFast(KernelContext &ctx, bool log) {
  int64_t dim;
  if (!softmaxArgs(ctx, dim))
    return true;
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!denseSameDtype(in, out))
    return false;
  SoftmaxRows r{in.bytes(), out.bytes(), static_cast<int32_t>(in.dtype), 1, 1,
                1,          log};
  for (int64_t d = 0; d < in.rank(); ++d)
    (d < dim ? r.outer : d == dim ? r.dim : r.inner) *= in.shape[d];
  cpu::optimized::softmax(r);
  return true;
}

/// layer_norm, native_layer_norm (`stats`: mean and rstd results) and
/// native_group_norm over the rows LayerNormArgs describes.
bool normFast(KernelContext &ctx, const LayerNormArgs &a, bool stats) {
  const Tensor &in = a.rows;
  Tensor &out = ctx.result(0);
  // A strided input (ConvNeXt's layer norms over C of an NCHW tensor
  // permuted to NHWC) is gathered into the result, which the rows are then
  // normalized in place in: a row is read whole before it is written.
  bool gather = !in.isContiguous() && out.shape == in.shape;
  Tensor dense = in;
  dense.strides = Tensor::contiguousStrides(in.shape);
  if (!denseSameDtype(gather ? dense : in, out))
    return false;
  for (const Tensor *t : {a.weight, a.bias})
    if (t && t->dtype != in.dtype)
      return false;
  if (stats)
    for (unsigned i = 1; i < 3; ++i)
      if (!ctx.result(i).isContiguous() || !coveredDtype(ctx.result(i).dtype))
        return false;
  if (gather)
    cpu::copyTensor(in, out);
  NormRows r;
  r.in = gather ? out.bytes() : in.bytes();
  r.out = out.bytes();
  r.dtype = static_cast<int32_t>(in.dtype);
  r.rows = a.numRows();
  r.inner = in.numel() / r.rows;
  r.groups = a.groups;
  r.span = a.span;
  r.weight = a.weight ? a.weight->bytes() : nullptr;
  r.bias = a.bias ? a.bias->bytes() : nullptr;
  r.eps = a.eps;
  if (stats) {
    r.mean = static_cast<double *>(ctx.scratch(2 * r.rows, sizeof(double)));
    if (!r.mean)
      return true;
    r.rstd = r.mean + r.rows;
  }
  cpu::optimized::normRows(r);
  if (stats)
    for (unsigned i = 1; i < 3; ++i) {
      Tensor &t = ctx.result(i);
      const double *v = i == 1 ? r.mean : r.rstd;
      for (int64_t o = 0; o < r.rows; ++o)
        cpu::storeDouble(t.bytes() + o * dtypeSize(t.dtype), t.dtype, v[o]);
    }
  return true;
}

bool layerNormFast(KernelContext &ctx, bool native) {
  LayerNormArgs a;
  if (!layerNormArgs(ctx, a, native))
    return true;
  return normFast(ctx, a, native);
}

/// Element c of a per-channel tensor (C elements, rank 1 or contiguous).
double channelValue(const Tensor &t, int64_t c) {
  int64_t stride = t.rank() == 1 ? t.strides[0] : 1;
  return cpu::loadDouble(t.bytes() + c * stride * dtypeSize(t.dtype), t.dtype);
}

/// Eval batch_norm and native_batch_norm: scale = w / sqrt(var + eps) and
/// shift = b - mean * scale per channel (in double, C values), then one
/// multiply-add per element.
bool batchNormFast(KernelContext &ctx, bool native) {
  BatchNormArgs a;
  if (!batchNormArgs(ctx, a, native))
    return true;
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (a.training || !denseSameDtype(x, out))
    return false;
  for (unsigned i = 1; i <= 4; ++i)
    if (ctx.isTensor(i) && ctx.tensor(i).rank() != 1 &&
        !ctx.tensor(i).isContiguous())
      return false;
  if (native)
    for (unsigned i = 1; i < 3; ++i)
      if (!ctx.result(i).isContiguous())
        return false;
  ChannelLayout L(x);
  double *scale = static_cast<double *>(ctx.scratch(2 * L.C, sizeof(double)));
  if (!scale)
    return true;
  double *shift = scale + L.C;
  for (int64_t c = 0; c < L.C; ++c) {
    double mean = channelValue(ctx.tensor(3), c);
    double istd = 1.0 / std::sqrt(channelValue(ctx.tensor(4), c) + a.eps);
    scale[c] = istd * (ctx.isTensor(1) ? channelValue(ctx.tensor(1), c) : 1.0);
    shift[c] = (ctx.isTensor(2) ? channelValue(ctx.tensor(2), c) : 0.0) -
               mean * scale[c];
    if (native) {
      // The statistics eval mode normalized with, as the portable kernel.
      Tensor &m = ctx.result(1), &r = ctx.result(2);
      cpu::storeDouble(m.bytes() + c * dtypeSize(m.dtype), m.dtype, mean);
      cpu::storeDouble(r.bytes() + c * dtypeSize(r.dtype), r.dtype, istd);
    }
  }
  // A relu_ or hardtanh_ next on the result (Epilogues.cpp) is applied
  // here, in the same pass.
  const Epilogue *act = ctx.epilogue();
  cpu::optimized::channelAffine({x.bytes(), out.bytes(),
                                 static_cast<int32_t>(x.dtype), L.N, L.C, L.S,
                                 scale, shift, act});
  if (act)
    ctx.appliedEpilogue();
  return true;
}

/// sum, mean, amax and amin of a contiguous input into a contiguous result
/// of its dtype, the reduced dims (size-1 dims aside) one run of adjacent
/// dims: [outer, dim, inner] (ReduceRows).
bool reduceFast(KernelContext &ctx, ReduceRows::Kind kind) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  const bool extremum =
      kind == ReduceRows::Kind::Max || kind == ReduceRows::Kind::Min;
  std::vector<bool> reduced;
  if (!reductionArgs(ctx, in, out, DimArg::List, extremum, reduced))
    return true;
  if (!denseSameDtype(in, out) || out.numel() == 0)
    return false;
  ReduceRows r{in.bytes(), out.bytes(), static_cast<int32_t>(in.dtype), 1, 1,
               1,          kind};
  // 0: before the reduced run, 1: in it, 2: after it.
  int part = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.shape[d] == 1)
      continue;
    if (reduced[d]) {
      if (part == 2)
        return false; // a second run
      part = 1;
      r.dim *= in.shape[d];
    } else {
      part = part == 1 ? 2 : part;
      (part == 0 ? r.outer : r.inner) *= in.shape[d];
    }
  }
  if (int64_t n = cpu::optimized::reducePartials(r)) {
    r.partials = static_cast<double *>(ctx.scratch(n, sizeof(double)));
    if (!r.partials)
      return true;
  }
  cpu::optimized::reduceRows(r);
  return true;
}
} // namespace

bool cpu::fast::sum(KernelContext &ctx) {
  return reduceFast(ctx, ReduceRows::Kind::Sum);
}
bool cpu::fast::mean(KernelContext &ctx) {
  return reduceFast(ctx, ReduceRows::Kind::Mean);
}
bool cpu::fast::amax(KernelContext &ctx) {
  return reduceFast(ctx, ReduceRows::Kind::Max);
}
bool cpu::fast::amin(KernelContext &ctx) {
  return reduceFast(ctx, ReduceRows::Kind::Min);
}
bool cpu::fast::softmax(KernelContext &ctx) { return softmaxFast(ctx, false); }
bool cpu::fast::log_softmax(KernelContext &ctx) {
  return softmaxFast(ctx, true);
}
bool cpu::fast::layer_norm(KernelContext &ctx) {
  return layerNormFast(ctx, false);
}
bool cpu::fast::native_layer_norm(KernelContext &ctx) {
  return layerNormFast(ctx, true);
}
bool cpu::fast::native_group_norm(KernelContext &ctx) {
  LayerNormArgs a;
  if (!groupNormArgs(ctx, a))
    return true;
  return normFast(ctx, a, true);
}
bool cpu::fast::batch_norm(KernelContext &ctx) {
  return batchNormFast(ctx, false);
}
bool cpu::fast::native_batch_norm(KernelContext &ctx) {
  return batchNormFast(ctx, true);
}
#endif // TRACEIR_LOOPS_ONLY
