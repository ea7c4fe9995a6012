//===- ConvolutionPlan.cpp - Plans of aten.convolution --------------------===//

#include "TraceIR/Runtime/ConvolutionPlan.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ConvolutionArgs.h"

#include <climits>

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
  p.spatial = spatial;
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

ConvolutionPlan traceir::convolutionPlanOf(const ConvGeometry &g) {
  ConvolutionPlan p;
  p.N = g.N;
  p.C = g.C;
  p.O = g.O;
  p.groups = g.groups;
  p.spatial = 2;
  const int64_t in[3] = {1, g.H, g.W}, k[3] = {1, g.kH, g.kW},
                out[3] = {1, g.OH, g.OW}, stride[3] = {1, g.sH, g.sW},
                pad[3] = {0, g.pT, g.pL}, dil[3] = {1, g.dH, g.dW};
  for (int d = 0; d < 3; ++d) {
    p.in[d] = in[d];
    p.k[d] = k[d];
    p.out3[d] = out[d];
    p.stride[d] = stride[d];
    p.pad[d] = pad[d];
    p.dil[d] = dil[d];
  }
  return p;
}

bool traceir::cudnnConvShape(const ConvolutionPlan &p, CudnnConvShape &s) {
  if (p.transposed || p.spatial < 1 || p.spatial > 3 || p.groups < 1 ||
      p.C % p.groups != 0)
    return false;
  s = CudnnConvShape();
  s.rank = p.spatial == 3 ? 5 : 4;
  const int dims = s.rank - 2;
  auto fits = [](int64_t v) { return v > 0 && v <= INT_MAX; };
  int64_t lead[3] = {p.N, p.C, p.O};
  for (int64_t v : lead)
    if (!fits(v))
      return false;
  s.x[0] = int(p.N);
  s.x[1] = int(p.C);
  s.w[0] = int(p.O);
  s.w[1] = int(p.C / p.groups);
  s.y[0] = int(p.N);
  s.y[1] = int(p.O);
  s.groups = int(p.groups);
  // The plan's spatial dims are right-aligned in three; cuDNN's are the
  // last `dims` of them (a 1-D convolution keeps the plan's leading 1).
  for (int d = 0; d < dims; ++d) {
    int e = 3 - dims + d;
    int64_t in = p.in[e], k = p.k[e], out = p.out3[e];
    int64_t stride = p.stride[e], pad = p.pad[e], dil = p.dil[e];
    if (!fits(in) || !fits(k) || !fits(out) || !fits(stride) || !fits(dil) ||
        pad < 0 || pad > INT_MAX)
      return false;
    // cuDNN's output size, as PyTorch's: (in + 2 pad - dil (k - 1) - 1) /
    // stride + 1, in 64 bits (each term is below 2^31).
    int64_t span = in + 2 * pad - dil * (k - 1) - 1;
    if (span < 0 || span / stride + 1 != out)
      return false;
    s.x[2 + d] = int(in);
    s.w[2 + d] = int(k);
    s.y[2 + d] = int(out);
    s.pad[d] = int(pad);
    s.stride[d] = int(stride);
    s.dil[d] = int(dil);
  }
  // Every tensor's element count fits an int, as cuDNN's strides must.
  for (const int *t : {s.x, s.w, s.y}) {
    std::optional<int64_t> n = 1;
    for (int d = 0; d < s.rank && n; ++d)
      n = checkedMul(*n, int64_t(t[d]));
    if (!n || *n > INT_MAX)
      return false;
  }
  return true;
}
