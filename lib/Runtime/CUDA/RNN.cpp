//===- RNN.cpp - Recurrent layers on CUDA ---------------------------------===//
//
// lstm, as lib/Runtime/CPU/RNN.cpp computes it, on the device: per layer and
// direction the input projection of the whole sequence is one cuBLAS gemm
// onto the broadcast biases, and each time step adds h_{t-1} @ w_hh^T with
// another gemm before RNN.cu's cell kernel applies the gates (i, f, g, o)
// and writes h_t into the output. Dropout between layers (training) runs on
// the device from a seed drawn from the run's generator, so a run is
// deterministic per seed, but its masks are not the CPU's. Strided operands
// are gathered into scratch first. Everything is queued on the legacy
// default stream; nothing here synchronizes.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/RNNLaunch.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>

using namespace traceir;

namespace {
/// Row-major C[M,N] += A[M,K] @ B[N,K]^T with leading dimensions: in
/// column-major terms C^T[N,M] += B^T[N,K] @ A^T[K,M], B read transposed.
cublasStatus_t gemmNT(cublasHandle_t h, const float *a, int lda, const float *b,
                      int ldb, float *c, int ldc, int m, int n, int k) {
  const float one = 1;
  return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, ldb, a, lda,
                     &one, c, ldc);
}
cublasStatus_t gemmNT(cublasHandle_t h, const double *a, int lda,
                      const double *b, int ldb, double *c, int ldc, int m,
                      int n, int k) {
  const double one = 1;
  return cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, ldb, a, lda,
                     &one, c, ldc);
}

template <typename T>
bool addProduct(cublasHandle_t h, const T *a, int64_t lda, const T *b,
                int64_t ldb, T *c, int64_t ldc, int64_t m, int64_t n,
                int64_t k) {
  if (m == 0 || n == 0 || k == 0)
    return true;
  return gemmNT(h, a, int(std::max<int64_t>(lda, 1)), b,
                int(std::max<int64_t>(ldb, 1)), c,
                int(std::max<int64_t>(ldc, 1)), int(m), int(n),
                int(k)) == CUBLAS_STATUS_SUCCESS;
}

/// `n` elements of device scratch (never a null pointer for n == 0), or
/// null after failing the call.
template <typename T> T *buffer(KernelContext &ctx, int64_t n) {
  return static_cast<T *>(
      ctx.scratch(std::max<int64_t>(n, 1) * static_cast<int64_t>(sizeof(T))));
}

/// Gathers `src` (any strides) into the contiguous device buffer `buf`.
bool gather(const Tensor &src, void *buf) {
  Storage storage{buf, src.nbytes(), src.storage->device};
  Tensor dst;
  dst.storage = &storage;
  dst.dtype = src.dtype;
  dst.shape = src.shape;
  dst.strides = Tensor::contiguousStrides(src.shape);
  return cuda::copyStrided(src, dst);
}

/// `t`'s elements in row-major order: its own memory when contiguous, else a
/// gathered copy in scratch; null after failing the call.
template <typename T> const T *contiguous(KernelContext &ctx, const Tensor &t) {
  if (t.isContiguous())
    return t.data<T>();
  T *buf = buffer<T>(ctx, t.numel());
  if (!buf)
    return nullptr;
  if (!gather(t, buf)) {
    ctx.fail("lstm: gathering a strided argument on the device failed");
    return nullptr;
  }
  return buf;
}

