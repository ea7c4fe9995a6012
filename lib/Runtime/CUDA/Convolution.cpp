//===- Convolution.cpp - aten.convolution on CUDA -------------------------===//
//
// The host half of Convolution.cu: the plan is CPU/Convolution.cpp's, built
// by the same reader (ConvolutionPlan.h), so both devices accept the same
// calls and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ConvolutionLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/ConvolutionPlan.h"

using namespace traceir;

void cuda::convolution(KernelContext &ctx) {
  ConvolutionPlan p;
  if (!convolutionPlan(ctx, p))
    return;
  // PyTorch's CUDA convolution has floating-point kernels only.
  if (!ewIsFloating(p.dtype))
    return ctx.fail(strCat("convolution on CUDA supports floating-point "
                           "dtypes, got ") +
                    dtypeName(static_cast<DType>(p.dtype)));
  if (const char *err = launchConvolutionCUDA(p))
    ctx.fail(strCat("convolution kernel failed on CUDA: ") + err);
}
