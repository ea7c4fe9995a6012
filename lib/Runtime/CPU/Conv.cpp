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
#include "TraceIR/Runtime/KernelArgs.h"

#include <cblas.h>
#include <cmath>
#include <cstring>
#include <limits>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// A contiguous pointer to `t`'s elements in its own dtype: the tensor itself
/// when contiguous, else a gathered copy in scratch (null after a failure).
const char *contiguousData(KernelContext &ctx, const Tensor &t) {
  if (t.isContiguous())
    return t.bytes();
  char *buf = static_cast<char *>(ctx.scratch(t.nbytes()));
  if (buf)
    copyStridedToContiguous(t, buf);
  return buf;
}

/// `t`'s elements as contiguous f64 in scratch (null after a failure).
const double *gatherF64(KernelContext &ctx, const Tensor &t) {
  if (t.dtype == DType::F64 && t.isContiguous())
    return t.data<double>();
  auto *buf = static_cast<double *>(ctx.scratch(t.numel() * sizeof(double)));
  if (!buf)
    return nullptr;
  Storage host;
  host.data = buf;
  Tensor dst;
  dst.storage = &host;
  dst.dtype = DType::F64;
  dst.shape = t.shape;
  dst.strides = Tensor::contiguousStrides(t.shape);
  copyTensor(t, dst);
  return buf;
}

/// PyTorch's pooling check: every dim but a 4-D input's batch dim must be
/// nonzero.
bool nonBatchDimsNonzero(KernelContext &ctx, const Tensor &x, const char *op) {
  for (int64_t d = x.rank() == 4 ? 1 : 0; d < x.rank(); ++d)
    if (x.shape[d] == 0) {
      ctx.fail(llvm::Twine(op) +
               ": expected a 3-D or 4-D input with nonzero sizes for the "
               "non-batch dims, got " +
               shapeToString(x.shape));
      return false;
    }
  return true;
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
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A,
                lda, B, ldb, 0.0f, C, ldc);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, A, lda,
                B, ldb, 0.0, C, ldc);
}

struct ConvGeometry {
  int64_t N, C, H, W;     // input (N = 1 when unbatched)
  int64_t O, Cg, kH, kW;  // weight [O, C / groups, kH, kW]
  int64_t OH, OW;         // output spatial size
  int64_t groups;         //
  int64_t sH, sW, pT, pL; // stride; top and left padding
  int64_t dH, dW;         // dilation
};

