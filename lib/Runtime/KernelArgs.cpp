//===- KernelArgs.cpp - Reading scalar arguments in kernels ---------------===//

#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <algorithm>

using namespace traceir;

bool traceir::boolArg(KernelContext &ctx, unsigned i, bool dflt) {
  if (ctx.isNone(i))
    return dflt;
  const Scalar &s = ctx.scalar(i);
  return s.kind == Scalar::Kind::Bool ? s.b : s.i != 0;
}

double traceir::numberArg(KernelContext &ctx, unsigned i, double dflt) {
  return ctx.isNone(i) ? dflt : ctx.scalar(i).number();
}

bool traceir::outputMask(KernelContext &ctx, unsigned i, bool mask[3]) {
  mask[0] = mask[1] = mask[2] = true;
  if (ctx.isNone(i))
    return true;
  const Scalar &s = ctx.scalar(i);
  std::vector<bool> vals;
  if (s.kind == Scalar::Kind::IntList)
    for (int64_t v : s.ints)
      vals.push_back(v != 0);
  if (vals.size() != 3) {
    ctx.fail("output_mask must be a list of three bools");
    return false;
  }
  std::copy(vals.begin(), vals.end(), mask);
  return true;
}

bool traceir::checkResultShape(KernelContext &ctx, unsigned r,
                               std::span<const int64_t> shape) {
  const Shape &have = ctx.result(r).shape;
  if (std::equal(have.begin(), have.end(), shape.begin(), shape.end()))
    return true;
  ctx.fail("result #" + strCat(r) + " is " + shapeToString(have) +
           ", but the op computes " + shapeToString(shape));
  return false;
}

bool traceir::checkReducedResult(KernelContext &ctx, const Tensor &in,
                                 const std::vector<bool> &reduced,
                                 const Tensor &out) {
  int64_t kept = 1;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (!reduced[d])
      kept *= in.shape[d];
  if (out.numel() == kept)
    return true;
  ctx.fail("the result " + shapeToString(out.shape) + " does not hold the " +
           strCat(kept) + " sums of " + shapeToString(in.shape));
  return false;
}

bool traceir::reductionArgs(KernelContext &ctx, const Tensor &in,
                            const Tensor &out, DimArg form, bool needsElement,
                            std::vector<bool> &reduced) {
  if (!decodeArgs(ctx, decodeReducedDims, 1u, in.rank(), form, reduced) ||
      !checkReducedResult(ctx, in, reduced, out))
    return false;
  std::string why;
  if (!needsElement || checkReducedNonEmpty(in.shape, reduced, why))
    return true;
  ctx.fail(why);
  return false;
}

bool traceir::varCorrection(KernelContext &ctx, double &correction) {
  return decodeArgs(ctx, readNumber, 2u, "correction", correction,
                    std::optional<double>(1.0));
}

bool traceir::cumsumArgs(KernelContext &ctx, int64_t &dim) {
  const Tensor &in = ctx.tensor(0);
  if (!decodeArgs(ctx, readInt, 1u, "dim", dim, std::optional<int64_t>()))
    return false;
  int64_t r = std::max<int64_t>(in.rank(), 1);
  if (dim < -r || dim >= r) {
    ctx.fail("dim " + strCat(dim) + " is out of range for a tensor of rank " +
             strCat(in.rank()));
    return false;
  }
  if (dim < 0)
    dim += r;
  return checkResultShape(ctx, 0, in.shape);
}

bool traceir::arangeArgs(KernelContext &ctx, ArangeArgs &a) {
  DType dt = ctx.result(0).dtype;
  if (dt == DType::Bool) {
    ctx.fail("arange has no bool kernel");
    return false;
  }
  ArangeKind kind = dt == DType::I64      ? ArangeKind::Int64
                    : isFloatingDType(dt) ? ArangeKind::Floating
                                          : ArangeKind::Integer;
  int64_t size[1];
  if (!decodeArgs(ctx, decodeArange, kind, a))
    return false;
  size[0] = a.size;
  return checkResultShape(ctx, 0, size);
}

bool traceir::valuesIndicesArgs(KernelContext &ctx) {
  if (ctx.numResults() != 2) {
    ctx.fail("the call has " + strCat(ctx.numResults()) +
             " results, but the op returns two (values, indices)");
    return false;
  }
  if (ctx.isNone(1)) {
    ctx.fail("argument #1 (dim) must be an int");
    return false;
  }
  return true;
}

