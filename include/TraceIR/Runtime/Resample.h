//===- Resample.h - Pooling, padding and resampling -------------*- C++ -*-===//
//
// The index arithmetic of avg_pool2d, the pads (constant_pad_nd,
// reflection_padNd, replication_padNd), flip, repeat and the 2-D upsamplings,
// as one plain struct per call (a plan, which ResampleArgs.h builds from a
// kernel's call) and one function per output element. The CPU kernels
// (CPU/Resample.cpp) loop over the output calling these functions; the CUDA
// kernels (CUDA/Resample.cu) run the same functions, one thread per element,
// so both devices compute every element alike and the CPU tests cover the
// arithmetic of both.
//
// Pads, flip, repeat and upsample_nearest2d only move elements: a
// GatherPlan maps each output element to the input element it copies (or to
// a fill value), bytes for bytes, in any dtype. avg_pool2d and
// upsample_bilinear2d load and accumulate in f64, as the other pooling
// kernels do, but compute their indices and interpolation weights in
// PyTorch's own precision (float for f32, f16 and bf16; double for f64) so
// they pick the same input elements as PyTorch's CPU kernels.
//
// No LLVM here: nvcc compiles it. Offsets and strides count elements.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_RESAMPLE_H
#define TRACEIR_RUNTIME_RESAMPLE_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cmath>
#include <cstdint>

namespace traceir {

//===--- Gathers: pads, flip, repeat, upsample_nearest2d
//-------------------===//

/// How output index j along one dim picks its input index.
enum class AxisMap : int32_t {
  Shift,     ///< j - shift; outside the input, the fill value (constant pad)
  Reflect,   ///< j - shift mirrored about the input's edges
  Replicate, ///< j - shift clamped to the input's edges
  Flip,      ///< size - 1 - j
  Modulo,    ///< j % size (repeat)
  Nearest,   ///< PyTorch's nearest_idx, with `scale`
};

/// out (contiguous, `outShape`) = the input's elements as `map` picks them.
struct GatherPlan {
  int32_t rank = 0;
  int64_t outShape[kEwMaxRank] = {};
  int64_t inSize[kEwMaxRank] = {}, inStrides[kEwMaxRank] = {};
  int32_t map[kEwMaxRank] = {};
  int64_t shift[kEwMaxRank] = {}; ///< Shift, Reflect, Replicate
  float scale[kEwMaxRank] = {};   ///< Nearest: input / output, in float
  int64_t numel = 0;
  const char *in = nullptr; ///< the input's first element
  char *out = nullptr;
  int32_t elemSize = 1;
  /// The fill value of a constant pad, in the result's dtype.
  unsigned char fill[8] = {};
};

/// The input index output index `j` of a dim of output size `outSize`
/// takes, or -1 for the fill value.
TRACEIR_HD inline int64_t gatherIndex(const GatherPlan &p, int d, int64_t j) {
  int64_t n = p.inSize[d];
  switch (static_cast<AxisMap>(p.map[d])) {
  case AxisMap::Shift: {
    int64_t i = j - p.shift[d];
    return i >= 0 && i < n ? i : -1;
  }
  case AxisMap::Reflect: {
    // A pad is smaller than the input, so one reflection lands inside.
    int64_t i = j - p.shift[d];
    return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
  }
  case AxisMap::Replicate: {
    int64_t i = j - p.shift[d];
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
  case AxisMap::Flip:
    return n - 1 - j;
  case AxisMap::Modulo:
    return j % n;
  case AxisMap::Nearest: {
    // PyTorch's nearest_idx: exact for the same and the doubled size, else
    // floor(j * scale) in float.
    int64_t out = p.outShape[d];
    if (out == n)
      return j;
    if (out == 2 * n)
      return j >> 1;
    int64_t i =
        static_cast<int64_t>(floorf(static_cast<float>(j) * p.scale[d]));
    return i < n - 1 ? i : n - 1;
  }
  }
  return -1;
}

/// The input offset output element `k` (row-major) copies, or -1 for the
/// fill value.
TRACEIR_HD inline int64_t gatherSource(const GatherPlan &p, int64_t k) {
  int64_t off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    int64_t n = p.outShape[d];
    int64_t i = gatherIndex(p, d, k % n);
    if (i < 0)
      return -1;
    off += i * p.inStrides[d];
    k /= n;
  }
  return off;
}

/// Copies output element `k`.
TRACEIR_HD inline void gatherElement(const GatherPlan &p, int64_t k) {
  int64_t src = gatherSource(p, k);
  const char *from = src < 0 ? reinterpret_cast<const char *>(p.fill)
                             : p.in + src * p.elemSize;
  char *to = p.out + k * p.elemSize;
  for (int32_t b = 0; b < p.elemSize; ++b)
    to[b] = from[b];
}

//===--- Windows and interpolation over [N, C, H, W] ----------------------===//

/// A floating input seen as [N, C, H, W] (an unbatched one with N = 1 and a
/// zero batch stride) and a contiguous [N, C, OH, OW] output.
struct Planes2d {
  const char *in = nullptr; ///< the input's first element
  int32_t inDtype = F32;
  int64_t inStrides[4] = {};
  char *out = nullptr;
  int32_t outDtype = F32;
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;

