//===- Creation.cpp - Tensors made from scalars on the CPU ----------------===//
//
// arange: the values start + i * step, in int64 (wrapping into a narrower
// integer dtype, as PyTorch's cast) for an integer result, else in double
// rounded once to the result's dtype. The arguments are decoded by
// arangeArgs, which the CUDA host half calls too. rand and randn draw two
// 64-bit numbers per element from the run's seeded generator and shape
// them with randValue, as CUDA does from Philox. empty and empty_strided
// leave their (preallocated) result as it is: PyTorch's values are
// unspecified too.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CUDA/CreationLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"

using namespace traceir;
using namespace traceir::cpu;

void cpu::arange(KernelContext &ctx) {
  ArangeArgs a;
  if (!arangeArgs(ctx, a))
    return;
  Tensor &out = ctx.result(0);
  size_t os = dtypeSize(out.dtype);
  char *o = out.bytes();
  for (int64_t i = 0; i < a.size; ++i) {
    if (a.kind == ArangeKind::Floating)
      storeDouble(o + i * os, out.dtype, a.startD + a.stepD * double(i));
    else // wrapping, as PyTorch's int64 arithmetic
      storeInt(o + i * os, out.dtype,
               static_cast<int64_t>(static_cast<uint64_t>(a.startI) +
                                    static_cast<uint64_t>(a.stepI) *
                                        static_cast<uint64_t>(i)));
  }
}

void cpu::empty(KernelContext &) {}
void cpu::empty_strided(KernelContext &) {}

static void randImpl(KernelContext &ctx, bool normal) {
  if (!randomResult(ctx))
    return;
  Tensor &out = ctx.result(0);
  size_t os = dtypeSize(out.dtype);
  int32_t dt = static_cast<int32_t>(out.dtype);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    uint64_t r1 = ctx.rng()(), r2 = ctx.rng()();
    storeDouble(out.bytes() + i * os, out.dtype, randValue(r1, r2, dt, normal));
  }
}

void cpu::rand(KernelContext &ctx) { randImpl(ctx, false); }
void cpu::randn(KernelContext &ctx) { randImpl(ctx, true); }
