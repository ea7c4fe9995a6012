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
    L.badPosition = static_cast<unsigned long long *>(
        ctx.scratch(sizeof(unsigned long long)));
    if (!L.badPosition ||
        !nn::launched(
            ctx,
            cudaMemsetAsync(L.badPosition, 0xFF, sizeof(unsigned long long)),
            op))
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
  if (!nn::launched(ctx, launchLoss(L), op) || probabilities)
    return;
  // The first position whose class index is out of range, if any (this
  // waits for the kernels).
  unsigned long long bad = 0;
  cudaError_t err =
      cudaMemcpy(&bad, L.badPosition, sizeof(bad), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    return ctx.fail(llvm::Twine(op) + ": " + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ")");
  if (bad == ~0ull)
    return;
  int64_t k = 0;
  err = cudaMemcpy(&k, L.indices + bad, sizeof(k), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    return ctx.fail(llvm::Twine(op) + ": " + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ")");
  ctx.fail("Target " + llvm::Twine(k) + " is out of bounds.");
}
} // namespace

/// nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
/// self holds log-probabilities [N, C] or [C].
void cuda::nll_loss(KernelContext &ctx) { lossImpl(ctx, false); }

/// cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100,
/// label_smoothing=0.0): log_softmax over the class dim, then nll_loss (for
/// class indices) or the probability-weighted sum (for a float target).
void cuda::cross_entropy(KernelContext &ctx) { lossImpl(ctx, true); }
