//===- Conv.cpp - conv2d, its backward, max_pool2d's backward on CUDA -----===//
//
// The host half of Conv.cu, with lib/Runtime/CPU/Conv.cpp's semantics and
// error messages. conv2d gathers a strided input or weight into contiguous
// scratch in its dtype, then per chunk of images runs one im2col launch and,
// per group, one strided-batched cuBLAS gemm over the chunk's images (a 1x1
// kernel with unit stride and no padding reads the input as is), then adds
// the bias; at the optimized tier, cuDNN runs the convolution instead where
// it takes the call (CuDNN.h). The forward pools are Resample.cpp's. Output
// sizes (ceil_mode, padding='same') come from the result's static shape.
// Unbatched [C, H, W] inputs are a batch of one.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/CuDNN.h"
#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/ConvolutionPlan.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>

using namespace traceir;
using namespace traceir::cuda;

namespace {
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

/// out[n, o, ...] += bias[o] (ConvBiasLaunch).
void addConvBias(KernelContext &ctx, const ConvGeometry &g, DType dtype,
                 const Tensor &bias, Tensor &out) {
  ConvBiasLaunch bl;
  bl.out = out.bytes();
  bl.dtype = static_cast<int32_t>(dtype);
  bl.bias = bias.bytes();
  bl.biasDtype = static_cast<int32_t>(bias.dtype);
  bl.biasStride = bias.strides[0];
  bl.N = g.N;
  bl.O = g.O;
  bl.L = g.OH * g.OW;
  nn::launched(ctx, launchConvBias(bl), "conv2d");
}

void conv2dImpl(KernelContext &ctx, const ConvGeometry &g, DType dtype,
                const char *x, const char *w, const Tensor *bias, Tensor &out) {
  int64_t Og = g.O / g.groups, K = g.Cg * g.kH * g.kW, L = g.OH * g.OW;
  size_t es = dtypeSize(dtype);
  if (out.numel() == 0)
    return;
  // The optimized tier: cuDNN, where it takes the call (CuDNN.h).
  if (optimizedTierEnabled()) {
    ConvolutionPlan p = convolutionPlanOf(g);
    p.dtype = static_cast<int32_t>(dtype);
    if (cuda::cudnnConvolutionForward(ctx, p, x, w, out.bytes())) {
      if (ctx.failed())
        return;
      ctx.ranTier(KernelTier::Optimized);
      if (bias)
        addConvBias(ctx, g, dtype, *bias, out);
      return;
    }
  }
  if (K == 0) {
    // An empty reduction: the products are zero.
    if (!nn::zeroFill(ctx, out, "conv2d"))
      return;
  } else {
    if (L > INT_MAX || Og > INT_MAX || K > INT_MAX || g.N > INT_MAX)
      return ctx.fail("conv2d: the products are too large for cuBLAS (" +
                      strCat(Og) + " x " + strCat(K) + " x " + strCat(L) + ")");
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
  if (bias)
    addConvBias(ctx, g, dtype, *bias, out);
}

/// A max pooling launch's window (MaxPoolBackwardLaunch).
template <typename Launch> void setWindow(Launch &L, const MaxPool2dArgs &a) {
  L.kH = a.kernel[0];
  L.kW = a.kernel[1];
  L.sH = a.stride[0];
  L.sW = a.stride[1];
  L.pH = a.padding[0];
  L.pW = a.padding[1];
  L.dH = a.dilation[0];
  L.dW = a.dilation[1];
}

} // namespace

/// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,
/// groups=1); padding may be 'same' (stride 1: total padding dilation *
/// (k - 1), the odd one on the bottom/right, as PyTorch) or 'valid'.
void cuda::conv2d(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor *bias = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  Tensor &out = ctx.result(0);
  ConvGeometry g;
  if (!conv2dArgs(ctx, g))
    return;
  // cuBLAS runs the gemm in f32 or f64 (PyTorch's CUDA convolution has no
  // integer kernels either; its half types are aten.convolution's here).
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    return ctx.fail(strCat("conv2d on CUDA supports f32 and f64, got ") +
                    dtypeName(x.dtype));
  const char *xd = nn::gatherAs(ctx, x, x.dtype);
  const char *wd = xd ? nn::gatherAs(ctx, w, w.dtype) : nullptr;
  if (!xd || !wd)
    return;
  conv2dImpl(ctx, g, x.dtype, xd, wd, bias, out);
}

/// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
/// padding, dilation, ceil_mode, indices): the indices are checked first
/// (the first bad one recorded for the run's end, DeviceErrorLaunch.h), then
/// each input element sums the gradients of the outputs whose index names
/// it.
void cuda::max_pool2d_with_indices_backward(KernelContext &ctx) {
  const char *op = "max_pool2d_with_indices_backward";
  MaxPool2dArgs a;
  if (!maxPool2dBackwardArgs(ctx, a))
    return;
  const Tensor &gO = ctx.tensor(0), &x = ctx.tensor(1), &idx = ctx.tensor(7);
  Tensor &gI = ctx.result(0);
  MaxPoolBackwardLaunch L;
  bool ok = true;
  L.gO = nn::gatherDense(ctx, gO, ok);
  L.indices =
      ok ? reinterpret_cast<const int64_t *>(nn::gatherAs(ctx, idx, DType::I64))
         : nullptr;
  if (!L.indices)
    return;
  L.gI = gI.bytes();
  L.gIDtype = static_cast<int32_t>(gI.dtype);
  L.H = x.shape[x.rank() - 2];
  L.W = x.shape[x.rank() - 1];
  L.planes = L.H * L.W > 0 ? x.numel() / (L.H * L.W) : 0;
  L.OH = gO.shape[gO.rank() - 2];
  L.OW = gO.shape[gO.rank() - 1];
  setWindow(L, a);
  // The first bad index is recorded on the device (no wait), and the run
  // fails at its end.
  DeviceErrorCommit commit;
  commit.slot = ctx.deviceErrors();
  L.badPosition = &commit.slot.record->pending;
  commit.code = static_cast<int32_t>(DeviceErrorCode::PoolIndex);
  commit.limit = L.H * L.W;
  commit.src[0] = deviceErrorSource(L.indices, I64, L.planes * L.OH * L.OW);
  if (!nn::launched(ctx, launchMaxPoolIndexCheck(L), op))
    return;
  if (const char *err = launchDeviceErrorCommit(commit))
    return ctx.fail(strCat(op) + " kernel failed on CUDA: " + err);
  nn::launched(ctx, launchMaxPoolBackward(L), op);
}

/// convolution_backward(grad_output, input, weight, bias_sizes, stride,
/// padding, dilation, transposed, output_padding, groups, output_mask) of a
/// 2-D convolution: the results output_mask asks for, each element summed
/// by one thread (the portable tier; not yet run on a GPU).
void cuda::convolution_backward(KernelContext &ctx) {
  ConvGeometry g;
  bool mask[3];
  if (!convolutionBackwardArgs(ctx, g, mask))
    return;
  const Tensor &gO = ctx.tensor(0), &x = ctx.tensor(1), &w = ctx.tensor(2);
  ConvBackwardLaunch L;
  L.dtype = static_cast<int32_t>(x.dtype);
  L.gO = nn::gatherAs(ctx, gO, x.dtype);
  L.x = L.gO ? nn::gatherAs(ctx, x, x.dtype) : nullptr;
  L.w = L.x ? nn::gatherAs(ctx, w, x.dtype) : nullptr;
  if (!L.w)
    return;
  L.gI = mask[0] ? ctx.result(0).bytes() : nullptr;
  L.gW = mask[1] ? ctx.result(1).bytes() : nullptr;
  L.gB = mask[2] ? ctx.result(2).bytes() : nullptr;
  L.N = g.N;
  L.C = g.C;
  L.H = g.H;
  L.W = g.W;
  L.O = g.O;
  L.Cg = g.Cg;
  L.kH = g.kH;
  L.kW = g.kW;
  L.OH = g.OH;
  L.OW = g.OW;
  L.groups = g.groups;
  L.sH = g.sH;
  L.sW = g.sW;
  L.pT = g.pT;
  L.pL = g.pL;
  L.dH = g.dH;
  L.dW = g.dW;
  nn::launched(ctx, launchConvBackward(L), "convolution_backward");
}
