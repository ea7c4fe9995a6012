//===- Resample.cpp - avg_pool2d, pads, flip, repeat, upsampling on CUDA --===//
//
// The host half of Resample.cu: the plans are CPU/Resample.cpp's, built by
// the same readers (ResampleArgs.h), so both devices accept the same calls
// and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ResampleLaunch.h"
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
} // namespace

void cuda::avg_pool2d(KernelContext &ctx) {
  AvgPool2dPlan p;
  if (avgPool2dPlan(ctx, p))
    launched(ctx, "avg_pool2d", launchAvgPool2dCUDA(p));
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