/// Device-to-device copy of `rows` rows of `width` elements.
template <typename T>
bool copyRows(T *dst, int64_t dstLd, const T *src, int64_t srcLd, int64_t rows,
              int64_t width) {
  if (rows == 0 || width == 0)
    return true;
  size_t es = sizeof(T);
  if (cudaMemcpy2DAsync(dst, dstLd * es, src, srcLd * es, width * es, rows,
                        cudaMemcpyDeviceToDevice, 0) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

template <typename T> void runLstm(KernelContext &ctx, const LstmConfig &cfg) {
  const Tensor &x = ctx.tensor(0), &h0t = ctx.tensor(1), &c0t = ctx.tensor(2);
  int64_t dirs = cfg.bidirectional ? 2 : 1, layers = cfg.layers;
  int64_t seq = x.shape[cfg.batchFirst ? 1 : 0];
  int64_t batch = x.shape[cfg.batchFirst ? 0 : 1];
  int64_t inputSize = x.shape[2], hidden = h0t.shape[2];
  int64_t gatesSize = 4 * hidden, features = dirs * hidden;
  unsigned perLayer = cfg.hasBiases ? 4 : 2;

  // cuBLAS takes int sizes and leading dimensions.
  for (int64_t v : {seq * batch, gatesSize, inputSize, features * seq})
    if (v > INT_MAX)
      return ctx.fail("lstm: sizes beyond cuBLAS's int range are not "
                      "supported on CUDA");

  Tensor &out = ctx.result(0), &hn = ctx.result(1), &cn = ctx.result(2);
  cublasHandle_t handle = cuda::cublasHandle(out.storage->device.index);
  if (!handle)
    return ctx.fail("lstm: cannot create a cuBLAS handle");

  // The input in time-major order, [seq * batch, inputSize].
  const T *layerIn;
  if (!cfg.batchFirst && x.isContiguous()) {
    layerIn = x.data<T>();
  } else {
    Tensor xt = x;
    if (cfg.batchFirst) {
      std::swap(xt.shape[0], xt.shape[1]);
      std::swap(xt.strides[0], xt.strides[1]);
    }
    T *buf = buffer<T>(ctx, xt.numel());
    if (!buf)
      return;
    if (!gather(xt, buf))
      return ctx.fail("lstm: gathering the input on the device failed");
    layerIn = buf;
  }
  const T *h0 = contiguous<T>(ctx, h0t);
  if (!h0)
    return;
  const T *c0 = contiguous<T>(ctx, c0t);
  if (!c0)
    return;
  T *gates = buffer<T>(ctx, seq * batch * gatesSize);
  T *cell = buffer<T>(ctx, batch * hidden);
  // Outputs of the layers below the last: two buffers used in turn.
  T *between[2] = {nullptr, nullptr};
  for (int64_t k = 0; k < std::min<int64_t>(layers - 1, 2); ++k)
    if (!(between[k] = buffer<T>(ctx, seq * batch * features)))
      return;
  if (!gates || !cell)
    return;

  bool dropBetween = cfg.train && cfg.dropout > 0;
  T scale = cfg.dropout >= 1 ? T(0) : T(1.0 / (1.0 - cfg.dropout));

  for (int64_t l = 0; l < layers; ++l) {
    bool last = l == layers - 1;
    // Where h_t of batch row b lands: layerOut + t * tStride + b * bStride
    // (+ d * hidden for the reverse direction). The last layer writes the
    // result directly, batch-first or not.
    T *layerOut = last ? out.data<T>() : between[l % 2];
    int64_t tStride = batch * features, bStride = features;
    if (last && cfg.batchFirst) {
      tStride = features;
      bStride = seq * features;
    }
    int64_t layerInSize = l == 0 ? inputSize : features;
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t index = l * dirs + d;
      unsigned base = 3 + index * perLayer;
      const T *wih = contiguous<T>(ctx, ctx.tensor(base));
      if (!wih)
        return;
      const T *whh = contiguous<T>(ctx, ctx.tensor(base + 1));
      if (!whh)
        return;
      const T *bih = nullptr, *bhh = nullptr;
      if (cfg.hasBiases) {
        if (!(bih = contiguous<T>(ctx, ctx.tensor(base + 2))))
          return;
        if (!(bhh = contiguous<T>(ctx, ctx.tensor(base + 3))))
          return;
      }
      // gates[t * batch + b] = (b_ih + b_hh) + x_t[b] @ w_ih^T, the whole
      // sequence in one product.
      if (!cuda::rnn::fillBias(gates, bih, bhh, seq * batch, gatesSize))
        return ctx.fail("lstm: the bias kernel failed to launch");
      if (!addProduct(handle, layerIn, layerInSize, wih, layerInSize, gates,
                      gatesSize, seq * batch, gatesSize, layerInSize))
        return ctx.fail("lstm: cuBLAS gemm failed (input projection)");

      const T *hPrev = h0 + index * batch * hidden;
      int64_t hPrevLd = hidden;
      if (!copyRows(cell, hidden, c0 + index * batch * hidden, hidden, batch,
                    hidden))
        return ctx.fail("lstm: copying c0 on the device failed");
      for (int64_t s = 0; s < seq; ++s) {
        int64_t t = d == 0 ? s : seq - 1 - s;
        T *g = gates + t * batch * gatesSize;
        if (!addProduct(handle, hPrev, hPrevLd, whh, hidden, g, gatesSize,
                        batch, gatesSize, hidden))
          return ctx.fail("lstm: cuBLAS gemm failed (hidden projection)");
        T *hOut = layerOut + t * tStride + d * hidden;
        if (!cuda::rnn::cellStep(g, cell, hOut, bStride, batch, hidden))
          return ctx.fail("lstm: the cell kernel failed to launch");
        hPrev = hOut;
        hPrevLd = bStride;
      }
      // The final states (h0 and c0 themselves for an empty sequence).
      if (!copyRows(hn.data<T>() + index * batch * hidden, hidden, hPrev,
                    hPrevLd, batch, hidden) ||
          !copyRows(cn.data<T>() + index * batch * hidden, hidden, cell, hidden,
                    batch, hidden))
        return ctx.fail("lstm: copying the final states on the device failed");
    }
    // Dropout on the outputs of every layer but the last (not on h_n).
    if (!last && dropBetween) {
      uint64_t seed = ctx.rng()();
      if (!cuda::rnn::dropout(layerOut, seq * batch * features, cfg.dropout,
                              scale, seed))
        return ctx.fail("lstm: the dropout kernel failed to launch");
    }
    layerIn = layerOut;
  }
}
} // namespace

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n), torch.nn.LSTM's
/// semantics. Per layer and direction (forward first) the weights are w_ih,
/// w_hh[, b_ih, b_hh].
void cuda::lstm(KernelContext &ctx) {
  LstmConfig cfg;
  if (!lstmArgs(ctx, cfg))
    return;
  if (ctx.tensor(0).dtype == DType::F32)
    runLstm<float>(ctx, cfg);
  else
    runLstm<double>(ctx, cfg);
}
