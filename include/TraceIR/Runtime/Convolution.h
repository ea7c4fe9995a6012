//===- Convolution.h - aten.convolution, one output element -----*- C++ -*-===//
//
// The portable convolution kernel of 1, 2 or 3 spatial dims, transposed or
// not, grouped, with an optional bias: one plain struct per call (a plan,
// which ConvolutionPlan.h builds from a kernel's call) and one function per
// output element. The CPU kernel (CPU/Convolution.cpp) loops over the
// output calling it; the CUDA kernel (CUDA/Convolution.cu) runs the same
// function, a thread per output element, so the CPU tests cover the
// arithmetic of both devices.
//
// Every element is a direct sum over its window (a transposed convolution
// gathers: output position o takes input position i where o = i * stride -
// padding + k * dilation) over strided operands: floating dtypes in f64,
// rounded once to the dtype at the end (PyTorch's CPU kernels accumulate
// half types in f32 and round once; f64 differs from that only in rare
// last-bit ties), int64 in wrapping 64-bit arithmetic, as PyTorch's. conv2d
// keeps its im2col + GEMM kernels; this is the simple, correct tier the
// optimized one will be tested against.
//
// No LLVM here: nvcc compiles it. Offsets and strides count elements.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CONVOLUTION_H
#define TRACEIR_RUNTIME_CONVOLUTION_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

/// A convolution over [N, C, *in] into a contiguous [N, O, *out]. Spatial
/// dims are right-aligned in three: a 1-D or 2-D convolution has size 1,
/// stride 0 in the operands and no padding in the leading ones.
struct ConvolutionPlan {
  const char *x = nullptr, *w = nullptr;
  const char *bias = nullptr; ///< null without a bias
  char *out = nullptr;
  int32_t dtype = F32; ///< the input's, weight's, bias's and output's
  /// (n, c, d0, d1, d2) of the input; non-transposed weight [O, C / groups,
  /// *k], transposed [C, O / groups, *k].
  int64_t xStrides[5] = {}, wStrides[5] = {};
  int64_t biasStride = 0;
  int64_t N = 0, C = 0, O = 0, groups = 1;
  bool transposed = false;
  /// The call's spatial dims (1 to 3), right-aligned in the arrays below.
  int32_t spatial = 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out3[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};

  TRACEIR_HD int64_t numel() const {
    return N * O * out3[0] * out3[1] * out3[2];
  }
};

/// The input position that kernel tap `k` of output position `o` reads
/// along spatial dim `d`, or -1 where it reads padding (or, transposed,
/// where no input position maps there). The plan's sizes were checked with
/// overflow-checked arithmetic, so none of these steps wraps.
TRACEIR_HD inline int64_t convolutionTap(const ConvolutionPlan &p, int d,
                                         int64_t o, int64_t k) {
  if (!p.transposed) {
    int64_t i = o * p.stride[d] - p.pad[d] + k * p.dil[d];
    return i >= 0 && i < p.in[d] ? i : -1;
  }
  int64_t t = o + p.pad[d] - k * p.dil[d];
  if (t < 0 || t % p.stride[d] != 0)
    return -1;
  int64_t i = t / p.stride[d];
  return i < p.in[d] ? i : -1;
}

/// One term of the window sum in the accumulator type: f64 for floating
/// dtypes; uint64_t for int64, whose products and sums wrap as PyTorch's
/// (signed overflow would be undefined).
template <typename Acc>
TRACEIR_HD inline Acc convolutionLoad(const char *p, int32_t dtype) {
  if constexpr (sizeof(Acc) == 8 && Acc(-1) > Acc(0))
    return static_cast<Acc>(ewLoadInt(p, dtype));
  else
    return ewLoadDouble(p, dtype);
}

/// The window sum of output element `idx` (row-major over [N, O, *out]),
/// bias included.
template <typename Acc>
TRACEIR_HD inline Acc convolutionSum(const ConvolutionPlan &p, int64_t idx) {
  int64_t o2 = idx % p.out3[2], t = idx / p.out3[2];
  int64_t o1 = t % p.out3[1];
  t /= p.out3[1];
  int64_t o0 = t % p.out3[0];
  t /= p.out3[0];
  int64_t oc = t % p.O, n = t / p.O;
  int64_t Og = p.O / p.groups, Cg = p.C / p.groups, g = oc / Og;
  int es = ewSize(p.dtype);
  const int64_t *xs = p.xStrides, *ws = p.wStrides;
  Acc acc = 0;
  for (int64_t c = 0; c < Cg; ++c) {
    int64_t ic = g * Cg + c;
    int64_t xBase = n * xs[0] + ic * xs[1];
    int64_t wBase = p.transposed ? ic * ws[0] + (oc - g * Og) * ws[1]
                                 : oc * ws[0] + c * ws[1];
    for (int64_t k0 = 0; k0 < p.k[0]; ++k0) {
      int64_t i0 = convolutionTap(p, 0, o0, k0);
      if (i0 < 0)
        continue;
      for (int64_t k1 = 0; k1 < p.k[1]; ++k1) {
        int64_t i1 = convolutionTap(p, 1, o1, k1);
        if (i1 < 0)
          continue;
        for (int64_t k2 = 0; k2 < p.k[2]; ++k2) {
          int64_t i2 = convolutionTap(p, 2, o2, k2);
          if (i2 < 0)
            continue;
          int64_t xo = xBase + i0 * xs[2] + i1 * xs[3] + i2 * xs[4];
          int64_t wo = wBase + k0 * ws[2] + k1 * ws[3] + k2 * ws[4];
          acc += convolutionLoad<Acc>(p.x + xo * es, p.dtype) *
                 convolutionLoad<Acc>(p.w + wo * es, p.dtype);
        }
      }
    }
  }
  if (p.bias)
    acc += convolutionLoad<Acc>(p.bias + oc * p.biasStride * es, p.dtype);
  return acc;
}

/// Output element `idx` (row-major over [N, O, *out]).
TRACEIR_HD inline void convolutionElement(const ConvolutionPlan &p,
                                          int64_t idx) {
  char *out = p.out + idx * ewSize(p.dtype);
  if (ewIsFloating(p.dtype))
    ewStoreDouble(out, p.dtype, convolutionSum<double>(p, idx));
  else
    ewStoreInt(out, p.dtype,
               static_cast<int64_t>(convolutionSum<uint64_t>(p, idx)));
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_CONVOLUTION_H
