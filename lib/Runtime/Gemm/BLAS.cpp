//===- BLAS.cpp - CPU GEMM through a CBLAS (OpenBLAS) and oneDNN ----------===//

#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/CPU/Parallel.h"

#include <algorithm>

#include <cblas.h>
#ifdef TRACEIR_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

using namespace traceir;

static CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

/// Rows of C per block in deterministic mode: each block is one
/// single-threaded BLAS call whose rounding depends on its own shape only,
/// and the blocks depend on M alone, so every element is computed the same
/// way at any thread count. (Split by the thread count they are not: a
/// part's shape picks OpenBLAS's kernel, small-matrix or blocked, whose
/// sums differ in the last bit, as OpenBLAS's own threads' did.)
constexpr int64_t kDeterministicRows = 128;

/// Multiply-adds below which a product stays on the calling thread: about
/// 20 us of work, what waking the pool's spinning threads is worth
/// (measured on this project's 2-core VMs: 64x128x128, 1M multiply-adds,
/// with a parallel relu after it, 32 us on one thread and 19 on two);
/// scaled like the loops' grain under
/// a passive wait policy, whose sleeping threads cost more to wake.
constexpr double kParallelGemmMacs = 1 << 20;

/// Rows of C per thread from which a product splits by rows of C rather
/// than by columns: each thread then packs the whole of op(B), which only
/// pays with enough rows to reuse it (measured at two threads: 512 rows
/// x 256 -> 768 ran 1.06 ms split by rows against 1.28 by columns; 256 x
/// 1024 -> 4096 13.3 against 12.0, 1 x 2048 -> 1000 1.32 against 0.66).
constexpr int64_t kRowSplitRowsPerThread = 256;

/// C = op(A) @ op(B) as single-threaded `call(m, n, a, b, c)`s, the BLAS
/// itself never threading (applyGemmThreads): the runtime's pool splits
/// the product, so one pool of threads runs everything. The BLAS's own
/// pthreads beside an OpenMP pool whose threads spin after each loop
/// (OpenMP's default wait policy) fought them for the cores: a 512 x 256
/// -> 768 linear followed by a parallel relu took 3.9 ms at two threads
/// that way against 1.1 ms split here. In deterministic mode the split is
/// fixed blocks of rows; else one part per thread, by rows or by columns
/// of C (kRowSplitRowsPerThread), columns in multiples of 16 (a cache line
/// of floats, the kernels' widest unroll).
template <typename T, typename Call>
void split(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
           const T *A, int64_t lda, const T *B, int64_t ldb, T *C, int64_t ldc,
           const Call &call) {
  // Row r of op(A): row r of A, or column r of A stored transposed; column
  // j of op(B) likewise.
  auto rows = [&](int64_t r0, int64_t r1) {
    call(r1 - r0, N, transA ? A + r0 : A + r0 * lda, B, C + r0 * ldc);
  };
  auto cols = [&](int64_t c0, int64_t c1) {
    call(M, c1 - c0, A, transB ? B + c0 * ldb : B + c0, C + c0);
  };
  if (cpu::deterministic()) {
    if (M <= kDeterministicRows)
      return rows(0, M);
    int64_t blocks = (M + kDeterministicRows - 1) / kDeterministicRows;
    cpu::parallelFor(blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        rows(i * kDeterministicRows, std::min(M, (i + 1) * kDeterministicRows));
    });
    return;
  }
  const int64_t threads = cpu::hasPool() ? cpu::numThreads() : 1;
  const double minMacs =
      kParallelGemmMacs * double(cpu::grainSize() / cpu::kGrainSize);
  const bool byRows = M >= kRowSplitRowsPerThread * threads || N < 32 * threads;
  if (threads < 2 || double(M) * N * K < minMacs || (byRows && M < threads))
    return rows(0, M);
  // A range of parts is one call: nested in another parallel region,
  // parallelFor hands the whole range to the calling thread.
  if (byRows)
    return cpu::parallelFor(threads, 1, [&](int64_t b, int64_t e) {
      rows(b * M / threads, e * M / threads);
    });
  auto edge = [&](int64_t p) {
    return p == threads ? N : (p * N / threads + 8) / 16 * 16;
  };
  cpu::parallelFor(threads, 1, [&](int64_t b, int64_t e) {
    if (edge(b) < edge(e))
      cols(edge(b), edge(e));
  });
}

