//===- ElementwiseAVX2.cpp - The optimized loops for AVX2 + FMA -----------===//
//
// Elementwise.cpp again, its loops targeting AVX2 and FMA (8 floats wide,
// libmvec's AVX2 functions): Dispatch.cpp runs it where the CPU has both.
// lib/Runtime/CMakeLists.txt builds it for x86 with GCC or Clang only.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx2
#define TRACEIR_VARIANT_TARGET __attribute__((target("avx2,fma")))
#define TRACEIR_LOOPS_ONLY // the copy is the base variant's
#include "Elementwise.cpp" // NOLINT: the same loops, another target
