//===- RNNLaunch.h - The device half of the CUDA lstm -----------*- C++ -*-===//
//
// The entry points of RNN.cu, for RNN.cpp. Plain types only: nvcc compiles
// RNN.cu without LLVM. Each returns whether its launch went through.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H

#include <cstdint>

namespace traceir::cuda::rnn {
bool fillBias(float *gates, const float *bih, const float *bhh, int64_t rows,
              int64_t gatesSize);
bool fillBias(double *gates, const double *bih, const double *bhh, int64_t rows,
              int64_t gatesSize);
bool cellStep(const float *gates, float *cell, float *h, int64_t hStride,
              int64_t batch, int64_t hidden);
bool cellStep(const double *gates, double *cell, double *h, int64_t hStride,
              int64_t batch, int64_t hidden);
bool dropout(float *x, int64_t n, double p, float scale, uint64_t seed);
bool dropout(double *x, int64_t n, double p, double scale, uint64_t seed);
} // namespace traceir::cuda::rnn

#endif // TRACEIR_RUNTIME_CUDA_RNNLAUNCH_H
