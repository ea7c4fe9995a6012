//===- NormPoolBackward.cu - Pool, norm, embedding backward on CUDA -------===//
//
// Grid-stride loops, a thread per result element (or per row for a norm's
// row sums), each running the plan's per-element function of
// Runtime/NormPoolBackward.h (the CPU kernels' own): every element sums its
// terms in the CPU's order, so the results are deterministic and need no
// atomics but for the integer index counts.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/NormPoolBackwardLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// index[i] = indices[i]; start[w + 1] counts index w; `firstBad` (the error
/// record's `pending`) ends as the smallest position holding an index out
/// of [0, V), which is not counted.
__global__ void embeddingCountKernel(StridedOperand indices, int64_t L,
                                     int64_t V, int64_t *index,
                                     unsigned long long *start,
                                     unsigned long long *firstBad) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < L; i += stride) {
    int64_t w = indices.loadInt(i);
    index[i] = w;
    if (w < 0 || w >= V)
      atomicMin(firstBad, static_cast<unsigned long long>(i));
    else if (start)
      atomicAdd(start + w + 1, 1ull);
  }
}

/// One thread: the counts' prefix sums, then a stable counting sort of the
/// positions (in position order, as the CPU's). Nothing once the run has an
/// error: a bad index would write outside `order`.
__global__ void embeddingSortKernel(int64_t L, int64_t V, const int64_t *index,
                                    int64_t *start, int64_t *next,
                                    int64_t *order,
                                    const DeviceErrorRecord *errors) {
  if (blockIdx.x != 0 || threadIdx.x != 0 || deviceErrorSet(errors))
    return;
  for (int64_t w = 0; w < V; ++w) {
    start[w + 1] += start[w];
    next[w] = start[w];
  }
  for (int64_t i = 0; i < L; ++i)
    order[next[index[i]]++] = i;
}

const char *cudaText(cudaError_t err) {
  if (err == cudaSuccess)
    return nullptr;
  cudaGetLastError();
  return cudaGetErrorString(err);
}
} // namespace

const char *traceir::launchPoolBackwardCUDA(const PoolBackwardPlan &plan) {
  return launchPerElement<PoolBackwardPlan, poolBackwardElement>(plan,
                                                                 plan.numel());
}

const char *traceir::launchNormBackwardCUDA(const NormBackwardPlan &plan) {
  if (plan.dx) {
    if (const char *e =
            launchPerElement<NormBackwardPlan, normRowSums>(plan, plan.M))
      return e;
    if (const char *e = launchPerElement<NormBackwardPlan, normInputGrad>(
            plan, plan.M * plan.inner))
      return e;
  }
  if (plan.dw || plan.db)
    return launchPerElement<NormBackwardPlan, normWeightGrad>(plan,
                                                              plan.numWeights);
  return nullptr;
}

const char *traceir::launchEmbeddingBackwardCUDA(EmbeddingBackwardPlan plan,
                                                 const StridedOperand &indices,
                                                 int64_t *scratch,
                                                 DeviceErrorSlot errors) {
  // An empty result (whose V may be any size) only checks the indices.
  bool buckets = plan.numel() > 0;
  int64_t L = plan.L, V = plan.V, B = buckets ? V : 0;
  int64_t *index = scratch, *order = index + L, *start = order + L;
  int64_t *next = start + B + 1;
  if (const char *e =
          cudaText(cudaMemsetAsync(start, 0, (B + 1) * sizeof(int64_t))))
    return e;
  if (L > 0) {
    embeddingCountKernel<<<static_cast<unsigned>(gridFor(L, kMaxThreads)),
                           kMaxThreads>>>(
        indices, L, V, index,
        buckets ? reinterpret_cast<unsigned long long *>(start) : nullptr,
        &errors.record->pending);
    if (const char *e = lastError())
      return e;
    DeviceErrorCommit commit;
    commit.slot = errors;
    commit.code = static_cast<int32_t>(DeviceErrorCode::EmbeddingBackwardIndex);
    commit.limit = V;
    commit.src[0] = deviceErrorSource(index, I64, L);
    if (const char *e = launchDeviceErrorCommit(commit))
      return e;
  }
  if (!buckets)
    return nullptr;
  embeddingSortKernel<<<1, 1>>>(L, V, index, start, next, order, errors.record);
  if (const char *e = lastError())
    return e;
  plan.order = order;
  plan.start = start;
  int64_t n = plan.numel();
  // Nothing once the run has an error: the sort did not run, and `order`
  // holds nothing to read by.
  perElementUnlessErrorKernel<EmbeddingBackwardPlan, embeddingBackwardElement>
      <<<static_cast<unsigned>(gridFor(n, kMaxThreads)), kMaxThreads>>>(
          plan, n, errors.record);
  return lastError();
}
