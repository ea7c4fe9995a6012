//===- Reductions.cpp - Host side of the reductions and softmax on CUDA ---===//
//
// Reads the arguments as CPU/Reductions.cpp does, splits the input around
// the reduced dims (any strides) and launches Reductions.cu. At the
// optimized tier, softmax and log_softmax over the last dim of contiguous
// tensors run the typed row kernel instead (TypedRows.h).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

using namespace traceir;

namespace {
/// Splits `t` around the dims marked in `reduced` (see RdGroups); false
/// when the kept or the reduced dims number more than kRdMaxRank.
bool splitGroups(const Tensor &t, const std::vector<bool> &reduced,
                 RdGroups &g) {
  g = RdGroups();
  g.offset = t.offset;
  for (int64_t d = 0; d < t.rank(); ++d) {
    int32_t &rank = reduced[d] ? g.redRank : g.keptRank;
    if (rank == kRdMaxRank)
      return false;
    (reduced[d] ? g.redShape : g.keptShape)[rank] = t.shape[d];
    (reduced[d] ? g.redStrides : g.keptStrides)[rank] = t.strides[d];
    (reduced[d] ? g.numRed : g.numKept) *= t.shape[d];
    ++rank;
  }
  return true;
}

void failRank(KernelContext &ctx, const Tensor &t) {
  ctx.fail("tensors of rank " + strCat(t.rank()) +
           " are not supported on CUDA here (at most " + strCat(kRdMaxRank) +
           " kept and " + strCat(kRdMaxRank) + " reduced dims)");
}

void failLaunch(KernelContext &ctx, std::string_view what, const char *err) {
  ctx.fail(std::string(what) + " kernel failed on CUDA: " + err);
}

/// `withValues`: max.dim/min.dim, argmax/argmin's `kind` with the values
/// as result 0 before the positions.
void reduce(KernelContext &ctx, RdKind kind, std::string_view name,
            bool withValues = false) {
  const Tensor &in = ctx.tensor(0);
  if (withValues && !valuesIndicesArgs(ctx))
    return;
  Tensor &out = ctx.result(withValues ? 1 : 0);
  bool arg = kind == RdKind::ArgMax || kind == RdKind::ArgMin;
  DimArg form = kind == RdKind::Prod || arg ? DimArg::One
                : kind == RdKind::Any       ? DimArg::ListEmptyMarksNone
                                            : DimArg::List;
  std::vector<bool> reduced;
  ReduceLaunch L;
  if (!reductionArgs(ctx, in, out, form,
                     kind == RdKind::Max || kind == RdKind::Min || arg,
                     reduced) ||
      (kind == RdKind::Var && !varCorrection(ctx, L.correction)))
    return;
  if (kind == RdKind::Var && !isFloatingDType(out.dtype))
    return ctx.fail("var needs a floating point result, got " +
                    std::string(dtypeName(out.dtype)));
  if (withValues) {
    if (!checkResultShape(ctx, 0, out.shape))
      return;
    L.values = ctx.result(0).bytes();
    L.valuesDtype = static_cast<int32_t>(ctx.result(0).dtype);
  }
  if (!splitGroups(in, reduced, L.in))
    return failRank(ctx, in);
  L.kind = kind;
  L.data = static_cast<const char *>(in.storage->data);
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.integer = !isFloatingDType(out.dtype) && kind != RdKind::Mean;
  L.floatInput = isFloatingDType(in.dtype);
  if (arg)
    L.integer = !L.floatInput; // how the values compare
  if (const char *err = launchReduceCUDA(L))
    failLaunch(ctx, name, err);
}

/// softmax/log_softmax along one dim; out has in's shape (contiguous).
void softmaxImpl(KernelContext &ctx, bool log) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  int64_t dim = views::wrapDim(ctx.scalar(1).i, in.rank());
  std::vector<bool> reduced(in.rank(), false);
  if (in.rank() > 0) {
    if (dim < 0 || dim >= in.rank())
      return ctx.fail("dim " + strCat(ctx.scalar(1).i) +
                      " is out of range for rank " + strCat(in.rank()));
    reduced[dim] = true;
  }
  if (!checkResultShape(ctx, 0, in.shape))
    return;
  // The optimized tier: contiguous rows along the last dim, one floating
  // dtype (TypedRows.h).
  if (optimizedTierEnabled() && in.rank() > 0 && dim == in.rank() - 1 &&
      in.dtype == out.dtype && isFloatingDType(in.dtype) && in.isContiguous() &&
      out.isContiguous()) {
    SoftmaxRowsPlan p;
    p.in = in.bytes();
    p.out = out.bytes();
    p.dtype = static_cast<int32_t>(in.dtype);
    p.n = in.shape.back();
    p.rows = p.n == 0 ? 0 : in.numel() / p.n;
    p.log = log;
    p.vec = softmaxRowsVectorWidth(p);
    if (const char *err = launchSoftmaxRowsCUDA(p))
      return failLaunch(ctx, log ? "log_softmax" : "softmax", err);
    ctx.ranTier(KernelTier::Optimized);
    return;
  }
  SoftmaxLaunch L;
  if (!splitGroups(in, reduced, L.in) || !splitGroups(out, reduced, L.out))
    return failRank(ctx, in);
  L.data = static_cast<const char *>(in.storage->data);
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.outData = static_cast<char *>(out.storage->data);
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.log = log;
  if (const char *err = launchSoftmaxCUDA(L))
    failLaunch(ctx, log ? "log_softmax" : "softmax", err);
}
} // namespace

