//===- RecurrentAVX2.cpp - The recurrent cell loops for AVX2 + FMA --------===//
//
// Recurrent.cpp again, its loops targeting AVX2 and FMA (8 floats wide):
// Dispatch.cpp runs it where the CPU has both.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx2
#define TRACEIR_VARIANT_TARGET __attribute__((target("avx2,fma")))
#include "Recurrent.cpp" // NOLINT: the same loops, another target
