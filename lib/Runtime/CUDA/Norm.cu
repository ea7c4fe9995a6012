//===- Norm.cu - Batch norm and its backward passes on CUDA ---------------===//
//
// The device half of Norm.cpp. Per-channel statistics take one block per
// channel (a grid-stride loop over channels) with shared-memory reductions
// in f64; elementwise results take a grid-stride loop over the elements and
// read the per-channel values the statistics kernel left in scratch. The
// formulas are lib/Runtime/CPU/Norm.cpp's, term by term. At the optimized
// tier, eval batch_norm over contiguous planes is one typed launch
// (channelAffineKernel, TypedRows.h).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

using namespace traceir;
using namespace traceir::cuda;

namespace {
/// PyTorch's InvStd: 0 when both the variance and eps are 0.
__device__ inline double invStd(double var, double eps) {
  return var == 0 && eps == 0 ? 0.0 : 1.0 / sqrt(var + eps);
}

/// The flat index of the i-th element (of N * S) of channel c.
__device__ inline int64_t channelElement(int64_t i, int64_t c, int64_t C,
                                         int64_t S) {
  return (i / S * C + c) * S + i % S;
}

__global__ void bnStatsKernel(BNStatsLaunch L) {
  __shared__ double sh[kNNThreads];
  int64_t M = L.N * L.S;
  double count = static_cast<double>(M);
  int ss = ewSize(L.saveDtype);
  for (int64_t c = blockIdx.x; c < L.C; c += gridDim.x) {
    double mu, is;
    if (L.training) {
      double sum = 0;
      for (int64_t i = threadIdx.x; i < M; i += blockDim.x)
        sum += nnLoad(L.x, channelElement(i, c, L.C, L.S));
      mu = nnBlockSum(sum, sh) / count;
      double var = 0;
      for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
        double d = nnLoad(L.x, channelElement(i, c, L.C, L.S)) - mu;
        var += d * d;
      }
      double varSum = nnBlockSum(var, sh);
      is = invStd(varSum / count, L.eps);
      // Running stats: the unbiased variance, as PyTorch (NaN for M == 1).
      if (threadIdx.x == 0) {
        if (L.rm)
          L.newMean[c] = L.momentum * mu + (1 - L.momentum) * L.rm[c];
        if (L.rv)
          L.newVar[c] =
              L.momentum * varSum / (count - 1) + (1 - L.momentum) * L.rv[c];
      }
    } else {
      mu = L.rm[c];
      is = 1.0 / sqrt(L.rv[c] + L.eps);
    }
    if (threadIdx.x == 0) {
      if (L.mean)
        L.mean[c] = mu;
      if (L.istd)
        L.istd[c] = is;
      if (L.saveMean)
        ewStoreDouble(L.saveMean + c * ss, L.saveDtype, mu);
      if (L.saveIstd)
        ewStoreDouble(L.saveIstd + c * ss, L.saveDtype, is);
    }
  }
}

__global__ void bnApplyKernel(BNApplyLaunch L) {
  int64_t total = L.N * L.C * L.S;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t c = k / L.S % L.C;
    double scale = L.istd[c] * (L.w ? L.w[c] : 1.0), shift = L.b ? L.b[c] : 0.0;
    nnStore(L.out, L.outDtype, k, (nnLoad(L.x, k) - L.mean[c]) * scale + shift);
  }
}

// native_batch_norm_backward's per-channel values in `coef`.
enum BackwardCoef { BMu, BIs, BW, BGMean, BProj, kBackwardCoefs };
static_assert(kBackwardCoefs == kBNBackwardCoefs,
              "NNLaunch.h sizes the scratch");

__global__ void bnBackwardStatsKernel(BNBackwardLaunch L) {
  __shared__ double sh[kNNThreads];
  int64_t M = L.N * L.S;
  double count = static_cast<double>(M);
  for (int64_t c = blockIdx.x; c < L.C; c += gridDim.x) {
    double mu = L.m[c], is = L.train ? L.v[c] : 1.0 / sqrt(L.v[c] + L.eps);
    double sum = 0, dotp = 0;
    for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
      int64_t k = channelElement(i, c, L.C, L.S);
      double g = nnLoad(L.gO, k);
      sum += g;
      dotp += (nnLoad(L.x, k) - mu) * g;
    }
    sum = nnBlockSum(sum, sh);
    dotp = nnBlockSum(dotp, sh);
    if (threadIdx.x == 0) {
      double *coef = L.coef + c * kBackwardCoefs;
      coef[BMu] = mu;
      coef[BIs] = is;
      coef[BW] = L.w ? L.w[c] : 1.0;
      coef[BGMean] = sum / count;
      coef[BProj] = dotp * is * is / count;
      if (L.mask[1])
        nnStore(L.gW, L.gWDtype, c, dotp * is);
      if (L.mask[2])
        nnStore(L.gB, L.gBDtype, c, sum);
    }
  }
}

