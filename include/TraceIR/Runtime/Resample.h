//===- Resample.h - Pooling, padding and resampling -------------*- C++ -*-===//
//
// The index arithmetic of the pools, col2im, the pads (constant_pad_nd,
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
// a fill value), bytes for bytes, in any dtype. The pools (avg, max and
// adaptive average, 2-D and 3-D: one function per element serves both, a
// 2-D input seen with a depth of 1), col2im and upsample_bilinear2d load
// and accumulate in f64 (max pooling and an i64 average exactly in
// int64); the bilinear one computes its indices and interpolation weights
// in PyTorch's own precision (float for f32, f16 and bf16; double for f64)
// so it picks the same input elements as PyTorch's CPU kernel.
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

/// The elements of output row `r` (a run of the last dim; rank >= 1), as
/// gatherElement copies each: the outer dims' source offset found once per
/// row rather than by a division per dim per element, which made a pad or
/// a roll of swin_t's 24k-element maps take 500-700 us (the CPU's loop;
/// a CUDA thread still takes one element).
TRACEIR_HD inline void gatherRow(const GatherPlan &p, int64_t r) {
  const int last = p.rank - 1;
  const int64_t W = p.outShape[last];
  int64_t src = 0, rest = r;
  bool filled = false;
  for (int d = last - 1; d >= 0; --d) {
    int64_t i = gatherIndex(p, d, rest % p.outShape[d]);
    rest /= p.outShape[d];
    filled = filled || i < 0;
    src += i * p.inStrides[d];
  }
  char *to = p.out + r * W * p.elemSize;
  if (!filled && static_cast<AxisMap>(p.map[last]) == AxisMap::Shift &&
      p.inStrides[last] == 1) {
    // A constant pad's row: fill, one run of the input, fill.
    int64_t lo = p.shift[last] < 0 ? 0 : p.shift[last];
    int64_t hi = p.shift[last] + p.inSize[last];
    lo = lo < W ? lo : W;
    hi = hi < lo ? lo : hi < W ? hi : W;
    const char *from = p.in + (src + lo - p.shift[last]) * p.elemSize;
    const char *fill = reinterpret_cast<const char *>(p.fill);
    for (int64_t b = 0, n = lo * p.elemSize; b < n; ++b)
      to[b] = fill[b % p.elemSize];
    for (int64_t b = lo * p.elemSize, n = hi * p.elemSize; b < n; ++b)
      to[b] = from[b - lo * p.elemSize];
    for (int64_t b = hi * p.elemSize, n = W * p.elemSize; b < n; ++b)
      to[b] = fill[b % p.elemSize];
    return;
  }
  for (int64_t j = 0; j < W; ++j, to += p.elemSize) {
    int64_t i = filled ? -1 : gatherIndex(p, last, j);
    const char *from = i < 0
                           ? reinterpret_cast<const char *>(p.fill)
                           : p.in + (src + i * p.inStrides[last]) * p.elemSize;
    for (int32_t b = 0; b < p.elemSize; ++b)
      to[b] = from[b];
  }
}

//===--- Windows and interpolation over [N, C, D, H, W] -------------------===//

/// An input seen as [N, C, D, H, W] (an unbatched one with N = 1 and a zero
/// batch stride; a 2-D one with D = 1 and a zero depth stride) and a
/// contiguous [N, C, OD, OH, OW] output (OD = 1 for 2-D), so that one
/// function per element serves the 2-D and the 3-D ops.
struct Planes3d {
  const char *in = nullptr; ///< the input's first element
  int32_t inDtype = F32;
  int64_t inStrides[5] = {}; ///< for (n, c, d, h, w)
  char *out = nullptr;
  int32_t outDtype = F32;
  int64_t N = 0, C = 0, D = 1, H = 0, W = 0, OD = 1, OH = 0, OW = 0;

