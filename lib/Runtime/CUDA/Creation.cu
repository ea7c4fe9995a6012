//===- Creation.cu - Tensors made from scalars on CUDA --------------------===//
//
// The device halves of CUDA/Creation.cpp, computing as CPU/Creation.cpp
// does: arange's values in int64 or double, each element on its own, so
// the CPU's results to the bit; rand and randn through randValue from two
// 64-bit Philox draws keyed by (seed, element), so a run's seed fixes the
// values whatever the launch shape. randperm sorts the positions by a
// Philox key each (CUB's radix sort), as PyTorch's CUDA randperm does.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/CreationLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <curand_kernel.h>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
__global__ void arangeKernel(ArangeLaunch L) {
  int os = ewSize(L.outDtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < L.size; i += stride) {
    char *o = L.out + i * os;
    if (L.integer)
      ewStoreInt(o, L.outDtype,
                 static_cast<int64_t>(static_cast<uint64_t>(L.startI) +
                                      static_cast<uint64_t>(L.stepI) *
                                          static_cast<uint64_t>(i)));
    else
      ewStoreDouble(o, L.outDtype, L.startD + L.stepD * static_cast<double>(i));
  }
}

__global__ void randKernel(RandLaunch L) {
  int os = ewSize(L.outDtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < L.numel; i += stride) {
    curandStatePhilox4_32_10_t state;
    curand_init(L.seed, static_cast<unsigned long long>(i), 0, &state);
    uint4 r = curand4(&state);
    uint64_t r1 = (static_cast<uint64_t>(r.x) << 32) | r.y;
    uint64_t r2 = (static_cast<uint64_t>(r.z) << 32) | r.w;
    ewStoreDouble(L.out + i * os, L.outDtype,
                  randValue(r1, r2, L.outDtype, L.normal));
  }
}
__global__ void randpermKeysKernel(uint64_t seed, int64_t n, uint64_t *keys,
                                   int64_t *positions) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    curandStatePhilox4_32_10_t state;
    curand_init(seed, static_cast<unsigned long long>(i), 0, &state);
    uint4 r = curand4(&state);
    keys[i] = (static_cast<uint64_t>(r.x) << 32) | r.y;
    positions[i] = i;
  }
}

__global__ void randpermStoreKernel(const int64_t *perm, int64_t n, char *out,
                                    int32_t dtype) {
  int os = ewSize(dtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    if (dtype == F32 || dtype == F64 || dtype == F16 || dtype == BF16)
      ewStoreDouble(out + i * os, dtype, static_cast<double>(perm[i]));
    else
      ewStoreInt(out + i * os, dtype, perm[i]);
  }
}

/// randperm's scratch: keys and positions twice (the sort's ping-pong
/// buffers), then CUB's own, each 256-byte aligned.
struct RandpermScratch {
  uint64_t *keys[2];
  int64_t *positions[2];
  void *cub;
  size_t cubBytes;
};

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

size_t cubSortBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const uint64_t *>(nullptr),
      static_cast<uint64_t *>(nullptr), static_cast<const int64_t *>(nullptr),
      static_cast<int64_t *>(nullptr), n);
  return bytes;
}

RandpermScratch layoutRandperm(void *base, int64_t n) {
  char *p = static_cast<char *>(base);
  size_t each = align256(static_cast<size_t>(n) * 8);
  RandpermScratch s;
  s.keys[0] = reinterpret_cast<uint64_t *>(p);
  s.keys[1] = reinterpret_cast<uint64_t *>(p + each);
  s.positions[0] = reinterpret_cast<int64_t *>(p + 2 * each);
  s.positions[1] = reinterpret_cast<int64_t *>(p + 3 * each);
  s.cub = p + 4 * each;
  s.cubBytes = cubSortBytes(n);
  return s;
}
} // namespace

size_t traceir::randpermScratchBytes(int64_t n) {
  return 4 * align256(static_cast<size_t>(n) * 8) + align256(cubSortBytes(n));
}

const char *traceir::launchRandpermCUDA(const RandpermLaunch &launch) {
  int64_t n = launch.n;
  if (n == 0)
    return nullptr;
  RandpermScratch s = layoutRandperm(launch.scratch, n);
  unsigned grid = static_cast<unsigned>(gridFor(n, kMaxThreads));
  randpermKeysKernel<<<grid, kMaxThreads>>>(launch.seed, n, s.keys[0],
                                            s.positions[0]);
  if (const char *err = lastError())
    return err;
  cudaError_t st =
      cub::DeviceRadixSort::SortPairs(s.cub, s.cubBytes, s.keys[0], s.keys[1],
                                      s.positions[0], s.positions[1], n);
  if (st != cudaSuccess)
    return cudaGetErrorString(st);
  randpermStoreKernel<<<grid, kMaxThreads>>>(s.positions[1], n, launch.out,
                                             launch.outDtype);
  return lastError();
}

const char *traceir::launchArangeCUDA(const ArangeLaunch &launch) {
  if (launch.size == 0)
    return nullptr;
  arangeKernel<<<static_cast<unsigned>(gridFor(launch.size, kMaxThreads)),
                 kMaxThreads>>>(launch);
  return lastError();
}

const char *traceir::launchRandCUDA(const RandLaunch &launch) {
  if (launch.numel == 0)
    return nullptr;
  randKernel<<<static_cast<unsigned>(gridFor(launch.numel, kMaxThreads)),
               kMaxThreads>>>(launch);
  return lastError();
}
