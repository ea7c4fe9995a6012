//===- Creation.cpp - Tensors made from scalars on the CPU ----------------===//
//
// arange: the values start + i * step, in int64 (wrapping into a narrower
// integer dtype, as PyTorch's cast) for an integer result, else in double
// rounded once to the result's dtype. The arguments are decoded by
// arangeArgs, which the CUDA host half calls too. rand and randn draw two
// 64-bit numbers per element from the run's seeded generator and shape
// them with randValue, as CUDA does from Philox. empty and empty_strided
// leave their (preallocated) result as it is: PyTorch's values are
// unspecified too. randperm shuffles with the same generator (CUDA sorts
// Philox keys instead).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CUDA/CreationLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <random>
#include <utility>

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

/// randperm: Fisher-Yates over 0..n-1 in int64 with the run's seeded
/// generator (one draw per position, uniform by
/// std::uniform_int_distribution), stored in the result's dtype, which
/// randpermArgs checked holds every value exactly.
void cpu::randperm(KernelContext &ctx) {
  int64_t n;
  if (!randpermArgs(ctx, n))
    return;
  Tensor &out = ctx.result(0);
  if (n == 0)
    return;
  auto *perm = static_cast<int64_t *>(ctx.scratch(n, sizeof(int64_t)));
  if (!perm)
    return;
  for (int64_t i = 0; i < n; ++i)
    perm[i] = i;
  std::mt19937_64 &rng = ctx.rng();
  for (int64_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<int64_t> pick(0, i);
    std::swap(perm[i], perm[pick(rng)]);
  }
  size_t os = dtypeSize(out.dtype);
  bool floating = isFloating(out.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (floating)
      storeDouble(out.bytes() + i * os, out.dtype, double(perm[i]));
    else
      storeInt(out.bytes() + i * os, out.dtype, perm[i]);
  }
}
