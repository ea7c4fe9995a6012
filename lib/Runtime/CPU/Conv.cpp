//===- Conv.cpp - conv2d, max_pool2d, adaptive_avg_pool2d on the CPU ------===//
//
// conv2d lowers each (batch, group) to im2col + one BLAS gemm (sgemm/dgemm,
// as in Linalg.cpp). The pooling kernels gather their input as f64 and
// accumulate in f64. Inputs may be any strided view; results are fresh and
// contiguous with the static shape the registry inferred, so output sizes
// (ceil_mode, padding='same', adaptive sizes) come from the result shape.
// Unbatched [C, H, W] inputs are treated as a batch of one.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Support/CheckedMath.h"

#include "TraceIR/Runtime/CPU/Gemm.h"
#include <cmath>
#include <cstring>
#include <limits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// A pooling kernel's input as `planes` contiguous f64 H x W planes, and
/// its output's OH x OW.
struct PoolPlanes {
  int64_t planes = 1, H, W, OH, OW;
  const double *in;
};

/// Null `p.in` after a failure.
PoolPlanes poolPlanes(KernelContext &ctx, const Tensor &x, const Tensor &out) {
  PoolPlanes p;
  p.H = x.shape[x.rank() - 2];
  p.W = x.shape[x.rank() - 1];
  p.OH = out.shape[out.rank() - 2];
  p.OW = out.shape[out.rank() - 1];
  for (int64_t d = 0, e = x.rank() - 2; d < e; ++d)
    p.planes *= x.shape[d];
  p.in = gatherF64(ctx, x);
  return p;
}

/// The first tap k of a window starting at `start` (maybe in the padding)
/// with `start + k * dil >= 0`.
int64_t firstTap(int64_t start, int64_t dil) {
  return start >= 0 ? 0 : -start / dil + (-start % dil != 0);
}

/// C[M, N] = A[M, K] @ B[K, N], all row-major and contiguous in their rows.
template <typename T>
void gemmRowMajor(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda,
                  const T *B, int64_t ldb, T *C, int64_t ldc) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      std::fill(C + i * ldc, C + i * ldc + N, T(0));
    return;
  }
  cpu::gemm(false, false, M, N, K, T(1), A, lda, B, ldb, T(0), C, ldc);
}

template <typename T>
void conv2dImpl(KernelContext &ctx, const ConvGeometry &g, const T *x,
                const T *w, const Tensor *bias, T *out) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  // A 1x1 kernel with unit stride and no padding reads the input as is.
  bool direct = g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 && g.pT == 0 &&
                g.pL == 0;
  T *col = nullptr;
  if (!direct) {
    std::optional<int64_t> KL = checkedMul(K, L);
    col = KL ? static_cast<T *>(ctx.scratch(*KL, sizeof(T))) : nullptr;
    if (!KL)
      ctx.fail("conv2d: the im2col buffer's element count overflows");
    if (!col)
      return;
  }
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T *xin = x + (n * g.C + grp * g.Cg) * g.H * g.W;
      if (!direct) {
        // col[(c, kh, kw), (oh, ow)] = padded input at the tap's position.
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
      T *o = out + (n * g.O + grp * Og) * L;
      gemmRowMajor<T>(Og, L, K, w + grp * Og * K, K, direct ? xin : col, L, o,
                      L);
    }
  }
  if (!bias)
    return;
  size_t bs = dtypeSize(bias->dtype);
  for (int64_t oc = 0; oc < g.O; ++oc) {
    T b = static_cast<T>(
        loadDouble(bias->bytes() + oc * bias->strides[0] * bs, bias->dtype));
    for (int64_t n = 0; n < g.N; ++n) {
      T *o = out + (n * g.O + oc) * L;
      for (int64_t l = 0; l < L; ++l)
        o[l] += b;
    }
  }
}
} // namespace

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
  const void *xd = gatherAs(ctx, x, x.dtype);
  const void *wd = xd ? gatherAs(ctx, w, w.dtype) : nullptr;
  if (!xd || !wd)
    return;
  if (x.dtype == DType::F32)
    conv2dImpl<float>(ctx, g, static_cast<const float *>(xd),
                      static_cast<const float *>(wd), bias, out.data<float>());
  else
    conv2dImpl<double>(ctx, g, static_cast<const double *>(xd),
                       static_cast<const double *>(wd), bias,
                       out.data<double>());
}

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False): padding is -inf, and a NaN in a window
/// wins, as in PyTorch.
void cpu::max_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  MaxPool2dArgs a;
  if (!maxPool2dArgs(ctx, a))
    return;
  const int64_t *k = a.kernel.data(), *stride = a.stride.data(),
                *pad = a.padding.data(), *dil = a.dilation.data();
  PoolPlanes pp = poolPlanes(ctx, x, out);
  if (!pp.in)
    return;
  int64_t planes = pp.planes, H = pp.H, W = pp.W, OH = pp.OH, OW = pp.OW;
  const double *in = pp.in;
  size_t os = dtypeSize(out.dtype);
  char *ob = out.bytes();
  for (int64_t p = 0; p < planes; ++p) {
    const double *plane = in + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        // Only the taps inside the input: a window far larger than the
        // input (a kernel of 2^40 with as much padding) costs no more.
        int64_t h = oh * stride[0] - pad[0], w = ow * stride[1] - pad[1];
        for (int64_t kh = firstTap(h, dil[0]); kh < k[0]; ++kh) {
          int64_t ih = h + kh * dil[0];
          if (ih >= H)
            break;
          for (int64_t kw = firstTap(w, dil[1]); kw < k[1]; ++kw) {
            int64_t iw = w + kw * dil[1];
            if (iw >= W)
              break;
            double v = plane[ih * W + iw];
            if (v > best || std::isnan(v))
              best = v;
          }
        }
        storeDouble(ob + ((p * OH + oh) * OW + ow) * os, out.dtype, best);
      }
  }
}

/// adaptive_avg_pool2d(input, output_size): output cell i of n along an
/// input dim of size s averages [floor(i * s / n), ceil((i + 1) * s / n)).
void cpu::adaptive_avg_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!adaptiveAvgPool2dArgs(ctx))
    return;
  PoolPlanes pp = poolPlanes(ctx, x, out);
  if (!pp.in)
    return;
  int64_t planes = pp.planes, H = pp.H, W = pp.W, OH = pp.OH, OW = pp.OW;
  const double *in = pp.in;
  size_t os = dtypeSize(out.dtype);
  char *ob = out.bytes();
  for (int64_t p = 0; p < planes; ++p) {
    const double *plane = in + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh) {
      int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += plane[ih * W + iw];
        int64_t count = (h1 - h0) * (w1 - w0);
        storeDouble(ob + ((p * OH + oh) * OW + ow) * os, out.dtype,
                    sum / static_cast<double>(count));
      }
    }
  }
}
