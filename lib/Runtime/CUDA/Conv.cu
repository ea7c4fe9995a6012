//===- Conv.cu - im2col, conv bias and 2-D pooling on CUDA ----------------===//
//
// The device half of Conv.cpp: grid-stride loops with one thread per
// output element, the same index arithmetic as lib/Runtime/CPU/Conv.cpp.
// Pooling loads its input (any strides and floating dtype) as f64 and
// accumulates in f64, as the CPU does.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/NNLaunch.h"

using namespace traceir;
using namespace traceir::cuda;

namespace {
constexpr int kThreads = 256;

/// col[n, c, kh, kw, oh, ow] = the padded input at the tap's position.
template <typename T> __global__ void im2colKernel(Im2colLaunch L) {
  const T *x = reinterpret_cast<const T *>(L.x);
  T *col = reinterpret_cast<T *>(L.col);
  int64_t total = L.nb * L.C * L.kH * L.kW * L.OH * L.OW;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t t = k;
    int64_t ow = t % L.OW;
    t /= L.OW;
    int64_t oh = t % L.OH;
    t /= L.OH;
    int64_t kw = t % L.kW;
    t /= L.kW;
    int64_t kh = t % L.kH;
    t /= L.kH; // t = n * C + c
    int64_t ih = oh * L.sH - L.pT + kh * L.dH;
    int64_t iw = ow * L.sW - L.pL + kw * L.dW;
    col[k] = ih >= 0 && ih < L.H && iw >= 0 && iw < L.W
                 ? x[(t * L.H + ih) * L.W + iw]
                 : T(0);
  }
}

template <typename T> __global__ void convBiasKernel(ConvBiasLaunch L) {
  T *out = reinterpret_cast<T *>(L.out);
  int64_t total = L.N * L.O * L.L;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int esz = ewSize(L.biasDtype);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t oc = k / L.L % L.O;
    T b = static_cast<T>(
        ewLoadDouble(L.bias + oc * L.biasStride * esz, L.biasDtype));
    out[k] += b;
  }
}

/// Input element (n, c, h, w) as f64.
__device__ inline double poolLoad(const Pool2dLaunch &L, int64_t n, int64_t c,
                                  int64_t h, int64_t w) {
  int64_t off = n * L.inStrides[0] + c * L.inStrides[1] + h * L.inStrides[2] +
                w * L.inStrides[3];
  return ewLoadDouble(L.in + off * ewSize(L.inDtype), L.inDtype);
}

/// Padding is -inf; a NaN in a window wins (once NaN, the maximum stays
/// NaN, as on the CPU).
__global__ void maxPool2dKernel(Pool2dLaunch L) {
  int64_t total = L.N * L.C * L.OH * L.OW;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int osz = ewSize(L.outDtype);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t ow = k % L.OW, oh = k / L.OW % L.OH, p = k / (L.OW * L.OH);
    int64_t n = p / L.C, c = p % L.C;
    double best = -INFINITY;
    for (int64_t kh = 0; kh < L.kH; ++kh) {
      int64_t ih = oh * L.sH - L.pH + kh * L.dH;
      if (ih < 0 || ih >= L.H)
        continue;
      for (int64_t kw = 0; kw < L.kW; ++kw) {
        int64_t iw = ow * L.sW - L.pW + kw * L.dW;
        if (iw < 0 || iw >= L.W)
          continue;
        double v = poolLoad(L, n, c, ih, iw);
        if (v > best || v != v)
          best = v;
      }
    }
    ewStoreDouble(L.out + k * osz, L.outDtype, best);
  }
}

/// Output cell i of n along an input dim of size s averages
/// [floor(i * s / n), ceil((i + 1) * s / n)).
__global__ void adaptiveAvgPool2dKernel(Pool2dLaunch L) {
  int64_t total = L.N * L.C * L.OH * L.OW;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int osz = ewSize(L.outDtype);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t ow = k % L.OW, oh = k / L.OW % L.OH, p = k / (L.OW * L.OH);
    int64_t n = p / L.C, c = p % L.C;
    int64_t h0 = oh * L.H / L.OH, h1 = ((oh + 1) * L.H + L.OH - 1) / L.OH;
    int64_t w0 = ow * L.W / L.OW, w1 = ((ow + 1) * L.W + L.OW - 1) / L.OW;
    double sum = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw)
        sum += poolLoad(L, n, c, ih, iw);
    int64_t count = (h1 - h0) * (w1 - w0);
    ewStoreDouble(L.out + k * osz, L.outDtype,
                  sum / static_cast<double>(count));
  }
}
} // namespace

cudaError_t cuda::launchIm2col(const Im2colLaunch &L) {
  int64_t total = L.nb * L.C * L.kH * L.kW * L.OH * L.OW;
  if (total == 0)
    return cudaSuccess;
  if (L.dtype == F64)
    im2colKernel<double><<<nnBlocks(total, kThreads), kThreads>>>(L);
  else
    im2colKernel<float><<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchConvBias(const ConvBiasLaunch &L) {
  int64_t total = L.N * L.O * L.L;
  if (total == 0)
    return cudaSuccess;
  if (L.dtype == F64)
    convBiasKernel<double><<<nnBlocks(total, kThreads), kThreads>>>(L);
  else
    convBiasKernel<float><<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchMaxPool2d(const Pool2dLaunch &L) {
  int64_t total = L.N * L.C * L.OH * L.OW;
  if (total == 0)
    return cudaSuccess;
  maxPool2dKernel<<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchAdaptiveAvgPool2d(const Pool2dLaunch &L) {
  int64_t total = L.N * L.C * L.OH * L.OW;
  if (total == 0)
    return cudaSuccess;
  adaptiveAvgPool2dKernel<<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}
