//===- Resample.cpp - avg_pool2d, pads, flip, repeat, upsampling ----------===//
//
// The CPU kernels of the plans of Runtime/Resample.h: each loops over its
// (contiguous) result and runs the plan's per-element function, the one
// the CUDA kernels run per thread. Pads, flip, repeat and
// upsample_nearest2d copy elements in any dtype; avg_pool2d and
// upsample_bilinear2d accumulate in f64. Inputs may be any strided view.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/ResampleArgs.h"

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// Runs plan `p` when the call was `planned` (read without failing).
void runGather(bool planned, const GatherPlan &p) {
  if (!planned)
    return;
  for (int64_t k = 0; k < p.numel; ++k)
    gatherElement(p, k);
}

void pad(KernelContext &ctx, PadMode mode, int spatial) {
  GatherPlan p;
  runGather(padPlan(ctx, mode, spatial, p), p);
}
} // namespace

void cpu::avg_pool2d(KernelContext &ctx) {
  AvgPool2dPlan p;
  if (!avgPool2dPlan(ctx, p))
    return;
  for (int64_t k = 0, n = p.x.numel(); k < n; ++k)
    avgPool2dElement(p, k);
}

void cpu::constant_pad_nd(KernelContext &ctx) {
  pad(ctx, PadMode::Constant, 0);
}
void cpu::reflection_pad1d(KernelContext &ctx) {
  pad(ctx, PadMode::Reflect, 1);
}
void cpu::reflection_pad2d(KernelContext &ctx) {
  pad(ctx, PadMode::Reflect, 2);
}
void cpu::reflection_pad3d(KernelContext &ctx) {
  pad(ctx, PadMode::Reflect, 3);
}
void cpu::replication_pad1d(KernelContext &ctx) {
  pad(ctx, PadMode::Replicate, 1);
}
void cpu::replication_pad2d(KernelContext &ctx) {
  pad(ctx, PadMode::Replicate, 2);
}
void cpu::replication_pad3d(KernelContext &ctx) {
  pad(ctx, PadMode::Replicate, 3);
}

void cpu::flip(KernelContext &ctx) {
  GatherPlan p;
  runGather(flipPlan(ctx, p), p);
}

void cpu::repeat(KernelContext &ctx) {
  GatherPlan p;
  runGather(repeatPlan(ctx, p), p);
}

void cpu::upsample_nearest2d(KernelContext &ctx) {
  GatherPlan p;
  runGather(upsampleNearestPlan(ctx, p), p);
}

void cpu::upsample_bilinear2d(KernelContext &ctx) {
  BilinearPlan p;
  if (!upsampleBilinearPlan(ctx, p))
    return;
  for (int64_t k = 0, n = p.x.numel(); k < n; ++k)
    bilinearElement(p, k);
}
