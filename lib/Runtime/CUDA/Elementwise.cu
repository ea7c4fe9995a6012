//===- Elementwise.cu - The device loop of elementwise ops ----------------===//
//
// One grid-stride loop over ewElement (Elementwise.h), the same function the
// CPU loop runs, so both devices compute the same thing.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/Elementwise.h"

#include <cuda_runtime.h>

namespace {
__global__ void elementwiseKernel(traceir::EwLaunch launch,
                                  traceir::DeviceErrorSlot errors) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < launch.numel; k += stride) {
    bool dz = false;
    traceir::ewElement(launch, k, dz);
    // The element is 0, as on the CPU; the run fails when it ends.
    if (dz)
      traceir::recordDeviceError(
          errors, traceir::DeviceErrorCode::IntegerDivisionByZero);
  }
}
} // namespace

bool traceir::launchElementwiseCUDA(const EwLaunch &launch,
                                    const DeviceErrorSlot *errors) {
  if (launch.numel == 0)
    return true;
  constexpr int kThreads = 256;
  int64_t blocks = (launch.numel + kThreads - 1) / kThreads;
  if (blocks > 65535)
    blocks = 65535;
  elementwiseKernel<<<static_cast<unsigned>(blocks), kThreads>>>(
      launch, errors ? *errors : DeviceErrorSlot());
  return cudaGetLastError() == cudaSuccess;
}
