//===- NN.cu - layer_norm, embedding, dropout on CUDA devices -------------===//
//
// The device halves of CUDA/NN.cpp, mirroring CPU/NN.cpp: layer_norm in
// double with a two-pass variance (one block per row; at the optimized tier
// over contiguous rows, the typed row kernel of TypedRows.h); embedding gathers
// the indices first and records the first one out of range in the run's error
// record (DeviceErrorLaunch.h), and then reads no row; dropout draws one Philox
// uniform per element from (seed, element index), so a run's seed fixes the
// mask whatever the launch shape.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

#include <cuda_runtime.h>
#include <curand_kernel.h>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
__global__ void layerNormKernel(LayerNormLaunch L) {
  __shared__ double sh[kMaxThreads];
  int es = ewSize(L.inDtype), os = ewSize(L.outDtype);
  int64_t t = threadIdx.x, B = blockDim.x, inner = L.in.numRed;
  for (int64_t o = blockIdx.x; o < L.in.numKept; o += gridDim.x) {
    int64_t base = rdKeptOffset(L.in, o);
    auto load = [&](int64_t j) {
      return ewLoadDouble(L.data + (base + rdRedOffset(L.in, j)) * es,
                          L.inDtype);
    };
    double mean = 0;
    for (int64_t j = t; j < inner; j += B)
      mean += load(j);
    mean = blockReduce<double>(mean, sh, SumD()) / inner;
    double var = 0;
    for (int64_t j = t; j < inner; j += B) {
      double d = load(j) - mean;
      var += d * d;
    }
    var = blockReduce<double>(var, sh, SumD()) / inner;
    double rstd = 1.0 / sqrt(var + L.eps);
    for (int64_t j = t; j < inner; j += B) {
      double v = (load(j) - mean) * rstd;
      int64_t wi = (o % L.groups) * (inner / L.span) + j / L.span;
      double w = L.weight ? ewLoadDouble(L.weight + wi * ewSize(L.weightDtype),
                                         L.weightDtype)
                          : 1.0;
      double b =
          L.bias ? ewLoadDouble(L.bias + wi * ewSize(L.biasDtype), L.biasDtype)
                 : 0.0;
      ewStoreDouble(L.out + (o * inner + j) * os, L.outDtype, v * w + b);
    }
    if (t == 0 && L.mean) {
      ewStoreDouble(L.mean + o * ewSize(L.meanDtype), L.meanDtype, mean);
      ewStoreDouble(L.rstd + o * ewSize(L.rstdDtype), L.rstdDtype, rstd);
    }
  }
}

/// Gathers the indices (any strides) as int64 into `gathered`; `firstBad`
/// (the error record's `pending`) ends as the smallest position holding an
/// index out of [0, rows).
__global__ void embeddingIndexKernel(EmbeddingLaunch L, int64_t *gathered,
                                     unsigned long long *firstBad) {
  int ies = ewSize(L.indexDtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < L.numIndices; i += stride) {
    int64_t off = rdOffsetOf(i, L.indexRank, L.indexShape, L.indexStrides);
    int64_t r = ewLoadInt(L.indices + off * ies, L.indexDtype);
    gathered[i] = r;
    if (r < 0 || r >= L.rows)
      atomicMin(firstBad, static_cast<unsigned long long>(i));
  }
}

/// out[i * dim + j] = weight[gathered[i], j], element by element (bytes);
/// nothing once the run has an error (an index may be out of range).
__global__ void embeddingGatherKernel(EmbeddingLaunch L,
                                      const int64_t *gathered) {
  if (deviceErrorSet(L.errors.record))
    return;
  int64_t total = L.numIndices * L.dim, es = L.elementSize;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < total; e += stride) {
    int64_t i = e / L.dim, j = e % L.dim;
    const char *src =
        L.weight + (gathered[i] * L.rowStride + j * L.colStride) * es;
    char *dst = L.out + e * es;
    switch (es) {
    case 8:
      ewWrite<uint64_t>(dst, ewRead<uint64_t>(src));
      break;
    case 4:
      ewWrite<uint32_t>(dst, ewRead<uint32_t>(src));
      break;
    case 2:
      ewWrite<uint16_t>(dst, ewRead<uint16_t>(src));
      break;
    default:
      ewWrite<uint8_t>(dst, ewRead<uint8_t>(src));
      break;
    }
  }
}

