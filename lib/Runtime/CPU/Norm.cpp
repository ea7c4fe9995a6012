//===- Norm.cpp - batch norm and its backward passes on the CPU -----------===//
//
// batch_norm, native_batch_norm, native_batch_norm_backward and
// batch_norm_double_backward over an input [N, C, *]: statistics are per
// channel C over the N * prod(*) elements. Every input (any strides, any
// floating dtype) is gathered as f64 and all arithmetic is in f64; results
// are rounded once to their dtype. Formulas follow PyTorch's CPU kernels
// (aten/src/ATen/native/Normalization.cpp) and, for the double backward,
// batchnorm_double_backward in torch/csrc/autograd/FunctionsManual.cpp.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <cmath>
#include <cstring>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// Writes contiguous f64 values into `dst` (any strides and dtype).
void scatterF64(const double *src, Tensor dst) {
  Storage host;
  host.data = const_cast<double *>(src);
  Tensor s;
  s.storage = &host;
  s.dtype = DType::F64;
  s.shape = dst.shape;
  s.strides = Tensor::contiguousStrides(dst.shape);
  copyTensor(s, dst);
}

/// An optional tensor argument gathered as f64: null when None. `ok` turns
/// false on an allocation failure.
const double *optF64(KernelContext &ctx, unsigned i, bool &ok) {
  if (!ctx.isTensor(i))
    return nullptr;
  const double *p = gatherF64(ctx, ctx.tensor(i));
  ok &= p != nullptr;
  return p;
}

double *newF64(KernelContext &ctx, int64_t n) {
  return static_cast<double *>(ctx.scratch(n, sizeof(double)));
}

/// PyTorch's InvStd: 0 when both the variance and eps are 0.
double invStd(double var, double eps) {
  return var == 0 && eps == 0 ? 0.0 : 1.0 / std::sqrt(var + eps);
}

/// Stores f64 `v` at flat index k of the contiguous fresh result `t`.
void put(Tensor &t, int64_t k, double v) {
  storeDouble(t.bytes() + k * dtypeSize(t.dtype), t.dtype, v);
}

void zeroFill(Tensor &t) { std::memset(t.bytes(), 0, t.nbytes()); }

/// batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps[, cudnn_enabled]) and native_batch_norm (same head).
void batchNorm(KernelContext &ctx, bool native) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  BatchNormArgs a;
  if (!batchNormArgs(ctx, a, native))
    return;
  ChannelLayout L(x);
  bool training = a.training;
  double momentum = a.momentum, eps = a.eps;
  if (x.numel() == 0) {
    // at::batch_norm returns (a copy of) the empty input and leaves the
    // running stats alone; native_batch_norm in training refuses it.
    if (native && training)
      return ctx.fail("input tensor must have at least one element, but got "
                      "input_sizes = " +
                      shapeToString(x.shape));
    if (native)
      for (unsigned r = 1; r < 3; ++r)
        for (int64_t c = 0; c < L.C; ++c) {
          const Tensor &stat = ctx.tensor(3 + r - 1);
          double v = loadDouble(stat.bytes() +
                                    c * stat.strides[0] * dtypeSize(stat.dtype),
                                stat.dtype);
          put(ctx.result(r), c, r == 1 ? v : 1.0 / std::sqrt(v + eps));
        }
    return;
  }
  bool ok = true;
  const double *xd = gatherF64(ctx, x);
  const double *w = optF64(ctx, 1, ok), *b = optF64(ctx, 2, ok);
  const double *rm = optF64(ctx, 3, ok), *rv = optF64(ctx, 4, ok);
  double *mean = newF64(ctx, L.C), *istd = newF64(ctx, L.C);
  if (!ok || !xd || !mean || !istd)
    return;
  if (training) {
    double *newMean = newF64(ctx, L.C), *newVar = newF64(ctx, L.C);
    if (!newMean || !newVar)
      return;
    double M = L.count();
    for (int64_t c = 0; c < L.C; ++c) {
      double sum = 0, varSum = 0;
      L.forChannel(c, [&](int64_t k) { sum += xd[k]; });
      double mu = sum / M;
      L.forChannel(c,
                   [&](int64_t k) { varSum += (xd[k] - mu) * (xd[k] - mu); });
      mean[c] = mu;
      istd[c] = invStd(varSum / M, eps);
      // Running stats: the unbiased variance, as PyTorch (NaN for M == 1).
      if (rm)
        newMean[c] = momentum * mu + (1 - momentum) * rm[c];
      if (rv)
        newVar[c] = momentum * varSum / (M - 1) + (1 - momentum) * rv[c];
    }
    // Updated in place: the registry marks training batch norm as mutating.
    if (rm)
      scatterF64(newMean, ctx.tensor(3));
    if (rv)
      scatterF64(newVar, ctx.tensor(4));
  } else {
    for (int64_t c = 0; c < L.C; ++c) {
      mean[c] = rm[c];
      istd[c] = 1.0 / std::sqrt(rv[c] + eps);
    }
  }
  for (int64_t c = 0; c < L.C; ++c) {
    double scale = istd[c] * (w ? w[c] : 1.0), shift = b ? b[c] : 0.0;
    L.forChannel(
        c, [&](int64_t k) { put(out, k, (xd[k] - mean[c]) * scale + shift); });
  }
  if (native) {
    // Training: the batch mean and 1 / sqrt(biased var + eps), as PyTorch.
    // Eval: PyTorch's CPU kernel returns empty [0] tensors, but the
    // registry declares [C]; we return the running mean and
    // 1 / sqrt(running_var + eps), the statistics eval mode normalized with
    // (what native_batch_norm_backward reads in eval mode).
    for (int64_t c = 0; c < L.C; ++c) {
      put(ctx.result(1), c, mean[c]);
      put(ctx.result(2), c, istd[c]);
    }
  }
}
} // namespace

