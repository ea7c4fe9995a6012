//===- NNLaunch.h - Launch descriptions of the CUDA NN kernels --*- C++ -*-===//
//
// The CUDA NN kernels (conv2d, pooling, batch norm and its backward passes,
// losses) are split like the elementwise ones: the host half (Conv.cpp,
// Norm.cpp, Loss.cpp) parses arguments, checks them with the CPU kernels'
// messages and gathers strided inputs; the device half (Conv.cu, Norm.cu,
// Loss.cu) takes one plain struct by value per launch. Element types follow
// DType's numbering (EwDType in Elementwise.h) and every value is loaded and
// stored through ewLoadDouble / ewStoreDouble, so the arithmetic is in f64
// as on the CPU. Every launcher returns cudaGetLastError() after its
// launches and launches nothing for an empty grid.
//
// No LLVM or MLIR here: nvcc compiles it. The host helpers at the end are
// for the .cpp halves only.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_NNLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_NNLAUNCH_H

#include "TraceIR/Runtime/CUDA/TypedRows.h"
#include "TraceIR/Runtime/Elementwise.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace traceir::cuda {

/// A contiguous device array in any dtype; `data` null when absent.
struct NNDense {
  const char *data = nullptr;
  int32_t dtype = F64;
};

//===--- Conv.cu ----------------------------------------------------------===//

/// im2col of `nb` images of a contiguous [*, C, H, W] input into
/// col[nb, C, kH, kW, OH, OW] (per image and group: the row-major [K, L]
/// matrix, K = C / groups * kH * kW, L = OH * OW), zeros for padding taps.
struct Im2colLaunch {
  const char *x = nullptr;
  char *col = nullptr;
  int32_t dtype = F32; ///< F32 or F64
  int64_t nb = 0, C = 0, H = 0, W = 0;
  int64_t kH = 0, kW = 0, OH = 0, OW = 0;
  int64_t sH = 1, sW = 1, pT = 0, pL = 0, dH = 1, dW = 1;
};
cudaError_t launchIm2col(const Im2colLaunch &launch);

/// out[n, o, l] += T(bias[o]) over a contiguous [N, O, L] output of dtype
/// F32 or F64 (T), as the CPU adds the bias after the products; an F16 or
/// BF16 output adds in double and rounds once (cuDNN's convolutions).
struct ConvBiasLaunch {
  char *out = nullptr;
  int32_t dtype = F32;
  const char *bias = nullptr;
  int32_t biasDtype = F32;
  int64_t biasStride = 1; ///< in elements
  int64_t N = 0, O = 0, L = 0;
};
cudaError_t launchConvBias(const ConvBiasLaunch &launch);

/// max_pool2d_with_indices_backward: gI[p, i] = the sum of gO[p, o] over
/// the outputs o of plane p whose index is i, each input element summing
/// the windows that cover it (no atomics: every dtype, deterministic).
/// `badPosition` (the error record's `pending`, DeviceErrorLaunch.h)
/// receives the first position whose index is outside [0, H * W), which a
/// commit then records.
struct MaxPoolBackwardLaunch {
  NNDense gO;                       ///< contiguous [planes, OH, OW]
  const int64_t *indices = nullptr; ///< contiguous [planes, OH, OW]
  char *gI = nullptr;               ///< contiguous [planes, H, W]
  int32_t gIDtype = F32;
  int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
  /// The error record's `pending`, for the check (DeviceErrorLaunch.h). The
  /// backward kernel reads no memory by an index, only compares them, so it
  /// runs after a bad one as well.
  unsigned long long *badPosition = nullptr;
};
cudaError_t launchMaxPoolIndexCheck(const MaxPoolBackwardLaunch &launch);
cudaError_t launchMaxPoolBackward(const MaxPoolBackwardLaunch &launch);
/// convolution_backward of a 2-D convolution over contiguous operands of
/// one dtype (F32 or F64): a thread per result element sums its products
/// in f64 (grad_input over the output channels of its group and the taps
/// that reach it, grad_weight over images and positions, grad_bias over
/// images and positions). A null result is not computed.
struct ConvBackwardLaunch {
  const char *gO = nullptr, *x = nullptr, *w = nullptr;
  int32_t dtype = F32;
  char *gI = nullptr, *gW = nullptr, *gB = nullptr;
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, Cg = 0, kH = 0, kW = 0;
  int64_t OH = 0, OW = 0, groups = 1;
  int64_t sH = 1, sW = 1, pT = 0, pL = 0, dH = 1, dW = 1;
};
cudaError_t launchConvBackward(const ConvBackwardLaunch &launch);

//===--- Norm.cu ----------------------------------------------------------===//

// Batch norm sees its input [N, C, *] as N x C x S: element (n, c, s) is at
// (n * C + c) * S + s. Per-channel vectors are contiguous f64 (null when
// absent); results are contiguous, written in their dtype.

