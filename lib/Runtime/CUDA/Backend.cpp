//===- Backend.cpp - The CUDA backend is here, with these kernels ---------===//
//
// The build with CUDA's half of CUDA/Backend.h (NoCUDA.cpp is the other).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"

#include <vector>

using namespace traceir;

Error cuda::checkBackend() { return Error::success(); }

std::span<const cuda::NamedKernel> cuda::kernelTable() {
  static const std::vector<NamedKernel> table = [] {
    std::vector<NamedKernel> t;
#define TRACEIR_CUDA_ENTRY(NAME) t.push_back({#NAME, cuda::NAME});
    TRACEIR_ELEMENTWISE_KERNELS(TRACEIR_CUDA_ENTRY)
    TRACEIR_CUDA_LINALG_KERNELS(TRACEIR_CUDA_ENTRY)
    TRACEIR_CUDA_REDUCE_KERNELS(TRACEIR_CUDA_ENTRY)
    TRACEIR_CUDA_NN_KERNELS(TRACEIR_CUDA_ENTRY)
    TRACEIR_CUDA_RNN_KERNELS(TRACEIR_CUDA_ENTRY)
    TRACEIR_CUDA_BACKWARD_KERNELS(TRACEIR_CUDA_ENTRY)
#undef TRACEIR_CUDA_ENTRY
    // Views are metadata: the CPU's kernels serve every device.
#define TRACEIR_NEUTRAL_ENTRY(NAME) t.push_back({#NAME, cpu::NAME});
    TRACEIR_DEVICE_NEUTRAL_KERNELS(TRACEIR_NEUTRAL_ENTRY)
#undef TRACEIR_NEUTRAL_ENTRY
    return t;
  }();
  return table;
}
