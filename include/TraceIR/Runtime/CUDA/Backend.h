//===- Backend.h - What the runtime asks of its CUDA backend ----*- C++ -*-===//
//
// Besides the entry points that take a CUDA device (selectCUDADevice and
// createCUDAAllocator in Allocator.h, loadGpuLibrary and cudaDeviceChip in
// GeneratedKernels.h), the runtime asks its CUDA backend whether it is
// there, which kernels it has and which cuDNN it uses. lib/Runtime/CUDA/ answers in a build
// with CUDA; a runtime-only build without CUDA (TRACEIR_ENABLE_CUDA=OFF, or
// no toolkit) compiles lib/Runtime/NoCUDA.cpp instead, where every one of
// these entry points fails with checkBackend()'s error and the kernel table
// is empty. No CUDA header is needed here.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_BACKEND_H
#define TRACEIR_RUNTIME_CUDA_BACKEND_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Support/Error.h"

#include <span>

namespace traceir::cuda {

/// Success where this runtime has its CUDA backend; otherwise the error
/// "this TraceIR runtime was built without CUDA (...); it runs on the CPU
/// only", which every CUDA entry point of such a runtime returns.
Error checkBackend();

/// One kernel of the registry's CUDA column.
struct NamedKernel {
  const char *name;
  KernelFn fn;
};

/// The registry's CUDA column: the CUDA kernels, then the device-neutral
/// view kernels (a later entry of the same name wins). Empty without CUDA.
std::span<const NamedKernel> kernelTable();

/// The cuDNN version this runtime's CUDA convolutions were built with
/// ("9.19.0"), or null where it has none (CuDNN.h).
const char *cudnnVersion();

} // namespace traceir::cuda

#endif // TRACEIR_RUNTIME_CUDA_BACKEND_H