void cpu::batch_norm(KernelContext &ctx) { batchNorm(ctx, false); }
void cpu::native_batch_norm(KernelContext &ctx) { batchNorm(ctx, true); }

/// native_batch_norm_backward(grad_out, input, weight, running_mean,
/// running_var, save_mean, save_invstd, train, eps, output_mask) ->
/// (grad_input, grad_weight, grad_bias). Training uses save_mean and
/// save_invstd, eval the running stats. An output the mask leaves out is
/// undefined in PyTorch; here it is zero-filled.
void cpu::native_batch_norm_backward(KernelContext &ctx) {
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
  Tensor &gI = ctx.result(0), &gW = ctx.result(1), &gB = ctx.result(2);
  for (unsigned r = 0; r < 3; ++r)
    if (!mask[r])
      zeroFill(ctx.result(r));
  unsigned meanArg, varArg;
  if (!batchNormStatsArgs(ctx, train, 5, 3, meanArg, varArg))
    return;
  bool ok = true;
  const double *gO = gatherF64(ctx, gOt), *xd = gatherF64(ctx, x);
  const double *w = optF64(ctx, 2, ok);
  const double *m = optF64(ctx, meanArg, ok), *v = optF64(ctx, varArg, ok);
  if (!ok || !gO || !xd)
    return;
  double M = L.count();
  for (int64_t c = 0; c < L.C; ++c) {
    double mu = m[c], is = train ? v[c] : 1.0 / std::sqrt(v[c] + eps);
    double sum = 0, dotp = 0;
    L.forChannel(c, [&](int64_t k) {
      sum += gO[k];
      dotp += (xd[k] - mu) * gO[k];
    });
    double wc = w ? w[c] : 1.0;
    if (mask[0]) {
      if (train) {
        double proj = dotp * is * is / M, gMean = sum / M;
        L.forChannel(c, [&](int64_t k) {
          put(gI, k, (gO[k] - gMean - (xd[k] - mu) * proj) * is * wc);
        });
      } else {
        L.forChannel(c, [&](int64_t k) { put(gI, k, gO[k] * is * wc); });
      }
    }
    if (mask[1])
      put(gW, c, dotp * is);
    if (mask[2])
      put(gB, c, sum);
  }
}

