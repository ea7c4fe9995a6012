//===- ElementwiseAVX512.cpp - The optimized loops for AVX-512 ------------===//
//
// Elementwise.cpp again, its loops targeting AVX-512 (F, BW, VL, DQ: the
// set PyTorch's AVX512 capability needs) with AVX2 and FMA: 16 floats wide,
// libmvec's AVX-512 functions. Dispatch.cpp runs it where the CPU has them
// all. lib/Runtime/CMakeLists.txt builds it for x86 with GCC or Clang only.
//
//===----------------------------------------------------------------------===//

#define TRACEIR_CPU_VARIANT avx512
#define TRACEIR_AVX512_EXPF // float exp through ExpAVX512.cpp (Loops.h)
#define TRACEIR_VARIANT_TARGET                                                 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define TRACEIR_LOOPS_ONLY // the copy is the base variant's
#include "Elementwise.cpp" // NOLINT: the same loops, another target
