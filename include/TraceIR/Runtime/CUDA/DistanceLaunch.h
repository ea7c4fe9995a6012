//===- DistanceLaunch.h - CUDA launches of the distance plans ---*- C++ -*-===//
//
// The device half (CUDA/Distance.cu) of _cdist_forward, _pdist_forward,
// _embedding_bag and grid_sampler_2d: grid-stride launches, a thread per
// result element running the plan's per-element function of
// Runtime/Distance.h, the one the CPU kernels loop over. No LLVM here: nvcc
// compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_DISTANCELAUNCH_H
#define TRACEIR_RUNTIME_CUDA_DISTANCELAUNCH_H

#include "TraceIR/Runtime/Distance.h"

namespace traceir {

/// Each returns null on success, else the CUDA error's text; an empty
/// result launches nothing.
const char *launchDistanceCUDA(const DistancePlan &plan);
const char *launchGridSampleCUDA(const GridSamplePlan &plan);
/// Checks the offsets and indices on the device (`scratch`: device memory
/// for one uint64); where one is bad sets `badKey` to the first bad check
/// position (embeddingBagFault's k) and `badValue` to its value and writes
/// nothing, else sets `badKey` to -1 and computes every result.
const char *launchEmbeddingBagCUDA(const EmbeddingBagPlan &plan, void *scratch,
                                   int64_t &badKey, int64_t &badValue);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_DISTANCELAUNCH_H
