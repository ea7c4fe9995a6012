//===- DistanceArgs.cpp - Plans of the distance kernels -------------------===//

#include "TraceIR/Runtime/DistanceArgs.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <cmath>

using namespace traceir;

namespace {
bool fail(KernelContext &ctx, const std::string &message) {
  ctx.fail(message);
  return false;
}

bool isIndexDType(DType t) { return t == DType::I64 || t == DType::I32; }

/// Result `r` must have `dtype` and `shape`.
bool checkResult(KernelContext &ctx, const char *op, unsigned r, DType dtype,
                 std::span<const int64_t> shape) {
  const Tensor &out = ctx.result(r);
  if (out.dtype != dtype)
    return fail(ctx, strCat(op) + ": result #" + strCat(r) + " is " +
                         dtypeName(out.dtype) + " but should be " +
                         dtypeName(dtype));
  return checkResultShape(ctx, r, shape);
}

/// The p-norm's special case.
DistNorm normOf(double p) {
  return p == 0          ? DistNorm::Zero
         : p == 1        ? DistNorm::One
         : p == 2        ? DistNorm::Two
         : std::isinf(p) ? DistNorm::Inf
                         : DistNorm::General;
}

bool distanceDtype(KernelContext &ctx, const char *op, const Tensor &x) {
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    return fail(ctx, strCat(op) + " supports f32 and f64 (as PyTorch's), got " +
                         dtypeName(x.dtype));
  return true;
}
} // namespace

bool traceir::cdistPlan(KernelContext &ctx, DistancePlan &p) {
  const char *op = "_cdist_forward";
  const Tensor &x1 = ctx.tensor(0), &x2 = ctx.tensor(1);
  DistanceArgs a;
  if (!decodeArgs(ctx, decodeCdist, a) || !distanceDtype(ctx, op, x1))
    return false;
  if (x2.dtype != x1.dtype)
    return fail(ctx, strCat(op) + ": x1 and x2 must have one dtype, got " +
                         dtypeName(x1.dtype) + " and " + dtypeName(x2.dtype));
  if (x1.rank() < 2 || x2.rank() < 2)
    return fail(ctx, strCat(op) + " only supports at least 2D tensors, got " +
                         shapeToString(x1.shape) + " and " +
                         shapeToString(x2.shape));
  int64_t M = x1.shape.back();
  if (x2.shape.back() != M)
    return fail(ctx, strCat(op) +
                         ": X1 and X2 must have the same number of "
                         "columns. X1: " +
                         strCat(M) + " X2: " + strCat(x2.shape.back()));
  int64_t r1 = x1.rank() - 2, r2 = x2.rank() - 2;
  int64_t br = r1 > r2 ? r1 : r2;
  if (br > kEwMaxRank)
    return fail(ctx, strCat(op) + " supports up to " + strCat(kEwMaxRank) +
                         " batch dims");
  p = DistancePlan();
  p.batchRank = static_cast<int32_t>(br);
  Shape want;
  for (int64_t d = 0; d < br; ++d) {
    int64_t i1 = d - (br - r1), i2 = d - (br - r2);
    int64_t s1 = i1 >= 0 ? x1.shape[i1] : 1, s2 = i2 >= 0 ? x2.shape[i2] : 1;
    if (s1 != s2 && s1 != 1 && s2 != 1)
      return fail(ctx, strCat(op) + ": the batch dims of " +
                           shapeToString(x1.shape) + " and " +
                           shapeToString(x2.shape) + " do not broadcast");
    int64_t s = s1 == 1 ? s2 : s1;
    p.batchShape[d] = s;
    p.x1Batch[d] = i1 >= 0 && s1 != 1 ? x1.strides[i1] : 0;
    p.x2Batch[d] = i2 >= 0 && s2 != 1 ? x2.strides[i2] : 0;
    want.push_back(s);
  }
  p.P = x1.shape[x1.rank() - 2];
  p.R = x2.shape[x2.rank() - 2];
  p.M = M;
  want.push_back(p.P);
  want.push_back(p.R);
  if (!checkResult(ctx, op, 0, x1.dtype, want))
    return false;
  Tensor &out = ctx.result(0);
  p.dtype = static_cast<int32_t>(x1.dtype);
  p.x1Rs = x1.strides[x1.rank() - 2];
  p.x1Cs = x1.strides.back();
  p.x2Rs = x2.strides[x2.rank() - 2];
  p.x2Cs = x2.strides.back();
  p.norm = static_cast<int32_t>(normOf(a.p));
  p.p = a.p;
  p.numel = out.numel();
  if (p.numel > 0) {
    p.x1 = x1.bytes();
    p.x2 = x2.bytes();
    p.out = out.bytes();
  }
  return true;
}

