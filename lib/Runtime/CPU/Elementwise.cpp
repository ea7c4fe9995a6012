//===- Elementwise.cpp - Elementwise kernels on the CPU -------------------===//
//
// The shared Elementwise<> kernels (ElementwiseKernels.h) run on the CPU
// with a plain loop over ewElement, and a fast path for the common case of
// contiguous f32 operands of the result's shape.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/ElementwiseKernels.h"

using namespace traceir;

namespace {
bool contiguousF32(const EwLaunch &L) {
  if (L.outDtype != F32 || !L.floating)
    return false;
  auto contiguous = [&](const int64_t *strides) {
    int64_t expected = 1;
    for (int d = L.rank - 1; d >= 0; --d) {
      if (L.shape[d] != 1 && strides[d] != expected)
        return false;
      expected *= L.shape[d];
    }
    return true;
  };
  if (!contiguous(L.outStrides))
    return false;
  for (int j = 0; j < L.numOperands; ++j)
    if (L.in[j].data && (L.in[j].dtype != F32 || !contiguous(L.in[j].strides)))
      return false;
  return true;
}

bool runOnCPU(const EwLaunch &L, bool &divByZero) {
  if (contiguousF32(L)) {
    float *out = reinterpret_cast<float *>(L.out);
    const float *in[kEwMaxOperands] = {};
    for (int j = 0; j < L.numOperands; ++j)
      in[j] = reinterpret_cast<const float *>(L.in[j].data);
    double v[kEwMaxOperands] = {0, 0, 0};
    for (int j = 0; j < L.numOperands; ++j)
      if (!in[j])
        v[j] = L.in[j].number;
    for (int64_t k = 0; k < L.numel; ++k) {
      for (int j = 0; j < L.numOperands; ++j)
        if (in[j])
          v[j] = in[j][k];
      out[k] = static_cast<float>(ewApply(L, v));
    }
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
