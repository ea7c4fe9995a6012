//===- Portable.cpp - CPU GEMM without a BLAS -----------------------------===//
//
// Plain loops with cblas_?gemm's contract, for builds where no CPU BLAS is
// found (a GPU server with only the CUDA toolkit): correct for every shape
// and transpose, vectorizable in the common cases (the innermost loop runs
// along a contiguous row), and not tuned.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Gemm.h"

#include <algorithm>

using namespace traceir;

namespace {
template <typename T>
void gemmPortable(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                  T alpha, const T *A, int64_t lda, const T *B, int64_t ldb,
                  T beta, T *C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    T *c = C + i * ldc;
    // beta == 0 writes C without reading it, as BLAS does (C may hold NaN).
    if (beta == T(0))
      std::fill(c, c + N, T(0));
    else if (beta != T(1))
      for (int64_t j = 0; j < N; ++j)
        c[j] *= beta;
  }
  if (K == 0 || alpha == T(0))
    return;
  auto a = [&](int64_t i, int64_t k) {
    return transA ? A[k * lda + i] : A[i * lda + k];
  };
  if (!transB) {
    // C[i, :] += alpha * A[i, k] * B[k, :]: rows of B and C are contiguous.
    for (int64_t i = 0; i < M; ++i) {
      T *c = C + i * ldc;
      for (int64_t k = 0; k < K; ++k) {
        T aik = alpha * a(i, k);
        const T *b = B + k * ldb;
        for (int64_t j = 0; j < N; ++j)
          c[j] += aik * b[j];
      }
    }
    return;
  }
  // op(B) = B^T: C[i, j] += alpha * dot(A[i, :], B[j, :]), rows of B
  // contiguous.
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const T *b = B + j * ldb;
      T sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += a(i, k) * b[k];
      C[i * ldc + j] += alpha * sum;
    }
}
} // namespace

void cpu::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B,
                int64_t ldb, float beta, float *C, int64_t ldc) {
  gemmPortable(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cpu::dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B,
                int64_t ldb, double beta, double *C, int64_t ldc) {
  gemmPortable(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const char *cpu::gemmBackend() { return "portable"; }

void cpu::setGemmThreads(int) {}
int cpu::gemmThreads() { return 1; }
