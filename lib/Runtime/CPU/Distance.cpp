//===- Distance.cpp - cdist, pdist, embedding bags, grid sampling ---------===//
//
// The CPU kernels of the plans of Runtime/Distance.h: each loops over its
// (contiguous) results and runs the plan's per-element functions, the ones
// the CUDA kernels run per thread. Inputs may be any strided view.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/DistanceArgs.h"

using namespace traceir;
using namespace traceir::cpu;

void cpu::_cdist_forward(KernelContext &ctx) {
  DistancePlan p;
  if (!cdistPlan(ctx, p))
    return;
  for (int64_t k = 0; k < p.numel; ++k)
    distanceElement(p, k);
}

void cpu::_pdist_forward(KernelContext &ctx) {
  DistancePlan p;
  if (!pdistPlan(ctx, p))
    return;
  for (int64_t k = 0; k < p.numel; ++k)
    distanceElement(p, k);
}

/// _embedding_bag: the offsets and indices are checked first, in order, so
/// that a bad one fails the call before anything is read through it.
void cpu::_embedding_bag(KernelContext &ctx) {
  EmbeddingBagPlan p;
  if (!embeddingBagPlan(ctx, p))
    return;
  for (int64_t k = 0, n = p.numOffsets + p.N; k < n; ++k)
    if (embeddingBagFault(p, k))
      return failEmbeddingBag(ctx, p, k,
                              k < p.numOffsets ? bagOffset(p, k)
                                               : bagIndex(p, k - p.numOffsets));
  if (p.out)
    for (int64_t k = 0, n = p.numBags * p.D; k < n; ++k)
      embeddingBagElement(p, k);
  if (p.bagSize)
    for (int64_t b = 0; b < p.numSizes; ++b)
      embeddingBagSizeElement(p, b);
  if (p.offset2bag)
    for (int64_t i = 0; i < p.N; ++i)
      embeddingBagOffset2bagElement(p, i);
}

void cpu::grid_sampler_2d(KernelContext &ctx) {
  GridSamplePlan p;
  if (!gridSamplerPlan(ctx, p))
    return;
  for (int64_t k = 0, n = p.numel(); k < n; ++k)
    gridSampleElement(p, k);
}
