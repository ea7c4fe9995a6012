//===- ResampleArgs.cpp - Plans of the pooling and resampling kernels -----===//

#include "TraceIR/Runtime/ResampleArgs.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <algorithm>
#include <cstring>

using namespace traceir;

namespace {
bool fail(KernelContext &ctx, const std::string &message) {
  ctx.fail(message);
  return false;
}

/// Result 0 must have `shape` and the input's dtype: the gathers copy the
/// input's bytes into it.
bool checkResult(KernelContext &ctx, const char *op,
                 std::span<const int64_t> shape) {
  const Tensor &x = ctx.tensor(0), &out = ctx.result(0);
  if (out.dtype != x.dtype)
    return fail(ctx, strCat(op) + ": the result is " + dtypeName(out.dtype) +
                         " but the input " + dtypeName(x.dtype));
  return checkResultShape(ctx, 0, shape);
}

/// The plan of a gather from input 0 into result 0 (checked by the caller),
/// every dim mapped by Shift 0 (copied as is) until set otherwise.
bool gatherPlan(KernelContext &ctx, const char *op, GatherPlan &p) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (out.rank() > kEwMaxRank || out.rank() < x.rank())
    return fail(ctx, strCat(op) + " supports ranks up to " +
                         strCat(kEwMaxRank) + ", got " +
                         shapeToString(out.shape));
  p = GatherPlan();
  p.rank = static_cast<int32_t>(out.rank());
  p.numel = out.numel();
  p.elemSize = static_cast<int32_t>(dtypeSize(x.dtype));
  // A result's leading dims past the input's rank (repeat's) read a size-1
  // input dim.
  int64_t lead = out.rank() - x.rank();
  for (int64_t d = 0; d < out.rank(); ++d) {
    p.outShape[d] = out.shape[d];
    p.inSize[d] = d < lead ? 1 : x.shape[d - lead];
    p.inStrides[d] = d < lead ? 0 : x.strides[d - lead];
    p.map[d] = static_cast<int32_t>(AxisMap::Shift);
  }
  if (p.numel > 0) {
    p.in = x.bytes();
    p.out = out.bytes();
  }
  return true;
}

/// The [N, C, D, H, W] view of an input of `spatial` (2 or 3) dims after
/// its (optional) batch and channel dims, and its result.
Planes3d planes3d(const Tensor &x, Tensor &out, int spatial = 2) {
  Planes3d P;
  bool batched = x.rank() == spatial + 2;
  int64_t off = batched ? 1 : 0;
  P.inDtype = static_cast<int32_t>(x.dtype);
  P.inStrides[0] = batched ? x.strides[0] : 0;
  P.inStrides[1] = x.strides[off];
  P.N = batched ? x.shape[0] : 1;
  P.C = x.shape[off];
  int64_t *in[3] = {&P.D, &P.H, &P.W}, *o[3] = {&P.OD, &P.OH, &P.OW};
  for (int d = 0; d < spatial; ++d) {
    int e = 3 - spatial + d; // 2-D: (h, w); D stays 1 with stride 0
    P.inStrides[2 + e] = x.strides[off + 1 + d];
    *in[e] = x.shape[off + 1 + d];
    *o[e] = out.shape[out.rank() - spatial + d];
  }
  P.outDtype = static_cast<int32_t>(out.dtype);
  if (P.numel() > 0) {
    P.in = x.bytes();
    P.out = out.bytes();
  }
  return P;
}

/// A pool's window over `spatial` dims, the depth's the identity in 2-D.
template <size_t N> Window3d window3d(const MaxPoolArgs<N> &a) {
  Window3d w;
  for (size_t d = 0; d < N; ++d) {
    size_t e = 3 - N + d;
    w.k[e] = a.kernel[d];
    w.s[e] = a.stride[d];
    w.p[e] = a.padding[d];
    w.d[e] = a.dilation[d];
  }
  return w;
}

template <size_t N> bool avgPoolPlanOf(KernelContext &ctx, AvgPoolPlan &p) {
  AvgPoolArgs<N> a;
  if (!avgPoolArgs<N>(ctx, a))
    return false;
  p = AvgPoolPlan();
  p.x = planes3d(ctx.tensor(0), ctx.result(0), N);
  p.w = window3d<N>(a);
  p.countIncludePad = a.countIncludePad;
  p.divisor = a.divisor;
  return true;
}

template <size_t N>
bool maxPoolPlanOf(KernelContext &ctx, bool indices, MaxPoolPlan &p) {
  MaxPoolArgs<N> a;
  if (!maxPoolArgs<N>(ctx, a, indices))
    return false;
  p = MaxPoolPlan();
  p.x = planes3d(ctx.tensor(0), ctx.result(0), N);
  p.w = window3d<N>(a);
  if (indices && p.x.numel() > 0)
    p.indices = ctx.result(1).data<int64_t>();
  return true;
}

