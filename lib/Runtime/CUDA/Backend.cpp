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
    // Ops.def's CUDA column; views are metadata, so the CPU's kernels
    // serve the device (HOST).
#define TRACEIR_CUDA_ENTRY_KERNEL(NAME) t.push_back({#NAME, cuda::NAME});
#define TRACEIR_CUDA_ENTRY_ELEMENTWISE(NAME) t.push_back({#NAME, cuda::NAME});
#define TRACEIR_CUDA_ENTRY_HOST(NAME) t.push_back({#NAME, cpu::NAME});
#define TRACEIR_CUDA_ENTRY_NONE(NAME)
#define TRACEIR_CUDA_ENTRY_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CUDA_ENTRY_##CUDA(NAME)
#include "TraceIR/Ops.def"
    return t;
  }();
  return table;
}
