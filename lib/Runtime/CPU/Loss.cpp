//===- Loss.cpp - nll_loss and cross_entropy on the CPU -------------------===//
//
// The input is [N, C, d1, ...] (class dim 1) or [C] (class dim 0); each of
// the N * d1 * ... positions has one class index (or, for cross_entropy, a
// row of class probabilities shaped like the input). Inputs (any strides,
// any floating dtype) are gathered as f64 and everything is computed in
// f64, then rounded once. Semantics follow ATen's nll_loss / nll_loss_nd,
// cross_entropy_loss_label_smoothing and cross_entropy_loss_prob_target
// (aten/src/ATen/native/LossNLL.cpp).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// `t`'s elements as contiguous `dtype` (F64 or I64) in scratch (null after
/// a failure).
template <typename T>
const T *gatherTyped(KernelContext &ctx, const Tensor &t, DType dtype) {
  return static_cast<const T *>(gatherAs(ctx, t, dtype));
}

void lossImpl(KernelContext &ctx, bool crossEntropy) {
  const Tensor &x = ctx.tensor(0), &target = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  LossArgs a;
  if (!lossArgs(ctx, a))
    return;
  Reduction reduction = a.reduction;
  // Positions p = (n, s) and classes c: element (n, c, s) is at
  // (n * C + c) * S + s.
  int64_t C = a.C, S = a.S, P = a.N * S;
  auto at = [&](int64_t p, int64_t c) { return (p / S * C + c) * S + p % S; };
  const double *w = nullptr;
  if (ctx.isTensor(2)) {
    const Tensor &wt = ctx.tensor(2);
    if (!(w = gatherTyped<double>(ctx, wt, DType::F64)))
      return;
  }
  double smoothing;
  if (!labelSmoothingArg(ctx, crossEntropy, smoothing))
    return;
  const double *xd = gatherTyped<double>(ctx, x, DType::F64);
  if (!xd)
    return;
  // log-probabilities: the input itself for nll_loss, its log_softmax over
  // the class dim for cross_entropy.
  const double *logp = xd;
  if (crossEntropy) {
    auto *lp = static_cast<double *>(ctx.scratch(x.numel(), sizeof(double)));
    if (!lp)
      return;
    for (int64_t p = 0; p < P; ++p) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t c = 0; c < C; ++c)
        mx = std::max(mx, xd[at(p, c)]);
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(xd[at(p, c)] - mx);
      double logSum = std::log(sum);
      for (int64_t c = 0; c < C; ++c)
        lp[at(p, c)] = xd[at(p, c)] - mx - logSum;
    }
    logp = lp;
  }
  auto *loss = static_cast<double *>(ctx.scratch(P, sizeof(double)));
  if (!loss)
    return;
  double total = 0, denominator = 0;
  if (crossEntropy && isFloating(target.dtype)) {
    // Class probabilities, smoothed towards uniform; the mean divides by
    // the number of positions (NaN for an empty input).
    const double *t = gatherTyped<double>(ctx, target, DType::F64);
    if (!t)
      return;
    for (int64_t p = 0; p < P; ++p) {
      double l = 0;
      for (int64_t c = 0; c < C; ++c) {
        double tc = t[at(p, c)];
        if (smoothing > 0)
          tc = tc * (1 - smoothing) + smoothing / C;
        l -= logp[at(p, c)] * tc * (w ? w[c] : 1.0);
      }
      loss[p] = l;
      total += l;
    }
    denominator = x.numel() == 0 ? 0.0 : static_cast<double>(P);
  } else {
    if (!classIndexTarget(ctx, target))
      return;
    int64_t ignore = ignoreIndexArg(ctx);
    const int64_t *t = gatherTyped<int64_t>(ctx, target, DType::I64);
    if (!t)
      return;
    // (1 - eps) * nll + eps / C * smooth, where smooth is the weighted
    // mean of -logp over the classes; ignored positions count nothing, and
    // the mean divides by the summed weight of the counted targets.
    for (int64_t p = 0; p < P; ++p) {
      int64_t k = t[p];
      if (k == ignore) {
        loss[p] = 0;
        continue;
      }
      if (k < 0 || k >= C)
        return ctx.fail(
            deviceErrorMessage(deviceError(DeviceErrorCode::Target, k, 0)));
      double wk = w ? w[k] : 1.0;
      double l = -wk * logp[at(p, k)];
      if (smoothing > 0) {
        double smooth = 0;
        for (int64_t c = 0; c < C; ++c)
          smooth -= logp[at(p, c)] * (w ? w[c] : 1.0);
        l = (1 - smoothing) * l + smoothing / C * smooth;
      }
      loss[p] = l;
      total += l;
      denominator += wk;
    }
  }
  size_t os = dtypeSize(out.dtype);
  switch (reduction) {
  case Reduction::None:
    for (int64_t p = 0; p < P; ++p)
      storeDouble(out.bytes() + p * os, out.dtype, loss[p]);
    break;
  case Reduction::Sum:
    storeDouble(out.bytes(), out.dtype, total);
    break;
  case Reduction::Mean:
    // 0 / 0 is NaN, as PyTorch when every target is ignored.
    storeDouble(out.bytes(), out.dtype, total / denominator);
    break;
  }
  // nll_loss_forward's total_weight: the mean's divisor. PyTorch leaves it
  // 0 for a batch with reduction none; an unbatched input is its one
  // target's weight whatever the reduction.
  if (ctx.numResults() > 1) {
    Tensor &tw = ctx.result(1);
    bool batchNone = reduction == Reduction::None && x.rank() == 2;
    storeDouble(tw.bytes(), tw.dtype, batchNone ? 0.0 : denominator);
  }
}
} // namespace

/// nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
/// self holds log-probabilities [N, C] or [C].
void cpu::nll_loss(KernelContext &ctx) { lossImpl(ctx, false); }

/// cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100,
/// label_smoothing=0.0): log_softmax over the class dim, then nll_loss (for
/// class indices) or the probability-weighted sum (for a float target).
void cpu::cross_entropy(KernelContext &ctx) { lossImpl(ctx, true); }

/// nll_loss_forward(self, target, weight, reduction, ignore_index) ->
/// (output, total_weight): nll_loss plus the summed weight of the counted
/// targets.
void cpu::nll_loss_forward(KernelContext &ctx) { lossImpl(ctx, false); }

/// nll_loss_backward(grad_output, self, target, weight, reduction,
/// ignore_index, total_weight): -weight[t] * grad (over total_weight for
/// the mean) at each counted position's target class, zero elsewhere.
void cpu::nll_loss_backward(KernelContext &ctx) {
  LossArgs a;
  if (!nllLossBackwardArgs(ctx, a))
    return;
  const Tensor &target = ctx.tensor(2);
  Tensor &out = ctx.result(0);
  int64_t C = a.C, S = a.S, P = a.N * S;
  const double *g = gatherF64(ctx, ctx.tensor(0));
  const double *tw = gatherF64(ctx, ctx.tensor(6));
  const int64_t *t = gatherTyped<int64_t>(ctx, target, DType::I64);
  const double *w = ctx.isTensor(3)
                        ? gatherTyped<double>(ctx, ctx.tensor(3), DType::F64)
                        : nullptr;
  if (!g || !tw || !t || (ctx.isTensor(3) && !w))
    return;
  int64_t ignore = ignoreIndexArg(ctx, 5);
  size_t os = dtypeSize(out.dtype);
  std::memset(out.bytes(), 0, out.nbytes());
  for (int64_t p = 0; p < P; ++p) {
    int64_t k = t[p];
    if (k == ignore)
      continue;
    if (k < 0 || k >= C)
      return ctx.fail(
          deviceErrorMessage(deviceError(DeviceErrorCode::Target, k, 0)));
    double grad = a.reduction == Reduction::None ? g[p] : g[0];
    if (a.reduction == Reduction::Mean)
      grad /= tw[0];
    storeDouble(out.bytes() + ((p / S * C + k) * S + p % S) * os, out.dtype,
                -(w ? w[k] : 1.0) * grad);
  }
}