  int64_t numel() const { return N * C * OD * OH * OW; }
  /// Output element `k`'s plane (n * C + c) and position.
  TRACEIR_HD void locate(int64_t k, int64_t &n, int64_t &c, int64_t &od,
                         int64_t &oh, int64_t &ow) const {
    ow = k % OW;
    oh = k / OW % OH;
    od = k / (OW * OH) % OD;
    int64_t p = k / (OW * OH * OD);
    n = p / C;
    c = p % C;
  }
  TRACEIR_HD const char *at(int64_t n, int64_t c, int64_t d, int64_t h,
                            int64_t w) const {
    int64_t off = n * inStrides[0] + c * inStrides[1] + d * inStrides[2] +
                  h * inStrides[3] + w * inStrides[4];
    return in + off * ewSize(inDtype);
  }
  /// Input element (n, c, d, h, w) as f64.
  TRACEIR_HD double load(int64_t n, int64_t c, int64_t d, int64_t h,
                         int64_t w) const {
    return ewLoadDouble(at(n, c, d, h, w), inDtype);
  }
  /// Input element (n, c, d, h, w) of an integer input, exactly.
  TRACEIR_HD int64_t loadInt(int64_t n, int64_t c, int64_t d, int64_t h,
                             int64_t w) const {
    return ewLoadInt(at(n, c, d, h, w), inDtype);
  }
  TRACEIR_HD void store(int64_t k, double v) const {
    ewStoreDouble(out + k * ewSize(outDtype), outDtype, v);
  }
  TRACEIR_HD void storeInt(int64_t k, int64_t v) const {
    ewStoreInt(out + k * ewSize(outDtype), outDtype, v);
  }
};

/// A pooling window per spatial dim (d, h, w): size, stride, padding and
/// dilation. A 2-D pool's depth entry is the identity window (1, 1, 0, 1).
struct Window3d {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0},
          d[3] = {1, 1, 1};
};

/// avg_pool2d and avg_pool3d: the window of an output element is kernel
/// taps from its position * stride - padding, clipped to the input; it
/// averages over its size within the padded input (count_include_pad),
/// over its clipped size, or over `divisor` where nonzero
/// (divisor_override), as PyTorch's CPU kernels; an i64 input sums exactly
/// and divides toward zero, as theirs.
struct AvgPoolPlan {
  Planes3d x;
  Window3d w;
  bool countIncludePad = true;
  int64_t divisor = 0;
};

TRACEIR_HD inline void avgPoolElement(const AvgPoolPlan &p, int64_t k) {
  const Planes3d &x = p.x;
  int64_t n, c, o[3];
  x.locate(k, n, c, o[0], o[1], o[2]);
  const int64_t size[3] = {x.D, x.H, x.W};
  int64_t lo[3], hi[3], padded = 1, clipped = 1;
  for (int d = 0; d < 3; ++d) {
    lo[d] = o[d] * p.w.s[d] - p.w.p[d];
    int64_t end = size[d] + p.w.p[d];
    hi[d] = lo[d] + p.w.k[d] < end ? lo[d] + p.w.k[d] : end;
    padded *= hi[d] - lo[d];
    lo[d] = lo[d] > 0 ? lo[d] : 0;
    hi[d] = hi[d] < size[d] ? hi[d] : size[d];
    if (lo[d] >= hi[d]) { // a window wholly in the padding
      x.store(k, 0);
      return;
    }
    clipped *= hi[d] - lo[d];
  }
  int64_t count = p.divisor ? p.divisor : p.countIncludePad ? padded : clipped;
  if (x.inDtype == I64) {
    // PyTorch's int64 kernel: an exact (wrapping) sum, divided toward zero.
    uint64_t sum = 0;
    for (int64_t i = lo[0]; i < hi[0]; ++i)
      for (int64_t h = lo[1]; h < hi[1]; ++h)
        for (int64_t w = lo[2]; w < hi[2]; ++w)
          sum += static_cast<uint64_t>(x.loadInt(n, c, i, h, w));
    int64_t total = static_cast<int64_t>(sum);
    // INT64_MIN / -1 overflows: its wrapped quotient is INT64_MIN itself.
    x.storeInt(k, count == -1 ? static_cast<int64_t>(0 - sum) : total / count);
    return;
  }
  double sum = 0;
  for (int64_t i = lo[0]; i < hi[0]; ++i)
    for (int64_t h = lo[1]; h < hi[1]; ++h)
      for (int64_t w = lo[2]; w < hi[2]; ++w)
        sum += x.load(n, c, i, h, w);
  x.store(k, sum / static_cast<double>(count));
}