/// Per channel: the statistics batch norm normalizes with (training: the
/// batch mean and InvStd of the biased variance; eval: the running mean and
/// 1 / sqrt(running_var + eps)), the updated running stats (training, where
/// given) and, for native_batch_norm, its save_mean / save_invstd results.
/// Eval mode reads no input (also used for an empty one).
struct BNStatsLaunch {
  NNDense x;
  int64_t N = 0, C = 0, S = 0;
  int32_t training = 0;
  double momentum = 0.1, eps = 1e-5;
  const double *rm = nullptr, *rv = nullptr;
  double *mean = nullptr, *istd = nullptr;       ///< [C], or null
  double *newMean = nullptr, *newVar = nullptr;  ///< [C], training with rm/rv
  char *saveMean = nullptr, *saveIstd = nullptr; ///< native's results 1, 2
  int32_t saveDtype = F32;
};
cudaError_t launchBatchNormStats(const BNStatsLaunch &launch);

/// out = (x - mean[c]) * (istd[c] * w[c]) + b[c].
struct BNApplyLaunch {
  NNDense x;
  int64_t N = 0, C = 0, S = 0;
  const double *mean = nullptr, *istd = nullptr, *w = nullptr, *b = nullptr;
  char *out = nullptr;
  int32_t outDtype = F32;
};
cudaError_t launchBatchNormApply(const BNApplyLaunch &launch);

/// The optimized tier's eval batch_norm over contiguous planes
/// (TypedRows.h's ChannelAffinePlan).
cudaError_t launchChannelAffine(const ChannelAffinePlan &plan);

/// native_batch_norm_backward: `m` and `v` are save_mean and save_invstd
/// (train) or the running mean and variance (eval). Results whose `mask`
/// entry is 0 are left alone (the host zero-fills them). `coef` is
/// [C, kBNBackwardCoefs] scratch.
constexpr int kBNBackwardCoefs = 5;
struct BNBackwardLaunch {
  NNDense gO, x;
  int64_t N = 0, C = 0, S = 0;
  int32_t train = 0;
  double eps = 1e-5;
  const double *w = nullptr, *m = nullptr, *v = nullptr;
  int32_t mask[3] = {1, 1, 1};
  char *gI = nullptr, *gW = nullptr, *gB = nullptr;
  int32_t gIDtype = F32, gWDtype = F32, gBDtype = F32;
  double *coef = nullptr;
};
cudaError_t launchBatchNormBackward(const BNBackwardLaunch &launch);

/// batch_norm_double_backward: computes the results whose `has*` flag is
/// set (the host zero-fills the others). `ggI.data`, `gamma`, `ggG` and
/// `ggB` are null when absent. `coef` is [C, kBNDoubleBackwardCoefs]
/// scratch.
constexpr int kBNDoubleBackwardCoefs = 11;
struct BNDoubleBackwardLaunch {
  NNDense x, gO, ggI;
  int64_t N = 0, C = 0, S = 0;
  int32_t training = 0;
  double eps = 1e-5;
  const double *gamma = nullptr, *ggG = nullptr, *ggB = nullptr;
  const double *m = nullptr, *v = nullptr;
  int32_t hasGI = 0, hasGG = 0, hasGGO = 0;
  char *gI = nullptr, *gG = nullptr, *ggO = nullptr;
  int32_t gIDtype = F32, gGDtype = F32, ggODtype = F32;
  double *coef = nullptr;
};
cudaError_t launchBatchNormDoubleBackward(const BNDoubleBackwardLaunch &launch);

//===--- Loss.cu ----------------------------------------------------------===//

/// nll_loss and cross_entropy over an input [N, C, S...] seen as P = N * S
/// positions of C classes: element (p, c) is at (p / S * C + c) * S + p % S.
/// One of `indices` (contiguous i64 [P]) and `probs` (shaped like the input)
/// is given. `loss` and `den` are [P] f64 scratch; `badPosition` (the error
/// record's `pending`, DeviceErrorLaunch.h) receives the smallest position
/// whose target is out of range, which the kernels skip.
struct LossLaunch {
  NNDense x;
  const int64_t *indices = nullptr;
  NNDense probs;
  const double *w = nullptr;
  int64_t N = 0, C = 0, S = 0;
  int32_t crossEntropy = 0; ///< log_softmax over the classes first
  double smoothing = 0;
  int64_t ignore = -100;
  int32_t reduction = 1;      ///< 0 none, 1 mean, 2 sum
  double probDenominator = 0; ///< the mean's divisor for probabilities
  double *loss = nullptr, *den = nullptr;
  unsigned long long *badPosition = nullptr;
  char *out = nullptr;
  int32_t outDtype = F32;
  /// nll_loss_forward's total_weight (the mean's divisor), of outDtype;
  /// null for nll_loss and cross_entropy, and for a batch with reduction
  /// none (the host zero-fills it).
  char *totalWeight = nullptr;
};
cudaError_t launchLoss(const LossLaunch &launch);

