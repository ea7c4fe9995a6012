//===- NormPoolBackwardLaunch.h - CUDA launches of backward plans -*- C++
//-*-===//
//
// The device half (CUDA/NormPoolBackward.cu) of avg_pool2d_backward,
// _adaptive_avg_pool2d_backward, native_layer_norm_backward,
// native_group_norm_backward and embedding_dense_backward: grid-stride
// launches of the per-element functions of Runtime/NormPoolBackward.h, the
// ones the CPU kernels loop over. No LLVM here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_NORMPOOLBACKWARDLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_NORMPOOLBACKWARDLAUNCH_H

#include "TraceIR/Runtime/DeviceError.h"
#include "TraceIR/Runtime/NormPoolBackward.h"

namespace traceir {

/// Each returns null on success, else the CUDA error's text; an empty
/// result launches nothing.
const char *launchPoolBackwardCUDA(const PoolBackwardPlan &plan);
/// The row sums (into plan.rowSums, device scratch of 2 M doubles, where
/// plan.dx), grad_input, then grad_weight and grad_bias.
const char *launchNormBackwardCUDA(const NormBackwardPlan &plan);
/// embedding_dense_backward over device scratch of 2 L + 2 V + 1 int64s
/// (2 L + 1 for an empty result, which only checks the indices):
/// gathers and range-checks the indices, recording the first position whose
/// index is outside [0, V) in `errors` (DeviceErrorLaunch.h; no wait), then
/// sorts the positions by index (stably, one thread) and sums each result
/// element over its row's positions, both doing nothing once the run has an
/// error.
const char *launchEmbeddingBackwardCUDA(EmbeddingBackwardPlan plan,
                                        const StridedOperand &indices,
                                        int64_t *scratch,
                                        DeviceErrorSlot errors);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_NORMPOOLBACKWARDLAUNCH_H
