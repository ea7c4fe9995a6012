//===- Resample.cpp - Pools, col2im, pads, flip, repeat, upsampling -------===//
//
// The CPU kernels of the plans of Runtime/Resample.h: each loops over its
// (contiguous) result and runs the plan's per-element function, the one
// the CUDA kernels run per thread (the gathers a row of the last dim at a
// time, gatherRow, which copies the same elements). Pads, flip, repeat and
// upsample_nearest2d copy elements in any dtype; the pools (2-D and 3-D),
// col2im and upsample_bilinear2d accumulate in f64. Inputs may be any
// strided view.
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
  forRows(
      p.numel, p.rank, p.rank ? p.outShape[p.rank - 1] : 1,
      [&](int64_t r) { gatherRow(p, r); },
      [&](int64_t k) { gatherElement(p, k); });
}

void pad(KernelContext &ctx, PadMode mode, int spatial) {
  GatherPlan p;
  runGather(padPlan(ctx, mode, spatial, p), p);
}

/// Runs `element` over every output element when the call was `planned`.
template <typename Plan, void (*Element)(const Plan &, int64_t)>
void runPlan(bool planned, const Plan &p, int64_t numel) {
  if (!planned)
    return;
  for (int64_t k = 0; k < numel; ++k)
    Element(p, k);
}

void avgPool(KernelContext &ctx, int spatial) {
  AvgPoolPlan p;
  bool planned = avgPoolPlan(ctx, spatial, p);
  runPlan<AvgPoolPlan, avgPoolElement>(planned, p, p.x.numel());
}

void maxPool(KernelContext &ctx, int spatial, bool indices) {
  MaxPoolPlan p;
  bool planned = maxPoolPlan(ctx, spatial, indices, p);
  runPlan<MaxPoolPlan, maxPoolElement>(planned, p, p.x.numel());
}

void adaptiveAvgPool(KernelContext &ctx, int spatial) {
  AdaptiveAvgPoolPlan p;
  bool planned = adaptiveAvgPoolPlan(ctx, spatial, p);
  runPlan<AdaptiveAvgPoolPlan, adaptiveAvgPoolElement>(planned, p, p.x.numel());
}
} // namespace

void cpu::avg_pool2d(KernelContext &ctx) { avgPool(ctx, 2); }
void cpu::avg_pool3d(KernelContext &ctx) { avgPool(ctx, 3); }

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False): padding never wins, and a NaN in a window
/// does, as in PyTorch.
void cpu::max_pool2d(KernelContext &ctx) { maxPool(ctx, 2, false); }
/// max_pool2d_with_indices and max_pool3d_with_indices(self, kernel_size,
/// stride, padding, dilation, ceil_mode): the max pool and, per output, the
/// position of its maximum in the input plane (h * W + w) or volume
/// ((d * H + h) * W + w).
void cpu::max_pool2d_with_indices(KernelContext &ctx) { maxPool(ctx, 2, true); }
void cpu::max_pool3d_with_indices(KernelContext &ctx) { maxPool(ctx, 3, true); }

void cpu::adaptive_avg_pool2d(KernelContext &ctx) { adaptiveAvgPool(ctx, 2); }
void cpu::_adaptive_avg_pool3d(KernelContext &ctx) { adaptiveAvgPool(ctx, 3); }

/// col2im (F.fold): each output element sums the block taps covering it.
void cpu::col2im(KernelContext &ctx) {
  Col2imPlan p;
  bool planned = col2imPlan(ctx, p);
  runPlan<Col2imPlan, col2imElement>(planned, p, p.numel());
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
