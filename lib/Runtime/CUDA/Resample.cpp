//===- Resample.cpp - Pools, col2im, pads, flip, repeat, upsampling, CUDA ===//
//
// The host half of Resample.cu: the plans are CPU/Resample.cpp's, built by
// the same readers (ResampleArgs.h), so both devices accept the same calls
// and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ResampleLaunch.h"
#include "TraceIR/Runtime/CUDA/TypedPools.h"
#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Runtime/ResampleArgs.h"

using namespace traceir;

namespace {
void launched(KernelContext &ctx, const char *op, const char *err) {
  if (err)
    ctx.fail(strCat(op) + " kernel failed on CUDA: " + err);
}

void runGather(KernelContext &ctx, const char *op, bool planned,
               const GatherPlan &p) {
  if (planned)
    launched(ctx, op, launchGatherCUDA(p));
}

void pad(KernelContext &ctx, const char *op, PadMode mode, int spatial) {
  GatherPlan p;
  runGather(ctx, op, padPlan(ctx, mode, spatial, p), p);
}

/// A 2-D pool on the optimized tier's typed kernel (TypedPools.h), where
/// the plan takes it: true, having launched it (or failed the call).
bool typedPool(KernelContext &ctx, const char *op, bool planned,
               const TypedPoolPlan &t) {
  if (!planned || !optimizedTierEnabled())
    return false;
  if (const char *err = launchTypedPoolCUDA(t))
    launched(ctx, op, err);
  else
    ctx.ranTier(KernelTier::Optimized);
  return true;
}

void maxPool(KernelContext &ctx, const char *op, const MaxPoolPlan &p) {
  TypedPoolPlan t;
  if (!typedPool(ctx, op, typedMaxPoolPlan(p, t), t))
    launched(ctx, op, launchMaxPoolCUDA(p));
}
} // namespace

void cuda::avg_pool2d(KernelContext &ctx) {
  AvgPoolPlan p;
  TypedPoolPlan t;
  if (avgPoolPlan(ctx, 2, p) &&
      !typedPool(ctx, "avg_pool2d", typedAvgPoolPlan(p, t), t))
    launched(ctx, "avg_pool2d", launchAvgPoolCUDA(p));
}
void cuda::avg_pool3d(KernelContext &ctx) {
  AvgPoolPlan p;
  if (avgPoolPlan(ctx, 3, p))
    launched(ctx, "avg_pool3d", launchAvgPoolCUDA(p));
}

/// max_pool2d, max_pool2d_with_indices and max_pool3d_with_indices: the
/// CPU's maxPoolElement per thread (its indices written by the device), or
/// the typed kernel where it applies.
void cuda::max_pool2d(KernelContext &ctx) {
  MaxPoolPlan p;
  if (maxPoolPlan(ctx, 2, false, p))
    maxPool(ctx, "max_pool2d", p);
}
void cuda::max_pool2d_with_indices(KernelContext &ctx) {
  MaxPoolPlan p;
  if (maxPoolPlan(ctx, 2, true, p))
    maxPool(ctx, "max_pool2d_with_indices", p);
}
void cuda::max_pool3d_with_indices(KernelContext &ctx) {
  MaxPoolPlan p;
  if (maxPoolPlan(ctx, 3, true, p))
    maxPool(ctx, "max_pool3d_with_indices", p);
}

void cuda::adaptive_avg_pool2d(KernelContext &ctx) {
  AdaptiveAvgPoolPlan p;
  if (adaptiveAvgPoolPlan(ctx, 2, p))
    launched(ctx, "adaptive_avg_pool2d", launchAdaptiveAvgPoolCUDA(p));
}
void cuda::_adaptive_avg_pool3d(KernelContext &ctx) {
  AdaptiveAvgPoolPlan p;
  if (adaptiveAvgPoolPlan(ctx, 3, p))
    launched(ctx, "_adaptive_avg_pool3d", launchAdaptiveAvgPoolCUDA(p));
}

void cuda::col2im(KernelContext &ctx) {
  Col2imPlan p;
  if (col2imPlan(ctx, p))
    launched(ctx, "col2im", launchCol2imCUDA(p));
}

void cuda::constant_pad_nd(KernelContext &ctx) {
  pad(ctx, "constant_pad_nd", PadMode::Constant, 0);
}
void cuda::reflection_pad1d(KernelContext &ctx) {
  pad(ctx, "reflection_pad1d", PadMode::Reflect, 1);
}
void cuda::reflection_pad2d(KernelContext &ctx) {
  pad(ctx, "reflection_pad2d", PadMode::Reflect, 2);
}
void cuda::reflection_pad3d(KernelContext &ctx) {
  pad(ctx, "reflection_pad3d", PadMode::Reflect, 3);
}
void cuda::replication_pad1d(KernelContext &ctx) {
  pad(ctx, "replication_pad1d", PadMode::Replicate, 1);
}
void cuda::replication_pad2d(KernelContext &ctx) {
  pad(ctx, "replication_pad2d", PadMode::Replicate, 2);
}
void cuda::replication_pad3d(KernelContext &ctx) {
  pad(ctx, "replication_pad3d", PadMode::Replicate, 3);
}

void cuda::flip(KernelContext &ctx) {
  GatherPlan p;
  runGather(ctx, "flip", flipPlan(ctx, p), p);
}

void cuda::repeat(KernelContext &ctx) {
  GatherPlan p;
  runGather(ctx, "repeat", repeatPlan(ctx, p), p);
}

void cuda::upsample_nearest2d(KernelContext &ctx) {
  GatherPlan p;
  runGather(ctx, "upsample_nearest2d", upsampleNearestPlan(ctx, p), p);
}

void cuda::upsample_bilinear2d(KernelContext &ctx) {
  BilinearPlan p;
  if (upsampleBilinearPlan(ctx, p))
    launched(ctx, "upsample_bilinear2d", launchBilinearCUDA(p));
}
