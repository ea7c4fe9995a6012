//===- TypedPools.h - The CUDA tier's typed 2-D pools -----------*- C++ -*-===//
//
// The CUDA optimized tier's max_pool2d (with and without indices) and
// avg_pool2d over contiguous NCHW (or CHW) inputs, which is how models call
// them: a thread per output element as in the portable kernels
// (Resample.h's maxPoolElement and avgPoolElement, which serve every
// layout, dtype and 3-D pool), but loading the dtype itself and computing
// in its opmath type (float for f32, f16 and bf16, as PyTorch's CUDA pools;
// double for f64) instead of double through a dtype switch per load, and
// locating the element with 32-bit index arithmetic where every offset
// fits (PyTorch's canUse32BitIndexMath), not five 64-bit divisions. What a
// thread computes is here, host and device code, so that the CPU unit tests
// (unittests/TypedPoolsTest.cpp) run every element and compare it with the
// portable functions. No LLVM or MLIR here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_TYPEDPOOLS_H
#define TRACEIR_RUNTIME_CUDA_TYPEDPOOLS_H

#include "TraceIR/Runtime/ElementwisePlan.h"
#include "TraceIR/Runtime/Resample.h"

#include <cstdint>

namespace traceir {

/// A 2-D pool over `planes` contiguous H x W planes of one floating dtype
/// into contiguous OH x OW planes of it.
struct TypedPoolPlan {
  const char *in = nullptr;
  char *out = nullptr;
  int64_t *indices = nullptr; ///< max: each window's argmax, or null
  int32_t dtype = F32;
  int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool avg = false;
  bool countIncludePad = true; ///< avg
  int64_t divisor = 0;         ///< avg: divisor_override, or 0
  /// Every index and window position fits 32-bit arithmetic.
  bool narrow = false;

