//===- Elementwise.cpp - Elementwise kernels on the CPU -------------------===//
//
// The shared Elementwise<> kernels (ElementwiseKernels.h) run on the CPU:
// the optimized tier's typed loops where they cover the launch
// (CPU/Optimized/Elementwise.cpp), else the portable loop over ewElement,
// which computes every op at every dtype and layout in double or int64.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/ElementwiseKernels.h"

using namespace traceir;

namespace {
bool runOnCPU(KernelContext &ctx, const EwLaunch &L, bool &divByZero) {
  if (cpu::optimized::elementwise(L)) {
    ctx.ranTier(KernelTier::Optimized);
    return true;
  }
  for (int64_t k = 0; k < L.numel; ++k)
    ewElement(L, k, divByZero);
  return true;
}

using CPUElementwise = Elementwise<runOnCPU>;
} // namespace

// Ops.def's ELEMENTWISE CPU kernels.
#define TRACEIR_CPU_ELEMENTWISE_ELEMENTWISE(NAME)                              \
  void cpu::NAME(KernelContext &ctx) { CPUElementwise::NAME(ctx); }
#define TRACEIR_CPU_ELEMENTWISE_KERNEL(NAME)
#define TRACEIR_CPU_ELEMENTWISE_NONE(NAME)
#define TRACEIR_CPU_ELEMENTWISE_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CPU_ELEMENTWISE_##CPU(NAME)
#include "TraceIR/Ops.def"
