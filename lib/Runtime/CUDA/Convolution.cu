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

namespace {
__global__ void convolutionKernel(ConvolutionPlan plan, int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    convolutionElement(plan, k);
}
} // namespace

const char *traceir::launchConvolutionCUDA(const ConvolutionPlan &plan) {
  int64_t n = plan.numel();
  if (n == 0)
    return nullptr;
  int64_t blocks = gridFor(n, kMaxThreads);
  convolutionKernel<<<static_cast<unsigned>(blocks), kMaxThreads>>>(plan, n);
  return lastError();
}
