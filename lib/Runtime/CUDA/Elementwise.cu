//===- Elementwise.cu - The device loop of elementwise ops ----------------===//
//
// One grid-stride loop over ewElement (Elementwise.h), the same function the
// CPU loop runs, so both devices compute the same thing.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Elementwise.h"

#include <cuda_runtime.h>

namespace {
__global__ void elementwiseKernel(traceir::EwLaunch launch, int *divByZero) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < launch.numel; k += stride) {
    bool dz = false;
    traceir::ewElement(launch, k, dz);
    if (dz && divByZero)
      *divByZero = 1;
  }
}
} // namespace

bool traceir::launchElementwiseCUDA(const EwLaunch &launch, bool &divByZero) {
  if (launch.numel == 0)
    return true;
  constexpr int kThreads = 256;
  int64_t blocks = (launch.numel + kThreads - 1) / kThreads;
  if (blocks > 65535)
    blocks = 65535;
  // Integer division is the only op that can fail on the device; only then
  // is a flag read back (which synchronizes).
  bool checks = !launch.floating &&
                (launch.op == EwOp::Div || launch.op == EwOp::DivTrunc ||
                 launch.op == EwOp::DivFloor);
  int *flag = nullptr;
  if (checks) {
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess ||
        cudaMemset(flag, 0, sizeof(int)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
  }
  elementwiseKernel<<<static_cast<unsigned>(blocks), kThreads>>>(launch, flag);
  bool ok = cudaGetLastError() == cudaSuccess;
  if (checks) {
    int host = 0;
    ok &= cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost) ==
          cudaSuccess;
    divByZero = host != 0;
    cudaFree(flag);
  }
  return ok;
}
