//===- Device.cpp - Per-device CUDA state ---------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"

#include <cuda_runtime.h>

#include <mutex>

using namespace traceir;

Error cuda::failure(const std::string &what, cudaError_t err) {
  cudaGetLastError();
  return makeError(what + ": " + cudaGetErrorName(err) + " (" +
                   cudaGetErrorString(err) + ")");
}

cublasHandle_t cuda::cublasHandle(int device) {
  static std::mutex mutex;
  static cublasHandle_t handles[64] = {};
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= 64)
    return nullptr;
  if (!handles[device]) {
    // cublasCreate binds the handle to the current device; switch to ours
    // and back so creating a handle never moves the caller's work.
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess)
      current = device;
    cudaSetDevice(device);
    if (cublasCreate(&handles[device]) != CUBLAS_STATUS_SUCCESS)
      handles[device] = nullptr;
    cudaSetDevice(current);
  }
  return handles[device];
}
