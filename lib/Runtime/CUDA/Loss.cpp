//===- Loss.cpp - nll_loss and cross_entropy on CUDA ----------------------===//
//
// The host half of Loss.cu, with lib/Runtime/CPU/Loss.cpp's semantics and
// error messages. The input is [N, C, d1, ...] (class dim 1) or [C] (class
// dim 0); each of the N * d1 * ... positions has one class index (or, for
// cross_entropy, a row of class probabilities shaped like the input). The
// input and a probability target are read in their dtype (gathered when
// strided), class indices as i64, the weight as f64; everything is computed
// in f64 and rounded once. An out-of-range class index is found on the
// device and recorded in the run's error record (DeviceErrorLaunch.h), which
// the run reads at its end: no call waits.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <string>

using namespace traceir;
using namespace traceir::cuda;

namespace {
/// The kernels skip a position whose class index is out of range and
/// atomicMin it into the error record's `pending`; the commit queued after
/// them records the first such index for the run's end (no wait). Returns
/// the `pending` the kernels write.
unsigned long long *badPositionOf(KernelContext &ctx) {
  return &ctx.deviceErrors().record->pending;
}

/// Queues the commit of the kernels' first bad position among `positions`
/// class indices.
void commitBadTarget(KernelContext &ctx, const char *op, const int64_t *indices,
                     int64_t positions) {
  DeviceErrorCommit commit;
  commit.slot = ctx.deviceErrors();
  commit.code = static_cast<int32_t>(DeviceErrorCode::Target);
  commit.src[0] = deviceErrorSource(indices, I64, positions);
  if (const char *err = launchDeviceErrorCommit(commit))
    ctx.fail(strCat(op) + " kernel failed on CUDA: " + err);
}

void lossImpl(KernelContext &ctx, bool crossEntropy) {
  const char *op = crossEntropy ? "cross_entropy" : "nll_loss";
  const Tensor &x = ctx.tensor(0), &target = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  LossArgs a;
  if (!lossArgs(ctx, a))
    return;
  Reduction reduction = a.reduction;
  int64_t N = a.N, C = a.C, S = a.S;
  LossLaunch L;
  bool ok = true;
  if (ctx.isTensor(2)) {
    L.w = nn::optF64(ctx, 2, ok);
    if (!ok)
      return;
  }
  double smoothing;
  if (!labelSmoothingArg(ctx, crossEntropy, smoothing))
    return;
  L.x = nn::gatherDense(ctx, x, ok);
  if (!ok)
    return;
  bool probabilities =
      crossEntropy && ewIsFloating(static_cast<int32_t>(target.dtype));
  if (probabilities) {
    L.probs = nn::gatherDense(ctx, target, ok);
    if (!ok)
      return;
    // The mean divides by the number of positions (NaN for an empty input).
    L.probDenominator = x.numel() == 0 ? 0.0 : static_cast<double>(N * S);
  } else {
    if (!classIndexTarget(ctx, target))
      return;
    L.ignore = ignoreIndexArg(ctx);
    L.indices = reinterpret_cast<const int64_t *>(
        nn::gatherAs(ctx, target, DType::I64));
    if (!L.indices)
      return;
    L.badPosition = badPositionOf(ctx);
  }
  int64_t P = N * S;
  L.loss = nn::newF64(ctx, P);
  L.den = nn::newF64(ctx, P);
  if (!L.loss || !L.den)
    return;
  L.N = N;
  L.C = C;
  L.S = S;
  L.crossEntropy = crossEntropy;
  L.smoothing = smoothing;
  L.reduction = static_cast<int32_t>(reduction);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  // nll_loss_forward's total_weight: the mean's divisor, written by the
  // kernels (an unbatched input: its one target's weight whatever the
  // reduction). A batch with reduction none leaves it 0, as PyTorch (zero
  // bits are 0 in every floating dtype).
  if (ctx.numResults() > 1) {
    Tensor &tw = ctx.result(1);
    if (reduction == Reduction::None && x.rank() == 2) {
      if (!nn::zeroFill(ctx, tw, op))
        return;
    } else {
      L.totalWeight = tw.bytes();
    }
  }
  if (!nn::launched(ctx, launchLoss(L), op) || probabilities)
    return;
  commitBadTarget(ctx, op, L.indices, P);
}
} // namespace

/// nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
/// self holds log-probabilities [N, C] or [C].
void cuda::nll_loss(KernelContext &ctx) { lossImpl(ctx, false); }

/// cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100,
/// label_smoothing=0.0): log_softmax over the class dim, then nll_loss (for
/// class indices) or the probability-weighted sum (for a float target).
void cuda::cross_entropy(KernelContext &ctx) { lossImpl(ctx, true); }

/// nll_loss_forward(self, target, weight, reduction, ignore_index) ->
/// (output, total_weight).
void cuda::nll_loss_forward(KernelContext &ctx) { lossImpl(ctx, false); }

/// nll_loss_backward(grad_output, self, target, weight, reduction,
/// ignore_index, total_weight), with CPU/Loss.cpp's checks (NNArgs).
void cuda::nll_loss_backward(KernelContext &ctx) {
  const char *op = "nll_loss_backward";
  LossArgs a;
  if (!nllLossBackwardArgs(ctx, a))
    return;
  Tensor &out = ctx.result(0);
  NllBackwardLaunch L;
  bool ok = true;
  L.g = reinterpret_cast<const double *>(
      nn::gatherAs(ctx, ctx.tensor(0), DType::F64));
  L.tw = reinterpret_cast<const double *>(
      nn::gatherAs(ctx, ctx.tensor(6), DType::F64));
  L.indices = reinterpret_cast<const int64_t *>(
      nn::gatherAs(ctx, ctx.tensor(2), DType::I64));
  L.w = nn::optF64(ctx, 3, ok);
  if (!ok || !L.g || !L.tw || !L.indices || !nn::zeroFill(ctx, out, op))
    return;
  L.badPosition = badPositionOf(ctx);
  L.N = a.N;
  L.C = a.C;
  L.S = a.S;
  L.ignore = ignoreIndexArg(ctx, 5);
  L.reduction = static_cast<int32_t>(a.reduction);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  if (nn::launched(ctx, launchNllLossBackward(L), op))
    commitBadTarget(ctx, op, L.indices, a.N * a.S);
}
