//===- Conv.cpp - conv2d, max_pool2d, adaptive_avg_pool2d on CUDA ---------===//
//
// The host half of Conv.cu, with lib/Runtime/CPU/Conv.cpp's semantics and
// error messages. conv2d gathers a strided input or weight into contiguous
// scratch in its dtype, then per chunk of images runs one im2col launch and,
// per group, one strided-batched cuBLAS gemm over the chunk's images (a 1x1
// kernel with unit stride and no padding reads the input as is), then adds
// the bias. Output sizes (ceil_mode, padding='same', adaptive sizes) come
// from the result's static shape. Unbatched [C, H, W] inputs are a batch of
// one.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>

using namespace traceir;
using namespace traceir::cuda;

namespace {
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

struct ConvGeometry {
  int64_t N, C, H, W;     // input (N = 1 when unbatched)
  int64_t O, Cg, kH, kW;  // weight [O, C / groups, kH, kW]
  int64_t OH, OW;         // output spatial size
  int64_t groups;         //
  int64_t sH, sW, pT, pL; // stride; top and left padding
  int64_t dH, dW;         // dilation
};

/// The im2col buffer is sized for at most this many bytes of images at once
/// (at least one image).
constexpr int64_t kColBudgetBytes = int64_t(256) << 20;

/// For every group and each of `count` images: out[n, grp] (row-major
/// [Og, L], ld L) = w[grp] ([Og, K], ld K) @ b[n, grp] ([K, L], ld L), the
/// images' b matrices `bStride` elements apart and the group's within an
/// image `bGroupStride` apart. Column-major, that is out^T[L, Og] =
/// b^T[L, K] @ w^T[K, Og]: one strided-batched gemm per group.
bool convGemm(cublasHandle_t h, DType dtype, const ConvGeometry &g,
              const char *b, int64_t bStride, int64_t bGroupStride,
              const char *w, char *out, int64_t count) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  size_t es = dtypeSize(dtype);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const char *bg = b + grp * bGroupStride * es;
    const char *wg = w + grp * Og * K * es;
    char *og = out + grp * Og * L * es;
    long long sB = bStride, sC = g.O * L;
    cublasStatus_t st;
    if (dtype == DType::F64) {
      const double one = 1, zero = 0;
      st = cublasDgemmStridedBatched(
          h, CUBLAS_OP_N, CUBLAS_OP_N, int(L), int(Og), int(K), &one,
          reinterpret_cast<const double *>(bg), int(L), sB,
          reinterpret_cast<const double *>(wg), int(K), 0, &zero,
          reinterpret_cast<double *>(og), int(L), sC, int(count));
    } else {
      const float one = 1, zero = 0;
      st = cublasSgemmStridedBatched(
          h, CUBLAS_OP_N, CUBLAS_OP_N, int(L), int(Og), int(K), &one,
          reinterpret_cast<const float *>(bg), int(L), sB,
          reinterpret_cast<const float *>(wg), int(K), 0, &zero,
          reinterpret_cast<float *>(og), int(L), sC, int(count));
    }
    if (st != CUBLAS_STATUS_SUCCESS)
      return false;
  }
  return true;
}

void conv2dImpl(KernelContext &ctx, const ConvGeometry &g, DType dtype,
                const char *x, const char *w, const Tensor *bias, Tensor &out) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  size_t es = dtypeSize(dtype);
  if (out.numel() == 0)
    return;
  if (K == 0) {
    // An empty reduction: the products are zero.
    if (!nn::zeroFill(ctx, out, "conv2d"))
      return;
  } else {
    if (L > INT_MAX || Og > INT_MAX || K > INT_MAX || g.N > INT_MAX)
      return ctx.fail("conv2d: the products are too large for cuBLAS (" +
                      llvm::Twine(Og) + " x " + llvm::Twine(K) + " x " +
                      llvm::Twine(L) + ")");
    cublasHandle_t h = cuda::cublasHandle(out.storage->device.index);
    if (!h)
      return ctx.fail("conv2d: cannot create a cuBLAS handle");
    // A 1x1 kernel with unit stride and no padding reads the input as is.
    bool direct = g.kH == 1 && g.kW == 1 && g.sH == 1 && g.sW == 1 &&
                  g.pT == 0 && g.pL == 0;
    bool ok = true;
    if (direct) {
      ok = convGemm(h, dtype, g, x, g.C * L, g.Cg * L, w, out.bytes(), g.N);
    } else {
      int64_t perImage = g.C * g.kH * g.kW * L; // col elements per image
      int64_t chunk = std::max<int64_t>(
          1, std::min<int64_t>(g.N, kColBudgetBytes / (perImage * es)));
      char *col = static_cast<char *>(ctx.scratch(chunk * perImage * es));
      if (!col)
        return;
      for (int64_t n0 = 0; ok && n0 < g.N; n0 += chunk) {
        int64_t count = std::min(chunk, g.N - n0);
        Im2colLaunch il;
        il.x = x + n0 * g.C * g.H * g.W * es;
        il.col = col;
        il.dtype = static_cast<int32_t>(dtype);
        il.nb = count;
        il.C = g.C;
        il.H = g.H;
        il.W = g.W;
        il.kH = g.kH;
        il.kW = g.kW;
        il.OH = g.OH;
        il.OW = g.OW;
        il.sH = g.sH;
        il.sW = g.sW;
        il.pT = g.pT;
        il.pL = g.pL;
        il.dH = g.dH;
        il.dW = g.dW;
        if (!nn::launched(ctx, launchIm2col(il), "conv2d"))
          return;
        ok = convGemm(h, dtype, g, col, perImage, K * L, w,
                      out.bytes() + n0 * g.O * L * es, count);
      }
    }
    if (!ok)
      return ctx.fail("conv2d: cuBLAS gemm failed");
  }
  if (!bias)
    return;
  ConvBiasLaunch bl;
  bl.out = out.bytes();
  bl.dtype = static_cast<int32_t>(dtype);
  bl.bias = bias->bytes();
  bl.biasDtype = static_cast<int32_t>(bias->dtype);
  bl.biasStride = bias->strides[0];
  bl.N = g.N;
  bl.O = g.O;
  bl.L = L;
  nn::launched(ctx, launchConvBias(bl), "conv2d");
}

