//===- DistanceArgs.h - Plans of the distance kernels -----------*- C++ -*-===//
//
// Reads and checks a call of _cdist_forward, _pdist_forward, _embedding_bag
// or grid_sampler_2d with the registry's decoders (Support/OpArgs.h) and
// builds the plan (Distance.h) that both the CPU and the CUDA kernels run,
// so the two devices accept the same calls and fail with the same messages.
// Each builder fails the call (and returns false) on bad input, including a
// result whose shape or dtype is not the op's (a saved executable states
// its own result types, and the kernels write by them).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_DISTANCEARGS_H
#define TRACEIR_RUNTIME_DISTANCEARGS_H

#include "TraceIR/Runtime/Distance.h"
#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Support/OpArgs.h"

namespace traceir {

/// _cdist_forward(x1, x2, p, compute_mode): f32 or f64 x1 [*, P, M] and x2
/// [*, R, M] of one dtype, batch dims that broadcast, a result [*, P, R].
/// (TraceIR computes the direct form for every compute_mode.)
bool cdistPlan(KernelContext &ctx, DistancePlan &p);

/// _pdist_forward(self, p=2): an f32 or f64 [N, M] self and a result
/// [N * (N - 1) / 2].
bool pdistPlan(KernelContext &ctx, DistancePlan &p);

/// _embedding_bag(weight, indices, offsets, ...), decoded by
/// decodeEmbeddingBag: a floating 2-D weight, 1-D i32 or i64 indices and
/// offsets, per_sample_weights (sum only) 1-D of the weight's dtype and the
/// indices' length, include_last_offset with at least one offset, and the
/// four results of ATen's shapes in the weight's dtype and the indices'
/// and offsets' common index dtype. The indices' and offsets' values are
/// each device's to check (embeddingBagFault) before it reduces.
bool embeddingBagPlan(KernelContext &ctx, EmbeddingBagPlan &p);

/// Fails _embedding_bag on check position `key` (embeddingBagFault's k),
/// whose offset or index is `value`.
void failEmbeddingBag(KernelContext &ctx, const EmbeddingBagPlan &p,
                      int64_t key, int64_t value);

/// grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners), decoded by decodeGridSampler: a floating input
/// [N, C, H, W] with H, W > 0, a grid [N, OH, OW, 2] of its dtype, a result
/// [N, C, OH, OW].
bool gridSamplerPlan(KernelContext &ctx, GridSamplePlan &p);

} // namespace traceir

#endif // TRACEIR_RUNTIME_DISTANCEARGS_H
