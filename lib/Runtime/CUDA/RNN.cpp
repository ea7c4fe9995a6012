//===- RNN.cpp - Recurrent layers on CUDA ---------------------------------===//
//
// lstm and gru, as lib/Runtime/CPU/RNN.cpp computes them, on the device: the
// layer loop is RNNLayers.h's; here are its device primitives. Products run
// on cuBLAS, the elementwise parts (bias broadcast, the cells' gates,
// dropout) on RNN.cu's kernels. Dropout between layers (training) runs on
// the device from a seed drawn from the run's generator, so a run is
// deterministic per seed, but its masks are not the CPU's. Everything is
// queued on the legacy default stream; nothing here synchronizes.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/RNNLaunch.h"
#include "TraceIR/Runtime/RNNLayers.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

using namespace traceir;

namespace {
/// Row-major C[M,N] = A[M,K] @ B[N,K]^T + beta * C with leading dimensions:
/// in column-major terms C^T[N,M] = B^T[N,K] @ A^T[K,M] + beta * C^T, B read
/// transposed.
cublasStatus_t gemmNT(cublasHandle_t h, const float *a, int lda, const float *b,
                      int ldb, float *c, int ldc, int m, int n, int k,
                      float beta) {
  const float one = 1;
  return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, ldb, a, lda,
                     &beta, c, ldc);
}
cublasStatus_t gemmNT(cublasHandle_t h, const double *a, int lda,
                      const double *b, int ldb, double *c, int ldc, int m,
                      int n, int k, double beta) {
  const double one = 1;
  return cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, ldb, a, lda,
                     &beta, c, ldc);
}

/// RNNLayers.h's primitives on the device; each fails the call itself.
template <typename T> struct CudaLayers {
  KernelContext &ctx;
  const char *name;
  cublasHandle_t handle;

  CudaLayers(KernelContext &ctx, const RnnConfig &cfg)
      : ctx(ctx), name(rnnName(cfg.cell)),
        handle(cuda::cublasHandle(ctx.result(0).storage->device.index)) {}
  bool ready() { return handle || fail("cannot create a cuBLAS handle"); }

  bool fail(const char *what) {
    ctx.fail(strCat(name) + ": " + what);
    return false;
  }
  // cuBLAS takes int sizes and leading dimensions.
  bool fitsGemm(int64_t v) {
    return v <= INT_MAX ||
           fail("sizes beyond cuBLAS's int range are not supported on CUDA");
  }
  bool gather(const Tensor &src, T *buf) {
    Storage storage{buf, src.nbytes(), src.storage->device};
    Tensor dst;
    dst.storage = &storage;
    dst.dtype = src.dtype;
    dst.shape = src.shape;
    dst.strides = Tensor::contiguousStrides(src.shape);
    return cuda::copyStrided(src, dst) ||
           fail("gathering a strided argument on the device failed");
  }
  bool fillBias(T *rows, const T *b1, const T *b2, int64_t n, int64_t width) {
    return cuda::rnn::fillBias(rows, b1, b2, n, width) ||
           fail("the bias kernel failed to launch");
  }
  bool gemm(const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc,
            int64_t m, int64_t n, int64_t k, bool accumulate) {
    if (m == 0 || n == 0)
      return true;
    // An empty product sets C to zero (or leaves it when accumulating).
    if (k == 0) {
      if (accumulate)
        return true;
      size_t es = sizeof(T);
      if (cudaMemset2DAsync(c, ldc * es, 0, n * es, m, 0) == cudaSuccess)
        return true;
      cudaGetLastError();
      return fail("clearing an empty product on the device failed");
    }
    return gemmNT(handle, a, int(std::max<int64_t>(lda, 1)), b,
                  int(std::max<int64_t>(ldb, 1)), c,
                  int(std::max<int64_t>(ldc, 1)), int(m), int(n), int(k),
                  accumulate ? T(1) : T(0)) == CUBLAS_STATUS_SUCCESS ||
           fail("cuBLAS gemm failed");
  }
  bool copyRows(T *dst, int64_t dstLd, const T *src, int64_t srcLd,
                int64_t rows, int64_t width) {
    if (rows == 0 || width == 0)
      return true;
    size_t es = sizeof(T);
    if (cudaMemcpy2DAsync(dst, dstLd * es, src, srcLd * es, width * es, rows,
                          cudaMemcpyDeviceToDevice, 0) == cudaSuccess)
      return true;
    cudaGetLastError();
    return fail("copying states on the device failed");
  }
  bool lstmStep(const T *gates, T *cell, T *h, int64_t hStride, int64_t batch,
                int64_t hidden) {
    return cuda::rnn::lstmStep(gates, cell, h, hStride, batch, hidden) ||
           fail("the cell kernel failed to launch");
  }
  bool gruStep(const T *gi, const T *gh, const T *bhh, const T *hPrev,
               int64_t hPrevLd, T *h, int64_t hStride, int64_t batch,
               int64_t hidden) {
    return cuda::rnn::gruStep(gi, gh, bhh, hPrev, hPrevLd, h, hStride, batch,
                              hidden) ||
           fail("the cell kernel failed to launch");
  }
  bool dropout(T *x, int64_t n, double p, T scale) {
    uint64_t seed = ctx.rng()();
    return cuda::rnn::dropout(x, n, p, scale, seed) ||
           fail("the dropout kernel failed to launch");
  }
};

} // namespace

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n), torch.nn.LSTM's
/// semantics. Per layer and direction (forward first) the weights are w_ih,
/// w_hh[, b_ih, b_hh].
void cuda::lstm(KernelContext &ctx) {
  traceir::rnn::run<CudaLayers>(ctx, RnnCell::Lstm);
}

/// gru(input, h0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n), torch.nn.GRU's semantics,
/// the weights ordered as lstm's.
void cuda::gru(KernelContext &ctx) {
  traceir::rnn::run<CudaLayers>(ctx, RnnCell::Gru);
}
