//===- Convolution.cpp - aten.convolution on CUDA -------------------------===//
//
// The host half of Convolution.cu: the plan is CPU/Convolution.cpp's, built
// by the same reader (ConvolutionPlan.h), so both devices accept the same
// calls and fail with the same messages. At the optimized tier, cuDNN runs
// a convolution that is not transposed where it takes the call (CuDNN.h),
// the bias then added by conv2d's launch.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ConvolutionLaunch.h"
#include "TraceIR/Runtime/CUDA/CuDNN.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/ConvolutionPlan.h"

using namespace traceir;
using namespace traceir::cuda;

/// The convolution on cuDNN, its operands gathered contiguous first and the
/// bias added after; false where cuDNN does not take it (nothing is run).
static bool cudnnForward(KernelContext &ctx, const ConvolutionPlan &p) {
  DType dtype = static_cast<DType>(p.dtype);
  const char *x = nn::gatherAs(ctx, ctx.tensor(0), dtype);
  const char *w = x ? nn::gatherAs(ctx, ctx.tensor(1), dtype) : nullptr;
  if (!x || !w)
    return true; // the gather failed the op
  if (!cudnnConvolutionForward(ctx, p, x, w, p.out))
    return false;
  if (ctx.failed())
    return true;
  ctx.ranTier(KernelTier::Optimized);
  if (!p.bias)
    return true;
  ConvBiasLaunch bl;
  bl.out = p.out;
  bl.dtype = p.dtype;
  bl.bias = p.bias;
  bl.biasDtype = p.dtype;
  bl.biasStride = p.biasStride;
  bl.N = p.N;
  bl.O = p.O;
  bl.L = p.out3[0] * p.out3[1] * p.out3[2];
  nn::launched(ctx, launchConvBias(bl), "convolution");
  return true;
}

void cuda::convolution(KernelContext &ctx) {
  ConvolutionPlan p;
  if (!convolutionPlan(ctx, p))
    return;
  // PyTorch's CUDA convolution has floating-point kernels only.
  if (!ewIsFloating(p.dtype))
    return ctx.fail(strCat("convolution on CUDA supports floating-point "
                           "dtypes, got ") +
                    dtypeName(static_cast<DType>(p.dtype)));
  if (optimizedTierEnabled() && !p.transposed && p.numel() > 0 &&
      cudnnForward(ctx, p))
    return;
  if (const char *err = launchConvolutionCUDA(p))
    ctx.fail(strCat("convolution kernel failed on CUDA: ") + err);
}
