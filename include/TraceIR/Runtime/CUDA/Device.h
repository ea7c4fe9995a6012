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

#include <memory>

namespace traceir {
class DeviceTimer;
namespace cuda {

/// An error "<what>: <cudaErrorName> (<description>)" for a failed CUDA
/// call; clears the thread's last error, so a later check does not blame
/// another call for it.
Error failure(const std::string &what, cudaError_t err);

/// The cuBLAS handle of CUDA device `device`, created on first use (with
/// the current device restored afterwards); null if cuBLAS cannot start.
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
