//===- ConvolutionLaunch.h - CUDA launch of aten.convolution ----*- C++ -*-===//
//
// The device half (CUDA/Convolution.cu) of the portable convolution: one
// grid-stride launch per plan of Runtime/Convolution.h, a thread per output
// element running convolutionElement, the function the CPU kernel loops
// over. No LLVM here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_CONVOLUTIONLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_CONVOLUTIONLAUNCH_H

#include "TraceIR/Runtime/Convolution.h"

namespace traceir {

/// Returns null on success, else the CUDA error's text; an empty result
/// launches nothing.
const char *launchConvolutionCUDA(const ConvolutionPlan &plan);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_CONVOLUTIONLAUNCH_H
