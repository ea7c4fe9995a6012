//===- ResampleArgs.h - Plans of the resampling kernels ---------*- C++ -*-===//
//
// Reads and checks a call of the pools, col2im, the pads, flip, repeat or the
// 2-D upsamplings with the registry's decoders (Support/OpArgs.h) and builds
// the plan (Resample.h) that both the CPU and the CUDA kernels run, so the
// two devices accept the same calls and fail with the same messages. Each
// builder fails the call (and returns false) on bad input, including a
// result whose shape or dtype is not the op's (a saved executable states
// its own result types, and the kernels write by them).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_RESAMPLEARGS_H
#define TRACEIR_RUNTIME_RESAMPLEARGS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/Resample.h"
#include "TraceIR/Support/OpArgs.h"

namespace traceir {

/// avg_pool2d (`spatial` 2) and avg_pool3d (3), decoded by avgPoolArgs
/// (NNArgs.h): a floating or i64 input of spatial + 1 or spatial + 2 dims
/// with nonzero non-batch dims, and PyTorch's output size.
bool avgPoolPlan(KernelContext &ctx, int spatial, AvgPoolPlan &p);

/// max_pool2d (`spatial` 2, no `indices`), max_pool2d_with_indices and
/// max_pool3d_with_indices (`spatial` 3), decoded by maxPoolArgs.
bool maxPoolPlan(KernelContext &ctx, int spatial, bool indices, MaxPoolPlan &p);

/// adaptive_avg_pool2d (`spatial` 2) and _adaptive_avg_pool3d (3), checked
/// by adaptiveAvgPoolArgs: the output size is the result's.
bool adaptiveAvgPoolPlan(KernelContext &ctx, int spatial,
                         AdaptiveAvgPoolPlan &p);

/// col2im(self, output_size, kernel_size, dilation, padding, stride),
/// decoded by decodeCol2im: a floating or bool input, and a result of its
/// dtype and the folded shape.
bool col2imPlan(KernelContext &ctx, Col2imPlan &p);

/// constant_pad_nd (`spatial` 0) and reflection_padNd / replication_padNd
/// (N = `spatial`), decoded by decodePad. The reflection and replication
/// pads refuse bool, as PyTorch.
bool padPlan(KernelContext &ctx, PadMode mode, int spatial, GatherPlan &p);

/// flip(self, dims): each dim at most once; any dtype.
bool flipPlan(KernelContext &ctx, GatherPlan &p);

/// repeat(self, repeats), decoded by decodeRepeat; any dtype.
bool repeatPlan(KernelContext &ctx, GatherPlan &p);

/// upsample_nearest2d.vec, decoded by decodeUpsample2d: a 4-D floating or
/// u8 input.
bool upsampleNearestPlan(KernelContext &ctx, GatherPlan &p);

/// upsample_bilinear2d.vec, decoded by decodeUpsample2d: a 4-D floating
/// or u8 input.
bool upsampleBilinearPlan(KernelContext &ctx, BilinearPlan &p);

} // namespace traceir

#endif // TRACEIR_RUNTIME_RESAMPLEARGS_H
