//===- MaskedScatter.h - masked_scatter on any device -----------*- C++ -*-===//
//
// masked_scatter(self, mask, source): the result (self and mask broadcast
// together, contiguous) is self where the mask is False; the k-th True
// position in row-major order takes source's k-th element (row-major over
// source's shape, whatever its strides). The description both devices run
// and its element function, shared by CPU/Indexing.cpp and CUDA/Indexing.cu
// (which finds each position's k by a prefix sum over the mask). No LLVM
// here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_MASKEDSCATTER_H
#define TRACEIR_RUNTIME_MASKEDSCATTER_H

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

constexpr int kMsMaxRank = kEwMaxRank;

/// One masked_scatter call, read and checked by maskedScatterCall
/// (IndexArgs.h). Strides are in elements; self's and mask's are broadcast
/// to the result's shape (0 on a broadcast dim), and their data pointers
/// are at their storage offsets.
struct MaskedScatterLaunch {
  char *out = nullptr;
  int32_t elementSize = 4; ///< self, source and the result share a dtype
  int32_t rank = 0;
  int64_t shape[kMsMaxRank] = {};
  int64_t numel = 0;
  const char *self = nullptr;
  int64_t selfStrides[kMsMaxRank] = {};
  const char *mask = nullptr; ///< bool, one byte an element
  int64_t maskStrides[kMsMaxRank] = {};
  const char *source = nullptr;
  int32_t sourceRank = 0;
  int64_t sourceShape[kMsMaxRank] = {}, sourceStrides[kMsMaxRank] = {};
  int64_t sourceNumel = 0;
};

/// Whether the mask is True at result element `i` (row-major).
TRACEIR_HD inline bool msMaskAt(const MaskedScatterLaunch &L, int64_t i) {
  return L.mask[rdOffsetOf(i, L.rank, L.shape, L.maskStrides)] != 0;
}

/// Writes result element `i`: self's, or source's element `k` where the
/// mask is True there (k, the number of Trues before i, is < sourceNumel:
/// the callers check the mask's count first).
TRACEIR_HD inline void msElement(const MaskedScatterLaunch &L, int64_t i,
                                 bool masked, int64_t k) {
  int es = L.elementSize;
  const char *from =
      masked
          ? L.source +
                rdOffsetOf(k, L.sourceRank, L.sourceShape, L.sourceStrides) * es
          : L.self + rdOffsetOf(i, L.rank, L.shape, L.selfStrides) * es;
  char *to = L.out + i * es;
  for (int b = 0; b < es; ++b)
    to[b] = from[b];
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_MASKEDSCATTER_H
