//===- Distance.cu - cdist, pdist, embedding bags, grid sampling on CUDA --===//
//
// Grid-stride loops, a thread per result element, each running the plan's
// per-element function of Runtime/Distance.h (the CPU kernels' own).
// _embedding_bag first checks its offsets and indices in a kernel of its
// own and reads back the first bad position (the one wait), as embedding
// does.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DistanceLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// `firstBad` ends as the smallest check position that fails.
__global__ void embeddingBagCheckKernel(EmbeddingBagPlan plan, int64_t n,
                                        unsigned long long *firstBad) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    if (embeddingBagFault(plan, k))
      atomicMin(firstBad, static_cast<unsigned long long>(k));
}

const char *failed(cudaError_t err) {
  cudaGetLastError();
  return cudaGetErrorString(err);
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
                                            void *scratch, int64_t &badKey,
                                            int64_t &badValue) {
  badKey = -1;
  badValue = 0;
  int64_t checks = plan.numOffsets + plan.N;
  if (checks > 0) {
    auto *firstBad = static_cast<unsigned long long *>(scratch);
    cudaError_t err = cudaMemset(firstBad, 0xFF, sizeof(*firstBad)); // none
    if (err != cudaSuccess)
      return failed(err);
    embeddingBagCheckKernel<<<
        static_cast<unsigned>(gridFor(checks, kMaxThreads)), kMaxThreads>>>(
        plan, checks, firstBad);
    if (const char *e = lastError())
      return e;
    // Reading the flag back waits for the kernel.
    unsigned long long bad = 0;
    err = cudaMemcpy(&bad, firstBad, sizeof(bad), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
      return failed(err);
    if (bad != ~0ull) {
      badKey = static_cast<int64_t>(bad);
      bool isOffset = badKey < plan.numOffsets;
      int32_t dtype = isOffset ? plan.offsetsDtype : plan.indicesDtype;
      int64_t pos = isOffset ? badKey : badKey - plan.numOffsets;
      const char *at =
          (isOffset ? plan.offsets + pos * plan.offsetsStride * ewSize(dtype)
                    : plan.indices + pos * plan.indicesStride * ewSize(dtype));
      char value[8] = {};
      err = cudaMemcpy(value, at, ewSize(dtype), cudaMemcpyDeviceToHost);
      if (err != cudaSuccess)
        return failed(err);
      badValue = ewLoadInt(value, dtype);
      return nullptr;
    }
  }
  if (plan.out)
    if (const char *e = launchPerElement<EmbeddingBagPlan, embeddingBagElement>(
            plan, plan.numBags * plan.D))
      return e;
  if (plan.bagSize)
    if (const char *e =
            launchPerElement<EmbeddingBagPlan, embeddingBagSizeElement>(
                plan, plan.numSizes))
      return e;
  if (plan.offset2bag)
    return launchPerElement<EmbeddingBagPlan, embeddingBagOffset2bagElement>(
        plan, plan.N);
  return nullptr;
}