__global__ void dropoutKernel(DropoutLaunch L) {
  int ies = ewSize(L.inDtype), oes = ewSize(L.outDtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < L.numel; k += stride) {
    int64_t si = rdOffsetOf(k, L.rank, L.shape, L.inStrides);
    int64_t oi = rdOffsetOf(k, L.rank, L.shape, L.outStrides);
    double v = ewLoadDouble(L.in + si * ies, L.inDtype);
    bool keep = L.keepAll != 0;
    if (!keep) {
      curandStatePhilox4_32_10_t state;
      curand_init(L.seed, static_cast<unsigned long long>(k), 0, &state);
      // Uniform in (0, 1]: drop with probability p, and always when p == 1.
      double u = curand_uniform_double(&state);
      keep = L.p < 1 && !(u < L.p);
    }
    if (L.mask)
      L.mask[k] = keep;
    ewStoreDouble(L.out + oi * oes, L.outDtype,
                  L.mask ? v * (keep ? L.scale : 0.0)
                  : keep ? v * L.scale
                         : 0.0);
  }
}

/// The optimized tier's layer_norm (TypedRows.h): one block per row, the
/// mean and the variance about it reduced over the block in the opmath
/// type; thread 0 writes native_layer_norm's mean and rstd.
template <int32_t DT, int VEC>
__global__ void layerNormRowsKernel(LayerNormRowsPlan p) {
  using R = LayerNormRow<DT, VEC>;
  using T = typename R::T;
  using C = typename R::C;
  __shared__ C sh[kMaxThreads];
  const int64_t t = threadIdx.x, B = blockDim.x;
  const T *w = reinterpret_cast<const T *>(p.weight);
  const T *b = reinterpret_cast<const T *>(p.bias);
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const T *x = reinterpret_cast<const T *>(p.in) + row * p.n;
    T *y = reinterpret_cast<T *>(p.out) + row * p.n;
    C mean =
        blockReduce<C>(R::partialSum(x, p.n, t, B), sh, SumT<C>()) / C(p.n);
    C rstd = R::rstdOf(
        blockReduce<C>(R::partialSquares(x, p.n, t, B, mean), sh, SumT<C>()),
        p.n, p.eps);
    if (t == 0 && p.mean)
      ewStoreDouble(p.mean + row * ewSize(p.meanDtype), p.meanDtype, mean);
    if (t == 0 && p.rstd)
      ewStoreDouble(p.rstd + row * ewSize(p.rstdDtype), p.rstdDtype, rstd);
    R::write(x, y, w, b, p.n, t, B, mean, rstd);
  }
}
template <int32_t DT, int VEC> struct LayerNormRowsLaunch {
  static void run(const LayerNormRowsPlan &p) {
    launchRows(layerNormRowsKernel<DT, VEC>, p, p.rows, p.n / VEC);
  }
};
} // namespace

const char *traceir::launchLayerNormRowsCUDA(const LayerNormRowsPlan &plan) {
  if (plan.rows == 0 || plan.n == 0)
    return nullptr;
  typedRowsDispatch<LayerNormRowsLaunch>(plan);
  return lastError();
}

const char *traceir::launchLayerNormCUDA(const LayerNormLaunch &launch) {
  // Empty rows still write their mean and rstd (NaN), as the CPU's.
  if (launch.in.numKept == 0)
    return nullptr;
  int64_t blocks =
      launch.in.numKept < kMaxBlocks ? launch.in.numKept : kMaxBlocks;
  layerNormKernel<<<static_cast<unsigned>(blocks),
                    threadsFor(launch.in.numRed)>>>(launch);
  return lastError();
}

const char *traceir::launchEmbeddingCUDA(const EmbeddingLaunch &launch) {
  if (launch.numIndices == 0)
    return nullptr;
  auto *gathered = static_cast<int64_t *>(launch.scratch);
  DeviceErrorRecord *record = launch.errors.record;
  embeddingIndexKernel<<<static_cast<unsigned>(
                             gridFor(launch.numIndices, kMaxThreads)),
                         kMaxThreads>>>(launch, gathered, &record->pending);
  if (const char *e = lastError())
    return e;
  DeviceErrorCommit commit;
  commit.slot = launch.errors;
  commit.code = static_cast<int32_t>(DeviceErrorCode::EmbeddingIndex);
  commit.limit = launch.rows;
  commit.src[0] = deviceErrorSource(gathered, I64, launch.numIndices);
  if (const char *e = launchDeviceErrorCommit(commit))
    return e;
  int64_t total = launch.numIndices * launch.dim;
  if (total == 0)
    return nullptr;
  embeddingGatherKernel<<<static_cast<unsigned>(gridFor(total, kMaxThreads)),
                          kMaxThreads>>>(launch, gathered);
  return lastError();
}

const char *traceir::launchDropoutCUDA(const DropoutLaunch &launch) {
  if (launch.numel == 0)
    return nullptr;
  dropoutKernel<<<static_cast<unsigned>(gridFor(launch.numel, kMaxThreads)),
                  kMaxThreads>>>(launch);
  return lastError();
}
