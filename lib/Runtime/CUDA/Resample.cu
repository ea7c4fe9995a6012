//===- Resample.cu - Pools, col2im, pads, flip, repeat, upsampling on CUDA ===//
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

const char *traceir::launchAvgPoolCUDA(const AvgPoolPlan &plan) {
  return launchPerElement<AvgPoolPlan, avgPoolElement>(plan, plan.x.numel());
}

const char *traceir::launchMaxPoolCUDA(const MaxPoolPlan &plan) {
  return launchPerElement<MaxPoolPlan, maxPoolElement>(plan, plan.x.numel());
}

const char *
traceir::launchAdaptiveAvgPoolCUDA(const AdaptiveAvgPoolPlan &plan) {
  return launchPerElement<AdaptiveAvgPoolPlan, adaptiveAvgPoolElement>(
      plan, plan.x.numel());
}

const char *traceir::launchCol2imCUDA(const Col2imPlan &plan) {
  return launchPerElement<Col2imPlan, col2imElement>(plan, plan.numel());
}

const char *traceir::launchBilinearCUDA(const BilinearPlan &plan) {
  return launchPerElement<BilinearPlan, bilinearElement>(plan, plan.x.numel());
}
