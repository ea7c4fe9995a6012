//===- Conv.cu - im2col, conv bias, conv and max pool backward on CUDA ----===//
//
// The device half of Conv.cpp: grid-stride loops with one thread per
// output element, the same index arithmetic as lib/Runtime/CPU/Conv.cpp;
// the backward passes gather per input element with Resample.h's
// tapOutput. (The forward pools are Resample.cu's.)
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/NNLaunch.h"
#include "TraceIR/Runtime/Resample.h"

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

/// convBiasKernel for f16 and bf16 results: each sum in double, rounded
/// once.
__global__ void convBiasHalfKernel(ConvBiasLaunch L) {
  int64_t total = L.N * L.O * L.L;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int osz = ewSize(L.dtype), esz = ewSize(L.biasDtype);
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t oc = k / L.L % L.O;
    char *o = L.out + k * osz;
    ewStoreDouble(
        o, L.dtype,
        ewLoadDouble(o, L.dtype) +
            ewLoadDouble(L.bias + oc * L.biasStride * esz, L.biasDtype));
  }
}

/// Records the first position whose index is outside its plane.
__global__ void maxPoolIndexCheckKernel(MaxPoolBackwardLaunch L) {
  int64_t total = L.planes * L.OH * L.OW, HW = L.H * L.W;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride)
    if (L.indices[k] < 0 || L.indices[k] >= HW)
      atomicMin(L.badPosition, static_cast<unsigned long long>(k));
}

/// One thread per input element: the outputs whose windows cover it (oh
/// with oh * sH - pH + kh * dH == ih for some tap kh) and whose index
/// names it.
__global__ void maxPoolBackwardKernel(MaxPoolBackwardLaunch L) {
  int64_t total = L.planes * L.H * L.W;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t iw = k % L.W, ih = k / L.W % L.H, p = k / (L.W * L.H);
    int64_t at = ih * L.W + iw;
    double sum = 0;
    for (int64_t kh = 0; kh < L.kH; ++kh) {
      int64_t oh = tapOutput(ih, kh, L.sH, L.pH, L.dH, L.OH);
      for (int64_t kw = 0; oh >= 0 && kw < L.kW; ++kw) {
        int64_t ow = tapOutput(iw, kw, L.sW, L.pW, L.dW, L.OW);
        if (ow < 0)
          continue;
        int64_t o = (p * L.OH + oh) * L.OW + ow;
        if (L.indices[o] == at)
          sum += nnLoad(L.gO, o);
      }
    }
    nnStore(L.gI, L.gIDtype, k, sum);
  }
}

template <typename T>
__global__ void convGradInputKernel(ConvBackwardLaunch L) {
  const T *gO = reinterpret_cast<const T *>(L.gO);
  const T *w = reinterpret_cast<const T *>(L.w);
  T *gI = reinterpret_cast<T *>(L.gI);
  int64_t total = L.N * L.C * L.H * L.W, Og = L.O / L.groups;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t iw = k % L.W, ih = k / L.W % L.H, c = k / (L.W * L.H) % L.C,
            n = k / (L.W * L.H * L.C);
    int64_t grp = c / L.Cg, cg = c % L.Cg;
    double sum = 0;
    for (int64_t kh = 0; kh < L.kH; ++kh) {
      int64_t oh = tapOutput(ih, kh, L.sH, L.pT, L.dH, L.OH);
      for (int64_t kw = 0; oh >= 0 && kw < L.kW; ++kw) {
        int64_t ow = tapOutput(iw, kw, L.sW, L.pL, L.dW, L.OW);
        if (ow < 0)
          continue;
        for (int64_t o = grp * Og; o < (grp + 1) * Og; ++o)
          sum += double(w[((o * L.Cg + cg) * L.kH + kh) * L.kW + kw]) *
                 double(gO[((n * L.O + o) * L.OH + oh) * L.OW + ow]);
      }
    }
    gI[k] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void convGradWeightKernel(ConvBackwardLaunch L) {
  const T *gO = reinterpret_cast<const T *>(L.gO);
  const T *x = reinterpret_cast<const T *>(L.x);
  T *gW = reinterpret_cast<T *>(L.gW);
  int64_t total = L.O * L.Cg * L.kH * L.kW, Og = L.O / L.groups;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    int64_t kw = k % L.kW, kh = k / L.kW % L.kH, cg = k / (L.kW * L.kH) % L.Cg,
            o = k / (L.kW * L.kH * L.Cg);
    int64_t c = o / Og * L.Cg + cg;
    double sum = 0;
    for (int64_t n = 0; n < L.N; ++n)
      for (int64_t oh = 0; oh < L.OH; ++oh) {
        int64_t ih = oh * L.sH - L.pT + kh * L.dH;
        if (ih < 0 || ih >= L.H)
          continue;
        for (int64_t ow = 0; ow < L.OW; ++ow) {
          int64_t iw = ow * L.sW - L.pL + kw * L.dW;
          if (iw >= 0 && iw < L.W)
            sum += double(gO[((n * L.O + o) * L.OH + oh) * L.OW + ow]) *
                   double(x[((n * L.C + c) * L.H + ih) * L.W + iw]);
        }
      }
    gW[k] = static_cast<T>(sum);
  }
}

template <typename T> __global__ void convGradBiasKernel(ConvBackwardLaunch L) {
  const T *gO = reinterpret_cast<const T *>(L.gO);
  T *gB = reinterpret_cast<T *>(L.gB);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t positions = L.OH * L.OW;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       o < L.O; o += stride) {
    double sum = 0;
    for (int64_t n = 0; n < L.N; ++n)
      for (int64_t l = 0; l < positions; ++l)
        sum += double(gO[(n * L.O + o) * positions + l]);
    gB[o] = static_cast<T>(sum);
  }
}

template <typename T> cudaError_t convBackward(const ConvBackwardLaunch &L) {
  int64_t in = L.N * L.C * L.H * L.W, wn = L.O * L.Cg * L.kH * L.kW;
  if (L.gI && in > 0)
    convGradInputKernel<T><<<nnBlocks(in, kThreads), kThreads>>>(L);
  if (L.gW && wn > 0)
    convGradWeightKernel<T><<<nnBlocks(wn, kThreads), kThreads>>>(L);
  if (L.gB && L.O > 0)
    convGradBiasKernel<T><<<nnBlocks(L.O, kThreads), kThreads>>>(L);
  return cudaGetLastError();
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
  else if (L.dtype == F32)
    convBiasKernel<float><<<nnBlocks(total, kThreads), kThreads>>>(L);
  else
    convBiasHalfKernel<<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchMaxPoolIndexCheck(const MaxPoolBackwardLaunch &L) {
  int64_t total = L.planes * L.OH * L.OW;
  if (total == 0)
    return cudaSuccess;
  maxPoolIndexCheckKernel<<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchMaxPoolBackward(const MaxPoolBackwardLaunch &L) {
  int64_t total = L.planes * L.H * L.W;
  if (total == 0)
    return cudaSuccess;
  maxPoolBackwardKernel<<<nnBlocks(total, kThreads), kThreads>>>(L);
  return cudaGetLastError();
}

cudaError_t cuda::launchConvBackward(const ConvBackwardLaunch &L) {
  return L.dtype == F64 ? convBackward<double>(L) : convBackward<float>(L);
}
