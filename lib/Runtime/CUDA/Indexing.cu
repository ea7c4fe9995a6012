//===- Indexing.cu - Gathers and scatters on CUDA devices -----------------===//
//
// The device half of CUDA/Indexing.cpp: Indexing.h's element functions (the
// CPU's own) run by one thread per gathered element, or per scatter line,
// whose points one thread combines in order: no atomics, and each target's
// sources combine in the CPU's order, to the bit. The range check finds the
// first bad position with atomicMin before anything reads by an index.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/IndexLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

#include <cuda_runtime.h>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
__global__ void indexCheckKernel(IxCheckLaunch L) {
  int es = ewSize(L.dtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < L.numel; i += stride) {
    int64_t off = rdOffsetOf(i, L.rank, L.shape, L.strides);
    if (!ixIndexInRange(ewLoadInt(L.data + off * es, L.dtype), L.size,
                        L.negative))
      atomicMin(L.firstBad, static_cast<unsigned long long>(i));
  }
}

__global__ void gatherKernel(IxMap m, int64_t numel) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < numel; k += stride)
    ixGatherElement(m, k);
}

__global__ void scatterKernel(IxMap m, int64_t lines, int64_t perLine) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       l < lines; l += stride)
    ixScatterLine(m, l, perLine);
}

__global__ void meanKernel(IxMap m, int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride)
    ixMeanElement(m, i);
}
} // namespace

const char *traceir::launchIndexCheckCUDA(const IxCheckLaunch &launch) {
  if (launch.numel == 0)
    return nullptr;
  indexCheckKernel<<<static_cast<unsigned>(gridFor(launch.numel, kMaxThreads)),
                     kMaxThreads>>>(launch);
  return lastError();
}

const char *traceir::launchGatherCUDA(const IxMap &map, int64_t numel) {
  if (numel == 0)
    return nullptr;
  gatherKernel<<<static_cast<unsigned>(gridFor(numel, kMaxThreads)),
                 kMaxThreads>>>(map, numel);
  return lastError();
}

const char *traceir::launchScatterCUDA(const IxMap &map, bool mean,
                                       int64_t baseNumel) {
  int64_t lines, perLine;
  ixLines(map, lines, perLine);
  if (lines > 0 && perLine > 0) {
    scatterKernel<<<static_cast<unsigned>(gridFor(lines, kMaxThreads)),
                    kMaxThreads>>>(map, lines, perLine);
    if (const char *err = lastError())
      return err;
  }
  if (mean && baseNumel > 0) {
    meanKernel<<<static_cast<unsigned>(gridFor(baseNumel, kMaxThreads)),
                 kMaxThreads>>>(map, baseNumel);
    return lastError();
  }
  return nullptr;
}