/// nll_loss_backward over [N, C] or [C] (S = 1) seen as LossLaunch's
/// positions: out (contiguous, zero-filled by the host) gets -w[k] * grad at
/// each counted position's class k; grad is g[p] for reduction 0, else
/// g[0] (over tw[0] for the mean). `g`, `tw` and `w` are contiguous f64.
struct NllBackwardLaunch {
  const double *g = nullptr, *tw = nullptr, *w = nullptr;
  const int64_t *indices = nullptr;
  int64_t N = 0, C = 0, S = 1;
  int64_t ignore = -100;
  int32_t reduction = 1;
  unsigned long long *badPosition = nullptr;
  char *out = nullptr;
  int32_t outDtype = F32;
};
cudaError_t launchNllLossBackward(const NllBackwardLaunch &launch);

//===--- Device helpers shared by the .cu files ---------------------------===//

#ifdef __CUDACC__
/// Threads per block of the reducing kernels (a power of two).
constexpr int kNNThreads = 256;

/// The sum of `v` over the block, returned to every thread. `sh` holds
/// blockDim.x doubles; every thread of the block must call it.
__device__ inline double nnBlockSum(double v, double *sh) {
  unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      sh[t] += sh[t + s];
    __syncthreads();
  }
  double r = sh[0];
  __syncthreads(); // sh is reused by the next call
  return r;
}

/// The maximum as std::max folds it ((a < b) ? b : a): a NaN never wins.
__device__ inline double nnBlockMax(double v, double *sh) {
  unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      sh[t] = sh[t] < sh[t + s] ? sh[t + s] : sh[t];
    __syncthreads();
  }
  double r = sh[0];
  __syncthreads();
  return r;
}

/// Element k of a dense array as f64.
__device__ inline double nnLoad(const NNDense &a, int64_t k) {
  return ewLoadDouble(a.data + k * ewSize(a.dtype), a.dtype);
}
/// Stores f64 `v` at element k of a contiguous array of `dtype`.
__device__ inline void nnStore(char *base, int32_t dtype, int64_t k, double v) {
  ewStoreDouble(base + k * ewSize(dtype), dtype, v);
}

/// Blocks for a grid-stride loop over n items (at least one).
inline unsigned nnBlocks(int64_t n, int64_t threads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : b > 65535 ? 65535 : b);
}
#endif

} // namespace traceir::cuda

#ifndef __CUDACC__
//===--- Host helpers shared by the .cpp halves ---------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"

namespace traceir::cuda::nn {

/// A tensor viewing `nbytes` of device memory at `data` as contiguous
/// `shape` of `dtype`, on `device`. `holder` keeps the storage alive.
inline Tensor denseView(Storage &holder, void *data, DType dtype,
                        std::span<const int64_t> shape, Device device) {
  holder.data = data;
  holder.device = device;
  Tensor t;
  t.storage = &holder;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.strides = Tensor::contiguousStrides(t.shape);
  holder.nbytes = t.nbytes();
  return t;
}

/// `t`'s elements as a contiguous device array of `dtype`: `t` itself when
/// it already is one, else a copy in scratch. Null (and the call failed)
/// when that fails.
inline const char *gatherAs(KernelContext &ctx, const Tensor &t, DType dtype) {
  if (t.dtype == dtype && t.isContiguous())
    return t.bytes();
  char *buf = static_cast<char *>(ctx.scratch(t.numel(), dtypeSize(dtype)));
  if (!buf)
    return nullptr;
  Storage holder;
  Tensor dst = denseView(holder, buf, dtype, t.shape, t.storage->device);
  if (!copyStrided(t, dst)) {
    ctx.fail(std::string("gathering a strided ") + dtypeName(t.dtype) +
             shapeToString(t.shape) + " tensor on the device failed");
    return nullptr;
  }
  return buf;
}

/// `t` as a dense array in its own dtype (gathered when strided).
inline NNDense gatherDense(KernelContext &ctx, const Tensor &t, bool &ok) {
  NNDense d;
  d.dtype = static_cast<int32_t>(t.dtype);
  d.data = gatherAs(ctx, t, t.dtype);
  ok &= d.data != nullptr;
  return d;
}

/// Optional tensor argument `i` as contiguous f64: null when None; `ok`
/// turns false on a failure.
inline const double *optF64(KernelContext &ctx, unsigned i, bool &ok) {
  if (!ctx.isTensor(i))
    return nullptr;
  const char *p = gatherAs(ctx, ctx.tensor(i), DType::F64);
  ok &= p != nullptr;
  return reinterpret_cast<const double *>(p);
}

/// `n` doubles of scratch (null after a failure).
inline double *newF64(KernelContext &ctx, int64_t n) {
  return static_cast<double *>(ctx.scratch(n, sizeof(double)));
}

/// Fails the call when a launch reported an error; returns whether it
/// succeeded.
inline bool launched(KernelContext &ctx, cudaError_t err, const char *op) {
  if (err == cudaSuccess)
    return true;
  ctx.fail(strCat(op) + ": CUDA kernel launch failed: " +
           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  return false;
}

/// Zero-fills a fresh (contiguous) result.
inline bool zeroFill(KernelContext &ctx, Tensor &t, const char *op) {
  if (t.nbytes() == 0)
    return true;
  return launched(ctx, cudaMemsetAsync(t.bytes(), 0, t.nbytes()), op);
}

} // namespace traceir::cuda::nn
#endif

#endif // TRACEIR_RUNTIME_CUDA_NNLAUNCH_H
