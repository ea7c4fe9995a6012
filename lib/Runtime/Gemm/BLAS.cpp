//===- BLAS.cpp - CPU GEMM through a CBLAS (OpenBLAS) ---------------------===//

#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CPU/Parallel.h"

#include <algorithm>

#include <cblas.h>

using namespace traceir;

static CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

/// Rows of C per block in deterministic mode: each block is one
/// single-threaded BLAS call whose rounding depends on its own shape only,
/// and the blocks depend on M alone, so every element is computed the same
/// way at any thread count. (OpenBLAS's threaded products are not: they
/// differ in the last bit between one thread and two.)
constexpr int64_t kDeterministicRows = 128;

/// C = op(A) @ op(B) as `call`s over fixed blocks of rows in deterministic
/// mode, else as one call with the BLAS's own threads.
template <typename T, typename Call>
void blocked(bool transA, int64_t M, const T *A, int64_t lda, T *C, int64_t ldc,
             const Call &call) {
  if (!cpu::deterministic() || M <= kDeterministicRows)
    return call(M, A, C);
  int64_t blocks = (M + kDeterministicRows - 1) / kDeterministicRows;
  cpu::parallelFor(blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t r0 = i * kDeterministicRows;
      // Row r of op(A): row r of A, or column r of A stored transposed.
      call(std::min(kDeterministicRows, M - r0), transA ? A + r0 : A + r0 * lda,
           C + r0 * ldc);
    }
  });
}

void cpu::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B,
                int64_t ldb, float beta, float *C, int64_t ldc) {
  blocked(transA, M, A, lda, C, ldc, [&](int64_t m, const float *a, float *c) {
    cblas_sgemm(CblasRowMajor, op(transA), op(transB), m, N, K, alpha, a, lda,
                B, ldb, beta, c, ldc);
  });
}

void cpu::dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B,
                int64_t ldb, double beta, double *C, int64_t ldc) {
  blocked(transA, M, A, lda, C, ldc,
          [&](int64_t m, const double *a, double *c) {
            cblas_dgemm(CblasRowMajor, op(transA), op(transB), m, N, K, alpha,
                        a, lda, B, ldb, beta, c, ldc);
          });
}

const char *cpu::gemmBackend() { return "OpenBLAS"; }

void cpu::setGemmThreads(int n) { openblas_set_num_threads(n > 0 ? n : 1); }
int cpu::gemmThreads() { return openblas_get_num_threads(); }
