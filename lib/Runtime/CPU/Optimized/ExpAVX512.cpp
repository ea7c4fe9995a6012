//===- ExpAVX512.cpp - Float exp as AVX-512 vector functions --------------===//
//
// e^x as Elementwise.h's ewExpFloat computes it (n = round(x log2 e) by
// adding 1.5 * 2^23, r = x - n ln 2 with ln 2 in two parts, Cephes'
// polynomial), with the scaling by 2^n one vscalefps, which rounds a
// subnormal result once as the two half-scalings do there: about half the
// ops, within the same 1.5 ulp (ElementwisePlanTest sweeps both). (n by
// vrndscaleps, two uops on port 0 alone on Intel, took 10% longer: 131k
// floats in cache 21.5 us against 19.5 with the shift's fma and sub.) The
// AVX-512 variant's loops (Loops.h's Math) call these as GCC's vector ABI
// names them, as they call libmvec's: `traceir_expf_avx512` is the scalar
// function and _ZGV{b,c,d,e}N{4,8,8,16}v_traceir_expf_avx512 its 4, 8 and
// 16 lane versions (the loops' vectorized remainders take the narrower
// ones). Only AVX-512 code calls them, so each may use AVX-512 VL.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/Elementwise.h"

#include <immintrin.h>

#define TRACEIR_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))

// GCC 12's AVX-512 headers fill the unused source of roundscale and scalef
// with _mm*_undefined_ps(), which -Wuninitialized reports where they are
// inlined (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {
// The exp of each lane, for V one of __m128, __m256 and __m512 (P its
// intrinsics' prefix). The clamps are ewExpFloat's: x86's max and min
// return their second operand where either is NaN, so NaN passes through.
#define TRACEIR_EXP_LANES(V, P)                                                \
  TRACEIR_AVX512 inline V expLanes(V x) {                                      \
    V c = P##_max_ps(P##_set1_ps(-104.0f), x);                                 \
    c = P##_min_ps(P##_set1_ps(89.0f), c);                                     \
    const V shift = P##_set1_ps(12582912.0f);                                  \
    V n = P##_sub_ps(                                                          \
        P##_fmadd_ps(c, P##_set1_ps(1.44269504088896341f), shift), shift);     \
    V r = P##_fnmadd_ps(n, P##_set1_ps(0.693359375f), c);                      \
    r = P##_fnmadd_ps(n, P##_set1_ps(-2.12194440e-4f), r);                     \
    V p = P##_set1_ps(1.9875691500e-4f);                                       \
    p = P##_fmadd_ps(p, r, P##_set1_ps(1.3981999507e-3f));                     \
    p = P##_fmadd_ps(p, r, P##_set1_ps(8.3334519073e-3f));                     \
    p = P##_fmadd_ps(p, r, P##_set1_ps(4.1665795894e-2f));                     \
    p = P##_fmadd_ps(p, r, P##_set1_ps(1.6666665459e-1f));                     \
    p = P##_fmadd_ps(p, r, P##_set1_ps(5.0000001201e-1f));                     \
    p = P##_fmadd_ps(p, P##_mul_ps(r, r), P##_add_ps(r, P##_set1_ps(1.0f)));   \
    return P##_scalef_ps(p, n);                                                \
  }
TRACEIR_EXP_LANES(__m128, _mm)
TRACEIR_EXP_LANES(__m256, _mm256)
TRACEIR_EXP_LANES(__m512, _mm512)
#undef TRACEIR_EXP_LANES
} // namespace

// GCC's vector ABI: b (SSE, 4 lanes), c (AVX, 8), d (AVX2, 8), e
// (AVX-512, 16); the argument and the result in one register.
extern "C" {
// The scalar through the same lanes: n's fma then rounds as the vectors'.
TRACEIR_AVX512 float traceir_expf_avx512(float x) noexcept {
  return _mm_cvtss_f32(expLanes(_mm_set_ss(x)));
}
TRACEIR_AVX512 __m128 _ZGVbN4v_traceir_expf_avx512(__m128 x) {
  return expLanes(x);
}
TRACEIR_AVX512 __m256 _ZGVcN8v_traceir_expf_avx512(__m256 x) {
  return expLanes(x);
}
TRACEIR_AVX512 __m256 _ZGVdN8v_traceir_expf_avx512(__m256 x) {
  return expLanes(x);
}
TRACEIR_AVX512 __m512 _ZGVeN16v_traceir_expf_avx512(__m512 x) {
  return expLanes(x);
}
}

// The loops' rows of float exp call this, one call a row, where the
// vector function per 16 floats reloaded its constants on every call
// (131k floats: 25.7 us through the loops' blocks, 19.5 here). The last
// partial vector is computed masked by the same 16-lane code, so every
// element's result is the one the blocks give it, however rows are split.
TRACEIR_AVX512 void traceir::cpu::optimized::avx512::expFloats(const float *x,
                                                               float *y,
                                                               int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, expLanes(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, expLanes(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

TRACEIR_AVX512 void
traceir::cpu::optimized::avx512::expFloatsNarrow(const float *x, float *y,
                                                 int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, expLanes(_mm256_loadu_ps(x + i)));
  for (; i + 4 <= n; i += 4)
    _mm_storeu_ps(y + i, expLanes(_mm_loadu_ps(x + i)));
  for (; i < n; ++i)
    y[i] = traceir_expf_avx512(x[i]);
}
