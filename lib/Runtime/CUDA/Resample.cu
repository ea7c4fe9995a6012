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

const char *traceir::launchGatherCUDA(const GatherPlan &plan) {
  return launchPerElement<GatherPlan, gatherElement>(plan, plan.numel);
}

const char *traceir::launchAvgPool2dCUDA(const AvgPool2dPlan &plan) {
  return launchPerElement<AvgPool2dPlan, avgPool2dElement>(plan,
                                                           plan.x.numel());
}

const char *traceir::launchBilinearCUDA(const BilinearPlan &plan) {
  return launchPerElement<BilinearPlan, bilinearElement>(plan, plan.x.numel());
}
