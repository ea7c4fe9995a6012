//===- CuDNN.cpp - Forward convolutions on cuDNN --------------------------===//
//
// The optimized CUDA tier's convolution on cuDNN, the library PyTorch's
// CUDA convolution runs on, through cuDNN 9's convolution API (the
// descriptor API PyTorch used before cudnn-frontend; the toolkit here and
// the nvidia-cudnn wheel torch brings to the GPU machine both ship it).
// The portable kernels (im2col and cuBLAS for conv2d, Convolution.cu's
// direct loop for aten.convolution) run whatever it does not take.
//
// The algorithm is cuDNN's heuristic choice
// (cudnnGetConvolutionForwardAlgorithm_v7), what PyTorch runs with
// torch.backends.cudnn.benchmark off: no trial runs, so choosing never
// synchronizes or allocates. It is cached per shape and dtype with its
// descriptors, and its workspace comes from ctx.scratch(), counted as the
// op's scratch. f32 and f64 run with FMA math only: cuDNN's default math
// would take TF32 tensor cores for f32 on Ampere and later (torch's
// allow_tf32 default for cuDNN), a 10-bit mantissa that TraceIR's cuBLAS
// products do not use either. f16 and bf16 run on tensor cores,
// accumulating in f32, as PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/CuDNN.h"
#include "TraceIR/Runtime/CUDA/Backend.h"
#include "TraceIR/Runtime/ConvolutionPlan.h"

#ifdef TRACEIR_HAVE_CUDNN
#include "TraceIR/Runtime/CUDA/Device.h"

#include <cudnn.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#endif

using namespace traceir;

#ifndef TRACEIR_HAVE_CUDNN

const char *cuda::cudnnVersion() { return nullptr; }

bool cuda::cudnnConvolutionForward(KernelContext &, const ConvolutionPlan &,
                                   const char *, const char *, char *) {
  return false;
}

#else

namespace {

/// A workspace larger than this is not asked for (the heuristic's next
/// algorithm is taken instead), as the portable conv2d bounds its im2col
/// buffer.
constexpr size_t kWorkspaceBudget = size_t(256) << 20;

cudnnHandle_t handleOf(int device) {
  return cuda::perDeviceHandle<cudnnHandle_t>(device, [](cudnnHandle_t &h) {
    return cudnnCreate(&h) == CUDNN_STATUS_SUCCESS;
  });
}

/// The tensors' data type and the accumulation's; false for a dtype cuDNN
/// does not convolve.
bool dataTypes(int32_t dtype, cudnnDataType_t &data, cudnnDataType_t &acc) {
  switch (static_cast<DType>(dtype)) {
  case DType::F32:
    data = acc = CUDNN_DATA_FLOAT;
    return true;
  case DType::F64:
    data = acc = CUDNN_DATA_DOUBLE;
    return true;
  case DType::F16:
    data = CUDNN_DATA_HALF;
    acc = CUDNN_DATA_FLOAT;
    return true;
  case DType::BF16:
    data = CUDNN_DATA_BFLOAT16;
    acc = CUDNN_DATA_FLOAT;
    return true;
  default:
    return false;
  }
}

/// One shape's descriptors and algorithm, made once and shared by every
/// later call of that shape (cuDNN only reads them).
struct Conv {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
  bool usable = false; ///< false: cuDNN does not take this shape

