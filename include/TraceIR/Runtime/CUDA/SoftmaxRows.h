//===- SoftmaxRows.h - The CUDA tier's typed row softmax --------*- C++ -*-===//
//
// The CUDA optimized tier's softmax and log_softmax over the last dim of
// contiguous tensors (Reductions.cu's softmaxRowsKernel), which is how
// models call them: one block per row, computing in the dtype's opmath
// type (float for f32, f16 and bf16, as PyTorch's; double for f64)
// instead of the portable kernel's double through per-element dtype
// switches and index arithmetic, and reading 128-bit vectors where the
// rows allow. Its three passes (max, sum of exponentials, results) are
// separated by block reductions; what one thread computes in each pass is
// here, host and device code, so that the CPU unit tests run every thread
// of a block and compare with the portable kernel
// (unittests/SoftmaxRowsTest.cpp). No LLVM or MLIR here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_SOFTMAXROWS_H
#define TRACEIR_RUNTIME_CUDA_SOFTMAXROWS_H

#include "TraceIR/Runtime/ElementwisePlan.h"

#include <cstdint>

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

/// The elements per access: a 128-bit vector where both row bases are
/// aligned to one and the rows are a whole number of them, else 1.
inline int softmaxRowsVectorWidth(const SoftmaxRowsPlan &p) {
  const int64_t vec = kEwVectorBytes / ewSize(p.dtype);
  auto aligned = [](const void *q) {
    return reinterpret_cast<uintptr_t>(q) % kEwVectorBytes == 0;
  };
  return p.n % vec == 0 && aligned(p.in) && aligned(p.out) ? int(vec) : 1;
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

/// Calls Run<DT, VEC>::run(p) for the plan's dtype and vector width: the
/// switch the CUDA launch and the tests' host run share.
template <template <int32_t, int> class Run, int32_t DT>
inline void softmaxRowsByWidth(const SoftmaxRowsPlan &p) {
  constexpr int kVec = kEwVectorBytes / sizeof(typename EwElt<DT>::T);
  if (p.vec == kVec)
    Run<DT, kVec>::run(p);
  else
    Run<DT, 1>::run(p);
}
template <template <int32_t, int> class Run>
inline void softmaxRowsDispatch(const SoftmaxRowsPlan &p) {
  switch (p.dtype) {
  case F32:
    return softmaxRowsByWidth<Run, F32>(p);
  case F64:
    return softmaxRowsByWidth<Run, F64>(p);
  case F16:
    return softmaxRowsByWidth<Run, F16>(p);
  default:
    return softmaxRowsByWidth<Run, BF16>(p);
  }
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_SOFTMAXROWS_H
