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

#include "TraceIR/Runtime/DeviceError.h"
#include "TraceIR/Runtime/Distance.h"

namespace traceir {

/// Each returns null on success, else the CUDA error's text; an empty
/// result launches nothing.
const char *launchDistanceCUDA(const DistancePlan &plan);
const char *launchGridSampleCUDA(const GridSamplePlan &plan);
/// Checks the offsets and indices on the device, recording the first bad
/// one (embeddingBagFault's order) in `errors` (DeviceErrorLaunch.h; no
/// wait), then computes every result, which does nothing once the run has
/// an error.
const char *launchEmbeddingBagCUDA(const EmbeddingBagPlan &plan,
                                   DeviceErrorSlot errors);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_DISTANCELAUNCH_H
