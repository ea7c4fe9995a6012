//===- ReduceLaunch.h - Launch descriptions of CUDA reductions --*- C++ -*-===//
//
// What the host halves (CUDA/Reductions.cpp, CUDA/NN.cpp) hand to the device
// code (CUDA/Reductions.cu, CUDA/NN.cu): plain structs with fixed-size
// arrays, passed to the kernels by value. No LLVM here: nvcc compiles it.
//
// Dtypes are DType's numbering (EwDType in Elementwise.h); offsets and
// strides count elements, as in Tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_REDUCELAUNCH_H
#define TRACEIR_RUNTIME_CUDA_REDUCELAUNCH_H

#include "TraceIR/Runtime/CUDA/TypedRows.h"
#include "TraceIR/Runtime/DeviceError.h"
#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

constexpr int kRdMaxRank = kEwMaxRank;

/// A tensor split around its reduced dims, as the CPU's forEachGroup splits
/// it: group `k` (row-major over the kept dims) holds the elements at
/// offset + keptOffset(k) + redOffset(r) for r row-major over the reduced
/// dims.
struct RdGroups {
  int32_t keptRank = 0, redRank = 0;
  int64_t keptShape[kRdMaxRank] = {}, keptStrides[kRdMaxRank] = {};
  int64_t redShape[kRdMaxRank] = {}, redStrides[kRdMaxRank] = {};
  int64_t numKept = 1, numRed = 1;
  int64_t offset = 0;
};

/// The offset (in elements) of a row-major linear index `k` over `shape`.
TRACEIR_HD inline int64_t rdOffsetOf(int64_t k, int32_t rank,
                                     const int64_t *shape,
                                     const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t n = shape[d];
    if (n == 0)
      return off;
    off += (k % n) * strides[d];
    k /= n;
  }
  return off;
}

/// The base offset of group `k`, storage offset included.
TRACEIR_HD inline int64_t rdKeptOffset(const RdGroups &g, int64_t k) {
  return g.offset + rdOffsetOf(k, g.keptRank, g.keptShape, g.keptStrides);
}

/// The offset of reduced element `r` within a group.
TRACEIR_HD inline int64_t rdRedOffset(const RdGroups &g, int64_t r) {
  return rdOffsetOf(r, g.redRank, g.redShape, g.redStrides);
}

//===--- Reductions.cu ----------------------------------------------------===//

enum class RdKind : int32_t {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  Any,
  ArgMax,
  ArgMin,
  Var
};

/// sum/mean/amax/amin/prod/any/var: out[k] (contiguous) = reduce over
/// group k of `in`; argmax/argmin: out[k] (int64) = the position in group k
/// (row-major over the reduced dims) of its first extreme element, and
/// for max.dim/min.dim values[k] = that element.
struct ReduceLaunch {
  RdKind kind = RdKind::Sum;
  RdGroups in;
  const char *data = nullptr;
  int32_t inDtype = F32;
  char *out = nullptr;
  int32_t outDtype = F32;
  /// Accumulate in int64 (an integer result of sum/amax/amin/prod, and
  /// any), else in double.
  bool integer = false;
  /// any, argmax, argmin: the input is floating, so its elements are read
  /// as doubles (else as int64).
  bool floatInput = false;
  /// var: the divisor of a group of n is max(0, n - correction).
  double correction = 1;
  /// max.dim/min.dim (argmax/argmin's kinds): the extreme values too,
  /// contiguous as `out`; null for argmax/argmin.
  char *values = nullptr;
  int32_t valuesDtype = F32;
};

/// softmax/log_softmax: `in` and `out` split around the same dim.
/// _log_softmax_backward_data: `in` is the forward's output and `grad` the
/// incoming gradient, split the same way.
struct SoftmaxLaunch {
  RdGroups in, out;
  const char *data = nullptr;
  int32_t inDtype = F32;
  char *outData = nullptr;
  int32_t outDtype = F32;
  bool log = false;
  RdGroups grad;
  const char *gradData = nullptr;
  int32_t gradDtype = F32;
};

/// cumsum and cumprod: `in` and `out` split around the same dim; row k's
/// running sums or products (int64 for an integer result, else double) go
/// to its row of `out`.
struct CumsumLaunch {
  RdGroups in, out;
  const char *data = nullptr;
  int32_t inDtype = F32;
  char *outData = nullptr;
  int32_t outDtype = F32;
  bool integer = false;
  bool product = false; ///< cumprod
};