__global__ void bnBackwardInputKernel(BNBackwardLaunch L) {
  int64_t total = L.N * L.C * L.S;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    const double *coef = L.coef + (k / L.S % L.C) * kBackwardCoefs;
    double mu = coef[BMu], is = coef[BIs], wc = coef[BW];
    double g = nnLoad(L.gO, k), r;
    if (L.train)
      r = (g - coef[BGMean] - (nnLoad(L.x, k) - mu) * coef[BProj]) * is * wc;
    else
      r = g * is * wc;
    nnStore(L.gI, L.gIDtype, k, r);
  }
}

// batch_norm_double_backward's per-channel values in `coef`.
enum DoubleBackwardCoef {
  DMu,
  DIs,
  DG,
  DGOSum,
  DGOinmuSum,
  DGgISum,
  DGgIinmuSum,
  DGOggISum,
  DGgG,
  DGgB,
  DAllSub,
  kDoubleBackwardCoefs
};
static_assert(kDoubleBackwardCoefs == kBNDoubleBackwardCoefs,
              "NNLaunch.h sizes the scratch");

__global__ void bnDoubleBackwardStatsKernel(BNDoubleBackwardLaunch L) {
  __shared__ double sh[kNNThreads];
  int64_t M = L.N * L.S;
  double count = static_cast<double>(M);
  bool hasGgI = L.ggI.data != nullptr;
  for (int64_t c = blockIdx.x; c < L.C; c += gridDim.x) {
    double mu = L.m[c], is = L.training ? L.v[c] : 1.0 / sqrt(L.v[c] + L.eps);
    double is2 = is * is, g = L.gamma ? L.gamma[c] : 1.0;
    double gOSum = 0, gOinmuSum = 0, ggISum = 0, ggIinmuSum = 0, gOggISum = 0;
    for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
      int64_t k = channelElement(i, c, L.C, L.S);
      double d = nnLoad(L.x, k) - mu, gO = nnLoad(L.gO, k);
      gOSum += gO;
      gOinmuSum += gO * d;
      if (hasGgI) {
        double ggI = nnLoad(L.ggI, k);
        ggISum += ggI;
        ggIinmuSum += ggI * d;
        gOggISum += gO * ggI;
      }
    }
    gOSum = nnBlockSum(gOSum, sh);
    gOinmuSum = nnBlockSum(gOinmuSum, sh);
    ggISum = nnBlockSum(ggISum, sh);
    ggIinmuSum = nnBlockSum(ggIinmuSum, sh);
    gOggISum = nnBlockSum(gOggISum, sh);
    if (threadIdx.x == 0) {
      double *coef = L.coef + c * kDoubleBackwardCoefs;
      coef[DMu] = mu;
      coef[DIs] = is;
      coef[DG] = g;
      coef[DGOSum] = gOSum;
      coef[DGOinmuSum] = gOinmuSum;
      coef[DGgISum] = ggISum;
      coef[DGgIinmuSum] = ggIinmuSum;
      coef[DGOggISum] = gOggISum;
      coef[DGgG] = L.ggG ? L.ggG[c] : 0.0;
      coef[DGgB] = L.ggB ? L.ggB[c] : 0.0;
      coef[DAllSub] = ggISum * gOSum / count - gOggISum +
                      3.0 / count * is2 * gOinmuSum * ggIinmuSum;
      // gG: the first backward's grad_input without gamma, dotted with ggI.
      if (L.hasGG) {
        double r = L.training ? is / count *
                                    (count * gOggISum - gOSum * ggISum -
                                     is2 * gOinmuSum * ggIinmuSum)
                              : gOggISum * is;
        nnStore(L.gG, L.gGDtype, c, r);
      }
    }
  }
}

