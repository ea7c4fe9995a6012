//===- Resample.cu - avg_pool2d, pads, flip, repeat, upsampling on CUDA ---===//
//
// Grid-stride loops, a thread per output element, each running the plan's
// per-element function of Runtime/Resample.h (the CPU kernels' own).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/CUDA/ResampleLaunch.h"

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// Runs `element(plan, k)` for every k < n.
template <typename Plan, void (*Element)(const Plan &, int64_t)>
__global__ void elementwiseKernel(Plan plan, int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    Element(plan, k);
}

template <typename Plan, void (*Element)(const Plan &, int64_t)>
const char *launch(const Plan &plan, int64_t n) {
  if (n == 0)
    return nullptr;
  int64_t blocks = gridFor(n, kMaxThreads);
  elementwiseKernel<Plan, Element>
      <<<static_cast<unsigned>(blocks), kMaxThreads>>>(plan, n);
  return lastError();
}
} // namespace

const char *traceir::launchGatherCUDA(const GatherPlan &plan) {
  return launch<GatherPlan, gatherElement>(plan, plan.numel);
}

const char *traceir::launchAvgPool2dCUDA(const AvgPool2dPlan &plan) {
  return launch<AvgPool2dPlan, avgPool2dElement>(plan, plan.x.numel());
}

const char *traceir::launchBilinearCUDA(const BilinearPlan &plan) {
  return launch<BilinearPlan, bilinearElement>(plan, plan.x.numel());
}
