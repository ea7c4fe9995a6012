//===- NormPoolBackwardArgs.cpp - Plans of the backward kernels -----------===//

#include "TraceIR/Runtime/NormPoolBackwardArgs.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <algorithm>
#include <string>

using namespace traceir;

namespace {
bool fail(KernelContext &ctx, const std::string &message) {
  ctx.fail(message);
  return false;
}

/// `t` as a StridedOperand (its data null when it is empty, as the kernels
/// then read nothing of it).
bool strided(KernelContext &ctx, const char *op, const Tensor &t,
             StridedOperand &s) {
  if (t.rank() > kEwMaxRank)
    return fail(ctx, strCat(op) + " supports ranks up to " +
                         strCat(kEwMaxRank) + ", got " +
                         shapeToString(t.shape));
  s = StridedOperand();
  s.dtype = static_cast<int32_t>(t.dtype);
  s.rank = static_cast<int32_t>(t.rank());
  for (int64_t d = 0; d < t.rank(); ++d) {
    s.shape[d] = t.shape[d];
    s.strides[d] = t.strides[d];
  }
  if (t.numel() > 0)
    s.data = t.bytes();
  return true;
}

/// Result `r` must be a contiguous `dtype` tensor of `shape`.
bool checkResult(KernelContext &ctx, const char *op, unsigned r,
                 std::span<const int64_t> shape, DType dtype) {
  const Tensor &t = ctx.result(r);
  if (t.dtype != dtype || !t.isContiguous())
    return fail(ctx, strCat(op) + ": result #" + strCat(r) + " must be a " +
                         "contiguous " + dtypeName(dtype) + " tensor, got " +
                         dtypeName(t.dtype));
  return checkResultShape(ctx, r, shape);
}

/// The pool backward's grad_output (argument 0) and self (argument 1):
/// grad_output of self's dtype and of `want` (self's leading dims and the
/// pooled size, which the caller computed; 0 where it does not fit).
bool poolBackwardCommon(KernelContext &ctx, const char *op, int64_t oh,
                        int64_t ow, PoolBackwardPlan &p) {
  const Tensor &g = ctx.tensor(0), &x = ctx.tensor(1);
  Shape want(x.shape.begin(), x.shape.end() - 2);
  want.push_back(oh);
  want.push_back(ow);
  if (oh <= 0 || ow <= 0 || g.dtype != x.dtype || g.shape != want)
    return fail(ctx, strCat(op) + ": grad_output must be " +
                         dtypeName(x.dtype) + " of the pooled shape " +
                         shapeToString(want) + ", got " + dtypeName(g.dtype) +
                         shapeToString(g.shape));
  if (!checkResult(ctx, op, 0, x.shape, x.dtype))
    return false;
  bool batched = x.rank() == 4;
  int64_t off = batched ? 1 : 0;
  p.dtype = static_cast<int32_t>(x.dtype);
  p.N = batched ? x.shape[0] : 1;
  p.C = x.shape[off];
  p.H = x.shape[off + 1];
  p.W = x.shape[off + 2];
  p.OH = oh;
  p.OW = ow;
  p.gOStrides[0] = batched ? g.strides[0] : 0;
  for (int d = 0; d < 3; ++d)
    p.gOStrides[1 + d] = g.strides[off + d];
  if (p.numel() > 0) {
    p.gO = g.bytes();
    p.gI = ctx.result(0).bytes();
  }
  return true;
}

/// self (argument 1): floating (or i64 where `i64`), 3-D or 4-D, nonzero
/// non-batch dims, as the forwards check their input.
bool poolSelf(KernelContext &ctx, const char *op, bool i64) {
  const Tensor &x = ctx.tensor(1);
  if (!isFloatingDType(x.dtype) && !(i64 && x.dtype == DType::I64))
    return fail(ctx, strCat(op) + " supports floating" +
                         (i64 ? " and i64" : "") + " dtypes, got " +
                         dtypeName(x.dtype));
  if (x.rank() != 3 && x.rank() != 4)
    return fail(ctx, strCat(op) + ": expected a 3-D or 4-D self, got " +
                         shapeToString(x.shape));
  for (int64_t d = x.rank() == 4 ? 1 : 0; d < x.rank(); ++d)
    if (x.shape[d] == 0)
      return fail(ctx, strCat(op) +
                           ": expected a 3-D or 4-D self with nonzero sizes "
                           "for the non-batch dims, got " +
                           shapeToString(x.shape));
  return true;
}

/// The output_mask's results: grad_input of the input's type, grad_weight
/// and grad_bias of `param` and dtypes `wd` and `bd`; an empty [0] where
/// the mask leaves one out.
bool normResults(KernelContext &ctx, const char *op,
                 const std::array<bool, 3> &mask, const Shape &param, DType wd,
                 DType bd, NormBackwardPlan &p) {
  if (ctx.numResults() != 3)
    return fail(ctx, strCat(op) + " returns three results");
  const Tensor &x = ctx.tensor(1);
  Shape none = {0};
  if (!checkResult(ctx, op, 0, mask[0] ? x.shape : none, x.dtype) ||
      !checkResult(ctx, op, 1, mask[1] ? param : none, wd) ||
      !checkResult(ctx, op, 2, mask[2] ? param : none, bd))
    return false;
  p.dxDtype = static_cast<int32_t>(x.dtype);
  p.dwDtype = static_cast<int32_t>(wd);
  p.dbDtype = static_cast<int32_t>(bd);
  p.dx = mask[0] && x.numel() > 0 ? ctx.result(0).bytes() : nullptr;
  p.dw = mask[1] && p.numWeights > 0 ? ctx.result(1).bytes() : nullptr;
  p.db = mask[2] && p.numWeights > 0 ? ctx.result(2).bytes() : nullptr;
  return true;
}

/// grad_out (0) and input (1) of one floating dtype and shape; mean and
/// rstd (tensors `meanArg`, `meanArg + 1`) floating of `rows` elements.
bool normCommon(KernelContext &ctx, const char *op, unsigned meanArg,
                int64_t rows, NormBackwardPlan &p) {
  const Tensor &g = ctx.tensor(0), &x = ctx.tensor(1);
  const Tensor &mean = ctx.tensor(meanArg), &rstd = ctx.tensor(meanArg + 1);
  if (!isFloatingDType(x.dtype) || g.dtype != x.dtype || g.shape != x.shape)
    return fail(ctx, strCat(op) +
                         ": grad_out and input must have one "
                         "floating dtype and shape, got " +
                         dtypeName(g.dtype) + shapeToString(g.shape) + " and " +
                         dtypeName(x.dtype) + shapeToString(x.shape));
  for (const Tensor *t : {&mean, &rstd})
    if (!isFloatingDType(t->dtype) || t->numel() != rows)
      return fail(ctx, strCat(op) + ": mean and rstd must be floating with " +
                           strCat(rows) + " elements (one per row), got " +
                           dtypeName(t->dtype) + shapeToString(t->shape));
  return strided(ctx, op, g, p.dy) && strided(ctx, op, x, p.x) &&
         strided(ctx, op, mean, p.mean) && strided(ctx, op, rstd, p.rstd);
}
} // namespace