/// The first tap t of a window starting at `start` (maybe in the padding)
/// with start + t * dil >= 0.
TRACEIR_HD inline int64_t firstTap(int64_t start, int64_t dil) {
  return start >= 0 ? 0 : -start / dil + (-start % dil != 0);
}

/// max_pool2d, max_pool2d_with_indices and max_pool3d_with_indices: the
/// maximum of each window and, where `indices` (contiguous i64, shaped like
/// the output) is set, its position (d * H + h) * W + w within the input's
/// D x H x W volume (h * W + w in 2-D). Padding never wins, a NaN does (the
/// last one), and the position starts at the window's first tap inside the
/// input, as PyTorch's kernels. An integer input compares exactly.
struct MaxPoolPlan {
  Planes3d x;
  Window3d w;
  int64_t *indices = nullptr;
};

TRACEIR_HD inline void maxPoolElement(const MaxPoolPlan &p, int64_t k) {
  const Planes3d &x = p.x;
  int64_t n, c, o[3];
  x.locate(k, n, c, o[0], o[1], o[2]);
  const int64_t size[3] = {x.D, x.H, x.W};
  int64_t first[3], end[3];
  for (int d = 0; d < 3; ++d) {
    int64_t start = o[d] * p.w.s[d] - p.w.p[d];
    first[d] = start + firstTap(start, p.w.d[d]) * p.w.d[d];
    // One past the last tap, clipped to the input: only the taps inside
    // it are visited, so a huge window with as much padding costs no more.
    int64_t last = start + (p.w.k[d] - 1) * p.w.d[d] + 1;
    end[d] = last < size[d] ? last : size[d];
  }
  int64_t bestAt = (first[0] * x.H + first[1]) * x.W + first[2];
  bool integer = !ewIsFloating(x.inDtype);
  double best = -INFINITY;
  int64_t bestInt = INT64_MIN;
  for (int64_t i = first[0]; i < end[0]; i += p.w.d[0])
    for (int64_t h = first[1]; h < end[1]; h += p.w.d[1])
      for (int64_t w = first[2]; w < end[2]; w += p.w.d[2]) {
        int64_t at = (i * x.H + h) * x.W + w;
        if (integer) {
          int64_t v = x.loadInt(n, c, i, h, w);
          if (v > bestInt) {
            bestInt = v;
            bestAt = at;
          }
          continue;
        }
        double v = x.load(n, c, i, h, w);
        if (v > best || v != v) {
          best = v;
          bestAt = at;
        }
      }
  if (integer)
    x.storeInt(k, bestInt);
  else
    x.store(k, best);
  if (p.indices)
    p.indices[k] = bestAt;
}

/// adaptive_avg_pool2d and _adaptive_avg_pool3d: output cell i of n along
/// an input dim of size s averages [floor(i * s / n), ceil((i + 1) * s / n)),
/// computed as PyTorch's start_index and end_index (without overflow).
struct AdaptiveAvgPoolPlan {
  Planes3d x;
};

TRACEIR_HD inline void adaptiveAvgPoolElement(const AdaptiveAvgPoolPlan &p,
                                              int64_t k) {
  const Planes3d &x = p.x;
  int64_t n, c, o[3];
  x.locate(k, n, c, o[0], o[1], o[2]);
  const int64_t in[3] = {x.D, x.H, x.W}, out[3] = {x.OD, x.OH, x.OW};
  int64_t lo[3], hi[3], count = 1;
  for (int d = 0; d < 3; ++d) {
    lo[d] = (o[d] / out[d]) * in[d] + ((o[d] % out[d]) * in[d]) / out[d];
    hi[d] = 1 + ((o[d] + 1) * in[d] - 1) / out[d];
    count *= hi[d] - lo[d];
  }
  double sum = 0;
  for (int64_t i = lo[0]; i < hi[0]; ++i)
    for (int64_t h = lo[1]; h < hi[1]; ++h)
      for (int64_t w = lo[2]; w < hi[2]; ++w)
        sum += x.load(n, c, i, h, w);
  x.store(k, sum / static_cast<double>(count));
}

