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

bool traceir::pairArg(KernelContext &ctx, unsigned i, const char *what,
                      const int64_t dflt[2], int64_t out[2],
                      bool emptyIsDefault) {
  if (ctx.isNone(i) ||
      (emptyIsDefault && ctx.scalar(i).kind == Scalar::Kind::IntList &&
       ctx.scalar(i).ints.empty())) {
    out[0] = dflt[0];
    out[1] = dflt[1];
    return true;
  }
  const Scalar &s = ctx.scalar(i);
  if ((s.kind != Scalar::Kind::Int && s.kind != Scalar::Kind::IntList) ||
      s.ints.empty() || s.ints.size() > 2) {
    ctx.fail(strCat(what) + " must be an int or a pair of ints");
    return false;
  }
  out[0] = s.ints[0];
  out[1] = s.ints.size() == 2 ? s.ints[1] : s.ints[0];
  return true;
}

bool traceir::reductionArg(KernelContext &ctx, unsigned i, Reduction &r) {
  r = Reduction::Mean;
  if (ctx.isNone(i))
    return true;
  const Scalar &s = ctx.scalar(i);
  int64_t v = -1;
  if (s.kind == Scalar::Kind::String)
    v = s.s == "none" ? 0 : s.s == "mean" ? 1 : s.s == "sum" ? 2 : -1;
  else if (s.kind == Scalar::Kind::Int)
    v = s.i;
  if (v < 0 || v > 2) {
    ctx.fail("reduction must be 0/'none', 1/'mean' or 2/'sum'");
    return false;
  }
  r = static_cast<Reduction>(v);
  return true;
}

std::vector<bool> traceir::reducedDimsArg(KernelContext &ctx, unsigned i,
                                          const Tensor &in) {
  std::vector<bool> reduced(in.rank(), false);
  if (ctx.isNone(i) || ctx.scalar(i).ints.empty()) {
    reduced.assign(in.rank(), true);
    return reduced;
  }
  for (int64_t d : ctx.scalar(i).ints) {
    int64_t w = views::wrapDim(d, in.rank());
    if (w >= 0 && w < in.rank())
      reduced[w] = true;
  }
  return reduced;
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