bool traceir::pdistPlan(KernelContext &ctx, DistancePlan &p) {
  const char *op = "_pdist_forward";
  const Tensor &x = ctx.tensor(0);
  DistanceArgs a;
  if (!decodeArgs(ctx, decodePdist, a) || !distanceDtype(ctx, op, x))
    return false;
  if (x.rank() != 2)
    return fail(ctx, strCat(op) + " only supports 2D tensors, got: " +
                         shapeToString(x.shape));
  int64_t n = x.shape[0];
  // n * (n - 1) / 2 fits where n * n does; a tensor's n is far below that.
  Shape want{n > 1 ? n * (n - 1) / 2 : 0};
  if (!checkResult(ctx, op, 0, x.dtype, want))
    return false;
  Tensor &out = ctx.result(0);
  p = DistancePlan();
  p.pdist = true;
  p.dtype = static_cast<int32_t>(x.dtype);
  p.P = p.R = n;
  p.M = x.shape[1];
  p.x1Rs = p.x2Rs = x.strides[0];
  p.x1Cs = p.x2Cs = x.strides[1];
  p.norm = static_cast<int32_t>(normOf(a.p));
  p.p = a.p;
  p.numel = want[0];
  if (p.numel > 0) {
    p.x1 = p.x2 = x.bytes();
    p.out = out.bytes();
  }
  return true;
}

bool traceir::embeddingBagPlan(KernelContext &ctx, EmbeddingBagPlan &p) {
  const char *op = "_embedding_bag";
  const Tensor &w = ctx.tensor(0), &idx = ctx.tensor(1), &off = ctx.tensor(2);
  EmbeddingBagArgs a;
  if (!decodeArgs(ctx, decodeEmbeddingBag, a))
    return false;
  if (!isFloatingDType(w.dtype))
    return fail(ctx, strCat(op) + ": weight must be floating, got " +
                         dtypeName(w.dtype));
  if (w.rank() != 2)
    return fail(ctx, strCat(op) + ": weight must be 2-D, got " +
                         shapeToString(w.shape));
  if (!isIndexDType(idx.dtype) || !isIndexDType(off.dtype))
    return fail(ctx, strCat(op) +
                         ": indices and offsets must be i32 or i64, "
                         "got " +
                         dtypeName(idx.dtype) + " and " + dtypeName(off.dtype));
  if (idx.rank() != 1 || off.rank() != 1)
    return fail(ctx, strCat(op) + ": indices and offsets must be 1-D, got " +
                         shapeToString(idx.shape) + " and " +
                         shapeToString(off.shape));
  int64_t N = idx.shape[0], numOffsets = off.shape[0];
  if (a.includeLastOffset && numOffsets < 1)
    return fail(ctx, strCat(op) + ": include_last_offset: number of offset "
                                  "should be at least 1");
  p = EmbeddingBagPlan();
  if (a.hasPerSampleWeights) {
    const Tensor &psw = ctx.tensor(6);
    if (psw.dtype != w.dtype || psw.rank() != 1 || psw.shape[0] != N)
      return fail(ctx, strCat(op) +
                           ": per_sample_weights must be 1-D of the "
                           "weight's dtype and the indices' length " +
                           strCat(N) + ", got " + dtypeName(psw.dtype) + " " +
                           shapeToString(psw.shape));
    if (N > 0)
      p.weights = psw.bytes();
    p.weightsDtype = static_cast<int32_t>(psw.dtype);
    p.weightsStride = psw.strides[0];
  }
  int64_t numBags = numOffsets - (a.includeLastOffset ? 1 : 0), D = w.shape[1];
  DType index = idx.dtype == DType::I64 || off.dtype == DType::I64 ? DType::I64
                                                                   : DType::I32;
  bool skip = a.skipsOffset2bag(w.dtype == DType::F32 || w.dtype == DType::F16);
  if (ctx.numResults() != 4)
    return fail(ctx,
                strCat(op) + " has 4 results, got " + strCat(ctx.numResults()));
  Shape outShape{numBags, D}, o2b{skip ? 0 : N}, bags{numBags};
  // _embedding_bag_forward_only (this kernel too) has one bag_size per
  // offset.
  Shape sizes{ctx.result(2).rank() == 1 && ctx.result(2).shape[0] == numOffsets
                  ? numOffsets
                  : numBags};
  if (!checkResult(ctx, op, 0, w.dtype, outShape) ||
      !checkResult(ctx, op, 1, index, o2b) ||
      !checkResult(ctx, op, 2, index, sizes) ||
      !checkResult(ctx, op, 3, index, a.mode == 2 ? outShape : bags))
    return false;
  p.weightDtype = static_cast<int32_t>(w.dtype);
  p.rows = w.shape[0];
  p.D = D;
  p.wRs = w.strides[0];
  p.wCs = w.strides[1];
  p.indicesDtype = static_cast<int32_t>(idx.dtype);
  p.N = N;
  p.indicesStride = idx.strides[0];
  p.offsetsDtype = static_cast<int32_t>(off.dtype);
  p.numOffsets = numOffsets;
  p.offsetsStride = off.strides[0];
  p.numBags = numBags;
  p.mode = static_cast<int32_t>(a.mode);
  p.paddingIdx = a.paddingIdx < 0 ? -1 : a.paddingIdx;
  p.lastEndsAtOffset = skip && a.includeLastOffset;
  p.indexDtype = static_cast<int32_t>(index);
  if (w.numel() > 0)
    p.weight = w.bytes();
  if (N > 0)
    p.indices = idx.bytes();
  if (numOffsets > 0)
    p.offsets = off.bytes();
  if (numBags * D > 0)
    p.out = ctx.result(0).bytes();
  if (!skip && N > 0)
    p.offset2bag = ctx.result(1).bytes();
  p.numSizes = sizes[0];
  if (p.numSizes > 0)
    p.bagSize = ctx.result(2).bytes();
  if (ctx.result(3).numel() > 0)
    p.maxIndices = ctx.result(3).bytes();
  return true;
}

