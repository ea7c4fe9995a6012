//===- Kernels.h - CUDA kernels ---------------------------------*- C++ -*-===//
//
// The CUDA backend's kernels. Elementwise ops share their host half with the
// CPU (ElementwiseKernels.h) and run Elementwise.cu's device loop; view ops
// are pure metadata and use the CPU's view kernels as they are (their copies
// go through the device's allocator); matrix products go to cuBLAS.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_KERNELS_H
#define TRACEIR_RUNTIME_CUDA_KERNELS_H

#include "TraceIR/Runtime/ElementwiseKernels.h"
#include "TraceIR/Runtime/Executable.h"

namespace traceir::cuda {

/// Copies `src` into `dst` on the device (any strides and dtypes).
bool copyStrided(const Tensor &src, Tensor &dst);

// The kernels of Ops.def's CUDA column: a KERNEL in the family's files
// (Linalg.cpp for cuBLAS products; Reductions, NN, Conv, Norm, Loss,
// Attention, RNN .cpp/.cu), an ELEMENTWISE one made in Kernels.cpp. A HOST
// one is the CPU's (CUDA/Backend.cpp lists it for the device).
#define TRACEIR_CUDA_DECLARE_KERNEL(NAME) void NAME(KernelContext &ctx);
#define TRACEIR_CUDA_DECLARE_ELEMENTWISE(NAME) void NAME(KernelContext &ctx);
#define TRACEIR_CUDA_DECLARE_HOST(NAME)
#define TRACEIR_CUDA_DECLARE_NONE(NAME)
#define TRACEIR_CUDA_DECLARE_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CUDA_DECLARE_##CUDA(NAME)
#include "TraceIR/Ops.def"
#undef TRACEIR_CUDA_DECLARE_KERNEL
#undef TRACEIR_CUDA_DECLARE_ELEMENTWISE
#undef TRACEIR_CUDA_DECLARE_HOST
#undef TRACEIR_CUDA_DECLARE_NONE
#undef TRACEIR_CUDA_DECLARE_ALIAS

} // namespace traceir::cuda

#endif // TRACEIR_RUNTIME_CUDA_KERNELS_H
