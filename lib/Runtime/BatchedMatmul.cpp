//===- BatchedMatmul.cpp - torch.matmul's batch broadcasting --------------===//

#include "TraceIR/Runtime/BatchedMatmul.h"

#include <algorithm>

using namespace traceir;

void traceir::forEachMatmul(const Tensor &x, const Tensor &y, Tensor &out,
                            std::function<bool(const MatmulPanel &)> gemm) {
  // View both as [batch..., rows, cols].
  Shape xs = x.shape, xst = x.strides, ys = y.shape, yst = y.strides;
  if (xs.size() == 1) {
    xs.insert(xs.begin(), 1);
    xst.insert(xst.begin(), 0);
  }
  if (ys.size() == 1) {
    ys.push_back(1);
    yst.push_back(0);
  }
  int64_t M = xs[xs.size() - 2], K = xs.back(), N = ys.back();
  int64_t batchRank =
      out.rank() - (x.rank() == 1 ? 0 : 1) - (y.rank() == 1 ? 0 : 1);
  Shape batch(out.shape.begin(), out.shape.begin() + batchRank);
  int64_t numBatch = 1;
  for (int64_t d : batch)
    numBatch *= d;
  size_t es = dtypeSize(x.dtype);
  // x's batch dims folded into its rows where y has none: one product of
  // numBatch * M rows instead of numBatch products of M, as torch.matmul
  // folds (the result is contiguous, so its rows always fold).
  if (y.rank() <= 2 && x.rank() > 2 && numBatch > 0)
    if (std::optional<int64_t> rowStride = foldedRowStride(x)) {
      gemm({x.bytes(), *rowStride, xst.back(), y.bytes(), yst[0], yst[1],
            out.bytes(), std::max<int64_t>(N, 1), numBatch * M, N, K});
      return;
    }
  Shape index(batchRank, 0);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    // Broadcast batch offsets of x and y.
    auto offset = [&](const Shape &shape, const Shape &strides) {
      int64_t off = 0, lead = batchRank - (int64_t(shape.size()) - 2);
      for (int64_t d = 0; d < int64_t(shape.size()) - 2; ++d)
        if (shape[d] != 1)
          off += index[lead + d] * strides[d];
      return off;
    };
    MatmulPanel p;
    p.a = x.bytes() + offset(xs, xst) * es;
    p.ars = xst[xst.size() - 2];
    p.acs = xst.back();
    p.b = y.bytes() + offset(ys, yst) * es;
    p.brs = yst[yst.size() - 2];
    p.bcs = yst.back();
    p.c = out.bytes() + bi * M * N * es;
    p.ldc = std::max<int64_t>(N, 1);
    p.M = M;
    p.N = N;
    p.K = K;
    if (!gemm(p))
      return;
    for (int64_t d = batchRank - 1; d >= 0; --d) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
}

std::optional<int64_t> traceir::foldedRowStride(const Tensor &x) {
  // Inner to outer over every dim but the last, size-1 dims skipped (their
  // strides are arbitrary): each dim one stride apart from the rows inside.
  int64_t rowStride = 0, rows = 1;
  bool seen = false;
  for (int64_t d = x.rank() - 2; d >= 0; --d) {
    if (x.shape[d] == 1)
      continue;
    if (!seen)
      rowStride = x.strides[d];
    else if (x.strides[d] != rowStride * rows)
      return std::nullopt;
    seen = true;
    rows *= x.shape[d];
  }
  return rowStride;
}

PanelGather traceir::panelGather(Storage &src, Storage &dst, DType dtype,
                                 int64_t rows, int64_t cols, int64_t rs,
                                 int64_t cs) {
  PanelGather g;
  g.from.storage = &src;
  g.to.storage = &dst;
  g.from.dtype = g.to.dtype = dtype;
  g.from.shape = g.to.shape = {rows, cols};
  g.from.strides = {rs, cs};
  g.to.strides = {cols, 1};
  return g;
}

std::string traceir::matmulShapeError(const Tensor &x, const Tensor &y,
                                      const Tensor &out) {
  auto shapes = [&] {
    return shapeToString(x.shape) + " @ " + shapeToString(y.shape);
  };
  if (x.rank() == 0 || y.rank() == 0)
    return "both operands of a matrix product need a dim, got " + shapes();
  int64_t K = x.shape.back();
  int64_t Ky = y.rank() == 1 ? y.shape[0] : y.shape[y.rank() - 2];
  if (K != Ky)
    return "the inner dims of " + shapes() + " differ";
  // torch.matmul's result: the broadcast batch dims, then M and N for the
  // operands that have them.
  Shape xb(x.shape.begin(), x.shape.end() - std::min<int64_t>(x.rank(), 2));
  Shape yb(y.shape.begin(), y.shape.end() - std::min<int64_t>(y.rank(), 2));
  size_t rank = std::max(xb.size(), yb.size());
  Shape want(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i + xb.size() >= rank ? xb[i + xb.size() - rank] : 1;
    int64_t b = i + yb.size() >= rank ? yb[i + yb.size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      return "the batch dims of " + shapes() + " do not broadcast";
    want[i] = a == 1 ? b : a;
  }
  if (x.rank() > 1)
    want.push_back(x.shape[x.rank() - 2]);
  if (y.rank() > 1)
    want.push_back(y.shape.back());
  if (out.shape != want || out.dtype != x.dtype || !out.isContiguous())
    return "the result of " + shapes() + " is " + dtypeName(x.dtype) +
           shapeToString(want) + ", not " + dtypeName(out.dtype) +
           shapeToString(out.shape);
  return {};
}
