//===- ConvolutionPlan.cpp - Plans of aten.convolution --------------------===//

#include "TraceIR/Runtime/ConvolutionPlan.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Support/ConvolutionArgs.h"

using namespace traceir;

static bool fail(KernelContext &ctx, const std::string &message) {
  ctx.fail("convolution: " + message);
  return false;
}

bool traceir::convolutionPlan(KernelContext &ctx, ConvolutionPlan &p) {
  const Tensor &x = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor *b = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  Tensor &out = ctx.result(0);
  for (const Tensor *t : {&w, b, static_cast<const Tensor *>(&out)})
    if (t && t->dtype != x.dtype)
      return fail(ctx, strCat("the input, weight, bias and result must have "
                              "one dtype, got ") +
                           dtypeName(x.dtype) + " and " + dtypeName(t->dtype));
  std::string why;
  int spatial = convolutionSpatialDims(w.rank(), why);
  ConvolutionArgs a;
  if (!spatial || !decodeConvolution(KernelCallArgs(ctx), spatial, a, why))
    return fail(ctx, why);
  if (!convolutionTakesDtype(isFloatingDType(x.dtype), x.dtype == DType::I64,
                             dtypeName(x.dtype), why))
    return fail(ctx, why);
  if (b && b->rank() != 1)
    return fail(ctx, "bias must be 1-D, got " + shapeToString(b->shape));
  std::vector<int64_t> shape;
  if (!convolutionShape(a, x.shape, w.shape,
                        b ? std::optional<int64_t>(b->shape[0]) : std::nullopt,
                        shape, why))
    return fail(ctx, why);
  if (!checkResultShape(ctx, 0, shape))
    return false;
  p = ConvolutionPlan();
  p.x = x.bytes();
  p.w = w.bytes();
  p.bias = b ? b->bytes() : nullptr;
  p.biasStride = b ? b->strides[0] : 0;
  p.out = out.bytes();
  p.dtype = static_cast<int32_t>(x.dtype);
  p.N = x.shape[0];
  p.C = x.shape[1];
  p.O = shape[1];
  p.groups = a.groups;
  p.transposed = a.transposed;
  for (int d = 0; d < 2; ++d) {
    p.xStrides[d] = x.strides[d];
    p.wStrides[d] = w.strides[d];
  }
  // Spatial dim d of the call is dim 3 - spatial + d of the plan.
  for (int d = 0; d < spatial; ++d) {
    int e = 3 - spatial + d;
    p.xStrides[2 + e] = x.strides[2 + d];
    p.wStrides[2 + e] = w.strides[2 + d];
    p.in[e] = x.shape[2 + d];
    p.k[e] = w.shape[2 + d];
    p.out3[e] = shape[2 + d];
    p.stride[e] = a.stride[d];
    p.pad[e] = a.padding[d];
    p.dil[e] = a.dilation[d];
  }
  return true;
}