bool traceir::avgPool2dBackwardPlan(KernelContext &ctx, PoolBackwardPlan &p) {
  const char *op = "avg_pool2d_backward";
  AvgPool2dArgs a;
  if (!poolSelf(ctx, op, true) || !decodeArgs(ctx, decodeAvgPool2dBackward, a))
    return false;
  p = PoolBackwardPlan();
  const Tensor &x = ctx.tensor(1);
  int64_t size[2];
  for (int d = 0; d < 2; ++d)
    size[d] = a.outputSize(d, x.shape[x.rank() - 2 + d]).value_or(0);
  p.kH = a.kernel[0];
  p.kW = a.kernel[1];
  p.sH = a.stride[0];
  p.sW = a.stride[1];
  p.pH = a.padding[0];
  p.pW = a.padding[1];
  p.countIncludePad = a.countIncludePad;
  p.divisor = a.divisor;
  return poolBackwardCommon(ctx, op, size[0], size[1], p);
}

bool traceir::adaptiveAvgPool2dBackwardPlan(KernelContext &ctx,
                                            PoolBackwardPlan &p) {
  const char *op = "_adaptive_avg_pool2d_backward";
  if (!poolSelf(ctx, op, false))
    return false;
  p = PoolBackwardPlan();
  p.adaptive = true;
  const Tensor &g = ctx.tensor(0);
  int64_t oh = g.rank() >= 2 ? g.shape[g.rank() - 2] : 0;
  int64_t ow = g.rank() >= 1 ? g.shape[g.rank() - 1] : 0;
  return poolBackwardCommon(ctx, op, oh, ow, p);
}

bool traceir::layerNormBackwardPlan(KernelContext &ctx, NormBackwardPlan &p) {
  const char *op = "native_layer_norm_backward";
  std::vector<int64_t> norm;
  std::array<bool, 3> mask{};
  if (!decodeArgs(ctx, decodeLayerNormBackward, norm, mask))
    return false;
  const Tensor &x = ctx.tensor(1);
  int64_t nd = static_cast<int64_t>(norm.size());
  if (nd > x.rank() ||
      !std::equal(norm.begin(), norm.end(), x.shape.end() - nd))
    return fail(ctx, strCat(op) + ": normalized_shape " + shapeToString(norm) +
                         " is not the trailing dims of the input " +
                         shapeToString(x.shape));
  p = NormBackwardPlan();
  p.inner = 1;
  for (int64_t d : norm)
    p.inner *= d;
  p.M = 1;
  for (int64_t d = 0; d < x.rank() - nd; ++d)
    p.M *= x.shape[d];
  p.numWeights = p.inner;
  if (!normCommon(ctx, op, 3, p.M, p))
    return false;
  const Tensor *w = ctx.isTensor(5) ? &ctx.tensor(5) : nullptr;
  const Tensor *b = ctx.isTensor(6) ? &ctx.tensor(6) : nullptr;
  for (const Tensor *t : {w, b})
    if (t && (!isFloatingDType(t->dtype) || t->shape != norm))
      return fail(ctx, strCat(op) +
                           ": weight and bias must be floating of "
                           "normalized_shape " +
                           shapeToString(norm) + ", got " +
                           dtypeName(t->dtype) + shapeToString(t->shape));
  if ((mask[1] && !w) || (mask[2] && !b))
    return fail(ctx, strCat(op) + ": output_mask asks for the gradient of a " +
                         (mask[1] && !w ? "weight" : "bias") + " that is None");
  if (w && !strided(ctx, op, *w, p.weight))
    return false;
  Shape param(norm.begin(), norm.end());
  return normResults(ctx, op, mask, param, w ? w->dtype : x.dtype,
                     b ? b->dtype : x.dtype, p);
}

