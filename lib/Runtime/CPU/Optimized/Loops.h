//===- Loops.h - What the optimized CPU loops share -------------*- C++ -*-===//
//
// Included by each optimized-loop file (Elementwise.cpp, Norm.cpp,
// Recurrent.cpp) once per
// CPU variant: glibc's vector math declarations, the loop pragmas, the
// variant's name and target, and each floating dtype's storage and compute
// types. Private to CPU/Optimized/.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_OPTIMIZED_LOOPS_H
#define TRACEIR_RUNTIME_CPU_OPTIMIZED_LOOPS_H

#include "TraceIR/Runtime/ElementwisePlan.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#ifdef TRACEIR_HAVE_LIBMVEC
// glibc's vector math library (libmvec) has SIMD variants of these (4 and
// 8 floats, 2 and 4 doubles, for the SSE, AVX2 and AVX-512 ABIs), the role
// Sleef plays in PyTorch. math.h declares them for the vectorizer only
// under -ffast-math, whose NaN rules TraceIR cannot take; declaring them
// here lets the optimized loops (#pragma omp simd, their files built with
// -fno-math-errno) call them without it. CMake checks that the toolchain
// vectorizes and links such a call before defining TRACEIR_HAVE_LIBMVEC.
#define TRACEIR_SIMD_DECL(R, F)                                                \
  __attribute__((simd("notinbranch"))) R F(R) noexcept;
extern "C" {
TRACEIR_SIMD_DECL(float, expf)
TRACEIR_SIMD_DECL(float, logf)
TRACEIR_SIMD_DECL(float, tanhf)
TRACEIR_SIMD_DECL(float, erff)
TRACEIR_SIMD_DECL(float, sinf)
TRACEIR_SIMD_DECL(float, cosf)
TRACEIR_SIMD_DECL(double, exp)
TRACEIR_SIMD_DECL(double, log)
TRACEIR_SIMD_DECL(double, tanh)
TRACEIR_SIMD_DECL(double, erf)
TRACEIR_SIMD_DECL(double, sin)
TRACEIR_SIMD_DECL(double, cos)
}
#undef TRACEIR_SIMD_DECL
#define TRACEIR_OMP_SIMD _Pragma("omp simd")
#else
#define TRACEIR_OMP_SIMD
#endif
#if defined(__clang__)
#define TRACEIR_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define TRACEIR_IVDEP _Pragma("GCC ivdep")
#else
#define TRACEIR_IVDEP
#endif

// The variant this file is built as: `base` (the target's baseline ISA),
// or `avx2` when ElementwiseAVX2.cpp includes it built with -mavx2 -mfma.
#ifndef TRACEIR_CPU_VARIANT
#define TRACEIR_CPU_VARIANT base
#endif
// The loops' target: the build's for `base`; for `avx2`, a target
// attribute rather than -mavx2 on the whole file, so that no inline
// function of a header this file instantiates is emitted as AVX2 code
// the linker could pick for the baseline's callers.
#ifndef TRACEIR_VARIANT_TARGET
#define TRACEIR_VARIANT_TARGET
#endif

#if defined(TRACEIR_AVX512_EXPF) && defined(TRACEIR_HAVE_LIBMVEC) &&           \
    defined(__GNUC__) && !defined(__clang__)
// AVX-512's float exp (ExpAVX512.cpp): the vector functions of GCC's
// vector ABI, which the loops call as they call libmvec's; its scaling by
// 2^n is one vscalefps, where the inlined ewExpFloat takes eight integer
// and float ops (exp of 128k floats in cache: 32 us inlined, 27 called).
extern "C" __attribute__((simd("notinbranch"))) float
traceir_expf_avx512(float) noexcept;
#define TRACEIR_VARIANT_EXPF traceir_expf_avx512
// Its rows of float exp: one call a row (Elementwise.cpp's denseRow).
#define TRACEIR_VARIANT_EXPF_ROW traceir::cpu::optimized::avx512::expFloats
// Its rows of float amax and amin (Norm.cpp's rowPick).
#define TRACEIR_VARIANT_PICKF_ROW traceir::cpu::optimized::avx512::pickFloats
#endif

namespace traceir::cpu::optimized {
namespace {
/// The exp and tanh of this variant's loops (ewCompute's M): EwMath's, but
/// AVX-512's float exp where it is built.
struct Math {
  template <typename C> static C exp(C x) {
#ifdef TRACEIR_VARIANT_EXPF
    if constexpr (std::is_same_v<C, float>)
      return TRACEIR_VARIANT_EXPF(x);
#endif
    return EwMath::exp(x);
  }
  template <typename C> static C tanh(C x) { return EwMath::tanh(x); }
};

/// Partial results per lane: the reductions (Norm.cpp, Linear.cpp) keep this many
/// accumulators, combined in a fixed order, so that the compiler
/// vectorizes them without reassociating (no -ffast-math) and the result
/// depends only on the row.
constexpr int kLanes = 16;

/// The lanes combined by `op` as a tree, halves combined lane-wise: GCC 12
/// vectorizes each level (with the pragmas), where a chain of scalar ops
/// cost a row their latency (attention's rows of 64 keys pay it once per
/// row).
/// The lane helpers below are inlined into the variant's loops, whose
/// target they need: called out of line, as baseline code from AVX-512
/// code, they cost softmax over rows of 64 seven times its time.
#if defined(__GNUC__)
#define TRACEIR_LANES_INLINE                                                   \
  TRACEIR_VARIANT_TARGET inline __attribute__((always_inline))
#else
#define TRACEIR_LANES_INLINE inline
#endif

/// One level of treeLanes, then the next: each level a loop of constant
/// trip count (a runtime loop over the levels left the lanes on the stack,
/// reloaded per level: a third of a 64-element row max).
template <int W, typename C, typename F>
TRACEIR_LANES_INLINE void treeLevels(C (&s)[kLanes], F op) {
  if constexpr (W > 0) {
    TRACEIR_OMP_SIMD
    for (int k = 0; k < W; ++k)
      s[k] = op(s[k], s[k + W]);
    treeLevels<W / 2>(s, op);
  }
}

template <typename C, typename F>
TRACEIR_LANES_INLINE C treeLanes(const C (&acc)[kLanes], F op) {
  C s[kLanes];
  for (int k = 0; k < kLanes; ++k)
    s[k] = acc[k];
  treeLevels<kLanes / 2>(s, op);
  return s[0];
}

/// The lanes' sum, in the tree's fixed order.
template <typename C>
TRACEIR_LANES_INLINE C combineLanes(const C (&acc)[kLanes]) {
  return treeLanes(acc, [](C a, C b) { return a + b; });
}

/// The lanes' max (any order gives the same max; a NaN lane may or may not
/// win, as in the lanes themselves).
template <typename C> TRACEIR_LANES_INLINE C maxLanes(const C (&acc)[kLanes]) {
  return treeLanes(acc, [](C a, C b) { return b > a ? b : a; });
}

/// A dtype's storage and compute types (ElementwisePlan.h's, which the
/// CUDA loops share).
template <int32_t DT> using Elt = EwElt<DT>;

} // namespace
} // namespace traceir::cpu::optimized

#endif // TRACEIR_RUNTIME_CPU_OPTIMIZED_LOOPS_H