  Conv() = default;
  Conv(const Conv &) = delete;
  Conv &operator=(const Conv &) = delete;
  ~Conv() {
    if (x)
      cudnnDestroyTensorDescriptor(x);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
  }
};

/// Packed strides of dims `d` (rank `n`).
std::array<int, 5> packedStrides(const int *d, int n) {
  std::array<int, 5> s{};
  s[n - 1] = 1;
  for (int i = n - 2; i >= 0; --i)
    s[i] = s[i + 1] * d[i + 1];
  return s;
}

/// Makes the descriptors of `s` and picks the algorithm; leaves `c.usable`
/// false where cuDNN declines any step.
void describe(cudnnHandle_t h, const CudnnConvShape &s, int32_t dtype,
              Conv &c) {
  cudnnDataType_t data, acc;
  if (!dataTypes(dtype, data, acc))
    return;
  const bool half = data == CUDNN_DATA_HALF || data == CUDNN_DATA_BFLOAT16;
  const int dims = s.rank - 2;
  std::array<int, 5> xs = packedStrides(s.x, s.rank),
                     ys = packedStrides(s.y, s.rank);
  if (cudnnCreateTensorDescriptor(&c.x) != CUDNN_STATUS_SUCCESS ||
      cudnnCreateTensorDescriptor(&c.y) != CUDNN_STATUS_SUCCESS ||
      cudnnCreateFilterDescriptor(&c.w) != CUDNN_STATUS_SUCCESS ||
      cudnnCreateConvolutionDescriptor(&c.conv) != CUDNN_STATUS_SUCCESS ||
      cudnnSetTensorNdDescriptor(c.x, data, s.rank, s.x, xs.data()) !=
          CUDNN_STATUS_SUCCESS ||
      cudnnSetTensorNdDescriptor(c.y, data, s.rank, s.y, ys.data()) !=
          CUDNN_STATUS_SUCCESS ||
      cudnnSetFilterNdDescriptor(c.w, data, CUDNN_TENSOR_NCHW, s.rank, s.w) !=
          CUDNN_STATUS_SUCCESS ||
      cudnnSetConvolutionNdDescriptor(c.conv, dims, s.pad, s.stride, s.dil,
                                      CUDNN_CROSS_CORRELATION,
                                      acc) != CUDNN_STATUS_SUCCESS ||
      cudnnSetConvolutionGroupCount(c.conv, s.groups) != CUDNN_STATUS_SUCCESS)
    return;
  const cudnnMathType_t math = half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  if (cudnnSetConvolutionMathType(c.conv, math) != CUDNN_STATUS_SUCCESS)
    return;
  // cuDNN's own output size must be the plan's (cudnnConvShape checked the
  // formula; this checks cuDNN agrees).
  std::array<int, 5> y{};
  if (cudnnGetConvolutionNdForwardOutputDim(c.conv, c.x, c.w, s.rank,
                                            y.data()) != CUDNN_STATUS_SUCCESS)
    return;
  for (int d = 0; d < s.rank; ++d)
    if (y[d] != s.y[d])
      return;
  int most = 0;
  if (cudnnGetConvolutionForwardAlgorithmMaxCount(h, &most) !=
          CUDNN_STATUS_SUCCESS ||
      most <= 0)
    return;
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(most);
  int returned = 0;
  if (cudnnGetConvolutionForwardAlgorithm_v7(h, c.x, c.w, c.conv, c.y, most,
                                             &returned, perf.data()) !=
      CUDNN_STATUS_SUCCESS)
    return;
  // Best first; the first that runs within the budget.
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t &a = perf[i];
    if (a.status != CUDNN_STATUS_SUCCESS || a.memory > kWorkspaceBudget)
      continue;
    // A half type's algorithm runs in the math the heuristic found it for;
    // f32 and f64 keep FMA math whatever it lists (PyTorch overrides the
    // listed math the same way where TF32 is off).
    if (half &&
        cudnnSetConvolutionMathType(c.conv, a.mathType) != CUDNN_STATUS_SUCCESS)
      continue;
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(
            h, c.x, c.w, c.conv, c.y, a.algo, &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > kWorkspaceBudget)
      continue;
    c.algo = a.algo;
    c.workspace = bytes;
    c.usable = true;
    return;
  }
}

/// The shape's entry, made on first use (cached whether cuDNN takes it or
/// not).
const Conv &convOf(cudnnHandle_t h, int device, const CudnnConvShape &s,
                   int32_t dtype) {
  using Key = std::array<int, 33>;
  Key key{};
  int n = 0;
  key[n++] = device;
  key[n++] = dtype;
  key[n++] = s.rank;
  key[n++] = s.groups;
  for (int d = 0; d < 5; ++d) {
    key[n++] = s.x[d];
    key[n++] = s.w[d];
    key[n++] = s.y[d];
  }
  for (int d = 0; d < 3; ++d) {
    key[n++] = s.pad[d];
    key[n++] = s.stride[d];
    key[n++] = s.dil[d];
  }
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<Conv>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Conv> &c = cache[key];
  if (!c) {
    c = std::make_unique<Conv>();
    describe(h, s, dtype, *c);
  }
  return *c;
}

} // namespace

const char *cuda::cudnnVersion() {
  static const std::string version = std::to_string(CUDNN_MAJOR) + "." +
                                     std::to_string(CUDNN_MINOR) + "." +
                                     std::to_string(CUDNN_PATCHLEVEL);
  return version.c_str();
}

bool cuda::cudnnConvolutionForward(KernelContext &ctx, const ConvolutionPlan &p,
                                   const char *x, const char *w, char *out) {
  CudnnConvShape s;
  if (!cudnnConvShape(p, s))
    return false;
  int device = ctx.result(0).storage->device.index;
  cudnnHandle_t h = handleOf(device);
  if (!h)
    return false;
  const Conv &c = convOf(h, device, s, p.dtype);
  if (!c.usable)
    return false;
  void *workspace = nullptr;
  if (c.workspace && !(workspace = ctx.scratch(c.workspace)))
    return true; // scratch() failed the op (the memory limit, say)
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const bool f64 = static_cast<DType>(p.dtype) == DType::F64;
  const void *alpha = f64 ? static_cast<const void *>(&one64) : &one32;
  const void *beta = f64 ? static_cast<const void *>(&zero64) : &zero32;
  cudnnStatus_t st =
      cudnnConvolutionForward(h, alpha, c.x, x, c.w, w, c.conv, c.algo,
                              workspace, c.workspace, beta, c.y, out);
  if (st != CUDNN_STATUS_SUCCESS)
    ctx.fail(std::string("convolution on cuDNN failed: ") +
             cudnnGetErrorString(st));
  return true;
}

#endif // TRACEIR_HAVE_CUDNN