/// Decodes the upsampling `op`'s arguments and checks its 4-D input,
/// dtype and result.
bool upsampleArgs(KernelContext &ctx, bool bilinear, UpsampleArgs &a) {
  const Tensor &x = ctx.tensor(0);
  const char *op = bilinear ? "upsample_bilinear2d" : "upsample_nearest2d";
  if (!isFloatingDType(x.dtype) && x.dtype != DType::U8)
    return fail(ctx, strCat(op) + " supports floating and u8 dtypes, got " +
                         dtypeName(x.dtype));
  if (!decodeArgs(ctx, decodeUpsample2d, bilinear,
                  std::span<const int64_t>(x.shape), a))
    return false;
  Shape want{x.shape[0], x.shape[1], a.size[0], a.size[1]};
  return checkResult(ctx, op, want);
}
} // namespace

bool traceir::avgPoolPlan(KernelContext &ctx, int spatial, AvgPoolPlan &p) {
  return spatial == 3 ? avgPoolPlanOf<3>(ctx, p) : avgPoolPlanOf<2>(ctx, p);
}

bool traceir::maxPoolPlan(KernelContext &ctx, int spatial, bool indices,
                          MaxPoolPlan &p) {
  return spatial == 3 ? maxPoolPlanOf<3>(ctx, indices, p)
                      : maxPoolPlanOf<2>(ctx, indices, p);
}

bool traceir::adaptiveAvgPoolPlan(KernelContext &ctx, int spatial,
                                  AdaptiveAvgPoolPlan &p) {
  if (!adaptiveAvgPoolArgs(ctx, spatial))
    return false;
  p = AdaptiveAvgPoolPlan();
  p.x = planes3d(ctx.tensor(0), ctx.result(0), spatial);
  return true;
}

bool traceir::col2imPlan(KernelContext &ctx, Col2imPlan &p) {
  const Tensor &x = ctx.tensor(0);
  if (!isFloatingDType(x.dtype) && x.dtype != DType::Bool)
    return fail(ctx, strCat("col2im supports floating and bool dtypes, got ") +
                         dtypeName(x.dtype));
  Col2imArgs a;
  if (!decodeArgs(ctx, decodeCol2im, std::span<const int64_t>(x.shape), a) ||
      !checkResult(ctx, "col2im", a.result))
    return false;
  Tensor &out = ctx.result(0);
  bool batched = x.rank() == 3;
  p = Col2imPlan();
  p.dtype = static_cast<int32_t>(x.dtype);
  p.inStrides[0] = batched ? x.strides[0] : 0;
  p.inStrides[1] = x.strides[x.rank() - 2];
  p.inStrides[2] = x.strides[x.rank() - 1];
  p.N = batched ? x.shape[0] : 1;
  p.C = a.result[batched ? 1 : 0];
  p.OH = a.outputSize[0];
  p.OW = a.outputSize[1];
  p.bH = a.blocks[0];
  p.bW = a.blocks[1];
  p.kH = a.kernel[0];
  p.kW = a.kernel[1];
  p.sH = a.stride[0];
  p.sW = a.stride[1];
  p.pH = a.padding[0];
  p.pW = a.padding[1];
  p.dH = a.dilation[0];
  p.dW = a.dilation[1];
  if (p.numel() > 0) {
    p.in = x.bytes();
    p.out = out.bytes();
  }
  return true;
}

bool traceir::padPlan(KernelContext &ctx, PadMode mode, int spatial,
                      GatherPlan &p) {
  const Tensor &x = ctx.tensor(0);
  const char *op = mode == PadMode::Constant  ? "constant_pad_nd"
                   : mode == PadMode::Reflect ? "reflection_pad"
                                              : "replication_pad";
  if (mode != PadMode::Constant && x.dtype == DType::Bool)
    return fail(ctx,
                strCat(op) + strCat(spatial) + "d does not support bool input");
  PadArgs a;
  if (!decodeArgs(ctx, decodePad, mode, spatial,
                  std::span<const int64_t>(x.shape), a) ||
      !checkResult(ctx, op, a.resultShape) || !gatherPlan(ctx, op, p))
    return false;
  AxisMap map = mode == PadMode::Constant  ? AxisMap::Shift
                : mode == PadMode::Reflect ? AxisMap::Reflect
                                           : AxisMap::Replicate;
  for (int64_t d = 0; d < x.rank(); ++d) {
    p.shift[d] = a.before[d];
    if (a.before[d] != 0 || a.after[d] != 0)
      p.map[d] = static_cast<int32_t>(map);
  }
  // The fill value in the result's dtype, as PyTorch's fill_ converts it
  // (an int exactly; a float truncated toward zero for an integer dtype).
  char *fill = reinterpret_cast<char *>(p.fill);
  if (a.valueIsInt && !isFloatingDType(x.dtype))
    ewStoreInt(fill, static_cast<int32_t>(x.dtype), a.intValue);
  else
    ewStoreDouble(fill, static_cast<int32_t>(x.dtype), a.value);
  return true;
}

