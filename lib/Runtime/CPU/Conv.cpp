//===- Conv.cpp - conv2d, its backward, max_pool2d's backward on the CPU
//---===//
//
// conv2d lowers each (batch, group) to im2col + one gemm: BLAS sgemm/dgemm
// (as in Linalg.cpp) for f32 and f64; f16 and bf16 compute in f32 and round
// once, as PyTorch's CPU kernels; int64 in wrapping 64-bit arithmetic (a
// plain loop), as PyTorch's. max_pool2d_with_indices_backward gathers its input
// as f64 and accumulates in f64 (the forward pools are CPU/Resample.cpp's).
// Inputs may be any strided view; results are fresh and contiguous with the
// static shape the registry inferred, so output sizes (ceil_mode,
// padding='same') come from the result shape.
// Unbatched [C, H, W] inputs are treated as a batch of one.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Support/CheckedMath.h"

#include "TraceIR/Runtime/CPU/Gemm.h"
#include "TraceIR/Runtime/Elementwise.h"
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// C[M, N] = A[M, K] @ B[K, N], all row-major and contiguous in their rows.
template <typename T>
void gemmRowMajor(KernelContext &ctx, int64_t M, int64_t N, int64_t K,
                  const T *A, int64_t lda, const T *B, int64_t ldb, T *C,
                  int64_t ldc) {
  if (M == 0 || N == 0)
    return;
  if constexpr (std::is_integral_v<T>) {
    // int64 (held as uint64_t): Linalg's one integer gemm, which wraps as
    // PyTorch's.
    static_assert(sizeof(T) == sizeof(int64_t));
    cpu::gemm(ctx, DType::I64, reinterpret_cast<const char *>(A), lda, 1,
              reinterpret_cast<const char *>(B), ldb, 1,
              reinterpret_cast<char *>(C), ldc, M, N, K, 1.0, 0.0);
  } else if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      std::fill(C + i * ldc, C + i * ldc + N, T(0));
  } else {
    cpu::gemm(false, false, M, N, K, T(1), A, lda, B, ldb, T(0), C, ldc);
  }
}

/// col[(c, kh, kw), (oh, ow)] = the padded plane `xin` (Cg planes of H x W)
/// at the tap's position.
template <typename T> void im2col(const ConvGeometry &g, const T *xin, T *col) {
  int64_t L = g.OH * g.OW;
  for (int64_t c = 0; c < g.Cg; ++c)
    for (int64_t kh = 0; kh < g.kH; ++kh)
      for (int64_t kw = 0; kw < g.kW; ++kw) {
        T *dst = col + ((c * g.kH + kh) * g.kW + kw) * L;
        const T *plane = xin + c * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          int64_t ih = oh * g.sH - g.pT + kh * g.dH;
          T *row = dst + oh * g.OW;
          if (ih < 0 || ih >= g.H) {
            std::fill(row, row + g.OW, T(0));
            continue;
          }
          const T *src = plane + ih * g.W;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            int64_t iw = ow * g.sW - g.pL + kw * g.dW;
            row[ow] = iw >= 0 && iw < g.W ? src[iw] : T(0);
          }
        }
      }
}

/// im2col's adjoint: adds each col entry into the tap's position of `xin`
/// (padding taps dropped).
template <typename T>
void col2imAdd(const ConvGeometry &g, const T *col, T *xin) {
  int64_t L = g.OH * g.OW;
  for (int64_t c = 0; c < g.Cg; ++c)
    for (int64_t kh = 0; kh < g.kH; ++kh)
      for (int64_t kw = 0; kw < g.kW; ++kw) {
        const T *src = col + ((c * g.kH + kh) * g.kW + kw) * L;
        T *plane = xin + c * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          int64_t ih = oh * g.sH - g.pT + kh * g.dH;
          if (ih < 0 || ih >= g.H)
            continue;
          T *dst = plane + ih * g.W;
          const T *row = src + oh * g.OW;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            int64_t iw = ow * g.sW - g.pL + kw * g.dW;
            if (iw >= 0 && iw < g.W)
              dst[iw] += row[ow];
          }
        }
      }
}

/// The im2col buffer of one (image, group): K x L elements, K = Cg * kH *
/// kW; null after a failure.
template <typename T>
T *colBuffer(KernelContext &ctx, const ConvGeometry &g, const char *op) {
  std::optional<int64_t> KL = checkedMul(g.Cg * g.kH * g.kW, g.OH * g.OW);
  if (!KL) {
    ctx.fail(strCat(op) + ": the im2col buffer's element count overflows");
    return nullptr;
  }
  return static_cast<T *>(ctx.scratch(std::max<int64_t>(*KL, 1), sizeof(T)));
}