__global__ void bnDoubleBackwardElementsKernel(BNDoubleBackwardLaunch L) {
  int64_t total = L.N * L.C * L.S;
  double M = static_cast<double>(L.N * L.S);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  bool hasGgI = L.ggI.data != nullptr;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    const double *coef = L.coef + (k / L.S % L.C) * kDoubleBackwardCoefs;
    double mu = coef[DMu], is = coef[DIs], g = coef[DG];
    double is2 = is * is, is3 = is2 * is;
    double gOSum = coef[DGOSum], gOinmuSum = coef[DGOinmuSum],
           ggISum = coef[DGgISum], ggIinmuSum = coef[DGgIinmuSum];
    double ggGc = coef[DGgG], ggBc = coef[DGgB];
    double d = nnLoad(L.x, k) - mu, gO = nnLoad(L.gO, k);
    double ggI = hasGgI ? nnLoad(L.ggI, k) : 0.0;
    if (L.hasGI) {
      double r = 0;
      if (hasGgI && L.training)
        r = g * (d * is3 * coef[DAllSub] / M +
                 ggIinmuSum * is3 / M * (gOSum / M - gO) +
                 gOinmuSum * is3 / M * (ggISum / M - ggI));
      if (L.ggG) {
        if (L.training)
          r += ggGc * (gO * is - is * gOSum / M - d * is3 * gOinmuSum / M);
        else
          r += ggGc * is * gO;
      }
      nnStore(L.gI, L.gIDtype, k, r);
    }
    // ggO: the first backward's grad_input applied to ggI, plus the gamma
    // and beta terms.
    if (L.hasGGO) {
      double r = 0;
      if (hasGgI)
        r = L.training ? g * is / M * (M * ggI - ggISum - d * is2 * ggIinmuSum)
                       : ggI * is * g;
      r += ggGc * d * is + ggBc;
      nnStore(L.ggO, L.ggODtype, k, r);
    }
  }
}

/// The optimized tier's eval batch_norm (TypedRows.h): one block per
/// plane, its channel's scale and shift computed by every thread from the
/// parameters; thread 0 of the first image's planes writes
/// native_batch_norm's saved statistics.
template <int32_t DT, int VEC>
__global__ void channelAffineKernel(ChannelAffinePlan p) {
  using R = ChannelAffineRow<DT, VEC>;
  using T = typename R::T;
  using C = typename R::C;
  const int64_t t = threadIdx.x, B = blockDim.x;
  for (int64_t plane = blockIdx.x; plane < p.N * p.C; plane += gridDim.x) {
    const int64_t c = plane % p.C;
    double istd, scale, shift;
    channelScaleShift(p, c, istd, scale, shift);
    if (t == 0 && plane < p.C) {
      if (p.saveMean)
        ewStoreDouble(p.saveMean + c * ewSize(p.saveDtype), p.saveDtype,
                      p.mean.at(c));
      if (p.saveIstd)
        ewStoreDouble(p.saveIstd + c * ewSize(p.saveDtype), p.saveDtype, istd);
    }
    R::write(reinterpret_cast<const T *>(p.in) + plane * p.S,
             reinterpret_cast<T *>(p.out) + plane * p.S, p.S, t, B, C(scale),
             C(shift));
  }
}
template <int32_t DT, int VEC> struct ChannelAffineLaunch {
  static void run(const ChannelAffinePlan &p) {
    cudadev::launchRows(channelAffineKernel<DT, VEC>, p, p.N * p.C, p.S / VEC);
  }
};
} // namespace

cudaError_t cuda::launchChannelAffine(const ChannelAffinePlan &plan) {
  if (plan.N * plan.C * plan.S == 0)
    return cudaSuccess;
  typedRowsDispatch<ChannelAffineLaunch>(plan);
  return cudaGetLastError();
}

cudaError_t cuda::launchBatchNormStats(const BNStatsLaunch &L) {
  if (L.C == 0)
    return cudaSuccess;
  bnStatsKernel<<<nnBlocks(L.C, 1), kNNThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchBatchNormApply(const BNApplyLaunch &L) {
  int64_t total = L.N * L.C * L.S;
  if (total == 0)
    return cudaSuccess;
  bnApplyKernel<<<nnBlocks(total, kNNThreads), kNNThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchBatchNormBackward(const BNBackwardLaunch &L) {
  if (L.C == 0)
    return cudaSuccess;
  bnBackwardStatsKernel<<<nnBlocks(L.C, 1), kNNThreads>>>(L);
  int64_t total = L.N * L.C * L.S;
  if (L.mask[0] && total > 0)
    bnBackwardInputKernel<<<nnBlocks(total, kNNThreads), kNNThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t
cuda::launchBatchNormDoubleBackward(const BNDoubleBackwardLaunch &L) {
  if (L.C == 0)
    return cudaSuccess;
  bnDoubleBackwardStatsKernel<<<nnBlocks(L.C, 1), kNNThreads>>>(L);
  int64_t total = L.N * L.C * L.S;
  if ((L.hasGI || L.hasGGO) && total > 0)
    bnDoubleBackwardElementsKernel<<<nnBlocks(total, kNNThreads), kNNThreads>>>(
        L);
  return cudaGetLastError();
}
