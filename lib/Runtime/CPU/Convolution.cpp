//===- Convolution.cpp - aten.convolution on the CPU ----------------------===//
//
// The portable kernel of Runtime/Convolution.h: a loop over the (fresh,
// contiguous) result running the per-element function the CUDA kernel runs
// per thread. Operands may be any strided view.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/ConvolutionPlan.h"

using namespace traceir;

void cpu::convolution(KernelContext &ctx) {
  ConvolutionPlan p;
  if (!convolutionPlan(ctx, p))
    return;
  for (int64_t k = 0, n = p.numel(); k < n; ++k)
    convolutionElement(p, k);
}
