//===- Reductions.cpp - Reductions, argmax, argmin, softmax ---------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <cmath>
#include <limits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// Splits `in` around the reduced dims: for every kept index, `visit`
/// receives the offsets (in elements) of the reduced elements' group.
/// Iterates kept and reduced index spaces with strides, so any view works.
template <typename F>
void forEachGroup(const Tensor &in, const std::vector<bool> &reduced, F visit) {
  Shape keptShape, keptStrides, redShape, redStrides;
  for (int64_t d = 0; d < in.rank(); ++d) {
    (reduced[d] ? redShape : keptShape).push_back(in.shape[d]);
    (reduced[d] ? redStrides : keptStrides).push_back(in.strides[d]);
  }
  auto count = [](const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s)
      n *= d;
    return n;
  };
  int64_t numKept = count(keptShape), numRed = count(redShape);
  std::vector<int64_t> redOffsets(numRed);
  {
    Shape idx(redShape.size(), 0);
    for (int64_t r = 0; r < numRed; ++r) {
      int64_t off = 0;
      for (size_t d = 0; d < redShape.size(); ++d)
        off += idx[d] * redStrides[d];
      redOffsets[r] = off;
      for (int64_t d = int64_t(redShape.size()) - 1; d >= 0; --d) {
        if (++idx[d] < redShape[d])
          break;
        idx[d] = 0;
      }
    }
  }
  Shape idx(keptShape.size(), 0);
  for (int64_t k = 0; k < numKept; ++k) {
    int64_t base = in.offset;
    for (size_t d = 0; d < keptShape.size(); ++d)
      base += idx[d] * keptStrides[d];
    visit(k, base, redOffsets);
    for (int64_t d = int64_t(keptShape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < keptShape[d])
        break;
      idx[d] = 0;
    }
  }
}

enum class Reduce { Sum, Mean, Max, Min, Prod, Any, Var };

/// Wrapping int64 arithmetic, as PyTorch's integer sum and prod overflow.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

void reduce(KernelContext &ctx, Reduce kind) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  bool extremum = kind == Reduce::Max || kind == Reduce::Min;
  DimArg form = kind == Reduce::Prod  ? DimArg::One
                : kind == Reduce::Any ? DimArg::ListEmptyMarksNone
                                      : DimArg::List;
  std::vector<bool> reduced;
  double correction = 1;
  if (!reductionArgs(ctx, in, out, form, extremum, reduced) ||
      (kind == Reduce::Var && !varCorrection(ctx, correction)))
    return;
  if (kind == Reduce::Var && !isFloating(out.dtype))
    return ctx.fail("var needs a floating point result, got " +
                    std::string(dtypeName(out.dtype)));
  const char *base = static_cast<const char *>(in.storage->data);
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype);
  bool integer = !isFloating(out.dtype);
  forEachGroup(
      in, reduced,
      [&](int64_t k, int64_t off, const std::vector<int64_t> &group) {
        if (kind == Reduce::Any) {
          // Each element is tested in its own dtype: 0.5 and NaN are
          // true.
          bool any = false;
          for (int64_t g = 0; g < int64_t(group.size()) && !any; ++g) {
            const char *p = base + (off + group[g]) * es;
            any = isFloating(in.dtype) ? loadDouble(p, in.dtype) != 0
                                       : loadInt(p, in.dtype) != 0;
          }
          storeInt(out.bytes() + k * os, out.dtype, any);
          return;
        }
        if (kind == Reduce::Var) {
          // Two passes (the mean, then the squared deviations from it), as
          // PyTorch's; n - correction at or below 0 divides by 0 (nan, inf).
          double n = static_cast<double>(group.size()), mean = 0, ss = 0;
          for (int64_t g : group)
            mean += loadDouble(base + (off + g) * es, in.dtype);
          mean /= n;
          for (int64_t g : group) {
            double d = loadDouble(base + (off + g) * es, in.dtype) - mean;
            ss += d * d;
          }
          storeDouble(out.bytes() + k * os, out.dtype,
                      ss / std::max(0.0, n - correction));
          return;
        }
        if (integer && kind != Reduce::Mean) {
          int64_t acc =
              kind == Reduce::Max    ? std::numeric_limits<int64_t>::min()
              : kind == Reduce::Min  ? std::numeric_limits<int64_t>::max()
              : kind == Reduce::Prod ? 1
                                     : 0;
          for (int64_t g : group) {
            int64_t v = loadInt(base + (off + g) * es, in.dtype);
            acc = kind == Reduce::Max    ? std::max(acc, v)
                  : kind == Reduce::Min  ? std::min(acc, v)
                  : kind == Reduce::Prod ? wrapMul(acc, v)
                                         : wrapAdd(acc, v);
          }
          storeInt(out.bytes() + k * os, out.dtype, acc);
          return;
        }
        double acc = kind == Reduce::Max    ? -INFINITY
                     : kind == Reduce::Min  ? INFINITY
                     : kind == Reduce::Prod ? 1.0
                                            : 0.0;
        bool nan = false;
        for (int64_t g : group) {
          double v = loadDouble(base + (off + g) * es, in.dtype);
          nan |= std::isnan(v);
          acc = kind == Reduce::Max    ? std::max(acc, v)
                : kind == Reduce::Min  ? std::min(acc, v)
                : kind == Reduce::Prod ? acc * v
                                       : acc + v;
        }
        if (extremum && nan)
          acc = NAN; // amax and amin propagate NaN, as PyTorch
        if (kind == Reduce::Mean)
          acc /= static_cast<double>(group.size());
        storeDouble(out.bytes() + k * os, out.dtype, acc);
      });
}