/// Each returns null on success, else the CUDA error's text.
const char *launchReduceCUDA(const ReduceLaunch &launch);
const char *launchCumsumCUDA(const CumsumLaunch &launch);
const char *launchSoftmaxCUDA(const SoftmaxLaunch &launch);
const char *launchLogSoftmaxBackwardCUDA(const SoftmaxLaunch &launch);
/// The optimized tier's softmax over contiguous rows (TypedRows.h).
const char *launchSoftmaxRowsCUDA(const SoftmaxRowsPlan &plan);

//===--- NN.cu ------------------------------------------------------------===//

/// layer_norm over the trailing dims (native_group_norm over its groups):
/// `in` split with the normalized dims reduced; out (contiguous) element
/// (o, j) at o * numRed + j, its weight and bias element (o % groups) *
/// (numRed / span) + j / span (LayerNormArgs::weightIndex).
struct LayerNormLaunch {
  RdGroups in;
  const char *data = nullptr;
  int32_t inDtype = F32;
  char *out = nullptr;
  int32_t outDtype = F32;
  /// Contiguous weight and bias over the normalized dims, or null.
  const char *weight = nullptr, *bias = nullptr;
  int32_t weightDtype = F32, biasDtype = F32;
  /// native_layer_norm's mean and rstd (contiguous, one per row), or null.
  char *mean = nullptr, *rstd = nullptr;
  int32_t meanDtype = F32, rstdDtype = F32;
  double eps = 1e-5;
  int64_t groups = 1, span = 1;
};

/// embedding: out[i, j] (contiguous) = weight[indices[i], j].
struct EmbeddingLaunch {
  const char *indices = nullptr;
  int32_t indexDtype = I64;
  int32_t indexRank = 0;
  int64_t indexShape[kRdMaxRank] = {}, indexStrides[kRdMaxRank] = {};
  int64_t numIndices = 0;
  const char *weight = nullptr; ///< at its storage offset
  int64_t rows = 0, dim = 0, rowStride = 0, colStride = 0;
  int32_t elementSize = 4;
  char *out = nullptr;
  /// Device scratch: numIndices int64 (the gathered indices).
  void *scratch = nullptr;
  /// Where a bad index is recorded (DeviceErrorLaunch.h).
  DeviceErrorSlot errors;
};

/// dropout in training: out = keep ? in * scale : 0, with keep drawn from
/// Philox (seed, element index).
struct DropoutLaunch {
  int32_t rank = 0;
  int64_t shape[kRdMaxRank] = {};
  int64_t numel = 0;
  const char *in = nullptr; ///< at its storage offset
  int32_t inDtype = F32;
  int64_t inStrides[kRdMaxRank] = {};
  char *out = nullptr; ///< at its storage offset
  int32_t outDtype = F32;
  int64_t outStrides[kRdMaxRank] = {};
  double p = 0.5, scale = 2.0;
  uint64_t seed = 0;
  /// native_dropout: a contiguous bool result, 1 where the element was
  /// kept; the output is then in * (keep ? scale : 0), as ATen's. Where
  /// `keepAll` (eval mode, p == 0), nothing is drawn.
  char *mask = nullptr;
  int32_t keepAll = 0;
};

const char *launchLayerNormCUDA(const LayerNormLaunch &launch);
/// The optimized tier's layer_norm over contiguous rows (TypedRows.h).
const char *launchLayerNormRowsCUDA(const LayerNormRowsPlan &plan);
/// Gathers the indices and queues the rows' gather; the first index out of
/// range (row-major) is recorded in `launch.errors` instead, and then
/// nothing is written. No wait.
const char *launchEmbeddingCUDA(const EmbeddingLaunch &launch);
const char *launchDropoutCUDA(const DropoutLaunch &launch);

//===--- Attention.cu -----------------------------------------------------===//

