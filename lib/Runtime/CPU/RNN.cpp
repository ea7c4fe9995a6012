//===- RNN.cpp - Recurrent layers on the CPU ------------------------------===//
//
// lstm and gru, as torch.nn.LSTM and torch.nn.GRU compute them: the layer
// loop is RNNLayers.h's; here are its CPU primitives. Products go to
// OpenBLAS's sgemm/dgemm; strided operands are gathered into scratch first.
// The optimized tier (cpu::fast::lstm, gru) swaps in vectorized cell
// updates and keeps the rest.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Runtime/RNNLayers.h"

#include "TraceIR/Runtime/CPU/Gemm.h"
#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// C[M,N] = A[M,K] @ B[N,K]^T + beta * C, all row-major with leading
/// dimensions.
void gemmNT(const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
            int64_t ldc, int64_t m, int64_t n, int64_t k, float beta) {
  cpu::gemm(false, true, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
void gemmNT(const double *a, int64_t lda, const double *b, int64_t ldb,
            double *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
            double beta) {
  cpu::gemm(false, true, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

template <typename T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

/// RNNLayers.h's primitives on the host; none of them fails.
template <typename T> struct CpuLayers {
  KernelContext &ctx;

  CpuLayers(KernelContext &ctx, const RnnConfig &) : ctx(ctx) {}
  bool ready() const { return true; }
  bool fitsGemm(int64_t) const { return true; }
  bool gather(const Tensor &src, T *buf) const {
    copyStridedToContiguous(src, buf);
    return true;
  }
  bool fillBias(T *rows, const T *b1, const T *b2, int64_t n,
                int64_t width) const {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < width; ++j)
        rows[r * width + j] = (b1 ? b1[j] : T(0)) + (b2 ? b2[j] : T(0));
    return true;
  }
  bool gemm(const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc,
            int64_t m, int64_t n, int64_t k, bool accumulate) const {
    if (m == 0 || n == 0)
      return true;
    if (k == 0) {
      if (!accumulate)
        for (int64_t r = 0; r < m; ++r)
          std::fill(c + r * ldc, c + r * ldc + n, T(0));
      return true;
    }
    gemmNT(a, std::max<int64_t>(lda, 1), b, std::max<int64_t>(ldb, 1), c,
           std::max<int64_t>(ldc, 1), m, n, k, accumulate ? T(1) : T(0));
    return true;
  }
  bool copyRows(T *dst, int64_t dstLd, const T *src, int64_t srcLd,
                int64_t rows, int64_t width) const {
    for (int64_t r = 0; r < rows; ++r)
      std::copy(src + r * srcLd, src + r * srcLd + width, dst + r * dstLd);
    return true;
  }
  /// gates [batch, 4H] (pre-activations i, f, g, o); cell [batch, H] updated
  /// in place; h_t of batch row b written at h + b * hStride.
  bool lstmStep(const T *gates, T *cell, T *h, int64_t hStride, int64_t batch,
                int64_t hidden) const {
    for (int64_t b = 0; b < batch; ++b) {
      const T *gb = gates + b * 4 * hidden;
      T *cb = cell + b * hidden, *hb = h + b * hStride;
      for (int64_t j = 0; j < hidden; ++j) {
        T i = sigmoid(gb[j]), f = sigmoid(gb[hidden + j]);
        T gg = std::tanh(gb[2 * hidden + j]);
        T o = sigmoid(gb[3 * hidden + j]);
        T c = f * cb[j] + i * gg;
        cb[j] = c;
        hb[j] = o * std::tanh(c);
      }
    }
    return true;
  }
  /// gi [batch, 3H] = b_ih + x_t @ w_ih^T and gh [batch, 3H] = h_{t-1} @
  /// w_hh^T (r, z, n), bhh null without biases: h_t = (1 - z) n + z h_{t-1}.
  bool gruStep(const T *gi, const T *gh, const T *bhh, const T *hPrev,
               int64_t hPrevLd, T *h, int64_t hStride, int64_t batch,
               int64_t hidden) const {
    for (int64_t b = 0; b < batch; ++b) {
      const T *ib = gi + b * 3 * hidden, *hb = gh + b * 3 * hidden;
      const T *pb = hPrev + b * hPrevLd;
      T *ob = h + b * hStride;
      for (int64_t j = 0; j < hidden; ++j) {
        auto bias = [&](int64_t gate) {
          return bhh ? bhh[gate * hidden + j] : T(0);
        };
        T r = sigmoid(ib[j] + hb[j] + bias(0));
        T z = sigmoid(ib[hidden + j] + hb[hidden + j] + bias(1));
        T n =
            std::tanh(ib[2 * hidden + j] + r * (hb[2 * hidden + j] + bias(2)));
        ob[j] = (T(1) - z) * n + z * pb[j];
      }
    }
    return true;
  }
  /// Keeps each element with probability 1 - p, scaled by `scale`.
  bool dropout(T *x, int64_t n, double p, T scale) const {
    KeepDraw keep(1.0 - p);
    for (int64_t k = 0; k < n; ++k)
      x[k] = keep(ctx.rng()) ? x[k] * scale : T(0);
    return true;
  }
};

/// CpuLayers with the optimized tier's cell updates (CPU/Optimized/
/// Recurrent.cpp: the same formulas, vectorized): the layer loop, GEMMs
/// and dropout stay the portable ones.
template <typename T> struct FastCpuLayers : CpuLayers<T> {
  using CpuLayers<T>::CpuLayers;
  static constexpr bool kF64 = std::is_same_v<T, double>;
  bool lstmStep(const T *gates, T *cell, T *h, int64_t hStride, int64_t batch,
                int64_t hidden) const {
    optimized::lstmCells({gates, cell, h, hStride, batch, hidden, kF64});
    return true;
  }
  bool gruStep(const T *gi, const T *gh, const T *bhh, const T *hPrev,
               int64_t hPrevLd, T *h, int64_t hStride, int64_t batch,
               int64_t hidden) const {
    optimized::gruCells(
        {gi, gh, bhh, hPrev, hPrevLd, h, hStride, batch, hidden, kF64});
    return true;
  }
};

} // namespace

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n), torch.nn.LSTM's
/// semantics. Per layer and direction (forward first) the weights are w_ih,
/// w_hh[, b_ih, b_hh].
void cpu::lstm(KernelContext &ctx) { rnn::run<CpuLayers>(ctx, RnnCell::Lstm); }

/// gru(input, h0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n), torch.nn.GRU's semantics,
/// the weights ordered as lstm's.
void cpu::gru(KernelContext &ctx) { rnn::run<CpuLayers>(ctx, RnnCell::Gru); }

// The optimized tier (Ops.def's FAST_CPU): every lstm and gru the portable
// kernel runs (f32 and f64; its argument checks fail the same way).
bool cpu::fast::lstm(KernelContext &ctx) {
  rnn::run<FastCpuLayers>(ctx, RnnCell::Lstm);
  return true;
}
bool cpu::fast::gru(KernelContext &ctx) {
  rnn::run<FastCpuLayers>(ctx, RnnCell::Gru);
  return true;
}
