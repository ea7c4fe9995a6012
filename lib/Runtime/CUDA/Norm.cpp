//===- Norm.cpp - Batch norm and its backward passes on CUDA --------------===//
//
// The host half of Norm.cu: batch_norm, native_batch_norm,
// native_batch_norm_backward and batch_norm_double_backward over an input
// [N, C, *], with lib/Runtime/CPU/Norm.cpp's semantics and error messages.
// Large inputs are read in their dtype (gathered into contiguous scratch
// when strided), per-channel vectors are gathered as f64, all arithmetic is
// in f64 and results are rounded once to their dtype. Training batch norm
// updates running_mean / running_var in place on the device. At the
// optimized tier, eval batch norm over a contiguous input is one typed
// launch instead (batchNormEvalTyped).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/NNArgs.h"

using namespace traceir;
using namespace traceir::cuda;

namespace {
/// Copies the contiguous f64 [C] `src` into the strided tensor `dst` (any
/// floating dtype).
bool scatterF64(KernelContext &ctx, const double *src, const Tensor &dst) {
  Storage holder;
  Tensor from = nn::denseView(holder, const_cast<double *>(src), DType::F64,
                              dst.shape, dst.storage->device);
  Tensor to = dst;
  if (copyStrided(from, to))
    return true;
  ctx.fail("updating the running statistics on the device failed");
  return false;
}

/// Eval batch_norm on the optimized tier's typed launch (TypedRows.h): a
/// contiguous input and result of one floating dtype, rank-1 (or
/// contiguous) parameters with the running statistics, native's saved
/// statistics contiguous and of one dtype. False, having launched nothing,
/// where it does not apply.
bool batchNormEvalTyped(KernelContext &ctx, const BatchNormArgs &a, bool native,
                        const char *op) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!optimizedTierEnabled() || a.training || !isFloatingDType(x.dtype) ||
      out.dtype != x.dtype || !x.isContiguous() || !out.isContiguous() ||
      !ctx.isTensor(3) || !ctx.isTensor(4))
    return false;
  ChannelParam params[4];
  for (unsigned i = 1; i <= 4; ++i) {
    if (!ctx.isTensor(i))
      continue;
    const Tensor &t = ctx.tensor(i);
    if (t.rank() != 1 && !t.isContiguous())
      return false;
    params[i - 1] = {t.bytes(), static_cast<int32_t>(t.dtype),
                     t.rank() == 1 ? t.strides[0] : 1};
  }
  ChannelLayout L(x);
  ChannelAffinePlan p;
  if (native) {
    Tensor &m = ctx.result(1), &r = ctx.result(2);
    if (m.dtype != r.dtype || !m.isContiguous() || !r.isContiguous())
      return false;
    p.saveMean = m.bytes();
    p.saveIstd = r.bytes();
    p.saveDtype = static_cast<int32_t>(m.dtype);
  }
  p.in = x.bytes();
  p.out = out.bytes();
  p.dtype = static_cast<int32_t>(x.dtype);
  p.N = L.N;
  p.C = L.C;
  p.S = L.S;
  p.weight = params[0];
  p.bias = params[1];
  p.mean = params[2];
  p.var = params[3];
  p.eps = a.eps;
  p.vec = channelAffineVectorWidth(p);
  if (nn::launched(ctx, launchChannelAffine(p), op))
    ctx.ranTier(KernelTier::Optimized);
  return true;
}

/// batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps[, cudnn_enabled]) and native_batch_norm (same head).
void batchNorm(KernelContext &ctx, bool native) {
  const char *op = native ? "native_batch_norm" : "batch_norm";
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  BatchNormArgs a;
  if (!batchNormArgs(ctx, a, native))
    return;
  ChannelLayout L(x);
  bool training = a.training;
  double momentum = a.momentum, eps = a.eps;
  BNStatsLaunch stats;
  stats.N = L.N;
  stats.C = L.C;
  stats.S = L.S;
  stats.training = training;
  stats.momentum = momentum;
  stats.eps = eps;
  if (native) {
    stats.saveMean = ctx.result(1).bytes();
    stats.saveIstd = ctx.result(2).bytes();
    stats.saveDtype = static_cast<int32_t>(ctx.result(1).dtype);
  }
  bool ok = true;
  if (x.numel() == 0) {
    // at::batch_norm returns (a copy of) the empty input and leaves the
    // running stats alone; native_batch_norm in training refuses it.
    if (native && training)
      return ctx.fail("input tensor must have at least one element, but got "
                      "input_sizes = " +
                      shapeToString(x.shape));
    if (native) {
      // Eval (the only way here): the running mean and
      // 1 / sqrt(running_var + eps).
      stats.rm = nn::optF64(ctx, 3, ok);
      stats.rv = nn::optF64(ctx, 4, ok);
      if (ok)
        nn::launched(ctx, launchBatchNormStats(stats), op);
    }
    return;
  }
  if (batchNormEvalTyped(ctx, a, native, op))
    return;
  BNApplyLaunch apply;
  apply.x = nn::gatherDense(ctx, x, ok);
  apply.w = nn::optF64(ctx, 1, ok);
  apply.b = nn::optF64(ctx, 2, ok);
  stats.rm = nn::optF64(ctx, 3, ok);
  stats.rv = nn::optF64(ctx, 4, ok);
  double *mean = nn::newF64(ctx, L.C), *istd = nn::newF64(ctx, L.C);
  if (!ok || !mean || !istd)
    return;
  stats.x = apply.x;
  stats.mean = mean;
  stats.istd = istd;
  apply.mean = mean;
  apply.istd = istd;
  if (training) {
    stats.newMean = stats.rm ? nn::newF64(ctx, L.C) : nullptr;
    stats.newVar = stats.rv ? nn::newF64(ctx, L.C) : nullptr;
    if ((stats.rm && !stats.newMean) || (stats.rv && !stats.newVar))
      return;
  }
  if (!nn::launched(ctx, launchBatchNormStats(stats), op))
    return;
  // Updated in place: the registry marks training batch norm as mutating.
  if (training && stats.rm && !scatterF64(ctx, stats.newMean, ctx.tensor(3)))
    return;
  if (training && stats.rv && !scatterF64(ctx, stats.newVar, ctx.tensor(4)))
    return;
  apply.N = L.N;
  apply.C = L.C;
  apply.S = L.S;
  apply.out = out.bytes();
  apply.outDtype = static_cast<int32_t>(out.dtype);
  nn::launched(ctx, launchBatchNormApply(apply), op);
}
} // namespace

void cuda::batch_norm(KernelContext &ctx) { batchNorm(ctx, false); }
void cuda::native_batch_norm(KernelContext &ctx) { batchNorm(ctx, true); }

/// native_batch_norm_backward(grad_out, input, weight, running_mean,
/// running_var, save_mean, save_invstd, train, eps, output_mask) ->
/// (grad_input, grad_weight, grad_bias). Training uses save_mean and
/// save_invstd, eval the running stats. An output the mask leaves out is
/// undefined in PyTorch; here it is zero-filled.
void cuda::native_batch_norm_backward(KernelContext &ctx) {
  const char *op = "native_batch_norm_backward";
  const Tensor &gOt = ctx.tensor(0), &x = ctx.tensor(1);
  static const bool likeInput[3] = {true, false, false};
  if (!batchNormBackwardShapes(ctx, 1, {0}, {2, 3, 4, 5, 6}, likeInput))
    return;
  ChannelLayout L(x);
  BatchNormBackwardArgs a;
  if (!batchNormBackwardArgs(ctx, 7, 9, a))
    return;
  bool train = a.training, *mask = a.mask;
  double eps = a.eps;
  for (unsigned r = 0; r < 3; ++r)
    if (!mask[r] && !nn::zeroFill(ctx, ctx.result(r), op))
      return;
  unsigned meanArg, varArg;
  if (!batchNormStatsArgs(ctx, train, 5, 3, meanArg, varArg))
    return;
  BNBackwardLaunch B;
  bool ok = true;
  B.gO = nn::gatherDense(ctx, gOt, ok);
  B.x = nn::gatherDense(ctx, x, ok);
  B.w = nn::optF64(ctx, 2, ok);
  B.m = nn::optF64(ctx, meanArg, ok);
  B.v = nn::optF64(ctx, varArg, ok);
  B.coef = nn::newF64(ctx, L.C * kBNBackwardCoefs);
  if (!ok || !B.coef)
    return;
  B.N = L.N;
  B.C = L.C;
  B.S = L.S;
  B.train = train;
  B.eps = eps;
  for (unsigned r = 0; r < 3; ++r)
    B.mask[r] = mask[r];
  B.gI = ctx.result(0).bytes();
  B.gW = ctx.result(1).bytes();
  B.gB = ctx.result(2).bytes();
  B.gIDtype = static_cast<int32_t>(ctx.result(0).dtype);
  B.gWDtype = static_cast<int32_t>(ctx.result(1).dtype);
  B.gBDtype = static_cast<int32_t>(ctx.result(2).dtype);
  nn::launched(ctx, launchBatchNormBackward(B), op);
}

