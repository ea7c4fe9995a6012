//===- LinearAVX512.cpp - The skinny products' loops for AVX-512 ----------===//
//
// Linear.cpp again, its loops targeting AVX-512, as ElementwiseAVX512.cpp:
// Dispatch.cpp runs it where the CPU has it.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx512
#define TRACEIR_VARIANT_TARGET                                                 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define TRACEIR_LOOPS_ONLY // the kernel's entry point is the base file's
#include "Linear.cpp"      // NOLINT: the same loops, another target