/// argmax/argmin: the position of each group's first extreme element,
/// row-major over the reduced dims (along `dim`, or in the flattened input
/// for dim=None); the first NaN is the extreme, as PyTorch's. Integers
/// compare as int64, exactly. max.dim/min.dim (`withValues`) also return
/// the extreme values, as result 0 before the positions.
void argReduce(KernelContext &ctx, bool isMax, bool withValues = false) {
  const Tensor &in = ctx.tensor(0);
  std::vector<bool> reduced;
  if (withValues && !valuesIndicesArgs(ctx))
    return;
  Tensor &out = ctx.result(withValues ? 1 : 0);
  if (!reductionArgs(ctx, in, out, DimArg::One, /*needsElement=*/true, reduced))
    return;
  Tensor *values = withValues ? &ctx.result(0) : nullptr;
  if (values && !checkResultShape(ctx, 0, out.shape))
    return;
  const char *base = static_cast<const char *>(in.storage->data);
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype),
         vs = values ? dtypeSize(values->dtype) : 0;
  bool floating = isFloating(in.dtype);
  forEachGroup(
      in, reduced,
      [&](int64_t k, int64_t off, const std::vector<int64_t> &group) {
        // reductionArgs saw every group hold an element.
        int64_t best = 0;
        if (floating) {
          double bv = loadDouble(base + (off + group[0]) * es, in.dtype);
          for (int64_t g = 1; g < int64_t(group.size()) && !std::isnan(bv);
               ++g) {
            double v = loadDouble(base + (off + group[g]) * es, in.dtype);
            if (std::isnan(v) || (isMax ? v > bv : v < bv)) {
              bv = v;
              best = g;
            }
          }
          if (values)
            storeDouble(values->bytes() + k * vs, values->dtype, bv);
        } else {
          int64_t bv = loadInt(base + (off + group[0]) * es, in.dtype);
          for (int64_t g = 1; g < int64_t(group.size()); ++g) {
            int64_t v = loadInt(base + (off + group[g]) * es, in.dtype);
            if (isMax ? v > bv : v < bv) {
              bv = v;
              best = g;
            }
          }
          if (values)
            storeInt(values->bytes() + k * vs, values->dtype, bv);
        }
        storeInt(out.bytes() + k * os, out.dtype, best);
      });
}

/// softmax/log_softmax along one dim: out has in's shape (contiguous).
void softmaxImpl(KernelContext &ctx, bool log) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  int64_t dim;
  if (!softmaxArgs(ctx, dim))
    return;
  std::vector<bool> reduced(in.rank(), false);
  if (in.rank() > 0)
    reduced[dim] = true;
  // The output is contiguous with in's shape: the same grouping applied to
  // its strides addresses the same elements.
  Tensor outView = out;
  const char *base = static_cast<const char *>(in.storage->data);
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype);
  std::vector<int64_t> outKeptBase;
  forEachGroup(outView, reduced,
               [&](int64_t, int64_t off, const std::vector<int64_t> &) {
                 outKeptBase.push_back(off);
               });
  int64_t outStride = in.rank() > 0 ? out.strides[dim] : 1;
  std::vector<double> vals;
  forEachGroup(
      in, reduced,
      [&](int64_t k, int64_t off, const std::vector<int64_t> &group) {
        vals.resize(group.size());
        double mx = -std::numeric_limits<double>::infinity();
        for (size_t g = 0; g < group.size(); ++g) {
          vals[g] = loadDouble(base + (off + group[g]) * es, in.dtype);
          mx = std::max(mx, vals[g]);
        }
        double sum = 0;
        for (double v : vals)
          sum += std::exp(v - mx);
        double logSum = std::log(sum);
        char *ob = static_cast<char *>(out.storage->data);
        for (size_t g = 0; g < group.size(); ++g) {
          double r = log ? vals[g] - mx - logSum : std::exp(vals[g] - mx) / sum;
          storeDouble(ob + (outKeptBase[k] + g * outStride) * os, out.dtype, r);
        }
      });
}
} // namespace

