//===- ResampleLaunch.h - CUDA launches of the resampling plans -*- C++ -*-===//
//
// The device half (CUDA/Resample.cu) of the pools, col2im, the pads, flip,
// repeat and the 2-D upsamplings: one grid-stride launch per plan of
// Runtime/Resample.h, a thread per output element running the plan's
// per-element function, the one the CPU kernels loop over. No LLVM here:
// nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_RESAMPLELAUNCH_H
#define TRACEIR_RUNTIME_CUDA_RESAMPLELAUNCH_H

#include "TraceIR/Runtime/Resample.h"

namespace traceir {

/// Each returns null on success, else the CUDA error's text; an empty
/// result launches nothing.
const char *launchGatherCUDA(const GatherPlan &plan);
const char *launchAvgPoolCUDA(const AvgPoolPlan &plan);
const char *launchMaxPoolCUDA(const MaxPoolPlan &plan);
const char *launchAdaptiveAvgPoolCUDA(const AdaptiveAvgPoolPlan &plan);
const char *launchCol2imCUDA(const Col2imPlan &plan);
const char *launchBilinearCUDA(const BilinearPlan &plan);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_RESAMPLELAUNCH_H