void cuda::sum(KernelContext &ctx) { reduce(ctx, RdKind::Sum, "sum"); }
void cuda::mean(KernelContext &ctx) { reduce(ctx, RdKind::Mean, "mean"); }
void cuda::amax(KernelContext &ctx) { reduce(ctx, RdKind::Max, "amax"); }
void cuda::amin(KernelContext &ctx) { reduce(ctx, RdKind::Min, "amin"); }
void cuda::prod(KernelContext &ctx) { reduce(ctx, RdKind::Prod, "prod"); }
void cuda::any(KernelContext &ctx) { reduce(ctx, RdKind::Any, "any"); }
void cuda::var(KernelContext &ctx) { reduce(ctx, RdKind::Var, "var"); }
void cuda::argmax(KernelContext &ctx) { reduce(ctx, RdKind::ArgMax, "argmax"); }
void cuda::argmin(KernelContext &ctx) { reduce(ctx, RdKind::ArgMin, "argmin"); }
void cuda::max(KernelContext &ctx) { reduce(ctx, RdKind::ArgMax, "max", true); }
void cuda::min(KernelContext &ctx) { reduce(ctx, RdKind::ArgMin, "min", true); }
void cuda::softmax(KernelContext &ctx) { softmaxImpl(ctx, false); }
void cuda::log_softmax(KernelContext &ctx) { softmaxImpl(ctx, true); }

/// cumsum and cumprod along one dim, as CPU/Reductions.cpp.
static void scan(KernelContext &ctx, bool product) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  int64_t dim;
  if (!cumsumArgs(ctx, dim))
    return;
  std::vector<bool> reduced(in.rank(), false);
  if (in.rank() > 0)
    reduced[dim] = true;
  CumsumLaunch L;
  if (!splitGroups(in, reduced, L.in) || !splitGroups(out, reduced, L.out))
    return failRank(ctx, in);
  L.data = static_cast<const char *>(in.storage->data);
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.outData = static_cast<char *>(out.storage->data);
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.integer = !isFloatingDType(out.dtype);
  L.product = product;
  if (const char *err = launchCumsumCUDA(L))
    failLaunch(ctx, product ? "cumprod" : "cumsum", err);
}
void cuda::cumsum(KernelContext &ctx) { scan(ctx, false); }
void cuda::cumprod(KernelContext &ctx) { scan(ctx, true); }

/// grad - exp(output) * sum(grad) along dim, as CPU/Reductions.cpp.
void cuda::_log_softmax_backward_data(KernelContext &ctx) {
  const Tensor &g = ctx.tensor(0), &o = ctx.tensor(1);
  Tensor &res = ctx.result(0);
  int64_t dim;
  if (!logSoftmaxBackwardArgs(ctx, dim) || !checkResultShape(ctx, 0, g.shape))
    return;
  std::vector<bool> reduced(g.rank(), false);
  if (g.rank() > 0)
    reduced[dim] = true;
  SoftmaxLaunch L;
  if (!splitGroups(o, reduced, L.in) || !splitGroups(res, reduced, L.out) ||
      !splitGroups(g, reduced, L.grad))
    return failRank(ctx, g);
  L.data = static_cast<const char *>(o.storage->data);
  L.inDtype = static_cast<int32_t>(o.dtype);
  L.outData = static_cast<char *>(res.storage->data);
  L.outDtype = static_cast<int32_t>(res.dtype);
  L.gradData = static_cast<const char *>(g.storage->data);
  L.gradDtype = static_cast<int32_t>(g.dtype);
  if (const char *err = launchLogSoftmaxBackwardCUDA(L))
    failLaunch(ctx, "_log_softmax_backward_data", err);
}
