//===- TypedRows.h - The CUDA tier's typed row kernels ----------*- C++ -*-===//
//
// The CUDA optimized tier's softmax, log_softmax and layer_norm over the
// last dims of contiguous tensors (Reductions.cu's softmaxRowsKernel,
// NN.cu's layerNormRowsKernel) and eval batch_norm over contiguous [N, C,
// *] tensors (Norm.cu's channelAffineKernel), which is how models call
// them: one block per row (a channel's plane for batch_norm), computing in the
// dtype's opmath type (float for f32, f16 and bf16, as PyTorch's; double for
// f64) instead of the portable kernels' double through per-element dtype
// switches and index arithmetic, and reading 128-bit vectors where the rows
// allow. Their passes are separated by block reductions; what one thread
// computes in each pass is here, host and device code, so that the CPU unit
// tests run every thread of a block and compare with the portable kernels' math
// (unittests/TypedRowsTest.cpp). No LLVM or MLIR here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_TYPEDROWS_H
#define TRACEIR_RUNTIME_CUDA_TYPEDROWS_H

#include "TraceIR/Runtime/ElementwisePlan.h"

#include <cstdint>
#include <initializer_list>

namespace traceir {

/// `rows` rows of `n` contiguous elements of one floating dtype, at `in`
/// and `out` (which may be one buffer: each element is read in the last
/// pass before it is written), `vec` elements per access.
struct SoftmaxRowsPlan {
  const char *in = nullptr;
  char *out = nullptr;
  int32_t dtype = F32;
  int64_t rows = 0, n = 0;
  bool log = false;
  int vec = 1;
};

/// The elements per access of rows of n elements of `dtype` at each of
/// `bases` (null ones ignored): a 128-bit vector where every base is
/// aligned to one and the rows are a whole number of them, else 1.
inline int typedRowsVectorWidth(int32_t dtype, int64_t n,
                                std::initializer_list<const void *> bases) {
  const int64_t vec = kEwVectorBytes / ewSize(dtype);
  if (n % vec != 0)
    return 1;
  for (const void *q : bases)
    if (reinterpret_cast<uintptr_t>(q) % kEwVectorBytes != 0)
      return 1;
  return int(vec);
}

/// The elements per access of a softmax plan.
inline int softmaxRowsVectorWidth(const SoftmaxRowsPlan &p) {
  return typedRowsVectorWidth(p.dtype, p.n, {p.in, p.out});
}

/// One thread's share (thread t of B, vectors t, t + B, ...) of each pass
/// over a row of n elements at x, results at y.
template <int32_t DT, int VEC> struct SoftmaxRow {
  using E = EwElt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  using V = EwVec<T, VEC>;

  /// The larger, NaN winning: a row holding a NaN is all NaN, as eager's.
  TRACEIR_HD static C maxOf(C a, C b) { return a != a || a > b ? a : b; }

  TRACEIR_HD static C partialMax(const T *x, int64_t n, int64_t t, int64_t B) {
    C m = C(-INFINITY);
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i];
      for (int k = 0; k < VEC; ++k)
        m = maxOf(m, E::load(v.v[k]));
    }
    return m;
  }

  /// The sum of exp(x - max) over the thread's elements.
  TRACEIR_HD static C partialSum(const T *x, int64_t n, int64_t t, int64_t B,
                                 C max) {
    C s = 0;
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i];
      for (int k = 0; k < VEC; ++k)
        s += exp(E::load(v.v[k]) - max);
    }
    return s;
  }

  /// y = exp(x - max) / sum, or x - max - log(sum) for log_softmax.
  TRACEIR_HD static void write(const T *x, T *y, int64_t n, int64_t t,
                               int64_t B, C max, C sum, bool logSoftmax) {
    const C logSum = log(sum);
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i], r;
      for (int k = 0; k < VEC; ++k) {
        C d = E::load(v.v[k]) - max;
        r.v[k] = E::store(logSoftmax ? d - logSum : exp(d) / sum);
      }
      reinterpret_cast<V *>(y)[i] = r;
    }
  }
};

/// `rows` rows of `n` contiguous elements of one floating dtype at `in`,
/// normalized into `out` (which may be `in`), times `weight` and plus
/// `bias` (n contiguous elements of that dtype each, or null); with
/// native_layer_norm's `mean` and `rstd` (one per row, of their dtypes),
/// or null.
struct LayerNormRowsPlan {
  const char *in = nullptr;
  char *out = nullptr;
  const char *weight = nullptr, *bias = nullptr;
  char *mean = nullptr, *rstd = nullptr;
  int32_t dtype = F32, meanDtype = F32, rstdDtype = F32;
  int64_t rows = 0, n = 0;
  double eps = 1e-5;
  int vec = 1;
};

/// The elements per access of a layer_norm plan.
inline int layerNormRowsVectorWidth(const LayerNormRowsPlan &p) {
  return typedRowsVectorWidth(p.dtype, p.n, {p.in, p.out, p.weight, p.bias});
}