/// batch_norm_double_backward(input, gamma, ggI, ggG, ggB, gO, running_mean,
/// running_var, training, eps, save_mean, save_invstd, output_mask) ->
/// (gI, gG, ggO): the backward of native_batch_norm_backward with respect to
/// (input, gamma, grad_out), given the gradients (ggI, ggG, ggB) of its
/// results, as PyTorch's batchnorm_double_backward. Like PyTorch, the mask
/// does not select what is computed; a result PyTorch leaves undefined
/// (gG without gamma or ggI, gI in eval mode without ggG, ggO without any
/// of ggI/ggG/ggB) is zero-filled. ggG and ggB only count with a gamma.
void cpu::batch_norm_double_backward(KernelContext &ctx) {
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
  Tensor &gIt = ctx.result(0), &gGt = ctx.result(1), &ggOt = ctx.result(2);
  unsigned meanArg, varArg;
  if (!batchNormStatsArgs(ctx, training, 10, 6, meanArg, varArg))
    return;
  bool ok = true;
  const double *xd = gatherF64(ctx, x), *gO = gatherF64(ctx, ctx.tensor(5));
  const double *gamma = optF64(ctx, 1, ok), *ggI = optF64(ctx, 2, ok);
  bool affine = gamma != nullptr;
  const double *ggG = affine ? optF64(ctx, 3, ok) : nullptr;
  const double *ggB = affine ? optF64(ctx, 4, ok) : nullptr;
  const double *m = optF64(ctx, meanArg, ok), *v = optF64(ctx, varArg, ok);
  if (!ok || !xd || !gO)
    return;
  double M = L.count();
  bool hasGI = (ggI && training) || ggG, hasGG = affine && ggI,
       hasGGO = ggI || ggG || ggB;
  if (!hasGI)
    zeroFill(gIt);
  if (!hasGG)
    zeroFill(gGt);
  if (!hasGGO)
    zeroFill(ggOt);
  for (int64_t c = 0; c < L.C; ++c) {
    double mu = m[c], is = training ? v[c] : 1.0 / std::sqrt(v[c] + eps);
    double is2 = is * is, is3 = is2 * is, g = affine ? gamma[c] : 1.0;
    double gOSum = 0, gOinmuSum = 0, ggISum = 0, ggIinmuSum = 0, gOggISum = 0;
    L.forChannel(c, [&](int64_t k) {
      double d = xd[k] - mu;
      gOSum += gO[k];
      gOinmuSum += gO[k] * d;
      if (ggI) {
        ggISum += ggI[k];
        ggIinmuSum += ggI[k] * d;
        gOggISum += gO[k] * ggI[k];
      }
    });
    double ggGc = ggG ? ggG[c] : 0.0, ggBc = ggB ? ggB[c] : 0.0;
    // gI
    if (hasGI) {
      double allSub = ggISum * gOSum / M - gOggISum +
                      3.0 / M * is2 * gOinmuSum * ggIinmuSum;
      L.forChannel(c, [&](int64_t k) {
        double d = xd[k] - mu, r = 0;
        if (ggI && training)
          r = g * (d * is3 * allSub / M +
                   ggIinmuSum * is3 / M * (gOSum / M - gO[k]) +
                   gOinmuSum * is3 / M * (ggISum / M - ggI[k]));
        if (ggG) {
          if (training)
            r += ggGc * (gO[k] * is - is * gOSum / M - d * is3 * gOinmuSum / M);
          else
            r += ggGc * is * gO[k];
        }
        put(gIt, k, r);
      });
    }
    // gG: the first backward's grad_input without gamma, dotted with ggI.
    if (hasGG) {
      double r = training ? is / M *
                                (M * gOggISum - gOSum * ggISum -
                                 is2 * gOinmuSum * ggIinmuSum)
                          : gOggISum * is;
      put(gGt, c, r);
    }
    // ggO: the first backward's grad_input applied to ggI, plus the gamma
    // and beta terms.
    if (hasGGO) {
      L.forChannel(c, [&](int64_t k) {
        double d = xd[k] - mu, r = 0;
        if (ggI)
          r = training
                  ? g * is / M * (M * ggI[k] - ggISum - d * is2 * ggIinmuSum)
                  : ggI[k] * is * g;
        r += ggGc * d * is + ggBc;
        put(ggOt, k, r);
      });
    }
  }
}
