//===- RNN.cu - Device code of the CUDA lstm ------------------------------===//
//
// The elementwise parts of lstm (RNN.cpp runs the products on cuBLAS): the
// gates' bias broadcast, the cell update of one time step (i, f, g, o, as
// lib/Runtime/CPU/RNN.cpp computes them) and the inter-layer dropout, drawn
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

/// gates[r, j] = b_ih[j] + b_hh[j] (or 0 without biases), r < rows.
template <typename T>
__global__ void fillBiasKernel(T *gates, const T *bih, const T *bhh,
                               int64_t rows, int64_t gatesSize) {
  int64_t n = rows * gatesSize;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride) {
    int64_t j = k % gatesSize;
    gates[k] = bih ? bih[j] + bhh[j] : T(0);
  }
}

/// One time step: gates [batch, 4H] (pre-activations, i f g o), cell
/// [batch, H] updated in place, h_t of batch row b written at h + b * hStride.
template <typename T>
__global__ void cellStepKernel(const T *gates, T *cell, T *h, int64_t hStride,
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
bool fillBiasImpl(T *gates, const T *bih, const T *bhh, int64_t rows,
                  int64_t gatesSize) {
  int64_t n = rows * gatesSize;
  if (n <= 0)
    return true;
  fillBiasKernel<T>
      <<<blocksFor(n), kThreads>>>(gates, bih, bhh, rows, gatesSize);
  return launched();
}

template <typename T>
bool cellStepImpl(const T *gates, T *cell, T *h, int64_t hStride, int64_t batch,
                  int64_t hidden) {
  int64_t n = batch * hidden;
  if (n <= 0)
    return true;
  cellStepKernel<T>
      <<<blocksFor(n), kThreads>>>(gates, cell, h, hStride, batch, hidden);
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
bool fillBias(float *gates, const float *bih, const float *bhh, int64_t rows,
              int64_t gatesSize) {
  return fillBiasImpl(gates, bih, bhh, rows, gatesSize);
}
bool fillBias(double *gates, const double *bih, const double *bhh, int64_t rows,
              int64_t gatesSize) {
  return fillBiasImpl(gates, bih, bhh, rows, gatesSize);
}
bool cellStep(const float *gates, float *cell, float *h, int64_t hStride,
              int64_t batch, int64_t hidden) {
  return cellStepImpl(gates, cell, h, hStride, batch, hidden);
}
bool cellStep(const double *gates, double *cell, double *h, int64_t hStride,
              int64_t batch, int64_t hidden) {
  return cellStepImpl(gates, cell, h, hStride, batch, hidden);
}
bool dropout(float *x, int64_t n, double p, float scale, uint64_t seed) {
  return dropoutImpl(x, n, p, scale, seed);
}
bool dropout(double *x, int64_t n, double p, double scale, uint64_t seed) {
  return dropoutImpl(x, n, p, scale, seed);
}
} // namespace traceir::cuda::rnn
