//===- Distance.cu - cdist, pdist, embedding bags, grid sampling on CUDA --===//
//
// Grid-stride loops, a thread per result element, each running the plan's
// per-element function of Runtime/Distance.h (the CPU kernels' own).
// _embedding_bag first checks its offsets and indices in a kernel of its
// own and records the first bad one in the run's error record
// (DeviceErrorLaunch.h; no wait), as embedding does; its bags then do
// nothing.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/DistanceLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// `firstBad` (the error record's `pending`) ends as the smallest check
/// position that fails.
__global__ void embeddingBagCheckKernel(EmbeddingBagPlan plan, int64_t n,
                                        unsigned long long *firstBad) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    if (embeddingBagFault(plan, k))
      atomicMin(firstBad, static_cast<unsigned long long>(k));
}

} // namespace

const char *traceir::launchDistanceCUDA(const DistancePlan &plan) {
  return launchPerElement<DistancePlan, distanceElement>(plan, plan.numel);
}

const char *traceir::launchGridSampleCUDA(const GridSamplePlan &plan) {
  return launchPerElement<GridSamplePlan, gridSampleElement>(plan,
                                                             plan.numel());
}

const char *traceir::launchEmbeddingBagCUDA(const EmbeddingBagPlan &plan,
                                            DeviceErrorSlot errors) {
  int64_t checks = plan.numOffsets + plan.N;
  if (checks > 0) {
    embeddingBagCheckKernel<<<
        static_cast<unsigned>(gridFor(checks, kMaxThreads)), kMaxThreads>>>(
        plan, checks, &errors.record->pending);
    if (const char *e = lastError())
      return e;
    // Check positions run over the offsets, then the indices.
    DeviceErrorCommit commit;
    commit.slot = errors;
    commit.split = plan.numOffsets;
    commit.code = static_cast<int32_t>(DeviceErrorCode::EmbeddingBagOffset);
    commit.limit = plan.N;
    commit.src[0] = deviceErrorSource(plan.offsets, plan.offsetsDtype,
                                      plan.numOffsets, plan.offsetsStride);
    commit.code1 = static_cast<int32_t>(DeviceErrorCode::EmbeddingBagIndex);
    commit.limit1 = plan.rows;
    commit.src[1] = deviceErrorSource(plan.indices, plan.indicesDtype, plan.N,
                                      plan.indicesStride);
    if (const char *e = launchDeviceErrorCommit(commit))
      return e;
  }
  // Bags read by their offsets and indices: nothing once one is bad.
  const DeviceErrorRecord *record = errors.record;
  if (plan.out)
    if (const char *e =
            launchPerElementUnlessError<EmbeddingBagPlan, embeddingBagElement>(
                plan, plan.numBags * plan.D, record))
      return e;
  if (plan.bagSize)
    if (const char *e = launchPerElementUnlessError<EmbeddingBagPlan,
                                                    embeddingBagSizeElement>(
            plan, plan.numSizes, record))
      return e;
  if (plan.offset2bag)
    return launchPerElementUnlessError<EmbeddingBagPlan,
                                       embeddingBagOffset2bagElement>(
        plan, plan.N, record);
  return nullptr;
}
