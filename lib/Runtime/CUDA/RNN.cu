//===- RNN.cu - Device code of the CUDA lstm and gru ----------------------===//
//
// The elementwise parts of lstm and gru (RNN.cpp runs the products on
// cuBLAS): the gates' bias broadcast, the cell updates of one time step
// (lstm's i, f, g, o and gru's r, z, n, as lib/Runtime/CPU/RNN.cpp computes
// them) and the inter-layer dropout, drawn
// from counter-based Philox streams so that a seed fixes every mask.
// Everything runs on the legacy default stream, as the products do.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/RNNLaunch.h"

#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cmath>
#include <cstdint>

namespace {
constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `n` elements (n > 0).
unsigned blocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > 65535 ? 65535 : blocks);
}

/// Whether the last launch went through (and clears a launch error).
bool launched() { return cudaGetLastError() == cudaSuccess; }

__device__ inline float devExp(float x) { return expf(x); }
__device__ inline double devExp(double x) { return exp(x); }
__device__ inline float devTanh(float x) { return tanhf(x); }
__device__ inline double devTanh(double x) { return tanh(x); }
template <typename T> __device__ inline T sigmoid(T x) {
  return T(1) / (T(1) + devExp(-x));
}

/// rows[r, j] = b1[j] + b2[j], r < n, either bias null for none.
template <typename T>
__global__ void fillBiasKernel(T *rows, const T *b1, const T *b2, int64_t n,
                               int64_t width) {
  int64_t total = n * width;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t j = k % width;
    rows[k] = (b1 ? b1[j] : T(0)) + (b2 ? b2[j] : T(0));
  }
}

/// One time step: gates [batch, 4H] (pre-activations, i f g o), cell
/// [batch, H] updated in place, h_t of batch row b written at h + b * hStride.
template <typename T>
__global__ void lstmStepKernel(const T *gates, T *cell, T *h, int64_t hStride,
                               int64_t batch, int64_t hidden) {
  int64_t n = batch * hidden;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride) {
    int64_t b = k / hidden, j = k % hidden;
    const T *gb = gates + b * 4 * hidden;
    T i = sigmoid(gb[j]), f = sigmoid(gb[hidden + j]);
    T gg = devTanh(gb[2 * hidden + j]);
    T o = sigmoid(gb[3 * hidden + j]);
    T c = f * cell[k] + i * gg;
    cell[k] = c;
    h[b * hStride + j] = o * devTanh(c);
  }
}

/// One gru time step: gi [batch, 3H] = b_ih + x_t @ w_ih^T and gh
/// [batch, 3H] = h_{t-1} @ w_hh^T (r, z, n), bhh null without biases; h_t
/// = (1 - z) n + z h_{t-1} of batch row b written at h + b * hStride, h_{t-1}
/// read at hPrev + b * hPrevLd.
template <typename T>
__global__ void gruStepKernel(const T *gi, const T *gh, const T *bhh,
                              const T *hPrev, int64_t hPrevLd, T *h,
                              int64_t hStride, int64_t batch, int64_t hidden) {
  int64_t n = batch * hidden;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride) {
    int64_t b = k / hidden, j = k % hidden;
    const T *ib = gi + b * 3 * hidden, *hb = gh + b * 3 * hidden;
    T br = bhh ? bhh[j] : T(0), bz = bhh ? bhh[hidden + j] : T(0);
    T bn = bhh ? bhh[2 * hidden + j] : T(0);
    T r = sigmoid(ib[j] + hb[j] + br);
    T z = sigmoid(ib[hidden + j] + hb[hidden + j] + bz);
    T nn = devTanh(ib[2 * hidden + j] + r * (hb[2 * hidden + j] + bn));
    h[b * hStride + j] = (T(1) - z) * nn + z * hPrev[b * hPrevLd + j];
  }
}

/// x[k] = u_k > p ? x[k] * scale : 0, u_k uniform in (0, 1] from the Philox
/// subsequence k of `seed`: each element kept with probability 1 - p.
template <typename T>
__global__ void dropoutKernel(T *x, int64_t n, double p, T scale,
                              unsigned long long seed) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride) {
    curandStatePhilox4_32_10_t s;
    curand_init(seed, static_cast<unsigned long long>(k), 0, &s);
    double u = curand_uniform_double(&s);
    x[k] = u > p ? x[k] * scale : T(0);
  }
}

template <typename T>
bool fillBiasImpl(T *rows, const T *b1, const T *b2, int64_t n, int64_t width) {
  int64_t total = n * width;
  if (total <= 0)
    return true;
  fillBiasKernel<T><<<blocksFor(total), kThreads>>>(rows, b1, b2, n, width);
  return launched();
}

template <typename T>
bool lstmStepImpl(const T *gates, T *cell, T *h, int64_t hStride, int64_t batch,
                  int64_t hidden) {
  int64_t n = batch * hidden;
  if (n <= 0)
    return true;
  lstmStepKernel<T>
      <<<blocksFor(n), kThreads>>>(gates, cell, h, hStride, batch, hidden);
  return launched();
}

template <typename T>
bool gruStepImpl(const T *gi, const T *gh, const T *bhh, const T *hPrev,
                 int64_t hPrevLd, T *h, int64_t hStride, int64_t batch,
                 int64_t hidden) {
  int64_t n = batch * hidden;
  if (n <= 0)
    return true;
  gruStepKernel<T><<<blocksFor(n), kThreads>>>(gi, gh, bhh, hPrev, hPrevLd, h,
                                               hStride, batch, hidden);
  return launched();
}

template <typename T>
bool dropoutImpl(T *x, int64_t n, double p, T scale, uint64_t seed) {
  if (n <= 0)
    return true;
  dropoutKernel<T><<<blocksFor(n), kThreads>>>(
      x, n, p, scale, static_cast<unsigned long long>(seed));
  return launched();
}
} // namespace

namespace traceir::cuda::rnn {
bool fillBias(float *rows, const float *b1, const float *b2, int64_t n,
              int64_t width) {
  return fillBiasImpl(rows, b1, b2, n, width);
}
bool fillBias(double *rows, const double *b1, const double *b2, int64_t n,
              int64_t width) {
  return fillBiasImpl(rows, b1, b2, n, width);
}
bool lstmStep(const float *gates, float *cell, float *h, int64_t hStride,
              int64_t batch, int64_t hidden) {
  return lstmStepImpl(gates, cell, h, hStride, batch, hidden);
}
bool lstmStep(const double *gates, double *cell, double *h, int64_t hStride,
              int64_t batch, int64_t hidden) {
  return lstmStepImpl(gates, cell, h, hStride, batch, hidden);
}
bool gruStep(const float *gi, const float *gh, const float *bhh,
             const float *hPrev, int64_t hPrevLd, float *h, int64_t hStride,
             int64_t batch, int64_t hidden) {
  return gruStepImpl(gi, gh, bhh, hPrev, hPrevLd, h, hStride, batch, hidden);
}
bool gruStep(const double *gi, const double *gh, const double *bhh,
             const double *hPrev, int64_t hPrevLd, double *h, int64_t hStride,
             int64_t batch, int64_t hidden) {
  return gruStepImpl(gi, gh, bhh, hPrev, hPrevLd, h, hStride, batch, hidden);
}
bool dropout(float *x, int64_t n, double p, float scale, uint64_t seed) {
  return dropoutImpl(x, n, p, scale, seed);
}
bool dropout(double *x, int64_t n, double p, double scale, uint64_t seed) {
  return dropoutImpl(x, n, p, scale, seed);
}
} // namespace traceir::cuda::rnn
