//===- Convolution.cu - aten.convolution on CUDA --------------------------===//
//
// A grid-stride loop, a thread per output element, running
// convolutionElement of Runtime/Convolution.h (the CPU kernel's own).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ConvolutionLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

using namespace traceir;
using namespace traceir::cudadev;

const char *traceir::launchConvolutionCUDA(const ConvolutionPlan &plan) {
  return launchPerElement<ConvolutionPlan, convolutionElement>(plan,
                                                               plan.numel());
}
