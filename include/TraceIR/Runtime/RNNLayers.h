//===- RNNLayers.h - The layer loop of lstm and gru -------------*- C++ -*-===//
//
// lstm and gru as torch.nn.LSTM and torch.nn.GRU compute them, over the few
// primitives a device supplies (CPU: OpenBLAS and loops; CUDA: cuBLAS and
// RNN.cu's kernels). The layer, direction and weight bookkeeping, the
// input projections and where dropout applies live here once, so the CPU
// tests cover the CUDA kernels' host logic too.
//
// Per layer and direction, the input projection of the whole sequence is
// one gemm onto the broadcast bias; each time step then multiplies h_{t-1}
// by w_hh^T and the device's cell step applies the gates, writing h_t into
// the layer's output (the result itself for the last layer).
//
// A device `D` provides, each failing the call itself before returning
// false:
//   D(ctx, cfg) and ready(): whether it could start;
//   gather(src, T *buf): src (any strides) into contiguous buf;
//   fillBias(T *rows, b1, b2, n, width): rows[n, width] = b1 + b2, either
//     pointer null for none;
//   gemm(a, lda, b, ldb, c, ldc, m, n, k, accumulate): row-major
//     C[m, n] (+)= A[m, k] @ B[n, k]^T;
//   copyRows(dst, dstLd, src, srcLd, rows, width);
//   lstmStep(gates, cell, h, hStride, batch, hidden);
//   gruStep(gi, gh, bhh, hPrev, hPrevLd, h, hStride, batch, hidden);
//   dropout(x, n, p, scale): drawing from the run's generator.
//   fitsGemm(v): whether a size or leading dimension fits its BLAS.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_RNNLAYERS_H
#define TRACEIR_RUNTIME_RNNLAYERS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <algorithm>
#include <utility>

namespace traceir::rnn {

/// `n` elements of kernel scratch (never a null pointer for n == 0), or null
/// after failing the call.
template <typename T> T *buffer(KernelContext &ctx, int64_t n) {
  return static_cast<T *>(
      ctx.scratch(std::max<int64_t>(n, 1) * static_cast<int64_t>(sizeof(T))));
}

/// `t`'s elements in row-major order: its own memory when contiguous, else a
/// gathered copy in scratch; null after failing the call.
template <typename T, typename D>
const T *contiguous(KernelContext &ctx, D &dev, const Tensor &t) {
  if (t.isContiguous())
    return t.data<T>();
  T *buf = buffer<T>(ctx, t.numel());
  if (!buf || !dev.gather(t, buf))
    return nullptr;
  return buf;
}

/// Runs the lstm or gru call whose arguments rnnArgs accepted as `cfg`.
template <typename T, typename D>
void runLayers(KernelContext &ctx, const RnnConfig &cfg, D &dev) {
  bool lstm = cfg.cell == RnnCell::Lstm;
  const Tensor &x = ctx.tensor(0), &h0t = ctx.tensor(1);
  int64_t dirs = cfg.bidirectional ? 2 : 1, layers = cfg.layers;
  int64_t seq = x.shape[cfg.batchFirst ? 1 : 0];
  int64_t batch = x.shape[cfg.batchFirst ? 0 : 1];
  int64_t inputSize = x.shape[2], hidden = h0t.shape[2];
  int64_t gatesSize = rnnGates(cfg.cell) * hidden, features = dirs * hidden;
  unsigned perLayer = cfg.hasBiases ? 4 : 2;
  unsigned firstWeight = 1 + rnnStates(cfg.cell);
  for (int64_t v : {seq * batch, gatesSize, inputSize, features * seq})
    if (!dev.fitsGemm(v))
      return;

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
    if (!buf || !dev.gather(xt, buf))
      return;
    layerIn = buf;
  }
  const T *h0 = contiguous<T>(ctx, dev, h0t);
  if (!h0)
    return;
  const T *c0 = nullptr;
  if (lstm && !(c0 = contiguous<T>(ctx, dev, ctx.tensor(2))))
    return;
  // The input projections of a whole layer, [seq * batch, gatesSize].
  T *gates = buffer<T>(ctx, seq * batch * gatesSize);
  // Per step: the lstm's cell state [batch, H]; the gru's hidden projection
  // [batch, 3H], which its cell needs apart from the input's (r scales
  // only the hidden part of n).
  T *step = buffer<T>(ctx, batch * (lstm ? hidden : gatesSize));
  // Outputs of the layers below the last: two buffers used in turn.
  T *between[2] = {nullptr, nullptr};
  for (int64_t k = 0; k < std::min<int64_t>(layers - 1, 2); ++k)
    if (!(between[k] = buffer<T>(ctx, seq * batch * features)))
      return;
  if (!gates || !step)
    return;

