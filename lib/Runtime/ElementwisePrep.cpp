//===- ElementwisePrep.cpp - Building elementwise launches ----------------===//

#include "TraceIR/Runtime/ElementwiseKernels.h"

using namespace traceir;

bool traceir::prepareElementwise(KernelContext &ctx, EwOp op, unsigned n,
                                 const Tensor &out, EwLaunch &L) {
  if (out.rank() > kEwMaxRank) {
    ctx.fail("elementwise ops support tensors of rank up to " +
             strCat(kEwMaxRank) + ", got " + strCat(out.rank()));
    return false;
  }
  // Type inference guarantees what follows in a verified graph; a saved
  // executable is not one, and the strides below read each operand as its
  // broadcast to `out`.
  if (ctx.numArgs() < n) {
    ctx.fail("takes " + strCat(n) + " arguments, got " + strCat(ctx.numArgs()));
    return false;
  }
  for (unsigned i = 0; i < n; ++i) {
    if (!ctx.isTensor(i))
      continue;
    const Tensor &t = ctx.tensor(i);
    bool broadcasts = t.rank() <= out.rank();
    for (int64_t d = 0; broadcasts && d < t.rank(); ++d)
      broadcasts =
          t.shape[d] == 1 || t.shape[d] == out.shape[out.rank() - t.rank() + d];
    if (!broadcasts) {
      ctx.fail("argument #" + strCat(i) + " of shape " +
               shapeToString(t.shape) + " does not broadcast to the result's " +
               shapeToString(out.shape));
      return false;
    }
  }
  L.op = op;
  L.rank = out.rank();
  L.numel = out.numel();
  for (int64_t d = 0; d < out.rank(); ++d) {
    L.shape[d] = out.shape[d];
    L.outStrides[d] = out.strides[d];
  }
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.numOperands = n;
  // Integer math only when every operand and the result are integers or
  // bools (a comparison of floats has a bool result but float operands).
  L.floating = ewIsFloating(L.outDtype);
  for (unsigned i = 0; i < n; ++i) {
    EwOperand &o = L.in[i];
    if (ctx.isTensor(i)) {
      const Tensor &t = ctx.tensor(i);
      o.data = t.bytes();
      o.dtype = static_cast<int32_t>(t.dtype);
      int64_t off = out.rank() - t.rank();
      for (int64_t d = 0; d < t.rank(); ++d)
        o.strides[off + d] = t.shape[d] == 1 ? 0 : t.strides[d];
      L.floating |= ewIsFloating(o.dtype);
    } else {
      const Scalar &s = ctx.scalar(i);
      o.number = s.number();
      // A float scalar makes the launch floating, so its integer form is
      // never read; a float int64 cannot hold would convert undefined.
      bool fits = s.f >= -0x1p63 && s.f < 0x1p63;
      o.integer = s.kind == Scalar::Kind::Float  ? (fits ? int64_t(s.f) : 0)
                  : s.kind == Scalar::Kind::Bool ? s.b
                                                 : s.i;
      L.floating |= s.kind == Scalar::Kind::Float;
    }
  }
  if (op == EwOp::Copy)
    L.operandIndex = n - 1; // clone copies argument 0; copy_/fill_ argument 1
  if (op == EwOp::Pow && L.floating && n == 2 && ctx.isTensor(0) &&
      !ctx.isTensor(1))
    powByNumber(L);
  return true;
}

void traceir::powByNumber(EwLaunch &L) {
  // What ATen's pow(Tensor, Scalar) does with these exponents, on every
  // device: its results differ from pow's at the edges (pow(-0.0, 0.5) is
  // +0.0 and pow(-inf, 0.5) is +inf, where sqrt gives -0.0 and NaN), and
  // PyTorch is the oracle. x * x for 2 is pow's own correctly rounded
  // square. (ATen also writes 3 and -2 as products, which round twice:
  // within an ulp of pow, and left to pow here.)
  const double e = L.in[1].number;
  EwOp to;
  if (e == 1)
    to = EwOp::Copy;
  else if (e == 0.5)
    to = EwOp::Sqrt;
  else if (e == -0.5)
    to = EwOp::Rsqrt;
  else if (e == -1)
    to = EwOp::Reciprocal;
  else if (e == 2)
    to = EwOp::Mul;
  else
    return;
  L.op = to;
  if (to == EwOp::Mul) {
    L.in[1] = L.in[0];
    return;
  }
  L.numOperands = 1;
  L.operandIndex = 0;
}