/// The output position along one dim whose window reaches input position
/// `i` with tap `t` (o * stride - pad + t * dil == i), or -1 when none: how
/// col2im (and the CUDA convolution and max pooling backward passes) turn
/// a scatter over the windows into a gather per input element.
TRACEIR_HD inline int64_t tapOutput(int64_t i, int64_t t, int64_t stride,
                                    int64_t pad, int64_t dil, int64_t outSize) {
  int64_t r = i + pad - t * dil;
  return r >= 0 && r % stride == 0 && r / stride < outSize ? r / stride : -1;
}

/// col2im (F.fold): an input [N, C * kH * kW, L] (any strides; N = 1 with a
/// zero batch stride when unbatched) of L = bH * bW sliding blocks, summed
/// into a contiguous [N, C, OH, OW]: each output element gathers the taps
/// of the blocks that cover it, in f64 (a bool input ORs, as PyTorch's
/// bool += does).
struct Col2imPlan {
  const char *in = nullptr;
  int32_t dtype = F32;
  int64_t inStrides[3] = {}; ///< for (n, C * kH * kW, L)
  char *out = nullptr;
  int64_t N = 0, C = 0, OH = 0, OW = 0, bH = 0, bW = 0;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;

  int64_t numel() const { return N * C * OH * OW; }
};

TRACEIR_HD inline void col2imElement(const Col2imPlan &p, int64_t k) {
  int64_t ow = k % p.OW, oh = k / p.OW % p.OH, c = k / (p.OW * p.OH) % p.C,
          n = k / (p.OW * p.OH * p.C);
  int esz = ewSize(p.dtype);
  double sum = 0;
  for (int64_t kh = 0; kh < p.kH; ++kh) {
    int64_t bh = tapOutput(oh, kh, p.sH, p.pH, p.dH, p.bH);
    if (bh < 0)
      continue;
    for (int64_t kw = 0; kw < p.kW; ++kw) {
      int64_t bw = tapOutput(ow, kw, p.sW, p.pW, p.dW, p.bW);
      if (bw < 0)
        continue;
      int64_t row = (c * p.kH + kh) * p.kW + kw, col = bh * p.bW + bw;
      int64_t off =
          n * p.inStrides[0] + row * p.inStrides[1] + col * p.inStrides[2];
      sum += ewLoadDouble(p.in + off * esz, p.dtype);
    }
  }
  ewStoreDouble(p.out + k * esz, p.dtype, sum);
}

/// One resized dim of upsample_bilinear2d on u8, as eager CPU computes it
/// (UpSampleKernel.cpp's separable kernels, AVX2 or generic: they agree):
/// each output index j reads at most two input indices from `xmin` with
/// weights rounded to int16 fixed point of `precision` bits.
struct SeparableAxis {
  int64_t in = 0, out = 0;
  double scale = 0; ///< area_pixel_compute_scale<double>
  int32_t precision = 0;
  bool alignCorners = false;
};

/// upsample_bilinear2d: `ratioH` and `ratioW` are PyTorch's
/// area_pixel_compute_scale, in float unless `f64` (then in double). A u8
/// input runs eager's separable fixed-point algorithm instead, over `axisH`
/// and `axisW`.
struct BilinearPlan {
  Planes3d x;
  bool alignCorners = false;
  bool f64 = false;
  bool u8 = false;
  double ratioH = 0, ratioW = 0;
  SeparableAxis axisH, axisW;
};

