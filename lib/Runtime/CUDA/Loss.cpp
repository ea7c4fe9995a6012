//===- Loss.cpp - nll_loss and cross_entropy on CUDA ----------------------===//
//
// The host half of Loss.cu, with lib/Runtime/CPU/Loss.cpp's semantics and
// error messages. The input is [N, C, d1, ...] (class dim 1) or [C] (class
// dim 0); each of the N * d1 * ... positions has one class index (or, for
// cross_entropy, a row of class probabilities shaped like the input). The
// input and a probability target are read in their dtype (gathered when
// strided), class indices as i64, the weight as f64; everything is computed
// in f64 and rounded once. An out-of-range class index is found on the
// device and reported by reading back the first offending position.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <string>

using namespace traceir;
using namespace traceir::cuda;

namespace {
/// Fails the call with "op: <CUDA error>" unless `err` is success.
bool cudaOk(KernelContext &ctx, const char *op, cudaError_t err) {
  if (err == cudaSuccess)
    return true;
  ctx.fail(strCat(op) + ": " + cudaGetErrorName(err) + " (" +
           cudaGetErrorString(err) + ")");
  return false;
}

/// `badPosition` (device, set to ~0 before the launch) holds the first
/// position whose class index is out of range, if any: fails the call
/// naming that index, as the CPU does. This waits for the kernels.
void reportBadTarget(KernelContext &ctx, const char *op,
                     const unsigned long long *badPosition,
                     const int64_t *indices) {
  unsigned long long bad = 0;
  if (!cudaOk(
          ctx, op,
          cudaMemcpy(&bad, badPosition, sizeof(bad), cudaMemcpyDeviceToHost)) ||
      bad == ~0ull)
    return;
  int64_t k = 0;
  if (cudaOk(ctx, op,
             cudaMemcpy(&k, indices + bad, sizeof(k), cudaMemcpyDeviceToHost)))
    ctx.fail("Target " + strCat(k) + " is out of bounds.");
}

/// Device scratch for the first bad position, set to ~0 (null after a
/// failure).
unsigned long long *newBadPosition(KernelContext &ctx, const char *op) {
  auto *p = static_cast<unsigned long long *>(
      ctx.scratch(sizeof(unsigned long long)));
  if (!p || !nn::launched(
                ctx, cudaMemsetAsync(p, 0xFF, sizeof(unsigned long long)), op))
    return nullptr;
  return p;
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
    if (!(L.badPosition = newBadPosition(ctx, op)))
      return;
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
  reportBadTarget(ctx, op, L.badPosition, L.indices);
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
  if (!ok || !L.g || !L.tw || !L.indices || !nn::zeroFill(ctx, out, op) ||
      !(L.badPosition = newBadPosition(ctx, op)))
    return;
  L.N = a.N;
  L.C = a.C;
  L.S = a.S;
  L.ignore = ignoreIndexArg(ctx, 5);
  L.reduction = static_cast<int32_t>(a.reduction);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  if (nn::launched(ctx, launchNllLossBackward(L), op))
    reportBadTarget(ctx, op, L.badPosition, L.indices);
}
