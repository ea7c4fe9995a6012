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

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstring>
#include <random>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// The scalar arguments that follow the weights.
struct LstmConfig {
  unsigned numTensors = 0;
  bool hasBiases = true;
  int64_t layers = 1;
  double dropout = 0;
  bool train = false;
  bool bidirectional = false;
  bool batchFirst = false;
};

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

  // Every weight must have the shape nn.LSTM gives it (the registry only
  // checks layer 0's w_ih).
  static const char *const names[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < dirs; ++d)
      for (unsigned k = 0; k < perLayer; ++k) {
        const Tensor &w = ctx.tensor(3 + (l * dirs + d) * perLayer + k);
        Shape want;
        if (k == 0)
          want = {gatesSize, l == 0 ? inputSize : features};
        else if (k == 1)
          want = {gatesSize, hidden};
        else
          want = {gatesSize};
        if (w.shape != want)
          return ctx.fail(llvm::Twine("lstm: ") + names[k] + " of layer " +
                          llvm::Twine(l) + (d ? " (reverse)" : "") +
                          " must be " + shapeToString(want) + ", got " +
                          shapeToString(w.shape));
      }

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
  while (ctx.isTensor(cfg.numTensors))
    ++cfg.numTensors;
  unsigned nt = cfg.numTensors;
  if (nt < 3)
    return ctx.fail("lstm expects input, h0 and c0 tensors");
  auto boolAt = [&](unsigned i, bool dflt) {
    return ctx.isNone(i) ? dflt : ctx.scalar(i).number() != 0;
  };
  cfg.hasBiases = boolAt(nt, true);
  cfg.layers = ctx.isNone(nt + 1) ? 0 : ctx.scalar(nt + 1).i;
  cfg.dropout = ctx.isNone(nt + 2) ? 0.0 : ctx.scalar(nt + 2).number();
  cfg.train = boolAt(nt + 3, false);
  cfg.bidirectional = boolAt(nt + 4, false);
  cfg.batchFirst = boolAt(nt + 5, false);

  const Tensor &x = ctx.tensor(0), &h0 = ctx.tensor(1), &c0 = ctx.tensor(2);
  if (cfg.layers <= 0)
    return ctx.fail("lstm: num_layers must be positive, got " +
                    llvm::Twine(cfg.layers));
  if (cfg.dropout < 0 || cfg.dropout > 1)
    return ctx.fail("lstm: dropout must be in [0, 1], got " +
                    llvm::Twine(std::to_string(cfg.dropout)));
  int64_t dirs = cfg.bidirectional ? 2 : 1;
  int64_t perLayer = cfg.hasBiases ? 4 : 2;
  if (int64_t(nt) - 3 != cfg.layers * dirs * perLayer)
    return ctx.fail("lstm: expects " +
                    llvm::Twine(cfg.layers * dirs * perLayer) +
                    " weight tensors, got " + llvm::Twine(nt - 3));
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    return ctx.fail(llvm::Twine("lstm supports f32 and f64, got ") +
                    dtypeName(x.dtype));
  for (unsigned i = 1; i < nt; ++i)
    if (ctx.tensor(i).dtype != x.dtype)
      return ctx.fail(llvm::Twine("lstm: argument #") + llvm::Twine(i) +
                      " is " + dtypeName(ctx.tensor(i).dtype) +
                      " but the input is " + dtypeName(x.dtype));
  if (x.rank() != 3 || h0.rank() != 3 || c0.rank() != 3)
    return ctx.fail("lstm: input, h0 and c0 must have rank 3");
  int64_t batch = x.shape[cfg.batchFirst ? 0 : 1];
  Shape state = {cfg.layers * dirs, batch, h0.shape[2]};
  if (h0.shape != state || c0.shape != state)
    return ctx.fail("lstm: h0 and c0 must be " + shapeToString(state) +
                    ", got " + shapeToString(h0.shape) + " and " +
                    shapeToString(c0.shape));
  int64_t seq = x.shape[cfg.batchFirst ? 1 : 0];
  int64_t features = dirs * h0.shape[2];
  Shape output = cfg.batchFirst ? Shape{batch, seq, features}
                                : Shape{seq, batch, features};
  if (ctx.numResults() != 3 || ctx.result(0).shape != output ||
      ctx.result(1).shape != state || ctx.result(2).shape != state)
    return ctx.fail("lstm: results must be " + shapeToString(output) + ", " +
                    shapeToString(state) + " and " + shapeToString(state));
  if (x.dtype == DType::F32)
    runLstm<float>(ctx, cfg);
  else
    runLstm<double>(ctx, cfg);
}
