//===- CreationLaunch.h - Launches of CUDA tensors from scalars -*- C++ -*-===//
//
// What CUDA/Creation.cpp hands to CUDA/Creation.cu: plain structs passed
// to the kernels by value. No LLVM here: nvcc compiles it. Dtypes are
// DType's numbering (EwDType in Elementwise.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_CREATIONLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_CREATIONLAUNCH_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace traceir {

/// arange: out[i] (contiguous) = start + i * step, in int64 (wrapping)
/// where `integer`, else in double.
struct ArangeLaunch {
  char *out = nullptr;
  int32_t outDtype = I64;
  int64_t size = 0;
  bool integer = true;
  int64_t startI = 0, stepI = 1;
  double startD = 0, stepD = 1;
};

/// rand and randn: out[i] (contiguous, floating) from two 64-bit draws of
/// Philox keyed by (seed, i), through randValue.
struct RandLaunch {
  char *out = nullptr;
  int32_t outDtype = F32;
  int64_t numel = 0;
  uint64_t seed = 0;
  bool normal = false;
};

/// The value one element of rand (uniform in [0, 1)) or randn (standard
/// normal, by Box-Muller) takes from two 64-bit draws `r1`, `r2`, shared
/// by both devices. rand keeps as many of r1's top bits as the dtype's
/// significand holds, so the value is exact and never rounds up to 1.
TRACEIR_HD inline double randValue(uint64_t r1, uint64_t r2, int32_t dtype,
                                   bool normal) {
  constexpr double k53 = 1.0 / 9007199254740992.0; // 2^-53
  if (!normal) {
    int bits = dtype == F64 ? 53 : dtype == F32 ? 24 : dtype == F16 ? 11 : 8;
    return static_cast<double>(r1 >> (64 - bits)) /
           static_cast<double>(uint64_t(1) << bits);
  }
  double u1 = 1.0 - static_cast<double>(r1 >> 11) * k53; // (0, 1]
  double u2 = static_cast<double>(r2 >> 11) * k53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/// randperm: out[0, n) (contiguous) a permutation of 0..n-1, as the
/// positions 0..n-1 sorted by a 64-bit Philox key each, keyed by (seed, i).
/// `scratch` holds randpermScratchBytes(n) bytes.
struct RandpermLaunch {
  char *out = nullptr;
  int32_t outDtype = I64;
  int64_t n = 0;
  uint64_t seed = 0;
  void *scratch = nullptr;
};
size_t randpermScratchBytes(int64_t n);

/// Returns null on success, else the CUDA error's text.
const char *launchArangeCUDA(const ArangeLaunch &launch);
const char *launchRandCUDA(const RandLaunch &launch);
const char *launchRandpermCUDA(const RandpermLaunch &launch);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_CREATIONLAUNCH_H