template <typename T>
void conv2dImpl(KernelContext &ctx, const ConvGeometry &g, const T *x,
                const T *w, const Tensor *bias, T *out) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  // A 1x1 kernel with unit stride and no padding reads the input as is.
  bool direct = g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 && g.pT == 0 &&
                g.pL == 0;
  T *col = nullptr;
  if (!direct && !(col = colBuffer<T>(ctx, g, "conv2d")))
    return;
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T *xin = x + (n * g.C + grp * g.Cg) * g.H * g.W;
      if (!direct)
        im2col(g, xin, col);
      T *o = out + (n * g.O + grp * Og) * L;
      gemmRowMajor<T>(ctx, Og, L, K, w + grp * Og * K, K, direct ? xin : col, L,
                      o, L);
    }
  }
  if (!bias)
    return;
  size_t bs = dtypeSize(bias->dtype);
  for (int64_t oc = 0; oc < g.O; ++oc) {
    const char *bp = bias->bytes() + oc * bias->strides[0] * bs;
    int32_t bt = static_cast<int32_t>(bias->dtype);
    T b;
    if constexpr (std::is_integral_v<T>)
      b = static_cast<T>(ewLoadInt(bp, bt));
    else
      b = static_cast<T>(ewLoadDouble(bp, bt));
    for (int64_t n = 0; n < g.N; ++n) {
      T *o = out + (n * g.O + oc) * L;
      for (int64_t l = 0; l < L; ++l)
        o[l] += b;
    }
  }
}
/// C[M, N] (+)= op(A) @ op(B), row-major; `accumulate` adds to C.
template <typename T>
void gemmInto(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
              const T *A, int64_t lda, const T *B, int64_t ldb, T *C,
              int64_t ldc, bool accumulate) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i)
        std::fill(C + i * ldc, C + i * ldc + N, T(0));
    return;
  }
  cpu::gemm(transA, transB, M, N, K, T(1), A, lda, B, ldb,
            accumulate ? T(1) : T(0), C, ldc);
}

/// Per (image, group), with col the im2col of the input and gO the
/// gradient [Og, L]: grad_weight[grp] += gO @ col^T, and grad_input gets
/// col2im(W[grp]^T @ gO); grad_bias sums gO over images and positions.
template <typename T>
void convBackwardImpl(KernelContext &ctx, const ConvGeometry &g, const T *gO,
                      const T *x, const T *w, const bool mask[3], T *gI, T *gW,
                      Tensor &gB) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  T *col = nullptr;
  if ((mask[0] || mask[1]) &&
      !(col = colBuffer<T>(ctx, g, "convolution_backward")))
    return;
  if (mask[0])
    std::fill(gI, gI + g.N * g.C * g.H * g.W, T(0));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T *go = gO + (n * g.O + grp * Og) * L;
      if (mask[1]) {
        im2col(g, x + (n * g.C + grp * g.Cg) * g.H * g.W, col);
        gemmInto<T>(false, true, Og, K, L, go, L, col, L, gW + grp * Og * K, K,
                    n > 0);
      }
      if (mask[0]) {
        gemmInto<T>(true, false, K, L, Og, w + grp * Og * K, K, go, L, col, L,
                    false);
        col2imAdd(g, col, gI + (n * g.C + grp * g.Cg) * g.H * g.W);
      }
    }
  if (mask[1] && g.N == 0)
    std::fill(gW, gW + g.O * K, T(0));
  if (!mask[2])
    return;
  for (int64_t oc = 0; oc < g.O; ++oc) {
    double sum = 0;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t l = 0, base = (n * g.O + oc) * L; l < L; ++l)
        sum += gO[base + l];
    storeDouble(gB.bytes() + oc * dtypeSize(gB.dtype), gB.dtype, sum);
  }
}

} // namespace

