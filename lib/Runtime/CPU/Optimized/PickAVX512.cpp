//===- PickAVX512.cpp - A float row's max or min with AVX-512 -------------===//
//
// amax and amin over contiguous float rows (Norm.cpp's rowPick in the
// AVX-512 variant): four vectors a step, each its own chain of max or min,
// the NaN test apart in a mask. GCC 12 vectorized the generic lanes but
// kept them in stack arrays, reloaded each step and each tree level: a row
// of 64 floats took 11 ns, 3 here (eager's 8.8).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Optimized.h"

#include <immintrin.h>
#include <limits>

#define TRACEIR_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))

// GCC 12's AVX-512 headers fill the unused source of the max, min and
// reduce builtins with _mm512_undefined_ps(), which -Wmaybe-uninitialized
// reports where they are inlined (GCC bug 105593), as in ExpAVX512.cpp.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {
template <bool Max> TRACEIR_AVX512 inline __m512 pick(__m512 a, __m512 b) {
  return Max ? _mm512_max_ps(a, b) : _mm512_min_ps(a, b);
}

TRACEIR_AVX512 inline __mmask16 nans(__m512 v) {
  return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
}

template <bool Max> TRACEIR_AVX512 float pickRow(const float *x, int64_t n) {
  // Every lane starts from the first element, so no lane needs an
  // identity (lanes past the end load it too).
  const __m512 first = _mm512_set1_ps(x[0]);
  __m512 m0 = first, m1 = first, m2 = first, m3 = first;
  __mmask16 nan = 0;
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 v0 = _mm512_loadu_ps(x + j), v1 = _mm512_loadu_ps(x + j + 16),
           v2 = _mm512_loadu_ps(x + j + 32), v3 = _mm512_loadu_ps(x + j + 48);
    nan |= nans(v0) | nans(v1) | nans(v2) | nans(v3);
    m0 = pick<Max>(m0, v0);
    m1 = pick<Max>(m1, v1);
    m2 = pick<Max>(m2, v2);
    m3 = pick<Max>(m3, v3);
  }
  for (; j + 16 <= n; j += 16) {
    __m512 v = _mm512_loadu_ps(x + j);
    nan |= nans(v);
    m0 = pick<Max>(m0, v);
  }
  if (j < n) {
    const __mmask16 in = static_cast<__mmask16>((1u << (n - j)) - 1);
    __m512 v = _mm512_mask_loadu_ps(first, in, x + j);
    nan |= nans(v);
    m0 = pick<Max>(m0, v);
  }
  if (nan)
    return std::numeric_limits<float>::quiet_NaN();
  const __m512 m = pick<Max>(pick<Max>(m0, m1), pick<Max>(m2, m3));
  return Max ? _mm512_reduce_max_ps(m) : _mm512_reduce_min_ps(m);
}
} // namespace

TRACEIR_AVX512 float traceir::cpu::optimized::avx512::pickFloats(const float *x,
                                                                 int64_t n,
                                                                 bool max) {
  return max ? pickRow<true>(x, n) : pickRow<false>(x, n);
}
