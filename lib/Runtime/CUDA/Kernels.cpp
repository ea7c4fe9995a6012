//===- Kernels.cpp - Host side of the CUDA kernels ------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"

using namespace traceir;

namespace {
/// Never sets `divByZero`: the kernel records a division by zero in the
/// run's device error record instead, which the run reads at its end.
static bool runOnCUDA(KernelContext &ctx, const EwLaunch &L, bool &) {
  DeviceErrorSlot errors = ctx.deviceErrors();
  KernelTier tier = KernelTier::Portable;
  if (!launchElementwiseCUDA(L, &errors, &tier))
    return false;
  ctx.ranTier(tier);
  return true;
}
using CUDAElementwise = Elementwise<runOnCUDA>;
} // namespace

// Ops.def's ELEMENTWISE CUDA kernels.
#define TRACEIR_CUDA_ELEMENTWISE_ELEMENTWISE(NAME)                             \
  void cuda::NAME(KernelContext &ctx) { CUDAElementwise::NAME(ctx); }
#define TRACEIR_CUDA_ELEMENTWISE_KERNEL(NAME)
#define TRACEIR_CUDA_ELEMENTWISE_HOST(NAME)
#define TRACEIR_CUDA_ELEMENTWISE_NONE(NAME)
#define TRACEIR_CUDA_ELEMENTWISE_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CUDA_ELEMENTWISE_##CUDA(NAME)
#include "TraceIR/Ops.def"

bool cuda::copyStrided(const Tensor &src, Tensor &dst) {
  if (dst.rank() > kEwMaxRank)
    return false;
  EwLaunch L;
  L.op = EwOp::Copy;
  L.rank = dst.rank();
  L.numel = dst.numel();
  for (int64_t d = 0; d < dst.rank(); ++d) {
    L.shape[d] = dst.shape[d];
    L.outStrides[d] = dst.strides[d];
    L.in[0].strides[d] = src.shape[d] == 1 ? 0 : src.strides[d];
  }
  L.out = dst.bytes();
  L.outDtype = static_cast<int32_t>(dst.dtype);
  L.numOperands = 1;
  L.in[0].data = src.bytes();
  L.in[0].dtype = static_cast<int32_t>(src.dtype);
  L.floating = ewIsFloating(L.outDtype) || ewIsFloating(L.in[0].dtype);
  L.operandIndex = 0;
  return launchElementwiseCUDA(L); // a copy: nothing to check
}
