//===- Elementwise.cu - The device loops of elementwise ops ---------------===//
//
// Two loops, both over Elementwise.h's ewCompute, the function the CPU's
// loops run, so both devices compute the same thing:
//   - the typed loop (the optimized tier), for the launches
//     ElementwisePlan.h's ewTypedCovers accepts: instantiated per dtype and
//     operand count, computing in the dtype's opmath type (float for f16 and
//     bf16, as PyTorch's kernels), over the coalesced launch, each thread
//     moving one 128-bit vector per operand where ewVectorWidth allows (what
//     PyTorch's vectorized_elementwise_kernel does), else one element
//     through strides. The op is a run-time switch, the same in every
//     thread of a launch, rather than one instantiation per op: PyTorch
//     instantiates per op, at the cost of build time and binary size this
//     project's GPU bundle (built on the GPU machine from sources) cannot
//     spare;
//   - the portable loop, a grid-stride loop over ewElement: every op at
//     every dtype and layout, in double or int64.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/ElementwisePlan.h"
#include "TraceIR/Runtime/KernelTier.h"

#include <cuda_runtime.h>

namespace {
using namespace traceir;

constexpr int kThreads = 256;

unsigned gridFor(int64_t work) {
  int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > 65535 ? 65535 : blocks);
}

__global__ void elementwiseKernel(EwLaunch launch, DeviceErrorSlot errors) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < launch.numel; k += stride) {
    bool dz = false;
    ewElement(launch, k, dz);
    // The element is 0, as on the CPU; the run fails when it ends.
    if (dz)
      recordDeviceError(errors, DeviceErrorCode::IntegerDivisionByZero);
  }
}

/// The typed loop: thread t computes the t-th vector of VEC elements
/// (ElementwisePlan.h's ewTypedVector, which the CPU tests run too).
template <int32_t DT, int N, int VEC, typename I>
__global__ void typedKernel(EwLaunch L, EwPlan p, I numel) {
  const I vectors = (numel + VEC - 1) / VEC;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; t < vectors;
       t += stride)
    ewTypedVector<DT, N, VEC, I>(L, p, numel, t);
}

/// The typed loop's launch, for ewTypedDispatch: 32-bit indices where the
/// launch fits.
template <int32_t DT, int N, int VEC> struct LaunchTyped {
  static void run(const EwLaunch &L, const EwPlan &p) {
    unsigned grid = gridFor((L.numel + VEC - 1) / VEC);
    if (L.numel <= INT32_MAX - VEC)
      typedKernel<DT, N, VEC, uint32_t>
          <<<grid, kThreads>>>(L, p, static_cast<uint32_t>(L.numel));
    else
      typedKernel<DT, N, VEC, uint64_t>
          <<<grid, kThreads>>>(L, p, static_cast<uint64_t>(L.numel));
  }
};
} // namespace

bool traceir::launchElementwiseCUDA(const EwLaunch &launch,
                                    const DeviceErrorSlot *errors,
                                    KernelTier *tier) {
  if (tier)
    *tier = KernelTier::Portable;
  if (launch.numel == 0)
    return true;
  if (optimizedTierEnabled() && ewTypedCovers(launch)) {
    const EwPlan p = ewCoalesce(launch);
    ewTypedDispatch<LaunchTyped>(launch, p, ewVectorWidth(launch, p));
    if (tier)
      *tier = KernelTier::Optimized;
    return cudaGetLastError() == cudaSuccess;
  }
  elementwiseKernel<<<gridFor(launch.numel), kThreads>>>(
      launch, errors ? *errors : DeviceErrorSlot());
  return cudaGetLastError() == cudaSuccess;
}
