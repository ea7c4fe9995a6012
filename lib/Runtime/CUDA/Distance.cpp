//===- Distance.cpp - cdist, pdist, embedding bags, grid sampling on CUDA -===//
//
// The host half of Distance.cu: the plans are CPU/Distance.cpp's, built by
// the same readers (DistanceArgs.h), so both devices accept the same calls
// and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DistanceLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/DistanceArgs.h"

using namespace traceir;

namespace {
void launched(KernelContext &ctx, const char *op, const char *err) {
  if (err)
    ctx.fail(strCat(op) + " kernel failed on CUDA: " + err);
}
} // namespace

void cuda::_cdist_forward(KernelContext &ctx) {
  DistancePlan p;
  if (cdistPlan(ctx, p))
    launched(ctx, "_cdist_forward", launchDistanceCUDA(p));
}

void cuda::_pdist_forward(KernelContext &ctx) {
  DistancePlan p;
  if (pdistPlan(ctx, p))
    launched(ctx, "_pdist_forward", launchDistanceCUDA(p));
}

void cuda::_embedding_bag(KernelContext &ctx) {
  EmbeddingBagPlan p;
  if (!embeddingBagPlan(ctx, p))
    return;
  // A bad offset or index is recorded on the device and fails the run at
  // its end.
  if (const char *err = launchEmbeddingBagCUDA(p, ctx.deviceErrors()))
    launched(ctx, "_embedding_bag", err);
}

void cuda::grid_sampler_2d(KernelContext &ctx) {
  GridSamplePlan p;
  if (gridSamplerPlan(ctx, p))
    launched(ctx, "grid_sampler_2d", launchGridSampleCUDA(p));
}