bool traceir::groupNormBackwardPlan(KernelContext &ctx, NormBackwardPlan &p) {
  const char *op = "native_group_norm_backward";
  GroupNormArgs g;
  std::array<bool, 3> mask{};
  if (!decodeArgs(ctx, decodeGroupNormBackward, g, mask))
    return false;
  const Tensor &x = ctx.tensor(1);
  int64_t hxw = 1;
  for (int64_t d = 2; d < x.rank(); ++d)
    hxw *= x.shape[d];
  if (x.rank() < 2 || x.shape[0] != g.N || x.shape[1] != g.C || hxw != g.HxW)
    return fail(ctx, strCat(op) + ": input " + shapeToString(x.shape) +
                         " is not [N=" + strCat(g.N) + ", C=" + strCat(g.C) +
                         ", *] with HxW=" + strCat(g.HxW) + " elements in *");
  p = NormBackwardPlan();
  // Row n * group + k holds group k of image n: C / group channels of HxW
  // elements, contiguous in the input's row-major order.
  p.M = g.N * g.group;
  p.groups = g.group;
  p.span = g.HxW;
  p.inner = g.C / g.group * g.HxW;
  p.numWeights = g.C;
  if (!normCommon(ctx, op, 2, p.M, p))
    return false;
  const Tensor *w = ctx.isTensor(4) ? &ctx.tensor(4) : nullptr;
  if (w && (!isFloatingDType(w->dtype) || w->rank() != 1 || w->shape[0] != g.C))
    return fail(ctx, strCat(op) + ": weight must be None or floating [C=" +
                         strCat(g.C) + "], got " + dtypeName(w->dtype) +
                         shapeToString(w->shape));
  if (w && !strided(ctx, op, *w, p.weight))
    return false;
  // Empty channels (HxW = 0): span 1 keeps the index arithmetic defined;
  // inner is 0, so every weight gradient is 0.
  if (p.span == 0)
    p.span = 1;
  DType wd = w ? w->dtype : x.dtype;
  return normResults(ctx, op, mask, Shape{g.C}, wd, wd, p);
}

bool traceir::embeddingDenseBackwardPlan(KernelContext &ctx,
                                         EmbeddingBackwardPlan &p,
                                         StridedOperand &indices) {
  const char *op = "embedding_dense_backward";
  const Tensor &g = ctx.tensor(0), &idx = ctx.tensor(1);
  EmbeddingBackwardArgs a;
  if (!decodeArgs(ctx, decodeEmbeddingDenseBackward, a))
    return false;
  if (isFloatingDType(idx.dtype) || idx.dtype == DType::Bool)
    return fail(ctx, strCat(op) + ": indices must be integers, got " +
                         dtypeName(idx.dtype));
  if (g.dtype == DType::Bool)
    return fail(ctx, strCat(op) + " supports floating and integer gradients, "
                                  "got bool");
  Shape want = idx.shape;
  want.push_back(g.rank() ? g.shape.back() : 0);
  if (g.rank() == 0 || g.shape != want)
    return fail(ctx, strCat(op) + ": grad_output " + shapeToString(g.shape) +
                         " must be indices.shape " + shapeToString(idx.shape) +
                         " + [D]");
  p = EmbeddingBackwardPlan();
  p.L = idx.numel();
  p.D = g.shape.back();
  p.V = a.numWeights;
  p.paddingIdx = a.paddingIdx;
  p.scale = a.scaleGradByFreq;
  p.dtype = static_cast<int32_t>(g.dtype);
  Shape out = {p.V, p.D};
  if (!checkResult(ctx, op, 0, out, g.dtype) || !strided(ctx, op, g, p.grad) ||
      !strided(ctx, op, idx, indices))
    return false;
  if (p.numel() > 0)
    p.out = ctx.result(0).bytes();
  return true;
}

void traceir::failEmbeddingBackwardIndex(KernelContext &ctx, int64_t index,
                                         int64_t numWeights) {
  ctx.fail(deviceErrorMessage(
      deviceError(DeviceErrorCode::EmbeddingBackwardIndex, index, numWeights)));
}