void traceir::failEmbeddingBag(KernelContext &ctx, const EmbeddingBagPlan &p,
                               int64_t key, int64_t value) {
  ctx.fail(deviceErrorMessage(
      key < p.numOffsets
          ? deviceError(DeviceErrorCode::EmbeddingBagOffset, value, p.N, key)
          : deviceError(DeviceErrorCode::EmbeddingBagIndex, value, p.rows,
                        key - p.numOffsets)));
}

bool traceir::gridSamplerPlan(KernelContext &ctx, GridSamplePlan &p) {
  const char *op = "grid_sampler_2d";
  const Tensor &x = ctx.tensor(0), &g = ctx.tensor(1);
  GridSamplerArgs a;
  if (!decodeArgs(ctx, decodeGridSampler, a))
    return false;
  if (!isFloatingDType(x.dtype) || g.dtype != x.dtype)
    return fail(ctx, strCat(op) +
                         ": input and grid must have one floating "
                         "dtype, got " +
                         dtypeName(x.dtype) + " and " + dtypeName(g.dtype));
  if (x.rank() != 4 || g.rank() != 4 || g.shape[3] != 2 ||
      g.shape[0] != x.shape[0])
    return fail(ctx, strCat(op) +
                         ": expected input [N, C, H, W] and grid "
                         "[N, H_out, W_out, 2], got " +
                         shapeToString(x.shape) + " and " +
                         shapeToString(g.shape));
  if (x.shape[2] <= 0 || x.shape[3] <= 0)
    return fail(ctx, strCat(op) +
                         ": expected input to have non-empty "
                         "spatial dimensions, but input has sizes " +
                         shapeToString(x.shape));
  Shape want{x.shape[0], x.shape[1], g.shape[1], g.shape[2]};
  if (!checkResult(ctx, op, 0, x.dtype, want))
    return false;
  p = GridSamplePlan();
  for (int d = 0; d < 4; ++d) {
    p.inStrides[d] = x.strides[d];
    p.gridStrides[d] = g.strides[d];
  }
  p.dtype = static_cast<int32_t>(x.dtype);
  p.N = want[0];
  p.C = want[1];
  p.H = x.shape[2];
  p.W = x.shape[3];
  p.OH = want[2];
  p.OW = want[3];
  p.interpolation = static_cast<int32_t>(a.interpolation);
  p.padding = static_cast<int32_t>(a.padding);
  p.alignCorners = a.alignCorners;
  p.f64 = x.dtype == DType::F64;
  if (p.numel() > 0) {
    p.in = x.bytes();
    p.grid = g.bytes();
    p.out = ctx.result(0).bytes();
  }
  return true;
}
