//===- NormPoolBackward.h - Pool, norm and embedding backward ---*- C++ -*-===//
//
// The arithmetic of avg_pool2d_backward, _adaptive_avg_pool2d_backward,
// native_layer_norm_backward, native_group_norm_backward and
// embedding_dense_backward, as one plain struct per call (a plan, which
// NormPoolBackwardArgs.h builds from a kernel's call) and one function per
// result element. The CPU kernels (CPU/NormPoolBackward.cpp) loop over the
// results calling these functions; the CUDA kernels
// (CUDA/NormPoolBackward.cu) run the same functions, one thread per element,
// so both devices compute every element alike and the CPU tests cover the
// arithmetic of both.
//
// Every result element sums its own terms in a fixed order (a gather, no
// atomics): an input element of a pool sums the windows that cover it, a
// weight element of a norm sums over the rows, an embedding row over the
// positions holding its index (in position order). Floating values load and
// accumulate in f64 and round once; i64 (avg_pool2d_backward) and the
// integer gradients of embedding_dense_backward sum exactly (wrapping), as
// ATen's CPU kernels.
//
// No LLVM here: nvcc compiles it. Offsets and strides count elements.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_NORMPOOLBACKWARD_H
#define TRACEIR_RUNTIME_NORMPOOLBACKWARD_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

/// A tensor operand of any strides, read by its row-major element index.
struct StridedOperand {
  const char *data = nullptr; ///< its first element
  int32_t dtype = F32;
  int32_t rank = 0;
  int64_t shape[kEwMaxRank] = {}, strides[kEwMaxRank] = {};

  TRACEIR_HD int64_t offsetOf(int64_t k) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t n = shape[d];
      off += (k % n) * strides[d];
      k /= n;
    }
    return off;
  }
  TRACEIR_HD double load(int64_t k) const {
    return ewLoadDouble(data + offsetOf(k) * ewSize(dtype), dtype);
  }
  TRACEIR_HD int64_t loadInt(int64_t k) const {
    return ewLoadInt(data + offsetOf(k) * ewSize(dtype), dtype);
  }
};

//===--- Pooling backward -------------------------------------------------===//

/// grad_output seen as [N, C, OH, OW] (an unbatched one with N = 1) and a
/// contiguous grad_input [N, C, H, W] of the same dtype. avg_pool2d's window
/// and divisor as AvgPool2dPlan's; `adaptive` pools as adaptive_avg_pool2d
/// (cell i of n along an input of size s covers [floor(i s / n),
/// ceil((i + 1) s / n))).
struct PoolBackwardPlan {
  const char *gO = nullptr;
  int64_t gOStrides[4] = {};
  char *gI = nullptr;
  int32_t dtype = F32;
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  bool adaptive = false;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool countIncludePad = true;
  int64_t divisor = 0;

  int64_t numel() const { return N * C * H * W; }
};

