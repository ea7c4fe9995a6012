//===- Resample.cu - Pools, col2im, pads, flip, repeat, upsampling on CUDA ===//
//
// Grid-stride loops, a thread per output element, each running the plan's
// per-element function of Runtime/Resample.h (the CPU kernels' own); the
// optimized tier's 2-D pools run TypedPools.h's typed functions instead.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/CUDA/ResampleLaunch.h"
#include "TraceIR/Runtime/CUDA/TypedPools.h"

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

namespace {
template <int32_t DT, typename I>
__global__ void typedPoolKernel(TypedPoolPlan plan, I n) {
  const I stride = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I k = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) +
             static_cast<I>(threadIdx.x);
       k < n; k += stride)
    TypedPool<DT, I>::at(plan, k);
}

template <int32_t DT> const char *launchTypedPool(const TypedPoolPlan &p) {
  const int64_t n = p.numel();
  const unsigned grid = static_cast<unsigned>(gridFor(n, kMaxThreads));
  if (p.narrow)
    typedPoolKernel<DT, int32_t>
        <<<grid, kMaxThreads>>>(p, static_cast<int32_t>(n));
  else
    typedPoolKernel<DT, int64_t><<<grid, kMaxThreads>>>(p, n);
  return lastError();
}
} // namespace

const char *traceir::launchTypedPoolCUDA(const TypedPoolPlan &plan) {
  if (plan.numel() == 0)
    return nullptr;
  switch (plan.dtype) {
  case F32:
    return launchTypedPool<F32>(plan);
  case F64:
    return launchTypedPool<F64>(plan);
  case F16:
    return launchTypedPool<F16>(plan);
  case BF16:
    return launchTypedPool<BF16>(plan);
  default:
    return "the typed pools take f32, f64, f16 and bf16";
  }
}
