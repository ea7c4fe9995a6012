//===- Creation.cpp - Host side of tensors made from scalars on CUDA ------===//
//
// Decodes the arguments with the CPU's readers (arangeArgs, randomResult)
// and launches Creation.cu. rand and randn key Philox with one draw from
// the run's seeded generator per call, as dropout does; empty and
// empty_strided leave their result as it is (unspecified values).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/CreationLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <string>

using namespace traceir;

namespace {
void failLaunch(KernelContext &ctx, std::string_view what, const char *err) {
  ctx.fail(std::string(what) + " kernel failed on CUDA: " + err);
}
} // namespace

/// arange, as CPU/Creation.cpp.
void cuda::arange(KernelContext &ctx) {
  ArangeArgs a;
  if (!arangeArgs(ctx, a))
    return;
  Tensor &out = ctx.result(0);
  ArangeLaunch L;
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.size = a.size;
  L.integer = a.kind != ArangeKind::Floating;
  L.startI = a.startI;
  L.stepI = a.stepI;
  L.startD = a.startD;
  L.stepD = a.stepD;
  if (const char *err = launchArangeCUDA(L))
    failLaunch(ctx, "arange", err);
}

void cuda::empty(KernelContext &) {}
void cuda::empty_strided(KernelContext &) {}

static void randImpl(KernelContext &ctx, bool normal) {
  if (!randomResult(ctx))
    return;
  Tensor &out = ctx.result(0);
  RandLaunch L;
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.numel = out.numel();
  L.normal = normal;
  L.seed = ctx.rng()(); // a fresh key per call, fixed by the run's seed
  if (const char *err = launchRandCUDA(L))
    failLaunch(ctx, normal ? "randn" : "rand", err);
}

void cuda::rand(KernelContext &ctx) { randImpl(ctx, false); }
void cuda::randn(KernelContext &ctx) { randImpl(ctx, true); }

/// randperm: the positions sorted by Philox keys, keyed by one draw from the
/// run's generator per call, as rand; scratch for the sort.
void cuda::randperm(KernelContext &ctx) {
  int64_t n;
  if (!randpermArgs(ctx, n))
    return;
  RandpermLaunch L;
  L.out = ctx.result(0).bytes();
  L.outDtype = static_cast<int32_t>(ctx.result(0).dtype);
  L.n = n;
  L.seed = ctx.rng()();
  if (n > 0) {
    L.scratch = ctx.scratch(randpermScratchBytes(n));
    if (!L.scratch)
      return;
  }
  if (const char *err = launchRandpermCUDA(L))
    failLaunch(ctx, "randperm", err);
}