/// convolution_backward(grad_output, input, weight, bias_sizes, stride,
/// padding, dilation, transposed, output_padding, groups, output_mask) of a
/// 2-D convolution: grad_input, grad_weight and grad_bias where output_mask
/// asks (empty [0] tensors elsewhere).
void cpu::convolution_backward(KernelContext &ctx) {
  ConvGeometry g;
  bool mask[3];
  if (!convolutionBackwardArgs(ctx, g, mask))
    return;
  const Tensor &gO = ctx.tensor(0), &x = ctx.tensor(1), &w = ctx.tensor(2);
  DType dt = x.dtype;
  const void *gd = gatherAs(ctx, gO, dt);
  const void *xd = gd ? gatherAs(ctx, x, dt) : nullptr;
  const void *wd = xd ? gatherAs(ctx, w, dt) : nullptr;
  if (!wd)
    return;
  Tensor &gI = ctx.result(0), &gW = ctx.result(1), &gB = ctx.result(2);
  if (dt == DType::F32)
    convBackwardImpl<float>(ctx, g, static_cast<const float *>(gd),
                            static_cast<const float *>(xd),
                            static_cast<const float *>(wd), mask,
                            gI.data<float>(), gW.data<float>(), gB);
  else
    convBackwardImpl<double>(ctx, g, static_cast<const double *>(gd),
                             static_cast<const double *>(xd),
                             static_cast<const double *>(wd), mask,
                             gI.data<double>(), gW.data<double>(), gB);
}

/// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,
/// groups=1); padding may be 'same' (stride 1: total padding dilation *
/// (k - 1), the odd one on the bottom/right, as PyTorch) or 'valid'.
void cpu::conv2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor *bias = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  Tensor &out = ctx.result(0);
  ConvGeometry g;
  if (!conv2dArgs(ctx, g))
    return;
  // The dtype the gemm runs in; f16 and bf16 are gathered into f32 and the
  // result rounded back once.
  DType dt = x.dtype == DType::F64      ? DType::F64
             : isFloatingDType(x.dtype) ? DType::F32
                                        : DType::I64;
  const void *xd = gatherAs(ctx, x, dt);
  const void *wd = xd ? gatherAs(ctx, w, dt) : nullptr;
  if (!xd || !wd)
    return;
  void *od = out.bytes();
  if (dt != out.dtype &&
      !(od = ctx.scratch(std::max<int64_t>(out.numel(), 1), dtypeSize(dt))))
    return;
  if (dt == DType::F32)
    conv2dImpl<float>(ctx, g, static_cast<const float *>(xd),
                      static_cast<const float *>(wd), bias,
                      static_cast<float *>(od));
  else if (dt == DType::F64)
    conv2dImpl<double>(ctx, g, static_cast<const double *>(xd),
                       static_cast<const double *>(wd), bias,
                       static_cast<double *>(od));
  else
    conv2dImpl<uint64_t>(ctx, g, static_cast<const uint64_t *>(xd),
                         static_cast<const uint64_t *>(wd), bias,
                         static_cast<uint64_t *>(od));
  if (od == out.bytes() || ctx.failed())
    return;
  // Only f16 and bf16 compute in a scratch dtype (f32).
  size_t es = dtypeSize(out.dtype);
  int32_t ot = static_cast<int32_t>(out.dtype);
  for (int64_t e = 0, n = out.numel(); e < n; ++e)
    ewStoreDouble(out.bytes() + e * es, ot, static_cast<const float *>(od)[e]);
}

/// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
/// padding, dilation, ceil_mode, indices): each output's gradient added to
/// the input position its index names, in f64.
void cpu::max_pool2d_with_indices_backward(KernelContext &ctx) {
  MaxPool2dArgs a;
  if (!maxPool2dBackwardArgs(ctx, a))
    return;
  const Tensor &gO = ctx.tensor(0), &x = ctx.tensor(1);
  Tensor &gI = ctx.result(0);
  const double *g = gatherF64(ctx, gO);
  const int64_t *idx =
      g ? static_cast<const int64_t *>(gatherAs(ctx, ctx.tensor(7), DType::I64))
        : nullptr;
  int64_t HW = x.shape[x.rank() - 2] * x.shape[x.rank() - 1];
  int64_t planes = HW > 0 ? x.numel() / HW : 0;
  auto *acc = idx ? static_cast<double *>(ctx.scratch(
                        std::max<int64_t>(x.numel(), 1), sizeof(double)))
                  : nullptr;
  if (!acc)
    return;
  std::fill(acc, acc + x.numel(), 0.0);
  int64_t L = planes ? gO.numel() / planes : 0;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t l = 0; l < L; ++l) {
      int64_t i = idx[p * L + l];
      if (i < 0 || i >= HW)
        return failPoolIndex(ctx, i, HW);
      acc[p * HW + i] += g[p * L + l];
    }
  size_t es = dtypeSize(gI.dtype);
  for (int64_t e = 0; e < x.numel(); ++e)
    storeDouble(gI.bytes() + e * es, gI.dtype, acc[e]);
}
