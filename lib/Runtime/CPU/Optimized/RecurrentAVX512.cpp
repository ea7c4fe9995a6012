//===- RecurrentAVX512.cpp - The recurrent cells' loops for AVX-512 -------===//
//
// Recurrent.cpp again, its loops targeting AVX-512 (16 floats wide), as
// ElementwiseAVX512.cpp: Dispatch.cpp runs it where the CPU has it.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx512
#define TRACEIR_AVX512_EXPF // float exp through ExpAVX512.cpp (Loops.h)
#define TRACEIR_VARIANT_TARGET                                                 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#include "Recurrent.cpp" // NOLINT: the same loops, another target
