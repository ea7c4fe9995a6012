//===- Gemm.h - The CPU kernels' one matrix product -------------*- C++ -*-===//
//
// Every CPU matrix product (matmul, linear, conv2d's im2col GEMM, the RNN
// gates) goes through these, with cblas_?gemm's contract: row-major,
// C = alpha * op(A) @ op(B) + beta * C, op a transpose or not, leading
// dimensions; with beta == 0, C is written without being read. Which
// implementation is linked is the build's choice: a CPU BLAS where one is
// found (Gemm/BLAS.cpp), else the portable loops (Gemm/Portable.cpp), so
// the runtime-only build runs where there is no BLAS. Called inside a
// parallel region (a kernel's own split of its work), a product runs on the
// calling thread alone.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_GEMM_H
#define TRACEIR_RUNTIME_CPU_GEMM_H

#include <cstdint>

namespace traceir::cpu {

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
           float alpha, const float *A, int64_t lda, const float *B,
           int64_t ldb, float beta, float *C, int64_t ldc);
void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
           double alpha, const double *A, int64_t lda, const double *B,
           int64_t ldb, double beta, double *C, int64_t ldc);

inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 float alpha, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc) {
  sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                 double alpha, const double *A, int64_t lda, const double *B,
                 int64_t ldb, double beta, double *C, int64_t ldc) {
  dgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/// The BLAS's own threads (Parallel.cpp sets them: one where the runtime's
/// pool splits the products); the portable loops use one and ignore the
/// setting.
void setGemmThreads(int n);
int gemmThreads();

/// What implements them: "OpenBLAS", OpenBLAS with oneDNN's sgemm for
/// large f32 products (Gemm/BLAS.cpp), or "portable" (trace-exec
/// --version, the GPU bundle's table).
const char *gemmBackend();

} // namespace traceir::cpu

#endif // TRACEIR_RUNTIME_CPU_GEMM_H