  int64_t numel() const { return planes * OH * OW; }
};

namespace typedpool {
/// The portable plan's input as planes: a 2-D pool (depth the identity) of
/// a floating dtype kept by the output, over contiguous [N, C, H, W] (or
/// an unbatched [C, H, W]: N = 1).
inline bool planes(const Planes3d &x, const Window3d &w, TypedPoolPlan &t) {
  if (x.D != 1 || x.OD != 1 || w.k[0] != 1 || w.s[0] != 1 || w.p[0] != 0 ||
      w.d[0] != 1 || x.inDtype != x.outDtype)
    return false;
  if (x.inDtype != F32 && x.inDtype != F64 && x.inDtype != F16 &&
      x.inDtype != BF16)
    return false;
  const int64_t plane = x.H * x.W;
  if (x.inStrides[4] != 1 || (x.H > 1 && x.inStrides[3] != x.W) ||
      (x.C > 1 && x.inStrides[1] != plane) ||
      (x.N > 1 && x.inStrides[0] != x.C * plane))
    return false;
  t.in = x.in;
  t.out = x.out;
  t.dtype = x.inDtype;
  t.planes = x.N * x.C;
  t.H = x.H;
  t.W = x.W;
  t.OH = x.OH;
  t.OW = x.OW;
  t.kh = w.k[1];
  t.kw = w.k[2];
  t.sh = w.s[1];
  t.sw = w.s[2];
  t.ph = w.p[1];
  t.pw = w.p[2];
  t.dh = w.d[1];
  t.dw = w.d[2];
  // 32-bit arithmetic where no value it forms reaches 2^30: the input's
  // and the output's element counts (a grid-stride step past the last
  // element then stays below 2^31 too) and each window's farthest tap.
  const int64_t lim = int64_t(1) << 30;
  // a * b + c < lim, for non-negative a, b and c, without overflow.
  auto below = [&](int64_t a, int64_t b, int64_t c) {
    return c < lim && (b == 0 || a <= (lim - 1 - c) / b);
  };
  t.narrow = below(t.planes, plane, 0) && below(t.planes, t.OH * t.OW, 0) &&
             below(t.OH, t.sh, 0) && below(t.OW, t.sw, 0) &&
             below(t.kh, t.dh, 0) && below(t.kw, t.dw, 0) && t.ph < lim &&
             t.pw < lim && below(t.OH * t.sh + t.kh * t.dh, 1, t.ph + t.H) &&
             below(t.OW * t.sw + t.kw * t.dw, 1, t.pw + t.W);
  return true;
}
} // namespace typedpool

/// The typed plan of a 2-D max pool, where it applies (else false).
inline bool typedMaxPoolPlan(const MaxPoolPlan &p, TypedPoolPlan &t) {
  if (!typedpool::planes(p.x, p.w, t))
    return false;
  t.avg = false;
  t.indices = p.indices;
  return true;
}

/// The typed plan of a 2-D average pool, where it applies (else false).
inline bool typedAvgPoolPlan(const AvgPoolPlan &p, TypedPoolPlan &t) {
  if (!typedpool::planes(p.x, p.w, t))
    return false;
  t.avg = true;
  t.countIncludePad = p.countIncludePad;
  t.divisor = p.divisor;
  return true;
}

/// One output element of a typed pool, index arithmetic in I (int32_t
/// where the plan is narrow, else int64_t).
template <int32_t DT, typename I> struct TypedPool {
  using E = EwElt<DT>;
  using T = typename E::T;
  using C = typename E::C;

  TRACEIR_HD static I minOf(I a, I b) { return a < b ? a : b; }

  /// maxPoolElement's result: padding never wins, a NaN does (the last),
  /// the position starts at the window's first tap inside the input.
  TRACEIR_HD static void max(const TypedPoolPlan &p, I k) {
    const I W = I(p.W), H = I(p.H), OW = I(p.OW), OH = I(p.OH);
    const I ow = k % OW, oh = k / OW % OH, plane = k / OW / OH;
    const T *x = reinterpret_cast<const T *>(p.in) + plane * H * W;
    const I dh = I(p.dh), dw = I(p.dw);
    const I hs = oh * I(p.sh) - I(p.ph), ws = ow * I(p.sw) - I(p.pw);
    // The first tap at or past 0, and one past the last inside the input.
    const I h0 = hs >= 0 ? hs : hs + ((-hs + dh - 1) / dh) * dh;
    const I w0 = ws >= 0 ? ws : ws + ((-ws + dw - 1) / dw) * dw;
    const I h1 = minOf(hs + (I(p.kh) - 1) * dh + 1, H);
    const I w1 = minOf(ws + (I(p.kw) - 1) * dw + 1, W);
    C best = C(-INFINITY);
    I bestAt = h0 * W + w0;
    for (I h = h0; h < h1; h += dh)
      for (I w = w0; w < w1; w += dw) {
        C v = E::load(x[h * W + w]);
        if (v > best || v != v) {
          best = v;
          bestAt = h * W + w;
        }
      }
    reinterpret_cast<T *>(p.out)[k] = E::store(best);
    if (p.indices)
      p.indices[k] = int64_t(bestAt);
  }

  /// avgPoolElement's result, summed in C: the window's taps clipped to
  /// the input, divided by divisor_override, the padded window's size
  /// (count_include_pad) or the clipped one's; 0 for a window wholly in
  /// the padding.
  TRACEIR_HD static void avg(const TypedPoolPlan &p, I k) {
    const I W = I(p.W), H = I(p.H), OW = I(p.OW), OH = I(p.OH);
    const I ow = k % OW, oh = k / OW % OH, plane = k / OW / OH;
    const T *x = reinterpret_cast<const T *>(p.in) + plane * H * W;
    T *out = reinterpret_cast<T *>(p.out);
    I h0 = oh * I(p.sh) - I(p.ph), w0 = ow * I(p.sw) - I(p.pw);
    I h1 = minOf(h0 + I(p.kh), H + I(p.ph));
    I w1 = minOf(w0 + I(p.kw), W + I(p.pw));
    const int64_t padded = int64_t(h1 - h0) * int64_t(w1 - w0);
    h0 = h0 > 0 ? h0 : 0;
    w0 = w0 > 0 ? w0 : 0;
    h1 = minOf(h1, H);
    w1 = minOf(w1, W);
    if (h0 >= h1 || w0 >= w1) {
      out[k] = E::store(C(0));
      return;
    }
    const int64_t count = p.divisor ? p.divisor
                          : p.countIncludePad
                              ? padded
                              : int64_t(h1 - h0) * int64_t(w1 - w0);
    C sum = 0;
    for (I h = h0; h < h1; ++h)
      for (I w = w0; w < w1; ++w)
        sum += E::load(x[h * W + w]);
    out[k] = E::store(sum / C(count));
  }

  TRACEIR_HD static void at(const TypedPoolPlan &p, I k) {
    if (p.avg)
      avg(p, k);
    else
      max(p, k);
  }
};

/// Runs the plan on the device (CUDA/Resample.cu): null on success, else
/// the CUDA error's text; an empty result launches nothing.
const char *launchTypedPoolCUDA(const TypedPoolPlan &plan);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_TYPEDPOOLS_H
