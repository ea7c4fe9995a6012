//===- Device.cpp - Per-device CUDA state ---------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"

#include <cuda_runtime.h>

using namespace traceir;

Error cuda::failure(const std::string &what, cudaError_t err) {
  cudaGetLastError();
  return makeError(what + ": " + cudaGetErrorName(err) + " (" +
                   cudaGetErrorString(err) + ")");
}

cublasHandle_t cuda::cublasHandle(int device) {
  return perDeviceHandle<cublasHandle_t>(device, [](cublasHandle_t &h) {
    return cublasCreate(&h) == CUBLAS_STATUS_SUCCESS;
  });
}