  int64_t numel() const { return N * C * OH * OW; }
  /// Output element `k`'s plane (n * C + c), row and column.
  TRACEIR_HD void locate(int64_t k, int64_t &n, int64_t &c, int64_t &oh,
                         int64_t &ow) const {
    ow = k % OW;
    oh = k / OW % OH;
    int64_t p = k / (OW * OH);
    n = p / C;
    c = p % C;
  }
  /// Input element (n, c, h, w) as f64.
  TRACEIR_HD double load(int64_t n, int64_t c, int64_t h, int64_t w) const {
    int64_t off = n * inStrides[0] + c * inStrides[1] + h * inStrides[2] +
                  w * inStrides[3];
    return ewLoadDouble(in + off * ewSize(inDtype), inDtype);
  }
  /// Input element (n, c, h, w) of an integer input, exactly.
  TRACEIR_HD int64_t loadInt(int64_t n, int64_t c, int64_t h, int64_t w) const {
    int64_t off = n * inStrides[0] + c * inStrides[1] + h * inStrides[2] +
                  w * inStrides[3];
    return ewLoadInt(in + off * ewSize(inDtype), inDtype);
  }
  TRACEIR_HD void store(int64_t k, double v) const {
    ewStoreDouble(out + k * ewSize(outDtype), outDtype, v);
  }
};

/// avg_pool2d: the window of output (oh, ow) is kernel x kernel from
/// (oh, ow) * stride - padding, clipped to the input; it averages over its
/// size within the padded input (count_include_pad), over its clipped size,
/// or over `divisor` where nonzero (divisor_override), as PyTorch's CPU
/// kernel; an i64 input sums exactly and divides toward zero, as its.
struct AvgPool2dPlan {
  Planes2d x;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool countIncludePad = true;
  int64_t divisor = 0;
};

TRACEIR_HD inline void avgPool2dElement(const AvgPool2dPlan &p, int64_t k) {
  const Planes2d &x = p.x;
  int64_t n, c, oh, ow;
  x.locate(k, n, c, oh, ow);
  int64_t h0 = oh * p.sH - p.pH, w0 = ow * p.sW - p.pW;
  int64_t h1 = h0 + p.kH < x.H + p.pH ? h0 + p.kH : x.H + p.pH;
  int64_t w1 = w0 + p.kW < x.W + p.pW ? w0 + p.kW : x.W + p.pW;
  int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = h0 > 0 ? h0 : 0;
  w0 = w0 > 0 ? w0 : 0;
  h1 = h1 < x.H ? h1 : x.H;
  w1 = w1 < x.W ? w1 : x.W;
  if (h0 >= h1 || w0 >= w1) { // a window wholly in the padding
    x.store(k, 0);
    return;
  }
  int64_t count = p.divisor           ? p.divisor
                  : p.countIncludePad ? padded
                                      : (h1 - h0) * (w1 - w0);
  if (x.inDtype == I64) {
    // PyTorch's int64 kernel: an exact (wrapping) sum, divided toward zero.
    uint64_t sum = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w)
        sum += static_cast<uint64_t>(x.loadInt(n, c, h, w));
    int64_t total = static_cast<int64_t>(sum);
    // INT64_MIN / -1 overflows: its wrapped quotient is INT64_MIN itself.
    ewStoreInt(x.out + k * ewSize(x.outDtype), x.outDtype,
               count == -1 ? static_cast<int64_t>(0 - sum) : total / count);
    return;
  }
  double sum = 0;
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t w = w0; w < w1; ++w)
      sum += x.load(n, c, h, w);
  x.store(k, sum / static_cast<double>(count));
}