// nvcc contracts a * b + c into an fma by default, which rounds once where
// the host rounds twice; the u8 weights must be the host's to the last bit
// (they are rounded to int16 afterwards), so their arithmetic pins each
// rounding.
TRACEIR_HD inline double mulRn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
TRACEIR_HD inline double addRn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// HelperInterpBase::_compute_indices_min_size_weights for the linear
/// filter (antialias=False) in double: output `j`'s first input index, how
/// many inputs it reads (1 or 2) and their weights, the out-of-range taps'
/// weights folded into the edge ones as PyTorch folds them.
TRACEIR_HD inline void separableLinearWeights(const SeparableAxis &a, int64_t j,
                                              int64_t &xmin, int64_t &size,
                                              double w[2]) {
  double real = a.alignCorners
                    ? mulRn(a.scale, static_cast<double>(j))
                    : addRn(mulRn(a.scale, static_cast<double>(j) + 0.5), -0.5);
  if (!a.alignCorners && real < 0)
    real = 0;
  // guard_index_and_lambda floors with floorf, in float.
  int64_t index = static_cast<int64_t>(floorf(static_cast<float>(real)));
  if (index > a.in - 1)
    index = a.in - 1;
  double lambda = real - static_cast<double>(index);
  lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;
  // support 1: the taps are index and index + 1.
  int64_t unboundMin = index, unboundMax = index + 2;
  xmin = unboundMin > 0 ? unboundMin : 0;
  size = (unboundMax < a.in ? unboundMax : a.in) - xmin;
  size = size < 0 ? 0 : size > 2 ? 2 : size;
  int64_t wi = 0;
  for (int t = 0; t < 2; ++t) {
    w[t] = 0;
    double x = static_cast<double>(t) - lambda; // the filter's argument
    x = x < 0 ? -x : x;
    double f = x < 1.0 ? 1.0 - x : 0.0;
    if (unboundMin + t <= 0)
      wi = 0;
    else if (unboundMin + t >= a.in - 1)
      wi = size - 1;
    w[wi] += f;
    ++wi;
  }
}

/// _compute_index_ranges_int16_weights: weight `w` in int16 fixed point.
TRACEIR_HD inline int32_t separableInt16(double w, int32_t precision) {
  double v = w * static_cast<double>(1 << precision);
  return static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v)
                                    : static_cast<int>(0.5 + v));
}

/// One pass (basic_loop_aa_horizontal/vertical<uint8_t>) at output index
/// `j` of axis `a`: `tap(i)` is input index i's u8 value.
template <typename Tap>
TRACEIR_HD inline int32_t separablePass(const SeparableAxis &a, int64_t j,
                                        Tap tap) {
  int64_t xmin, size;
  double w[2];
  separableLinearWeights(a, j, xmin, size, w);
  int32_t acc = 1 << (a.precision - 1); // rounds to nearest
  for (int64_t t = 0; t < size; ++t)
    acc += tap(xmin + t) * separableInt16(w[t], a.precision);
  acc >>= a.precision;
  return acc < 0 ? 0 : acc > 255 ? 255 : acc;
}

/// A u8 output element: the width pass (rounded to u8, as eager's
/// temporary is) then the height pass, each skipped where that dim keeps
/// its size.
TRACEIR_HD inline void bilinearElementU8(const BilinearPlan &p, int64_t k) {
  const Planes3d &x = p.x;
  int64_t n, c, od, oh, ow;
  x.locate(k, n, c, od, oh, ow);
  auto row = [&](int64_t h) -> int32_t {
    if (x.OW == x.W)
      return static_cast<int32_t>(x.loadInt(n, c, 0, h, ow));
    return separablePass(p.axisW, ow, [&](int64_t w) {
      return static_cast<int32_t>(x.loadInt(n, c, 0, h, w));
    });
  };
  int32_t v = x.OH == x.H ? row(oh) : separablePass(p.axisH, oh, row);
  x.storeInt(k, v);
}

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
  const Planes3d &x = p.x;
  int64_t n, c, od, oh, ow, h0, h1, w0, w1;
  x.locate(k, n, c, od, oh, ow);
  T lh0, lh1, lw0, lw1;
  bilinearTaps<T>(static_cast<T>(p.ratioH), oh, x.H, x.OH, p.alignCorners, h0,
                  h1, lh0, lh1);
  bilinearTaps<T>(static_cast<T>(p.ratioW), ow, x.W, x.OW, p.alignCorners, w0,
                  w1, lw0, lw1);
  double v = double(lh0) * (double(lw0) * x.load(n, c, 0, h0, w0) +
                            double(lw1) * x.load(n, c, 0, h0, w1)) +
             double(lh1) * (double(lw0) * x.load(n, c, 0, h1, w0) +
                            double(lw1) * x.load(n, c, 0, h1, w1));
  x.store(k, v);
}

TRACEIR_HD inline void bilinearElement(const BilinearPlan &p, int64_t k) {
  if (p.u8)
    bilinearElementU8(p, k);
  else if (p.f64)
    bilinearElementIn<double>(p, k);
  else
    bilinearElementIn<float>(p, k);
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_RESAMPLE_H
