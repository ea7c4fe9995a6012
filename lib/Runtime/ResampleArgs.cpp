//===- ResampleArgs.cpp - Plans of the pooling and resampling kernels -----===//

#include "TraceIR/Runtime/ResampleArgs.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"

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

/// The spatial view of a 3-D or 4-D input and its result.
Planes2d planes2d(const Tensor &x, Tensor &out) {
  Planes2d P;
  bool batched = x.rank() == 4;
  int64_t off = batched ? 1 : 0;
  P.inDtype = static_cast<int32_t>(x.dtype);
  P.inStrides[0] = batched ? x.strides[0] : 0;
  for (int d = 0; d < 3; ++d)
    P.inStrides[1 + d] = x.strides[off + d];
  P.N = batched ? x.shape[0] : 1;
  P.C = x.shape[off];
  P.H = x.shape[off + 1];
  P.W = x.shape[off + 2];
  P.outDtype = static_cast<int32_t>(out.dtype);
  P.OH = out.shape[out.rank() - 2];
  P.OW = out.shape[out.rank() - 1];
  if (P.numel() > 0) {
    P.in = x.bytes();
    P.out = out.bytes();
  }
  return P;
}

/// Decodes the upsampling `op`'s arguments and checks its 4-D input,
/// dtype and result.
bool upsampleArgs(KernelContext &ctx, bool bilinear, UpsampleArgs &a) {
  const Tensor &x = ctx.tensor(0);
  const char *op = bilinear ? "upsample_bilinear2d" : "upsample_nearest2d";
  if (!isFloatingDType(x.dtype) && (bilinear || x.dtype != DType::U8))
    return fail(ctx, strCat(op) + " supports floating" +
                         (bilinear ? "" : " and u8") + " dtypes, got " +
                         dtypeName(x.dtype));
  if (!decodeArgs(ctx, decodeUpsample2d, bilinear,
                  std::span<const int64_t>(x.shape), a))
    return false;
  Shape want{x.shape[0], x.shape[1], a.size[0], a.size[1]};
  return checkResult(ctx, op, want);
}
} // namespace

bool traceir::avgPool2dPlan(KernelContext &ctx, AvgPool2dPlan &p) {
  AvgPool2dArgs a;
  if (!avgPool2dArgs(ctx, a))
    return false;
  p = AvgPool2dPlan();
  p.x = planes2d(ctx.tensor(0), ctx.result(0));
  p.kH = a.kernel[0];
  p.kW = a.kernel[1];
  p.sH = a.stride[0];
  p.sW = a.stride[1];
  p.pH = a.padding[0];
  p.pW = a.padding[1];
  p.countIncludePad = a.countIncludePad;
  p.divisor = a.divisor;
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

bool traceir::upsampleBilinearPlan(KernelContext &ctx, BilinearPlan &p) {
  UpsampleArgs a;
  if (!upsampleArgs(ctx, true, a))
    return false;
  const Tensor &x = ctx.tensor(0);
  p = BilinearPlan();
  p.x = planes2d(x, ctx.result(0));
  p.alignCorners = a.alignCorners;
  p.f64 = x.dtype == DType::F64;
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
  }
  return true;
}