template <typename T>
void conv2dImpl(KernelContext &ctx, const ConvGeometry &g, const T *x,
                const T *w, const Tensor *bias, T *out) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  // A 1x1 kernel with unit stride and no padding reads the input as is.
  bool direct = g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 && g.pT == 0 &&
                g.pL == 0;
  T *col = nullptr;
  if (!direct) {
    col = static_cast<T *>(ctx.scratch(K * L * sizeof(T)));
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
  if ((x.dtype != DType::F32 && x.dtype != DType::F64) || w.dtype != x.dtype)
    return ctx.fail(llvm::Twine("conv2d supports f32 and f64 input and "
                                "weight of the same dtype, got ") +
                    dtypeName(x.dtype) + " and " + dtypeName(w.dtype));
  bool batched = x.rank() == 4;
  ConvGeometry g;
  int64_t off = batched ? 1 : 0;
  g.N = batched ? x.shape[0] : 1;
  g.C = x.shape[off];
  g.H = x.shape[off + 1];
  g.W = x.shape[off + 2];
  g.O = w.shape[0];
  g.Cg = w.shape[1];
  g.kH = w.shape[2];
  g.kW = w.shape[3];
  g.OH = out.shape[off + 1];
  g.OW = out.shape[off + 2];
  g.groups = ctx.isNone(6) ? 1 : ctx.scalar(6).i;
  const int64_t ones[2] = {1, 1}, zeros[2] = {0, 0};
  int64_t stride[2], pad[2], dil[2];
  if (!pairArg(ctx, 3, "stride", ones, stride) ||
      !pairArg(ctx, 5, "dilation", ones, dil))
    return;
  if (!ctx.isNone(4) && ctx.scalar(4).kind == Scalar::Kind::String) {
    const std::string &mode = ctx.scalar(4).s;
    if (mode != "same" && mode != "valid")
      return ctx.fail("padding must be 'same', 'valid' or ints, got '" + mode +
                      "'");
    bool same = mode == "same";
    pad[0] = same ? dil[0] * (g.kH - 1) / 2 : 0;
    pad[1] = same ? dil[1] * (g.kW - 1) / 2 : 0;
  } else if (!pairArg(ctx, 4, "padding", zeros, pad)) {
    return;
  }
  g.sH = stride[0];
  g.sW = stride[1];
  g.pT = pad[0];
  g.pL = pad[1];
  g.dH = dil[0];
  g.dW = dil[1];
  if (g.groups <= 0 || g.C != g.Cg * g.groups || g.O % g.groups != 0)
    return ctx.fail("conv2d: input channels " + llvm::Twine(g.C) + ", weight " +
                    shapeToString(w.shape) +
                    " and groups=" + llvm::Twine(g.groups) + " disagree");
  const char *xd = contiguousData(ctx, x);
  const char *wd = xd ? contiguousData(ctx, w) : nullptr;
  if (!xd || !wd)
    return;
  if (x.dtype == DType::F32)
    conv2dImpl<float>(ctx, g, reinterpret_cast<const float *>(xd),
                      reinterpret_cast<const float *>(wd), bias,
                      out.data<float>());
  else
    conv2dImpl<double>(ctx, g, reinterpret_cast<const double *>(xd),
                       reinterpret_cast<const double *>(wd), bias,
                       out.data<double>());
}

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False): padding is -inf, and a NaN in a window
/// wins, as in PyTorch.
void cpu::max_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!isFloating(x.dtype))
    return ctx.fail(llvm::Twine("max_pool2d supports floating dtypes, got ") +
                    dtypeName(x.dtype));
  const int64_t zeros[2] = {0, 0}, ones[2] = {1, 1};
  int64_t k[2], stride[2], pad[2], dil[2];
  if (!pairArg(ctx, 1, "kernel_size", zeros, k) ||
      !pairArg(ctx, 2, "stride", k, stride, /*emptyIsDefault=*/true) ||
      !pairArg(ctx, 3, "padding", zeros, pad) ||
      !pairArg(ctx, 4, "dilation", ones, dil))
    return;
  int64_t H = x.shape[x.rank() - 2], W = x.shape[x.rank() - 1];
  int64_t OH = out.shape[out.rank() - 2], OW = out.shape[out.rank() - 1];
  int64_t planes = 1;
  for (int64_t d = 0, e = x.rank() - 2; d < e; ++d)
    planes *= x.shape[d];
  if (!nonBatchDimsNonzero(ctx, x, "max_pool2d"))
    return;
  const double *in = gatherF64(ctx, x);
  if (!in)
    return;
  size_t os = dtypeSize(out.dtype);
  char *ob = out.bytes();
  for (int64_t p = 0; p < planes; ++p) {
    const double *plane = in + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t kh = 0; kh < k[0]; ++kh) {
          int64_t ih = oh * stride[0] - pad[0] + kh * dil[0];
          if (ih < 0 || ih >= H)
            continue;
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            int64_t iw = ow * stride[1] - pad[1] + kw * dil[1];
            if (iw < 0 || iw >= W)
              continue;
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
  if (!isFloating(x.dtype))
    return ctx.fail(
        llvm::Twine("adaptive_avg_pool2d supports floating dtypes, got ") +
        dtypeName(x.dtype));
  int64_t H = x.shape[x.rank() - 2], W = x.shape[x.rank() - 1];
  int64_t OH = out.shape[out.rank() - 2], OW = out.shape[out.rank() - 1];
  int64_t planes = 1;
  for (int64_t d = 0, e = x.rank() - 2; d < e; ++d)
    planes *= x.shape[d];
  if (!nonBatchDimsNonzero(ctx, x, "adaptive_avg_pool2d"))
    return;
  const double *in = gatherF64(ctx, x);
  if (!in)
    return;
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
