//===- Sorting.cu - sort and topk on CUDA ---------------------------------===//
//
// A thread per row heapsorts the row's positions in its scratch by
// SortRows.h's total order, which the CPU's sort uses too: a total order has
// one sorted result, so both devices' sorts agree to the bit. topk keeps
// that order here (equal values by position); the CPU's follows ATen's CPU
// ties instead, and ATen's CUDA topk promises no order of ties either. (A
// block-wide sort of long rows is the optimized tier's.)
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/SortLaunch.h"

#include <cuda_runtime.h>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// Sifts pos[i] down the max-heap pos[0, n) ("max": last in the order).
__device__ void siftDown(const SortRows &L, int64_t base, int64_t *pos,
                         int64_t i, int64_t n) {
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n)
      return;
    if (c + 1 < n && sortBefore(L, base, pos[c], pos[c + 1]))
      ++c;
    if (!sortBefore(L, base, pos[i], pos[c]))
      return;
    int64_t t = pos[i];
    pos[i] = pos[c];
    pos[c] = t;
    i = c;
  }
}

__global__ void sortKernel(SortRows L) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < L.in.numKept; k += stride) {
    int64_t base = rdKeptOffset(L.in, k), n = L.n;
    int64_t *pos = L.scratch + k * n;
    for (int64_t r = 0; r < n; ++r)
      pos[r] = r;
    for (int64_t i = n / 2 - 1; i >= 0; --i)
      siftDown(L, base, pos, i, n);
    for (int64_t end = n - 1; end > 0; --end) {
      int64_t t = pos[0];
      pos[0] = pos[end];
      pos[end] = t;
      siftDown(L, base, pos, 0, end);
    }
    sortWriteRow(L, k, pos);
  }
}
} // namespace

const char *traceir::launchSortCUDA(const SortRows &launch) {
  if (launch.in.numKept == 0 || launch.k == 0)
    return nullptr;
  sortKernel<<<static_cast<unsigned>(gridFor(launch.in.numKept, kMaxThreads)),
               kMaxThreads>>>(launch);
  return lastError();
}
