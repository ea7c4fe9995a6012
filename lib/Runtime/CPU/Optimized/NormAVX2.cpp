//===- NormAVX2.cpp - The fused row and channel loops for AVX2 + FMA ------===//
//
// Norm.cpp again, its loops targeting AVX2 and FMA (8 floats wide):
// Dispatch.cpp runs it where the CPU has both.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx2
#define TRACEIR_VARIANT_TARGET __attribute__((target("avx2,fma")))
#define TRACEIR_LOOPS_ONLY // the kernels' entry points are the base file's
#include "Norm.cpp"        // NOLINT: the same loops, another target