  Tensor &out = ctx.result(0), &hn = ctx.result(1);
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
      unsigned base = firstWeight + index * perLayer;
      const T *wih = contiguous<T>(ctx, dev, ctx.tensor(base));
      if (!wih)
        return;
      const T *whh = contiguous<T>(ctx, dev, ctx.tensor(base + 1));
      if (!whh)
        return;
      const T *bih = nullptr, *bhh = nullptr;
      if (cfg.hasBiases) {
        if (!(bih = contiguous<T>(ctx, dev, ctx.tensor(base + 2))))
          return;
        if (!(bhh = contiguous<T>(ctx, dev, ctx.tensor(base + 3))))
          return;
      }
      // gates[t * batch + b] = bias + x_t[b] @ w_ih^T, the whole sequence in
      // one product. The lstm folds b_hh in here; the gru's cell adds it to
      // the hidden projection, inside n's r * (W_hn h + b_hn).
      if (!dev.fillBias(gates, bih, lstm ? bhh : nullptr, seq * batch,
                        gatesSize) ||
          !dev.gemm(layerIn, layerInSize, wih, layerInSize, gates, gatesSize,
                    seq * batch, gatesSize, layerInSize, true))
        return;

      const T *hPrev = h0 + index * batch * hidden;
      int64_t hPrevLd = hidden;
      if (lstm && !dev.copyRows(step, hidden, c0 + index * batch * hidden,
                                hidden, batch, hidden))
        return;
      for (int64_t s = 0; s < seq; ++s) {
        int64_t t = d == 0 ? s : seq - 1 - s;
        T *g = gates + t * batch * gatesSize;
        T *hOut = layerOut + t * tStride + d * hidden;
        bool ok = lstm ? dev.gemm(hPrev, hPrevLd, whh, hidden, g, gatesSize,
                                  batch, gatesSize, hidden, true) &&
                             dev.lstmStep(g, step, hOut, bStride, batch, hidden)
                       : dev.gemm(hPrev, hPrevLd, whh, hidden, step, gatesSize,
                                  batch, gatesSize, hidden, false) &&
                             dev.gruStep(g, step, bhh, hPrev, hPrevLd, hOut,
                                         bStride, batch, hidden);
        if (!ok)
          return;
        hPrev = hOut;
        hPrevLd = bStride;
      }
      // The final states (h0 and c0 themselves for an empty sequence).
      if (!dev.copyRows(hn.data<T>() + index * batch * hidden, hidden, hPrev,
                        hPrevLd, batch, hidden))
        return;
      if (lstm &&
          !dev.copyRows(ctx.result(2).data<T>() + index * batch * hidden,
                        hidden, step, hidden, batch, hidden))
        return;
    }
    // Dropout on the outputs of every layer but the last (not on h_n).
    if (!last && dropBetween &&
        !dev.dropout(layerOut, seq * batch * features, cfg.dropout, scale))
      return;
    layerIn = layerOut;
  }
}

/// Checks an lstm or gru call and runs it in its dtype on device `D<T>`,
/// constructed from (ctx, cfg); a device that cannot start (`ready()`
/// false) has failed the call.
template <template <typename> class D>
void run(KernelContext &ctx, RnnCell cell) {
  RnnConfig cfg;
  if (!rnnArgs(ctx, cell, cfg))
    return;
  auto runAs = [&](auto zero) {
    using T = decltype(zero);
    D<T> dev(ctx, cfg);
    if (dev.ready())
      runLayers<T>(ctx, cfg, dev);
  };
  if (ctx.tensor(0).dtype == DType::F32)
    runAs(float());
  else
    runAs(double());
}

} // namespace traceir::rnn

#endif // TRACEIR_RUNTIME_RNNLAYERS_H
