//===- RNN.cpp - Recurrent layers on the CPU ------------------------------===//
//
// lstm, as torch.nn.LSTM computes it: per layer and direction, the input
// projection of the whole sequence is one gemm (plus both biases), and each
// time step adds h_{t-1} @ w_hh^T with another gemm before the gates
// (i, f, g, o) update the cell and hidden states. Products go to OpenBLAS's
// sgemm/dgemm; strided operands are gathered into scratch first.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstring>
#include <random>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// C[M,N] += A[M,K] @ B[N,K]^T, all row-major with leading dimensions.
void gemmNT(const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
            int64_t ldc, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, lda, b,
              ldb, 1.0f, c, ldc);
}
void gemmNT(const double *a, int64_t lda, const double *b, int64_t ldb,
            double *c, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, lda, b,
              ldb, 1.0, c, ldc);
}

template <typename T>
void addProduct(const T *a, int64_t lda, const T *b, int64_t ldb, T *c,
                int64_t ldc, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0 || k == 0)
    return;
  gemmNT(a, std::max<int64_t>(lda, 1), b, std::max<int64_t>(ldb, 1), c,
         std::max<int64_t>(ldc, 1), m, n, k);
}

template <typename T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

/// `n` elements of kernel scratch (never a null pointer for n == 0), or null
/// after failing the call.
template <typename T> T *buffer(KernelContext &ctx, int64_t n) {
  return static_cast<T *>(
      ctx.scratch(std::max<int64_t>(n, 1) * static_cast<int64_t>(sizeof(T))));
}

/// `t`'s elements in row-major order: its own memory when contiguous, else a
/// gathered copy in scratch.
template <typename T> const T *contiguous(KernelContext &ctx, const Tensor &t) {
  if (t.isContiguous())
    return t.data<T>();
  T *buf = buffer<T>(ctx, t.numel());
  if (buf)
    copyStridedToContiguous(t, buf);
  return buf;
}

template <typename T> void runLstm(KernelContext &ctx, const LstmConfig &cfg) {
  const Tensor &x = ctx.tensor(0), &h0t = ctx.tensor(1), &c0t = ctx.tensor(2);
  int64_t dirs = cfg.bidirectional ? 2 : 1, layers = cfg.layers;
  int64_t seq = x.shape[cfg.batchFirst ? 1 : 0];
  int64_t batch = x.shape[cfg.batchFirst ? 0 : 1];
  int64_t inputSize = x.shape[2], hidden = h0t.shape[2];
  int64_t gatesSize = 4 * hidden, features = dirs * hidden;
  unsigned perLayer = cfg.hasBiases ? 4 : 2;

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
    copyStridedToContiguous(xt, buf);
    layerIn = buf;
  }
  const T *h0 = contiguous<T>(ctx, h0t), *c0 = contiguous<T>(ctx, c0t);
  T *gates = buffer<T>(ctx, seq * batch * gatesSize);
  T *cell = buffer<T>(ctx, batch * hidden);
  T *bias = buffer<T>(ctx, gatesSize);
  // Outputs of the layers below the last: two buffers used in turn.
  T *between[2] = {nullptr, nullptr};
  for (int64_t k = 0; k < std::min<int64_t>(layers - 1, 2); ++k)
    if (!(between[k] = buffer<T>(ctx, seq * batch * features)))
      return;
  if (!h0 || !c0 || !gates || !cell || !bias)
    return;

  Tensor &out = ctx.result(0), &hn = ctx.result(1), &cn = ctx.result(2);
  bool dropBetween = cfg.train && cfg.dropout > 0;
  std::bernoulli_distribution keep(1.0 - cfg.dropout);
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
      const T *whh = contiguous<T>(ctx, ctx.tensor(base + 1));
      if (!wih || !whh)
        return;
      if (cfg.hasBiases) {
        const T *bih = contiguous<T>(ctx, ctx.tensor(base + 2));
        const T *bhh = contiguous<T>(ctx, ctx.tensor(base + 3));
        if (!bih || !bhh)
          return;
        for (int64_t j = 0; j < gatesSize; ++j)
          bias[j] = bih[j] + bhh[j];
      } else {
        std::fill(bias, bias + gatesSize, T(0));
      }
      // gates[t * batch + b] = bias + x_t[b] @ w_ih^T, the whole sequence in
      // one product.
      for (int64_t r = 0; r < seq * batch; ++r)
        std::copy(bias, bias + gatesSize, gates + r * gatesSize);
      addProduct(layerIn, layerInSize, wih, layerInSize, gates, gatesSize,
                 seq * batch, gatesSize, layerInSize);

      const T *hPrev = h0 + index * batch * hidden;
      int64_t hPrevLd = hidden;
      std::copy(c0 + index * batch * hidden, c0 + (index + 1) * batch * hidden,
                cell);
      for (int64_t s = 0; s < seq; ++s) {
        int64_t t = d == 0 ? s : seq - 1 - s;
        T *g = gates + t * batch * gatesSize;
        addProduct(hPrev, hPrevLd, whh, hidden, g, gatesSize, batch, gatesSize,
                   hidden);
        T *hOut = layerOut + t * tStride + d * hidden;
        for (int64_t b = 0; b < batch; ++b) {
          const T *gb = g + b * gatesSize;
          T *cb = cell + b * hidden, *hb = hOut + b * bStride;
          for (int64_t j = 0; j < hidden; ++j) {
            T i = sigmoid(gb[j]), f = sigmoid(gb[hidden + j]);
            T gg = std::tanh(gb[2 * hidden + j]);
            T o = sigmoid(gb[3 * hidden + j]);
            T c = f * cb[j] + i * gg;
            cb[j] = c;
            hb[j] = o * std::tanh(c);
          }
        }
        hPrev = hOut;
        hPrevLd = bStride;
      }
      // The final states (h0 and c0 themselves for an empty sequence).
      T *hnOut = hn.data<T>() + index * batch * hidden;
      for (int64_t b = 0; b < batch; ++b)
        std::copy(hPrev + b * hPrevLd, hPrev + b * hPrevLd + hidden,
                  hnOut + b * hidden);
      std::copy(cell, cell + batch * hidden,
                cn.data<T>() + index * batch * hidden);
    }
    // Dropout on the outputs of every layer but the last (not on h_n).
    if (!last && dropBetween)
      for (int64_t k = 0, n = seq * batch * features; k < n; ++k)
        layerOut[k] = keep(ctx.rng()) ? layerOut[k] * scale : T(0);
    layerIn = layerOut;
  }
}
} // namespace

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n), torch.nn.LSTM's
/// semantics. Per layer and direction (forward first) the weights are w_ih,
/// w_hh[, b_ih, b_hh].
void cpu::lstm(KernelContext &ctx) {
  LstmConfig cfg;
  if (!lstmArgs(ctx, cfg))
    return;
  if (ctx.tensor(0).dtype == DType::F32)
    runLstm<float>(ctx, cfg);
  else
    runLstm<double>(ctx, cfg);
}
