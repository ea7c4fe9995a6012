//===- Loss.cu - nll_loss and cross_entropy on CUDA -----------------------===//
//
// The device half of Loss.cpp. One block per position (a grid-stride loop
// over positions) computes, with f64 block reductions over the classes, the
// log_softmax statistics (cross_entropy), the position's loss and its weight
// in the mean's denominator; one single-block kernel then sums them. The
// formulas are lib/Runtime/CPU/Loss.cpp's, term by term.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/NNLaunch.h"

using namespace traceir;
using namespace traceir::cuda;

namespace {
__global__ void lossPositionsKernel(LossLaunch L) {
  __shared__ double sh[kNNThreads];
  int64_t P = L.N * L.S, C = L.C, S = L.S;
  int os = ewSize(L.outDtype);
  for (int64_t p = blockIdx.x; p < P; p += gridDim.x) {
    int64_t base = p / S * C * S + p % S; // element (p, 0); classes S apart
    // log-probabilities: the input itself for nll_loss, its log_softmax
    // over the classes for cross_entropy.
    double mx = 0, logSum = 0;
    if (L.crossEntropy) {
      double m = -INFINITY;
      for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
        double v = nnLoad(L.x, base + c * S);
        m = m < v ? v : m; // std::max(m, v)
      }
      mx = nnBlockMax(m, sh);
      double sum = 0;
      for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
        sum += exp(nnLoad(L.x, base + c * S) - mx);
      logSum = log(nnBlockSum(sum, sh));
    }
    auto logp = [&](int64_t c) {
      double v = nnLoad(L.x, base + c * S);
      return L.crossEntropy ? v - mx - logSum : v;
    };
    double l = 0, wk = 0;
    if (L.probs.data) {
      // Class probabilities, smoothed towards uniform.
      double part = 0;
      for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
        double tc = nnLoad(L.probs, base + c * S);
        if (L.smoothing > 0)
          tc = tc * (1 - L.smoothing) + L.smoothing / static_cast<double>(C);
        part -= logp(c) * tc * (L.w ? L.w[c] : 1.0);
      }
      l = nnBlockSum(part, sh);
    } else {
      // (1 - eps) * nll + eps / C * smooth, where smooth is the weighted
      // mean of -logp over the classes; ignored positions count nothing.
      // k is the same for the whole block, so are the branches.
      int64_t k = L.indices[p];
      if (k == L.ignore) {
        // l = wk = 0
      } else if (k < 0 || k >= C) {
        if (threadIdx.x == 0)
          atomicMin(L.badPosition, static_cast<unsigned long long>(p));
      } else {
        wk = L.w ? L.w[k] : 1.0;
        l = -wk * logp(k);
        if (L.smoothing > 0) {
          double part = 0;
          for (int64_t c = threadIdx.x; c < C; c += blockDim.x)
            part -= logp(c) * (L.w ? L.w[c] : 1.0);
          double smooth = nnBlockSum(part, sh);
          l = (1 - L.smoothing) * l +
              L.smoothing / static_cast<double>(C) * smooth;
        }
      }
    }
    if (threadIdx.x == 0) {
      L.loss[p] = l;
      L.den[p] = wk;
      if (L.reduction == 0)
        ewStoreDouble(L.out + p * os, L.outDtype, l);
      // Set with reduction none only for an unbatched input (P == 1).
      if (L.reduction == 0 && L.totalWeight)
        ewStoreDouble(L.totalWeight, L.outDtype, wk);
    }
  }
}

/// Sum and mean: the total loss over the summed weights of the counted
/// targets (index targets) or over probDenominator (probabilities); 0 / 0
/// is NaN, as PyTorch when every target is ignored.
__global__ void lossReduceKernel(LossLaunch L) {
  __shared__ double sh[kNNThreads];
  int64_t P = L.N * L.S;
  double total = 0, den = 0;
  for (int64_t p = threadIdx.x; p < P; p += blockDim.x) {
    total += L.loss[p];
    den += L.den[p];
  }
  total = nnBlockSum(total, sh);
  den = L.probs.data ? L.probDenominator : nnBlockSum(den, sh);
  if (threadIdx.x == 0) {
    ewStoreDouble(L.out, L.outDtype, L.reduction == 2 ? total : total / den);
    if (L.totalWeight)
      ewStoreDouble(L.totalWeight, L.outDtype, den);
  }
}

/// One thread per position; each writes at most its own target's element.
__global__ void nllLossBackwardKernel(NllBackwardLaunch L) {
  int64_t P = L.N * L.S, C = L.C, S = L.S;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       p < P; p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t k = L.indices[p];
    if (k == L.ignore)
      continue;
    if (k < 0 || k >= C) {
      atomicMin(L.badPosition, static_cast<unsigned long long>(p));
      continue;
    }
    double grad = L.reduction == 0 ? L.g[p] : L.g[0];
    if (L.reduction == 1)
      grad /= L.tw[0];
    nnStore(L.out, L.outDtype, (p / S * C + k) * S + p % S,
            -(L.w ? L.w[k] : 1.0) * grad);
  }
}
} // namespace

cudaError_t cuda::launchLoss(const LossLaunch &L) {
  int64_t P = L.N * L.S;
  if (P > 0)
    lossPositionsKernel<<<nnBlocks(P, 1), kNNThreads>>>(L);
  if (L.reduction != 0)
    lossReduceKernel<<<1, kNNThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchNllLossBackward(const NllBackwardLaunch &L) {
  int64_t P = L.N * L.S;
  if (P > 0)
    nllLossBackwardKernel<<<nnBlocks(P, kNNThreads), kNNThreads>>>(L);
  return cudaGetLastError();
}
