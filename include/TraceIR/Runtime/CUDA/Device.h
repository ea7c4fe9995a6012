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

#include <cublas_v2.h>

#include <memory>

namespace traceir {
class DeviceTimer;
namespace cuda {

/// The cuBLAS handle of CUDA device `device`, created on first use (with
/// the current device restored afterwards); null if cuBLAS cannot start.
cublasHandle_t cublasHandle(int device);

/// The profiler's timer on CUDA device `index` (Timer.cpp): cudaEvents on
/// the default stream, where the runtime's kernels run.
std::unique_ptr<DeviceTimer> createTimer(int index);

} // namespace cuda
} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_DEVICE_H
