//===- Attention.cu - scaled_dot_product_attention's softmax on CUDA ------===//
//
// The device half of CUDA/Attention.cpp: the cuBLAS products are there;
// this is the masked softmax between them, one block per score row, in
// double as the CPU kernel (CPU/Attention.cpp) does it: mask (bool: False
// drops the score; float: added), causal mask (column j > row i dropped),
// subtract the row's max, normalize. A row with nothing left to attend to
// gives zeros, as PyTorch does. Where asked, each row's logsumexp
// (_scaled_dot_product_flash_attention_for_cpu's second result) too.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

#include <cuda_runtime.h>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
__device__ double maskedScore(const AttentionSoftmaxLaunch &L, int64_t row,
                              int64_t i, int64_t j, int64_t maskBase) {
  int ss = ewSize(L.scoreDtype);
  double x = ewLoadDouble(L.scores + (row * L.S + j) * ss, L.scoreDtype);
  if (L.causal && j > i)
    return -INFINITY;
  if (L.mask) {
    const char *mp = L.mask + (maskBase + j * L.maskCs) * ewSize(L.maskDtype);
    if (L.maskDtype == Bool)
      return ewLoadInt(mp, Bool) ? x : -INFINITY;
    x += ewLoadDouble(mp, L.maskDtype);
  }
  return x;
}

__global__ void attentionSoftmaxKernel(AttentionSoftmaxLaunch L) {
  __shared__ double sh[kMaxThreads];
  int ps = ewSize(L.probDtype);
  int64_t t = threadIdx.x, B = blockDim.x, rows = L.B * L.L;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    int64_t b = row / L.L, i = row % L.L;
    int64_t maskBase = 0;
    if (L.mask)
      maskBase = L.maskOffset + i * L.maskRs +
                 rdOffsetOf(b, L.batchRank, L.batchShape, L.maskBatchStrides);
    double mx = -INFINITY;
    for (int64_t j = t; j < L.S; j += B)
      mx = MaxD()(mx, maskedScore(L, row, i, j, maskBase));
    mx = blockReduce<double>(mx, sh, MaxD());
    char *out = L.probs + row * L.S * ps;
    if (mx == -INFINITY) { // nothing to attend to: zeros, as PyTorch
      for (int64_t j = t; j < L.S; j += B)
        ewStoreDouble(out + j * ps, L.probDtype, 0.0);
      if (L.lse && t == 0)
        ewStoreDouble(L.lse + row * ewSize(L.lseDtype), L.lseDtype, -INFINITY);
      continue;
    }
    double sum = 0;
    for (int64_t j = t; j < L.S; j += B)
      sum += exp(maskedScore(L, row, i, j, maskBase) - mx);
    sum = blockReduce<double>(sum, sh, SumD());
    if (L.lse && t == 0)
      ewStoreDouble(L.lse + row * ewSize(L.lseDtype), L.lseDtype,
                    mx + log(sum));
    for (int64_t j = t; j < L.S; j += B)
      ewStoreDouble(out + j * ps, L.probDtype,
                    exp(maskedScore(L, row, i, j, maskBase) - mx) / sum);
  }
}
} // namespace

const char *
traceir::launchAttentionSoftmaxCUDA(const AttentionSoftmaxLaunch &launch) {
  int64_t rows = launch.B * launch.L;
  if (rows == 0 || (launch.S == 0 && !launch.lse))
    return nullptr;
  int64_t blocks = rows < kMaxBlocks ? rows : kMaxBlocks;
  attentionSoftmaxKernel<<<static_cast<unsigned>(blocks),
                           threadsFor(launch.S)>>>(launch);
  return lastError();
}