/// The pooling kernels' common launch fields: the input as [N, C, H, W]
/// (an unbatched input gets N = 1 and a zero stride) and the output.
Pool2dLaunch poolLaunch(const Tensor &x, Tensor &out) {
  Pool2dLaunch L;
  bool batched = x.rank() == 4;
  int64_t off = batched ? 1 : 0;
  L.in = x.bytes();
  L.inDtype = static_cast<int32_t>(x.dtype);
  L.inStrides[0] = batched ? x.strides[0] : 0;
  for (int d = 0; d < 3; ++d)
    L.inStrides[1 + d] = x.strides[off + d];
  L.N = batched ? x.shape[0] : 1;
  L.C = x.shape[off];
  L.H = x.shape[off + 1];
  L.W = x.shape[off + 2];
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.OH = out.shape[out.rank() - 2];
  L.OW = out.shape[out.rank() - 1];
  return L;
}
} // namespace

/// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,
/// groups=1); padding may be 'same' (stride 1: total padding dilation *
/// (k - 1), the odd one on the bottom/right, as PyTorch) or 'valid'.
void cuda::conv2d(KernelContext &ctx) {
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
  const char *xd = nn::gatherAs(ctx, x, x.dtype);
  const char *wd = xd ? nn::gatherAs(ctx, w, w.dtype) : nullptr;
  if (!xd || !wd)
    return;
  conv2dImpl(ctx, g, x.dtype, xd, wd, bias, out);
}

/// max_pool2d(input, kernel_size, stride=kernel_size, padding=0,
/// dilation=1, ceil_mode=False): padding is -inf, and a NaN in a window
/// wins, as in PyTorch.
void cuda::max_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!ewIsFloating(static_cast<int32_t>(x.dtype)))
    return ctx.fail(llvm::Twine("max_pool2d supports floating dtypes, got ") +
                    dtypeName(x.dtype));
  const int64_t zeros[2] = {0, 0}, ones[2] = {1, 1};
  int64_t k[2], stride[2], pad[2], dil[2];
  if (!pairArg(ctx, 1, "kernel_size", zeros, k) ||
      !pairArg(ctx, 2, "stride", k, stride, /*emptyIsDefault=*/true) ||
      !pairArg(ctx, 3, "padding", zeros, pad) ||
      !pairArg(ctx, 4, "dilation", ones, dil))
    return;
  if (!nonBatchDimsNonzero(ctx, x, "max_pool2d"))
    return;
  Pool2dLaunch L = poolLaunch(x, out);
  L.kH = k[0];
  L.kW = k[1];
  L.sH = stride[0];
  L.sW = stride[1];
  L.pH = pad[0];
  L.pW = pad[1];
  L.dH = dil[0];
  L.dW = dil[1];
  nn::launched(ctx, launchMaxPool2d(L), "max_pool2d");
}

/// adaptive_avg_pool2d(input, output_size): output cell i of n along an
/// input dim of size s averages [floor(i * s / n), ceil((i + 1) * s / n)).
void cuda::adaptive_avg_pool2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  if (!ewIsFloating(static_cast<int32_t>(x.dtype)))
    return ctx.fail(
        llvm::Twine("adaptive_avg_pool2d supports floating dtypes, got ") +
        dtypeName(x.dtype));
  if (!nonBatchDimsNonzero(ctx, x, "adaptive_avg_pool2d"))
    return;
  nn::launched(ctx, launchAdaptiveAvgPool2d(poolLaunch(x, out)),
               "adaptive_avg_pool2d");
}
