//===- BLAS.cpp - CPU GEMM through a CBLAS (OpenBLAS) ---------------------===//

#include "TraceIR/Runtime/CPU/Gemm.h"

#include <cblas.h>

using namespace traceir;

static CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

void cpu::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B,
                int64_t ldb, float beta, float *C, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, op(transA), op(transB), M, N, K, alpha, A, lda, B,
              ldb, beta, C, ldc);
}

void cpu::dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B,
                int64_t ldb, double beta, double *C, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(transA), op(transB), M, N, K, alpha, A, lda, B,
              ldb, beta, C, ldc);
}

const char *cpu::gemmBackend() { return "OpenBLAS"; }

void cpu::setGemmThreads(int n) { openblas_set_num_threads(n > 0 ? n : 1); }
int cpu::gemmThreads() { return openblas_get_num_threads(); }