/// batch_norm_double_backward(input, gamma, ggI, ggG, ggB, gO, running_mean,
/// running_var, training, eps, save_mean, save_invstd, output_mask) ->
/// (gI, gG, ggO), as PyTorch's batchnorm_double_backward. Like PyTorch, the
/// mask does not select what is computed; a result PyTorch leaves undefined
/// (gG without gamma or ggI, gI in eval mode without ggG, ggO without any
/// of ggI/ggG/ggB) is zero-filled. ggG and ggB only count with a gamma.
void cuda::batch_norm_double_backward(KernelContext &ctx) {
  const char *op = "batch_norm_double_backward";
  const Tensor &x = ctx.tensor(0);
  static const bool likeInput[3] = {true, false, true};
  if (!batchNormBackwardShapes(ctx, 0, {2, 5}, {1, 3, 4, 6, 7, 10, 11},
                               likeInput))
    return;
  ChannelLayout L(x);
  BatchNormBackwardArgs a;
  if (!batchNormBackwardArgs(ctx, 8, 12, a))
    return;
  bool training = a.training;
  double eps = a.eps;
  unsigned meanArg, varArg;
  if (!batchNormStatsArgs(ctx, training, 10, 6, meanArg, varArg))
    return;
  BNDoubleBackwardLaunch D;
  bool ok = true;
  D.x = nn::gatherDense(ctx, x, ok);
  D.gO = nn::gatherDense(ctx, ctx.tensor(5), ok);
  if (ctx.isTensor(2))
    D.ggI = nn::gatherDense(ctx, ctx.tensor(2), ok);
  D.gamma = nn::optF64(ctx, 1, ok);
  bool affine = D.gamma != nullptr;
  D.ggG = affine ? nn::optF64(ctx, 3, ok) : nullptr;
  D.ggB = affine ? nn::optF64(ctx, 4, ok) : nullptr;
  D.m = nn::optF64(ctx, meanArg, ok);
  D.v = nn::optF64(ctx, varArg, ok);
  D.coef = nn::newF64(ctx, L.C * kBNDoubleBackwardCoefs);
  if (!ok || !D.coef)
    return;
  bool hasGgI = D.ggI.data != nullptr;
  D.hasGI = (hasGgI && training) || D.ggG;
  D.hasGG = affine && hasGgI;
  D.hasGGO = hasGgI || D.ggG || D.ggB;
  Tensor &gI = ctx.result(0), &gG = ctx.result(1), &ggO = ctx.result(2);
  if ((!D.hasGI && !nn::zeroFill(ctx, gI, op)) ||
      (!D.hasGG && !nn::zeroFill(ctx, gG, op)) ||
      (!D.hasGGO && !nn::zeroFill(ctx, ggO, op)))
    return;
  D.N = L.N;
  D.C = L.C;
  D.S = L.S;
  D.training = training;
  D.eps = eps;
  D.gI = gI.bytes();
  D.gG = gG.bytes();
  D.ggO = ggO.bytes();
  D.gIDtype = static_cast<int32_t>(gI.dtype);
  D.gGDtype = static_cast<int32_t>(gG.dtype);
  D.ggODtype = static_cast<int32_t>(ggO.dtype);
  nn::launched(ctx, launchBatchNormDoubleBackward(D), op);
}
