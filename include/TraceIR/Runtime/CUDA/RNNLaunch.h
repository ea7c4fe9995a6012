//===- RNNLaunch.h - The device half of the CUDA lstm and gru ---*- C++ -*-===//
//
// The entry points of RNN.cu, for RNN.cpp. Plain types only: nvcc compiles
// RNN.cu without LLVM. Each returns whether its launch went through.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H

#include <cstdint>

namespace traceir::cuda::rnn {
/// rows[n, width] = b1 + b2, either bias null for none.
bool fillBias(float *rows, const float *b1, const float *b2, int64_t n,
              int64_t width);
bool fillBias(double *rows, const double *b1, const double *b2, int64_t n,
              int64_t width);
bool lstmStep(const float *gates, float *cell, float *h, int64_t hStride,
              int64_t batch, int64_t hidden);
bool lstmStep(const double *gates, double *cell, double *h, int64_t hStride,
              int64_t batch, int64_t hidden);
bool gruStep(const float *gi, const float *gh, const float *bhh,
             const float *hPrev, int64_t hPrevLd, float *h, int64_t hStride,
             int64_t batch, int64_t hidden);
bool gruStep(const double *gi, const double *gh, const double *bhh,
             const double *hPrev, int64_t hPrevLd, double *h, int64_t hStride,
             int64_t batch, int64_t hidden);
bool dropout(float *x, int64_t n, double p, float scale, uint64_t seed);
bool dropout(double *x, int64_t n, double p, double scale, uint64_t seed);
} // namespace traceir::cuda::rnn

#endif // TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H