/// scaled_dot_product_attention's masked softmax: scores [B, L, S]
/// (contiguous, f32 or f64, already scaled) to probabilities [B, L, S]
/// (contiguous, the query's dtype). Batch b's mask row i is at maskOffset +
/// offset(b over batchShape, maskBatchStrides) + i * maskRs, step maskCs.
struct AttentionSoftmaxLaunch {
  const char *scores = nullptr;
  int32_t scoreDtype = F32;
  char *probs = nullptr;
  int32_t probDtype = F32;
  int64_t B = 0, L = 0, S = 0;
  bool causal = false;
  const char *mask = nullptr; ///< the mask's storage start, or null
  int32_t maskDtype = Bool;
  int32_t batchRank = 0;
  int64_t batchShape[kRdMaxRank] = {}, maskBatchStrides[kRdMaxRank] = {};
  int64_t maskOffset = 0, maskRs = 0, maskCs = 0;
  /// Where not null, each row's logsumexp ([B, L], contiguous; -inf for a
  /// row with nothing to attend to).
  char *lse = nullptr;
  int32_t lseDtype = F32;
};

const char *launchAttentionSoftmaxCUDA(const AttentionSoftmaxLaunch &launch);

} // namespace traceir

//===--- Device helpers shared by the .cu files ---------------------------===//

#ifdef __CUDACC__
#include <cuda_runtime.h>

namespace traceir::cudadev {

constexpr int kMaxThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

/// Threads for a block reducing `n` elements: a power of two in [32, 256].
inline int threadsFor(int64_t n) {
  int t = 32;
  while (t < kMaxThreads && t < n)
    t <<= 1;
  return t;
}

/// Blocks of `threads` for a grid-stride loop over `n` items.
inline int64_t gridFor(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  return blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
}

/// Launches a typed row kernel (TypedRows.h) over `rows` rows of
/// `vectors` accesses each: one block per row (a grid-stride loop past
/// kMaxBlocks) of threadsFor(vectors) threads.
template <typename Plan>
void launchRows(void (*kernel)(Plan), const Plan &plan, int64_t rows,
                int64_t vectors) {
  int64_t blocks = rows < kMaxBlocks ? rows : kMaxBlocks;
  kernel<<<static_cast<unsigned>(blocks), threadsFor(vectors)>>>(plan);
}

/// Null, or the text of the last launch's error (and clears it).
inline const char *lastError() {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

/// Runs `Element(plan, k)` for every k < n, a thread per element in a
/// grid-stride loop: the kernels whose host halves built a plan with a
/// per-element function the CPU kernel loops over (Resample.h,
/// Convolution.h).
template <typename Plan, void (*Element)(const Plan &, int64_t)>
__global__ void perElementKernel(Plan plan, int64_t n) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    Element(plan, k);
}

/// Launches perElementKernel over `n` elements (nothing when n is 0);
/// null, or the launch's error text.
template <typename Plan, void (*Element)(const Plan &, int64_t)>
const char *launchPerElement(const Plan &plan, int64_t n) {
  if (n == 0)
    return nullptr;
  perElementKernel<Plan, Element>
      <<<static_cast<unsigned>(gridFor(n, kMaxThreads)), kMaxThreads>>>(plan,
                                                                        n);
  return lastError();
}

struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};
/// Addition in T: the typed row kernels' sums (TypedRows.h).
template <typename T> struct SumT {
  __device__ T operator()(T a, T b) const { return a + b; }
};
/// std::max's rule (a NaN `b` leaves `a`), as the CPU kernels use it.
struct MaxD {
  __device__ double operator()(double a, double b) const {
    return a < b ? b : a;
  }
};
/// Wrapping int64 addition.
struct SumI {
  __device__ int64_t operator()(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }
};
/// Wrapping int64 multiplication.
struct ProdI {
  __device__ int64_t operator()(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) *
                                static_cast<uint64_t>(b));
  }
};
struct MaxI {
  __device__ int64_t operator()(int64_t a, int64_t b) const {
    return a < b ? b : a;
  }
};
struct OrN {
  __device__ int operator()(int a, int b) const { return a | b; }
};

/// Reduces one value per thread over the block (blockDim.x a power of two
/// up to kMaxThreads) in a fixed order; every thread gets the result. All
/// threads of the block must call it; `sh` holds kMaxThreads values.
template <typename T, typename Op> __device__ T blockReduce(T v, T *sh, Op op) {
  unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      sh[t] = op(sh[t], sh[t + s]);
    __syncthreads();
  }
  T r = sh[0];
  __syncthreads(); // sh may be reused right away
  return r;
}

} // namespace traceir::cudadev
#endif // __CUDACC__

#endif // TRACEIR_RUNTIME_CUDA_REDUCELAUNCH_H
