//===- LinearAVX2.cpp - The few-row linear loops for AVX2 + FMA -----------===//
//
// Linear.cpp again, its loops targeting AVX2 and FMA: Dispatch.cpp runs it
// where the CPU has both.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx2
#define TRACEIR_VARIANT_TARGET __attribute__((target("avx2,fma")))
#define TRACEIR_LOOPS_ONLY // the kernel's entry point is the base file's
#include "Linear.cpp"      // NOLINT: the same loops, another target