/// upsample_bilinear2d: `ratioH` and `ratioW` are PyTorch's
/// area_pixel_compute_scale, in float unless `f64` (then in double).
struct BilinearPlan {
  Planes2d x;
  bool alignCorners = false;
  bool f64 = false;
  double ratioH = 0, ratioW = 0;
};

/// PyTorch's compute_source_index_and_lambda in its opmath type T: output
/// index `j` interpolates input indices i0 and i1 with weights l0 and l1.
template <typename T>
TRACEIR_HD inline void bilinearTaps(T ratio, int64_t j, int64_t in, int64_t out,
                                    bool alignCorners, int64_t &i0, int64_t &i1,
                                    T &l0, T &l1) {
  if (out == in) {
    i0 = i1 = j;
    l0 = 1;
    l1 = 0;
    return;
  }
  T real = alignCorners ? ratio * static_cast<T>(j)
                        : ratio * (static_cast<T>(j) + static_cast<T>(0.5)) -
                              static_cast<T>(0.5);
  if (!alignCorners && real < static_cast<T>(0))
    real = 0;
  // PyTorch floors with floorf, in float, whatever T.
  int64_t i = static_cast<int64_t>(floorf(static_cast<float>(real)));
  i0 = i < in - 1 ? i : in - 1;
  T lambda = real - static_cast<T>(i0);
  l1 = lambda < static_cast<T>(0)   ? static_cast<T>(0)
       : lambda > static_cast<T>(1) ? static_cast<T>(1)
                                    : lambda;
  i1 = i0 + (i0 < in - 1 ? 1 : 0);
  l0 = static_cast<T>(1) - l1;
}

template <typename T>
TRACEIR_HD inline void bilinearElementIn(const BilinearPlan &p, int64_t k) {
  const Planes2d &x = p.x;
  int64_t n, c, oh, ow, h0, h1, w0, w1;
  x.locate(k, n, c, oh, ow);
  T lh0, lh1, lw0, lw1;
  bilinearTaps<T>(static_cast<T>(p.ratioH), oh, x.H, x.OH, p.alignCorners, h0,
                  h1, lh0, lh1);
  bilinearTaps<T>(static_cast<T>(p.ratioW), ow, x.W, x.OW, p.alignCorners, w0,
                  w1, lw0, lw1);
  double v = double(lh0) * (double(lw0) * x.load(n, c, h0, w0) +
                            double(lw1) * x.load(n, c, h0, w1)) +
             double(lh1) * (double(lw0) * x.load(n, c, h1, w0) +
                            double(lw1) * x.load(n, c, h1, w1));
  x.store(k, v);
}

TRACEIR_HD inline void bilinearElement(const BilinearPlan &p, int64_t k) {
  if (p.f64)
    bilinearElementIn<double>(p, k);
  else
    bilinearElementIn<float>(p, k);
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_RESAMPLE_H