/// One thread's share of a layer_norm row: the mean, the variance about it
/// (two passes, as the portable kernel), then the results.
template <int32_t DT, int VEC> struct LayerNormRow {
  using E = EwElt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  using V = EwVec<T, VEC>;

  TRACEIR_HD static C partialSum(const T *x, int64_t n, int64_t t, int64_t B) {
    C s = 0;
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i];
      for (int k = 0; k < VEC; ++k)
        s += E::load(v.v[k]);
    }
    return s;
  }

  /// The sum of (x - mean)^2 over the thread's elements.
  TRACEIR_HD static C partialSquares(const T *x, int64_t n, int64_t t,
                                     int64_t B, C mean) {
    C s = 0;
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i];
      for (int k = 0; k < VEC; ++k) {
        C d = E::load(v.v[k]) - mean;
        s += d * d;
      }
    }
    return s;
  }

  /// 1 / sqrt(var + eps), the biased variance of a row of n, as PyTorch.
  TRACEIR_HD static C rstdOf(C squares, int64_t n, double eps) {
    return C(1) / sqrt(squares / C(n) + C(eps));
  }

  /// y = (x - mean) * rstd * w + b, w and b where given.
  TRACEIR_HD static void write(const T *x, T *y, const T *w, const T *b,
                               int64_t n, int64_t t, int64_t B, C mean,
                               C rstd) {
    for (int64_t i = t; i < n / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i], r;
      V wv{}, bv{};
      if (w)
        wv = reinterpret_cast<const V *>(w)[i];
      if (b)
        bv = reinterpret_cast<const V *>(b)[i];
      for (int k = 0; k < VEC; ++k) {
        C c = (E::load(v.v[k]) - mean) * rstd;
        if (w)
          c *= E::load(wv.v[k]);
        if (b)
          c += E::load(bv.v[k]);
        r.v[k] = E::store(c);
      }
      reinterpret_cast<V *>(y)[i] = r;
    }
  }
};

/// A per-channel vector of eval batch_norm's parameters: C elements of
/// `dtype` `stride` apart, or none (data null).
struct ChannelParam {
  const char *data = nullptr;
  int32_t dtype = F32;
  int64_t stride = 1;
  TRACEIR_HD double at(int64_t c) const {
    return ewLoadDouble(data + c * stride * ewSize(dtype), dtype);
  }
};

/// Eval batch_norm over N * C planes of S contiguous elements at `in`,
/// into `out` (which may be `in`): out = in * scale[c] + shift[c], and
/// native_batch_norm's saved mean and inverse std (C contiguous elements
/// each, of their dtypes) where not null.
struct ChannelAffinePlan {
  const char *in = nullptr;
  char *out = nullptr;
  int32_t dtype = F32;
  int64_t N = 0, C = 0, S = 0;
  ChannelParam weight, bias, mean, var;
  double eps = 1e-5;
  char *saveMean = nullptr, *saveIstd = nullptr;
  int32_t saveDtype = F32;
  int vec = 1;
};

/// The elements per access of a batch_norm plan (its planes are its rows).
inline int channelAffineVectorWidth(const ChannelAffinePlan &p) {
  return typedRowsVectorWidth(p.dtype, p.S, {p.in, p.out});
}

/// Channel c's normalization in double, as the CPU's optimized kernel
/// (CPU/Optimized/Norm.cpp's batchNormFast): istd = 1 / sqrt(var + eps),
/// scale = istd * weight, shift = bias - mean * scale.
TRACEIR_HD inline void channelScaleShift(const ChannelAffinePlan &p, int64_t c,
                                         double &istd, double &scale,
                                         double &shift) {
  istd = 1.0 / sqrt(p.var.at(c) + p.eps);
  scale = istd * (p.weight.data ? p.weight.at(c) : 1.0);
  shift = (p.bias.data ? p.bias.at(c) : 0.0) - p.mean.at(c) * scale;
}

/// One thread's share of a plane: y = x * scale + shift in the opmath type.
template <int32_t DT, int VEC> struct ChannelAffineRow {
  using E = EwElt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  using V = EwVec<T, VEC>;

  TRACEIR_HD static void write(const T *x, T *y, int64_t S, int64_t t,
                               int64_t B, C scale, C shift) {
    for (int64_t i = t; i < S / VEC; i += B) {
      V v = reinterpret_cast<const V *>(x)[i], r;
      for (int k = 0; k < VEC; ++k)
        r.v[k] = E::store(E::load(v.v[k]) * scale + shift);
      reinterpret_cast<V *>(y)[i] = r;
    }
  }
};

/// Calls Run<DT, VEC>::run(p) for a plan's dtype and vector width (p.dtype,
/// p.vec): the switch the CUDA launches and the tests' host runs share.
template <template <int32_t, int> class Run, int32_t DT, typename Plan>
inline void typedRowsByWidth(const Plan &p) {
  constexpr int kVec = kEwVectorBytes / sizeof(typename EwElt<DT>::T);
  if (p.vec == kVec)
    Run<DT, kVec>::run(p);
  else
    Run<DT, 1>::run(p);
}
template <template <int32_t, int> class Run, typename Plan>
inline void typedRowsDispatch(const Plan &p) {
  switch (p.dtype) {
  case F32:
    return typedRowsByWidth<Run, F32>(p);
  case F64:
    return typedRowsByWidth<Run, F64>(p);
  case F16:
    return typedRowsByWidth<Run, F16>(p);
  default:
    return typedRowsByWidth<Run, BF16>(p);
  }
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_TYPEDROWS_H