TRACEIR_HD inline int64_t poolCeilDiv(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/// avg_pool2d's divisor of the window of output (oh, ow), as its forward.
TRACEIR_HD inline int64_t avgPoolDivisor(const PoolBackwardPlan &p, int64_t oh,
                                         int64_t ow) {
  if (p.divisor)
    return p.divisor;
  int64_t h0 = oh * p.sH - p.pH, w0 = ow * p.sW - p.pW;
  int64_t h1 = h0 + p.kH < p.H + p.pH ? h0 + p.kH : p.H + p.pH;
  int64_t w1 = w0 + p.kW < p.W + p.pW ? w0 + p.kW : p.W + p.pW;
  if (p.countIncludePad)
    return (h1 - h0) * (w1 - w0);
  h0 = h0 > 0 ? h0 : 0;
  w0 = w0 > 0 ? w0 : 0;
  h1 = h1 < p.H ? h1 : p.H;
  w1 = w1 < p.W ? w1 : p.W;
  return (h1 - h0) * (w1 - w0);
}

/// The outputs [lo, hi) along one dim whose windows may cover input index
/// i; the caller checks each.
TRACEIR_HD inline void poolCovering(const PoolBackwardPlan &p, bool rows,
                                    int64_t i, int64_t &lo, int64_t &hi) {
  int64_t in = rows ? p.H : p.W, out = rows ? p.OH : p.OW;
  if (p.adaptive) {
    lo = i * out / in;
    hi = poolCeilDiv((i + 1) * out, in);
  } else {
    int64_t k = rows ? p.kH : p.kW, s = rows ? p.sH : p.sW,
            pad = rows ? p.pH : p.pW;
    // o * s - pad <= i < o * s - pad + k.
    lo = poolCeilDiv(i + pad - k + 1, s);
    hi = (i + pad) / s + 1;
  }
  lo = lo > 0 ? lo : 0;
  hi = hi < out ? hi : out;
}

/// Adaptive cell o of `out` along an input of size `in`: [start, end).
TRACEIR_HD inline void adaptiveCell(int64_t o, int64_t in, int64_t out,
                                    int64_t &start, int64_t &end) {
  start = o * in / out;
  end = poolCeilDiv((o + 1) * in, out);
}

/// grad_input element `k` = the sum over the windows covering it of
/// grad_output / the window's divisor, in output order (ATen's order).
TRACEIR_HD inline void poolBackwardElement(const PoolBackwardPlan &p,
                                           int64_t k) {
  int64_t w = k % p.W, h = k / p.W % p.H, plane = k / (p.W * p.H);
  int64_t n = plane / p.C, c = plane % p.C;
  int64_t ohLo, ohHi, owLo, owHi;
  poolCovering(p, true, h, ohLo, ohHi);
  poolCovering(p, false, w, owLo, owHi);
  int es = ewSize(p.dtype);
  const char *base = p.gO + (n * p.gOStrides[0] + c * p.gOStrides[1]) * es;
  double sum = 0;
  uint64_t isum = 0;
  for (int64_t oh = ohLo; oh < ohHi; ++oh) {
    int64_t hs, he;
    if (p.adaptive)
      adaptiveCell(oh, p.H, p.OH, hs, he);
    else
      hs = oh * p.sH - p.pH, he = hs + p.kH;
    if (h < hs || h >= he)
      continue;
    for (int64_t ow = owLo; ow < owHi; ++ow) {
      int64_t ws, we;
      if (p.adaptive)
        adaptiveCell(ow, p.W, p.OW, ws, we);
      else
        ws = ow * p.sW - p.pW, we = ws + p.kW;
      if (w < ws || w >= we)
        continue;
      const char *g = base + (oh * p.gOStrides[2] + ow * p.gOStrides[3]) * es;
      int64_t count =
          p.adaptive ? (he - hs) * (we - ws) : avgPoolDivisor(p, oh, ow);
      if (p.dtype == I64) {
        // ATen's int64 kernel: each gradient divided toward zero, then an
        // exact (wrapping) sum. INT64_MIN / -1 wraps to itself.
        int64_t v = ewLoadInt(g, p.dtype);
        isum += count == -1 ? 0 - static_cast<uint64_t>(v)
                            : static_cast<uint64_t>(v / count);
      } else {
        sum += ewLoadDouble(g, p.dtype) / static_cast<double>(count);
      }
    }
  }
  char *out = p.gI + k * es;
  if (p.dtype == I64)
    ewStoreInt(out, p.dtype, static_cast<int64_t>(isum));
  else
    ewStoreDouble(out, p.dtype, sum);
}

//===--- layer_norm and group_norm backward -------------------------------===//

/// The input seen as M rows of `inner` elements (row o, element j is the
/// input's row-major element o * inner + j), normalized with mean[o] and
/// rstd[o]; element j of row o takes weight element
/// (o % groups) * (inner / span) + j / span (LayerNormArgs's rule: layer
/// norm 1 and 1, group norm its groups and HxW). numWeights weights.
/// grad_input = rstd * (g - mean(g) - xhat * mean(g * xhat)) over the row,
/// with g = dy * weight and xhat = (x - mean) * rstd; grad_weight sums
/// dy * xhat and grad_bias dy over the elements taking that weight.
/// `rowSums` (2 M doubles) holds each row's sum(g) and sum(g * xhat),
/// written by normRowSums before the grad_input pass. A null result is not
/// computed; results are contiguous.
struct NormBackwardPlan {
  StridedOperand dy, x, mean, rstd, weight; ///< weight.data null: None
  int64_t M = 0, inner = 0, groups = 1, span = 1, numWeights = 0;
  double *rowSums = nullptr;
  char *dx = nullptr, *dw = nullptr, *db = nullptr;
  int32_t dxDtype = F32, dwDtype = F32, dbDtype = F32;

  TRACEIR_HD int64_t weightIndex(int64_t o, int64_t j) const {
    return (o % groups) * (inner / span) + j / span;
  }
  TRACEIR_HD double weightAt(int64_t o, int64_t j) const {
    return weight.data ? weight.load(weightIndex(o, j)) : 1.0;
  }
};

/// Row o's sum(g) and sum(g * xhat).
TRACEIR_HD inline void normRowSums(const NormBackwardPlan &p, int64_t o) {
  double mu = p.mean.load(o), r = p.rstd.load(o), s1 = 0, s2 = 0;
  for (int64_t j = 0, k = o * p.inner; j < p.inner; ++j, ++k) {
    double g = p.dy.load(k) * p.weightAt(o, j);
    s1 += g;
    s2 += g * (p.x.load(k) - mu) * r;
  }
  p.rowSums[2 * o] = s1;
  p.rowSums[2 * o + 1] = s2;
}

/// grad_input element k.
TRACEIR_HD inline void normInputGrad(const NormBackwardPlan &p, int64_t k) {
  int64_t o = k / p.inner, j = k % p.inner;
  double mu = p.mean.load(o), r = p.rstd.load(o);
  double n = static_cast<double>(p.inner);
  double xhat = (p.x.load(k) - mu) * r;
  double g = p.dy.load(k) * p.weightAt(o, j);
  double v = r * (g - p.rowSums[2 * o] / n - xhat * p.rowSums[2 * o + 1] / n);
  ewStoreDouble(p.dx + k * ewSize(p.dxDtype), p.dxDtype, v);
}

/// grad_weight and grad_bias element q: the rows o of its group (o % groups
/// == q / (inner / span)) and their elements [jc * span, (jc + 1) * span),
/// jc = q % (inner / span).
TRACEIR_HD inline void normWeightGrad(const NormBackwardPlan &p, int64_t q) {
  int64_t perGroup = p.inner / p.span;
  // Empty rows (perGroup 0) take no weight: its sums are 0.
  int64_t grp = perGroup ? q / perGroup : p.M;
  int64_t j0 = perGroup ? q % perGroup * p.span : 0;
  double sw = 0, sb = 0;
  for (int64_t o = grp; o < p.M; o += p.groups) {
    double mu = p.mean.load(o), r = p.rstd.load(o);
    for (int64_t j = j0, k = o * p.inner + j0; j < j0 + p.span; ++j, ++k) {
      double dy = p.dy.load(k);
      sw += dy * (p.x.load(k) - mu) * r;
      sb += dy;
    }
  }
  if (p.dw)
    ewStoreDouble(p.dw + q * ewSize(p.dwDtype), p.dwDtype, sw);
  if (p.db)
    ewStoreDouble(p.db + q * ewSize(p.dbDtype), p.dbDtype, sb);
}

//===--- embedding_dense_backward -----------------------------------------===//

/// grad_output seen as L positions of D elements (position i, element d is
/// its row-major element i * D + d); `order` lists the positions by index,
/// stably, and index w's positions are order[start[w], start[w + 1]). The
/// result [V, D] is contiguous: row w sums its positions' gradients (zero
/// for padding_idx), divided by their count where scale_grad_by_freq (an
/// integer gradient is multiplied by the integer 1 / count, as ATen's CPU).
struct EmbeddingBackwardPlan {
  StridedOperand grad;
  int64_t L = 0, D = 0, V = 0, paddingIdx = -1;
  bool scale = false;
  const int64_t *order = nullptr, *start = nullptr;
  char *out = nullptr;
  int32_t dtype = F32;

  int64_t numel() const { return V * D; }
};

TRACEIR_HD inline void embeddingBackwardElement(const EmbeddingBackwardPlan &p,
                                                int64_t k) {
  int64_t w = k / p.D, d = k % p.D;
  int64_t b = p.start[w], e = p.start[w + 1];
  char *out = p.out + k * ewSize(p.dtype);
  bool skip = w == p.paddingIdx;
  if (!ewIsFloating(p.dtype)) {
    uint64_t sum = 0;
    if (!skip && (!p.scale || e - b == 1))
      for (int64_t i = b; i < e; ++i)
        sum += static_cast<uint64_t>(p.grad.loadInt(p.order[i] * p.D + d));
    ewStoreInt(out, p.dtype, static_cast<int64_t>(sum));
    return;
  }
  double sum = 0;
  if (!skip)
    for (int64_t i = b; i < e; ++i)
      sum += p.grad.load(p.order[i] * p.D + d);
  if (p.scale && e > b)
    sum /= static_cast<double>(e - b);
  ewStoreDouble(out, p.dtype, sum);
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_NORMPOOLBACKWARD_H