bool traceir::sortArgs(KernelContext &ctx, bool topk, SortRows &L) {
  const Tensor &in = ctx.tensor(0);
  SortArgs a;
  if (!decodeArgs(ctx, decodeSort, in.shape, topk, a))
    return false;
  if (ctx.numResults() != 2) {
    ctx.fail("the call has " + strCat(ctx.numResults()) +
             " results, but the op returns two (values, indices)");
    return false;
  }
  Shape shape = in.shape;
  if (in.rank() > 0)
    shape[a.dim] = a.k;
  if (!checkResultShape(ctx, 0, shape) || !checkResultShape(ctx, 1, shape))
    return false;
  const Tensor &values = ctx.result(0), &indices = ctx.result(1);
  if (values.dtype != in.dtype || indices.dtype != DType::I64) {
    ctx.fail("the results must be self's dtype and int64");
    return false;
  }
  if (in.rank() > kRdMaxRank) {
    ctx.fail("tensors of rank " + strCat(in.rank()) +
             " are not supported here (at most " + strCat(kRdMaxRank) + ")");
    return false;
  }
  // The kept dims: every one but dim.
  L = SortRows();
  auto split = [&](const Tensor &t, RdGroups &g) {
    g.offset = t.offset;
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (d == a.dim)
        continue;
      g.keptShape[g.keptRank] = t.shape[d];
      g.keptStrides[g.keptRank++] = t.strides[d];
      g.numKept *= t.shape[d];
    }
  };
  split(in, L.in);
  split(values, L.out);
  L.n = in.rank() ? in.shape[a.dim] : 1;
  L.stride = in.rank() ? in.strides[a.dim] : 0;
  L.outStride = in.rank() ? values.strides[a.dim] : 0;
  L.k = a.k;
  L.data = static_cast<const char *>(in.storage->data);
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.floating = isFloatingDType(in.dtype);
  L.descending = a.descending;
  L.sorted = a.sorted;
  // values and indices: fresh and contiguous, each from its own start.
  L.out.offset = 0;
  L.values = values.bytes();
  L.valuesDtype = static_cast<int32_t>(values.dtype);
  L.indices = indices.bytes();
  return true;
}

bool traceir::randomResult(KernelContext &ctx) {
  if (isFloatingDType(ctx.result(0).dtype))
    return true;
  ctx.fail("draws floating point values, got dtype " +
           std::string(dtypeName(ctx.result(0).dtype)));
  return false;
}

bool traceir::randpermArgs(KernelContext &ctx, int64_t &n) {
  const Tensor &out = ctx.result(0);
  n = ctx.isNone(0) ? -1 : ctx.scalar(0).i;
  if (out.rank() != 1 || out.shape[0] != n || n < 0) {
    ctx.fail("n = " + strCat(n) +
             " must be non-negative and the result [n], "
             "got " +
             shapeToString(out.shape));
    return false;
  }
  static const RandpermDtype kinds[] = {
      RandpermDtype::F32,  RandpermDtype::F64, RandpermDtype::F16,
      RandpermDtype::BF16, RandpermDtype::I64, RandpermDtype::I32,
      RandpermDtype::I16,  RandpermDtype::I8,  RandpermDtype::U8};
  if (out.dtype == DType::Bool) {
    ctx.fail("randperm has no bool kernel");
    return false;
  }
  RandpermDtype kind = kinds[static_cast<int>(out.dtype)];
  if (n > randpermMaxN(kind)) {
    ctx.fail("n = " + strCat(n) + " is too large for dtype " +
             randpermDtypeName(kind) + " (at most " +
             strCat(randpermMaxN(kind)) + ")");
    return false;
  }
  return true;
}

bool traceir::catArgs(KernelContext &ctx, unsigned &n, int64_t &dim) {
  const Tensor &out = ctx.result(0);
  n = 0;
  while (ctx.isTensor(n))
    ++n;
  int64_t rank = out.rank(), d = ctx.isNone(n) ? 0 : ctx.scalar(n).i;
  if (rank == 0 || d < -rank || d >= rank) {
    ctx.fail("dim " + strCat(d) + " is out of range for rank " + strCat(rank));
    return false;
  }
  dim = d < 0 ? d + rank : d;
  int64_t total = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Tensor &t = ctx.tensor(i);
    if (t.rank() == 1 && t.shape[0] == 0 && rank != 1)
      continue; // legacy empty tensors are skipped, as in PyTorch
    bool fits = t.rank() == rank;
    for (int64_t k = 0; fits && k < rank; ++k)
      fits = k == dim || t.shape[k] == out.shape[k];
    if (!fits) {
      ctx.fail("input #" + strCat(i) + " " + shapeToString(t.shape) +
               " does not fit the result " + shapeToString(out.shape) +
               " along dim " + strCat(dim));
      return false;
    }
    total += t.shape[dim];
  }
  if (total != out.shape[dim]) {
    ctx.fail("the inputs add up to " + strCat(total) + " along dim " +
             strCat(dim) + ", the result has " + strCat(out.shape[dim]));
    return false;
  }
  return true;
}