/// Where an f32 product (one part of split's) runs on oneDNN's sgemm, the
/// GEMM PyTorch's oneDNN kernels use, rather than OpenBLAS's: from 1M
/// multiply-adds with 128 columns or more. Measured at one thread on this
/// project's AVX-512 machines (OpenBLAS 0.3.21's SkylakeX kernels, oneDNN
/// 2.6's JIT), 90 shapes M 8-512, N 64-1024, K 32-1024, each untransposed
/// and either operand transposed: above that line oneDNN took 0.71x
/// OpenBLAS's time at the geometric mean and at most 1.04x (512 x 256 ->
/// 768 1244 us against 1624, resnet50's 64 x 256 @ 256 x 3136 844 against
/// 965); below it, or at 64 columns with B transposed, OpenBLAS's
/// small-matrix kernels won by up to 1.7x.
constexpr double kDnnlSgemmMacs = 1 << 20;
constexpr int64_t kDnnlSgemmColumns = 128;

/// One part on oneDNN's sgemm, on the calling thread; false where it did
/// not run (a product below its line, an error, no oneDNN).
#ifdef TRACEIR_HAVE_DNNL
static bool dnnlSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t K,
                      float alpha, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc) {
  if (double(m) * n * K < kDnnlSgemmMacs || n < kDnnlSgemmColumns)
    return false;
#ifdef _OPENMP
  // Outside a parallel region oneDNN's sgemm threads over
  // omp_get_max_threads(), which would split (and in deterministic mode
  // reorder) what split() gave this thread alone; inside one it runs on
  // the calling thread. The pool's loops name their thread counts, so this
  // changes no other kernel's (DNNL.cpp sets its own per call).
  if (!omp_in_parallel() && omp_get_max_threads() != 1)
    omp_set_num_threads(1);
#endif
  return dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, K, alpha, a,
                    lda, b, ldb, beta, c, ldc) == dnnl_success;
}
#else
static bool dnnlSgemm(bool, bool, int64_t, int64_t, int64_t, float,
                      const float *, int64_t, const float *, int64_t, float,
                      float *, int64_t) {
  return false;
}
#endif

void cpu::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B,
                int64_t ldb, float beta, float *C, int64_t ldc) {
  split(transA, transB, M, N, K, A, lda, B, ldb, C, ldc,
        [&](int64_t m, int64_t n, const float *a, const float *b, float *c) {
          if (!dnnlSgemm(transA, transB, m, n, K, alpha, a, lda, b, ldb, beta,
                         c, ldc))
            cblas_sgemm(CblasRowMajor, op(transA), op(transB), m, n, K, alpha,
                        a, lda, b, ldb, beta, c, ldc);
        });
}

void cpu::dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B,
                int64_t ldb, double beta, double *C, int64_t ldc) {
  split(transA, transB, M, N, K, A, lda, B, ldb, C, ldc,
        [&](int64_t m, int64_t n, const double *a, const double *b, double *c) {
          cblas_dgemm(CblasRowMajor, op(transA), op(transB), m, n, K, alpha, a,
                      lda, b, ldb, beta, c, ldc);
        });
}

const char *cpu::gemmBackend() {
#ifdef TRACEIR_HAVE_DNNL
  return "OpenBLAS (f32 from 1M multiply-adds on oneDNN)";
#else
  return "OpenBLAS";
#endif
}

void cpu::setGemmThreads(int n) { openblas_set_num_threads(n > 0 ? n : 1); }
int cpu::gemmThreads() { return openblas_get_num_threads(); }
