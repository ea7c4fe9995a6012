//===- Creation.cu - Tensors made from scalars on CUDA --------------------===//
//
// The device halves of CUDA/Creation.cpp, computing as CPU/Creation.cpp
// does: arange's values in int64 or double, each element on its own, so
// the CPU's results to the bit; rand and randn through randValue from two
// 64-bit Philox draws keyed by (seed, element), so a run's seed fixes the
// values whatever the launch shape.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/CreationLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

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
} // namespace

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