void cpu::sum(KernelContext &ctx) { reduce(ctx, Reduce::Sum); }
void cpu::mean(KernelContext &ctx) { reduce(ctx, Reduce::Mean); }
void cpu::amax(KernelContext &ctx) { reduce(ctx, Reduce::Max); }
void cpu::amin(KernelContext &ctx) { reduce(ctx, Reduce::Min); }
void cpu::prod(KernelContext &ctx) { reduce(ctx, Reduce::Prod); }
void cpu::any(KernelContext &ctx) { reduce(ctx, Reduce::Any); }
void cpu::var(KernelContext &ctx) { reduce(ctx, Reduce::Var); }
void cpu::argmax(KernelContext &ctx) { argReduce(ctx, true); }
void cpu::argmin(KernelContext &ctx) { argReduce(ctx, false); }
void cpu::max(KernelContext &ctx) { argReduce(ctx, true, true); }
void cpu::min(KernelContext &ctx) { argReduce(ctx, false, true); }
void cpu::softmax(KernelContext &ctx) { softmaxImpl(ctx, false); }
void cpu::log_softmax(KernelContext &ctx) { softmaxImpl(ctx, true); }

/// cumsum and cumprod along one dim: the running sums or products in int64
/// (wrapping) for an integer result, else in double, in order.
static void scan(KernelContext &ctx, bool product) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  int64_t dim;
  if (!cumsumArgs(ctx, dim))
    return;
  std::vector<bool> reduced(in.rank(), false);
  if (in.rank() > 0)
    reduced[dim] = true;
  // out has in's shape: the same grouping of its strides gives the groups
  // in the same order.
  std::vector<int64_t> outBase;
  forEachGroup(out, reduced,
               [&](int64_t, int64_t off, const std::vector<int64_t> &) {
                 outBase.push_back(off);
               });
  int64_t outStride = in.rank() > 0 ? out.strides[dim] : 1;
  const char *base = static_cast<const char *>(in.storage->data);
  char *ob = static_cast<char *>(out.storage->data);
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype);
  bool integer = !isFloating(out.dtype);
  forEachGroup(in, reduced,
               [&](int64_t k, int64_t off, const std::vector<int64_t> &group) {
                 int64_t accI = product ? 1 : 0;
                 double accD = product ? 1 : 0;
                 for (size_t g = 0; g < group.size(); ++g) {
                   const char *p = base + (off + group[g]) * es;
                   char *o = ob + (outBase[k] + int64_t(g) * outStride) * os;
                   if (integer) {
                     int64_t v = loadInt(p, in.dtype);
                     accI = product ? wrapMul(accI, v) : wrapAdd(accI, v);
                     storeInt(o, out.dtype, accI);
                   } else {
                     double v = loadDouble(p, in.dtype);
                     accD = product ? accD * v : accD + v;
                     storeDouble(o, out.dtype, accD);
                   }
                 }
               });
}
void cpu::cumsum(KernelContext &ctx) { scan(ctx, false); }
void cpu::cumprod(KernelContext &ctx) { scan(ctx, true); }

/// _log_softmax_backward_data(grad_output, output, dim, input_dtype):
/// grad - exp(output) * sum(grad) along dim, in f64.
void cpu::_log_softmax_backward_data(KernelContext &ctx) {
  const Tensor &g = ctx.tensor(0), &o = ctx.tensor(1);
  Tensor &res = ctx.result(0);
  int64_t dim;
  if (!logSoftmaxBackwardArgs(ctx, dim) || !checkResultShape(ctx, 0, g.shape))
    return;
  std::vector<bool> reduced(g.rank(), false);
  if (g.rank() > 0)
    reduced[dim] = true;
  // Every tensor has g's shape, so the groups come in the same order; only
  // their bases and the stride along dim differ.
  std::vector<int64_t> oBase, rBase;
  auto bases = [&](const Tensor &t, std::vector<int64_t> &b) {
    forEachGroup(t, reduced,
                 [&](int64_t, int64_t off, const std::vector<int64_t> &) {
                   b.push_back(off);
                 });
  };
  bases(o, oBase);
  bases(res, rBase);
  int64_t oStride = g.rank() > 0 ? o.strides[dim] : 1;
  int64_t rStride = g.rank() > 0 ? res.strides[dim] : 1;
  const char *gb = static_cast<const char *>(g.storage->data);
  const char *ob = static_cast<const char *>(o.storage->data);
  char *rb = static_cast<char *>(res.storage->data);
  size_t gs = dtypeSize(g.dtype), os = dtypeSize(o.dtype),
         rs = dtypeSize(res.dtype);
  std::vector<double> vals;
  forEachGroup(g, reduced,
               [&](int64_t k, int64_t off, const std::vector<int64_t> &group) {
                 vals.resize(group.size());
                 double sum = 0;
                 for (size_t i = 0; i < group.size(); ++i)
                   sum += vals[i] =
                       loadDouble(gb + (off + group[i]) * gs, g.dtype);
                 for (size_t i = 0; i < group.size(); ++i) {
                   double y =
                       loadDouble(ob + (oBase[k] + i * oStride) * os, o.dtype);
                   storeDouble(rb + (rBase[k] + i * rStride) * rs, res.dtype,
                               vals[i] - std::exp(y) * sum);
                 }
               });
}
