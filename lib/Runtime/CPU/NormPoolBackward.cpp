//===- NormPoolBackward.cpp - Pool, norm, embedding backward on the CPU ---===//
//
// The CPU kernels of the plans of Runtime/NormPoolBackward.h: each loops over
// its results running the plan's per-element functions, the ones the CUDA
// kernels run per thread.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NormPoolBackwardArgs.h"

#include <vector>

using namespace traceir;
using namespace traceir::cpu;

namespace {
void poolBackward(const PoolBackwardPlan &p) {
  for (int64_t k = 0, n = p.numel(); k < n; ++k)
    poolBackwardElement(p, k);
}

void normBackward(NormBackwardPlan &p) {
  std::vector<double> sums;
  if (p.dx) {
    sums.resize(2 * p.M);
    p.rowSums = sums.data();
    for (int64_t o = 0; o < p.M; ++o)
      normRowSums(p, o);
    for (int64_t k = 0, n = p.M * p.inner; k < n; ++k)
      normInputGrad(p, k);
  }
  if (p.dw || p.db)
    for (int64_t q = 0; q < p.numWeights; ++q)
      normWeightGrad(p, q);
}
} // namespace

void cpu::avg_pool2d_backward(KernelContext &ctx) {
  PoolBackwardPlan p;
  if (avgPool2dBackwardPlan(ctx, p))
    poolBackward(p);
}

void cpu::_adaptive_avg_pool2d_backward(KernelContext &ctx) {
  PoolBackwardPlan p;
  if (adaptiveAvgPool2dBackwardPlan(ctx, p))
    poolBackward(p);
}

void cpu::native_layer_norm_backward(KernelContext &ctx) {
  NormBackwardPlan p;
  if (layerNormBackwardPlan(ctx, p))
    normBackward(p);
}

void cpu::native_group_norm_backward(KernelContext &ctx) {
  NormBackwardPlan p;
  if (groupNormBackwardPlan(ctx, p))
    normBackward(p);
}

/// Sorts the positions by index (a stable counting sort), refusing an index
/// outside [0, num_weights), then sums each row's positions. An empty result
/// (D or num_weights 0, which may then be any size) only checks the indices.
void cpu::embedding_dense_backward(KernelContext &ctx) {
  EmbeddingBackwardPlan p;
  StridedOperand idx;
  if (!embeddingDenseBackwardPlan(ctx, p, idx))
    return;
  bool buckets = p.numel() > 0;
  std::vector<int64_t> index(buckets ? p.L : 0), order(buckets ? p.L : 0);
  std::vector<int64_t> start(buckets ? p.V + 1 : 0, 0);
  for (int64_t i = 0; i < p.L; ++i) {
    int64_t w = idx.loadInt(i);
    if (w < 0 || w >= p.V)
      return failEmbeddingBackwardIndex(ctx, w, p.V);
    if (buckets) {
      index[i] = w;
      ++start[w + 1];
    }
  }
  if (!buckets)
    return;
  for (int64_t w = 0; w < p.V; ++w)
    start[w + 1] += start[w];
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < p.L; ++i)
    order[next[index[i]]++] = i;
  p.order = order.data();
  p.start = start.data();
  for (int64_t k = 0, n = p.numel(); k < n; ++k)
    embeddingBackwardElement(p, k);
}