bool traceir::flipPlan(KernelContext &ctx, GatherPlan &p) {
  const Tensor &x = ctx.tensor(0);
  std::vector<bool> flipped;
  if (!decodeArgs(ctx, decodeReducedDims, 1u, x.rank(),
                  DimArg::ListEmptyMarksNone, flipped) ||
      !checkResult(ctx, "flip", x.shape) || !gatherPlan(ctx, "flip", p))
    return false;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (flipped[d])
      p.map[d] = static_cast<int32_t>(AxisMap::Flip);
  return true;
}

bool traceir::repeatPlan(KernelContext &ctx, GatherPlan &p) {
  const Tensor &x = ctx.tensor(0);
  std::vector<int64_t> shape;
  if (!decodeArgs(ctx, decodeRepeat, std::span<const int64_t>(x.shape),
                  shape) ||
      !checkResult(ctx, "repeat", shape) || !gatherPlan(ctx, "repeat", p))
    return false;
  for (int d = 0; d < p.rank; ++d)
    p.map[d] = static_cast<int32_t>(AxisMap::Modulo);
  return true;
}

bool traceir::upsampleNearestPlan(KernelContext &ctx, GatherPlan &p) {
  UpsampleArgs a;
  if (!upsampleArgs(ctx, false, a) || !gatherPlan(ctx, "upsample_nearest2d", p))
    return false;
  for (int d = 0; d < 2; ++d) {
    int64_t in = p.inSize[2 + d], out = p.outShape[2 + d];
    p.map[2 + d] = static_cast<int32_t>(AxisMap::Nearest);
    // PyTorch's compute_scales_value<float>: 1 / scale_factor, else the
    // ratio of the sizes, in float.
    p.scale[2 + d] = a.scales[d] > 0
                         ? static_cast<float>(1.0 / a.scales[d])
                         : static_cast<float>(in) / static_cast<float>(out);
  }
  return true;
}

namespace {
/// _compute_index_ranges_int16_weights' weights_precision: the most bits
/// (up to 22) that keep the axis's largest weight (as the weights loop
/// meets it, partial sums included) below 2^15 once rounded.
int32_t separablePrecision(const SeparableAxis &a) {
  double wtMax = 0;
  for (int64_t j = 0; j < a.out; ++j) {
    int64_t xmin, size;
    double w[2];
    separableLinearWeights(a, j, xmin, size, w);
    // The linear filter's weights are nonnegative, so the partial sums
    // PyTorch's loop compares never exceed the final weights.
    for (double v : w)
      wtMax = std::max(wtMax, v);
  }
  int32_t precision = 0;
  for (; precision < 22; ++precision) {
    int next = static_cast<int>(0.5 + wtMax * (1 << (precision + 1)));
    if (next >= (1 << 15))
      break;
  }
  return precision;
}
} // namespace

bool traceir::upsampleBilinearPlan(KernelContext &ctx, BilinearPlan &p) {
  UpsampleArgs a;
  if (!upsampleArgs(ctx, true, a))
    return false;
  const Tensor &x = ctx.tensor(0);
  p = BilinearPlan();
  p.x = planes3d(x, ctx.result(0));
  p.alignCorners = a.alignCorners;
  p.f64 = x.dtype == DType::F64;
  p.u8 = x.dtype == DType::U8;
  // PyTorch's area_pixel_compute_scale in its opmath type.
  auto ratio = [&](auto in, auto out, double scale) -> double {
    using T = decltype(in);
    if (a.alignCorners)
      return out > 1 ? (in - 1) / (out - 1) : T(0);
    return scale > 0 ? T(1.0 / scale) : in / out;
  };
  for (int d = 0; d < 2; ++d) {
    int64_t in = d ? p.x.W : p.x.H, out = d ? p.x.OW : p.x.OH;
    double r = p.f64 ? ratio(double(in), double(out), a.scales[d])
                     : ratio(float(in), float(out), a.scales[d]);
    (d ? p.ratioW : p.ratioH) = r;
    if (p.u8) {
      SeparableAxis &ax = d ? p.axisW : p.axisH;
      ax.in = in;
      ax.out = out;
      ax.scale = ratio(double(in), double(out), a.scales[d]);
      ax.alignCorners = a.alignCorners;
      ax.precision = separablePrecision(ax);
    }
  }
  return true;
}
