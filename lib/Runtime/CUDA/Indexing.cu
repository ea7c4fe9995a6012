//===- Indexing.cu - Gathers and scatters on CUDA devices -----------------===//
//
// The device half of CUDA/Indexing.cpp: Indexing.h's element functions (the
// CPU's own) run by one thread per gathered element, or per scatter line,
// whose points one thread combines in order: no atomics, and each target's
// sources combine in the CPU's order, to the bit. The range check finds the
// first bad position with atomicMin for the commit that records it
// (DeviceErrorLaunch.h); the gathers and scatters after it do nothing once
// the run has an error, so nothing reads by a bad index.
// masked_scatter counts each chunk's Trues, scans the counts (the host
// checks the total against source's size), then each chunk's block scans
// its mask tile by tile to find each True's source element.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
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

__global__ void gatherKernel(IxMap m, int64_t numel,
                             const DeviceErrorRecord *errors) {
  if (deviceErrorSet(errors))
    return; // an index may be out of range
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < numel; k += stride)
    ixGatherElement(m, k);
}

__global__ void scatterKernel(IxMap m, int64_t lines, int64_t perLine,
                              const DeviceErrorRecord *errors) {
  if (deviceErrorSet(errors))
    return; // an index may be out of range
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
/// The inclusive prefix sum of `v` over the block (blockDim.x ==
/// kMsThreads); sh[kMsThreads - 1] is then the block's total, valid until
/// the next call (which must follow a __syncthreads()).
__device__ int64_t msBlockScan(int64_t v, int64_t *sh) {
  int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int off = 1; off < kMsThreads; off <<= 1) {
    int64_t add = t >= off ? sh[t - off] : 0;
    __syncthreads();
    sh[t] += add;
    __syncthreads();
  }
  return sh[t];
}

__device__ void msChunk(const MaskedScatterLaunch &L, int64_t chunks, int64_t c,
                        int64_t &begin, int64_t &end) {
  int64_t size = (L.numel + chunks - 1) / chunks;
  begin = c * size < L.numel ? c * size : L.numel;
  end = begin + size < L.numel ? begin + size : L.numel;
}

/// A block per chunk counts its Trues into starts[chunk].
__global__ void msCountKernel(MaskedScatterLaunch L, int64_t chunks,
                              int64_t *starts) {
  __shared__ int64_t sh[kMsThreads];
  int64_t begin, end, n = 0;
  msChunk(L, chunks, blockIdx.x, begin, end);
  for (int64_t i = begin + threadIdx.x; i < end; i += kMsThreads)
    n += msMaskAt(L, i);
  msBlockScan(n, sh);
  if (threadIdx.x == 0)
    starts[blockIdx.x] = sh[kMsThreads - 1];
}

/// One block turns the counts into exclusive starts and the total.
__global__ void msStartsKernel(int64_t chunks, int64_t *starts) {
  __shared__ int64_t sh[kMsThreads];
  int t = threadIdx.x;
  int64_t n = t < chunks ? starts[t] : 0;
  int64_t inc = msBlockScan(n, sh);
  __syncthreads(); // every count read before any start is written
  if (t < chunks)
    starts[t] = inc - n;
  if (t == kMsThreads - 1)
    starts[chunks] = inc;
}

__global__ void msScatterKernel(MaskedScatterLaunch L, int64_t chunks,
                                const int64_t *starts) {
  __shared__ int64_t sh[kMsThreads];
  int64_t begin, end;
  msChunk(L, chunks, blockIdx.x, begin, end);
  int64_t carry = starts[blockIdx.x];
  for (int64_t base = begin; base < end; base += kMsThreads) {
    int64_t i = base + threadIdx.x;
    bool masked = i < end && msMaskAt(L, i);
    int64_t k = carry + msBlockScan(masked, sh) - masked;
    // The host checked the total; the bound keeps a bad mask from reading
    // past source all the same.
    if (i < end && (!masked || k < L.sourceNumel))
      msElement(L, i, masked, k);
    carry += sh[kMsThreads - 1];
    __syncthreads();
  }
}
} // namespace

const char *
traceir::launchMaskedScatterCountCUDA(const MaskedScatterLaunch &launch,
                                      int64_t *starts) {
  int64_t chunks = msChunks(launch.numel);
  msCountKernel<<<static_cast<unsigned>(chunks), kMsThreads>>>(launch, chunks,
                                                               starts);
  if (const char *err = lastError())
    return err;
  msStartsKernel<<<1, kMsThreads>>>(chunks, starts);
  return lastError();
}

const char *traceir::launchMaskedScatterCUDA(const MaskedScatterLaunch &launch,
                                             const int64_t *starts) {
  if (launch.numel == 0)
    return nullptr;
  int64_t chunks = msChunks(launch.numel);
  msScatterKernel<<<static_cast<unsigned>(chunks), kMsThreads>>>(launch, chunks,
                                                                 starts);
  return lastError();
}

const char *traceir::launchIndexCheckCUDA(const IxCheckLaunch &launch) {
  if (launch.numel == 0)
    return nullptr;
  indexCheckKernel<<<static_cast<unsigned>(gridFor(launch.numel, kMaxThreads)),
                     kMaxThreads>>>(launch);
  return lastError();
}

const char *traceir::launchGatherCUDA(const IxMap &map, int64_t numel,
                                      const DeviceErrorRecord *errors) {
  if (numel == 0)
    return nullptr;
  gatherKernel<<<static_cast<unsigned>(gridFor(numel, kMaxThreads)),
                 kMaxThreads>>>(map, numel, errors);
  return lastError();
}

const char *traceir::launchScatterCUDA(const IxMap &map, bool mean,
                                       int64_t baseNumel,
                                       const DeviceErrorRecord *errors) {
  int64_t lines, perLine;
  ixLines(map, lines, perLine);
  if (lines > 0 && perLine > 0) {
    scatterKernel<<<static_cast<unsigned>(gridFor(lines, kMaxThreads)),
                    kMaxThreads>>>(map, lines, perLine, errors);
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
