//===- Device.h - Per-device CUDA state -------------------------*- C++ -*-===//
//
// State the CUDA kernels share per device, created on first use: the cuBLAS
// handle; the profiler's event timer. Kernels run on the current device;
// Executable::run makes its device current (Allocator::activate) before the
// first instruction.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_DEVICE_H
#define TRACEIR_RUNTIME_CUDA_DEVICE_H

#include "TraceIR/Runtime/Tensor.h"

#include "TraceIR/Support/Error.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <mutex>

namespace traceir {
class DeviceTimer;
namespace cuda {

/// An error "<what>: <cudaErrorName> (<description>)" for a failed CUDA
/// call; clears the thread's last error, so a later check does not blame
/// another call for it.
Error failure(const std::string &what, cudaError_t err);

/// A CUDA library's handle for device `device` (cuBLAS's, cuBLASLt's,
/// cuDNN's), made by `create(Handle &) -> bool` on first use and kept for
/// the process; null where the library cannot start (tried again at the
/// next call). A handle binds to the device current when it is made, so
/// `device` is made current for `create` and the caller's device restored
/// after it: making a handle never moves the caller's work.
template <typename Handle, typename Create>
Handle perDeviceHandle(int device, Create create) {
  constexpr int kMaxDevices = 64;
  static std::mutex mutex;
  static Handle handles[kMaxDevices] = {};
  std::lock_guard<std::mutex> lock(mutex);
  if (device < 0 || device >= kMaxDevices)
    return nullptr;
  if (!handles[device]) {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess)
      current = device;
    cudaSetDevice(device);
    if (!create(handles[device]))
      handles[device] = nullptr;
    cudaSetDevice(current);
  }
  return handles[device];
}

/// The cuBLAS handle of CUDA device `device` (perDeviceHandle).
cublasHandle_t cublasHandle(int device);

/// cuBLAS's name for a floating-point dtype (f32 for anything else).
inline cudaDataType_t dataType(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return CUDA_R_64F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// The profiler's timer on CUDA device `index` (Timer.cpp): cudaEvents on
/// the default stream, where the runtime's kernels run.
std::unique_ptr<DeviceTimer> createTimer(int index);

} // namespace cuda
} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_DEVICE_H
