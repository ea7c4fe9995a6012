//===- NNArgs.cpp - Reading and checking NN kernel arguments --------------===//

#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ConvolutionArgs.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

using namespace traceir;

bool traceir::conv2dArgs(KernelContext &ctx, ConvGeometry &g) {
  const Tensor &x = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor &out = ctx.result(0);
  std::string why;
  if (w.dtype != x.dtype ||
      (ctx.isTensor(2) && ctx.tensor(2).dtype != x.dtype)) {
    ctx.fail(strCat("conv2d: input, weight and bias must have one dtype, "
                    "got ") +
             dtypeName(x.dtype) + " and " +
             dtypeName(w.dtype == x.dtype ? ctx.tensor(2).dtype : w.dtype));
    return false;
  }
  if (!convolutionTakesDtype(isFloatingDType(x.dtype), x.dtype == DType::I64,
                             dtypeName(x.dtype), why)) {
    ctx.fail("conv2d: " + why);
    return false;
  }
  if ((x.rank() != 3 && x.rank() != 4) || w.rank() != 4 ||
      out.rank() != x.rank()) {
    ctx.fail("conv2d needs a 3-D or 4-D input, a 4-D weight and a result "
             "of the input's rank, got " +
             shapeToString(x.shape) + ", " + shapeToString(w.shape) + " and " +
             shapeToString(out.shape));
    return false;
  }
  bool batched = x.rank() == 4;
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
  Conv2dArgs conv;
  if (!decodeArgs(ctx, decodeConv2d, conv))
    return false;
  g.groups = conv.groups;
  std::optional<std::array<int64_t, 2>> padH = conv.pads(0, g.kH),
                                        padW = conv.pads(1, g.kW);
  if (!padH || !padW) {
    ctx.fail("conv2d: dilation x kernel size overflows");
    return false;
  }
  g.sH = conv.stride[0];
  g.sW = conv.stride[1];
  g.pT = (*padH)[0];
  g.pL = (*padW)[0];
  g.dH = conv.dilation[0];
  g.dW = conv.dilation[1];
  std::optional<int64_t> channels = checkedMul(g.Cg, g.groups);
  if (!channels || g.C != *channels || g.O % g.groups != 0) {
    ctx.fail("conv2d: input channels " + strCat(g.C) + ", weight " +
             shapeToString(w.shape) + " and groups=" + strCat(g.groups) +
             " disagree");
    return false;
  }
  // What inference checks in a verified graph (a saved executable states
  // its own result type, and the kernels index by these): the output size.
  std::optional<int64_t> OH = conv.outputSize(0, g.H, g.kH),
                         OW = conv.outputSize(1, g.W, g.kW);
  Shape want = batched ? Shape{g.N, g.O} : Shape{g.O};
  want.push_back(OH.value_or(-1));
  want.push_back(OW.value_or(-1));
  if (!OH || !OW || out.shape != want || out.dtype != x.dtype) {
    ctx.fail(strCat("conv2d of ") + shapeToString(x.shape) + " by " +
             shapeToString(w.shape) + " has no result of type " +
             dtypeName(out.dtype) + shapeToString(out.shape));
    return false;
  }
  if (ctx.isTensor(2) && ctx.tensor(2).numel() != g.O) {
    ctx.fail("conv2d: the bias " + shapeToString(ctx.tensor(2).shape) +
             " does not hold " + strCat(g.O) + " elements");
    return false;
  }
  return true;
}

/// The dtypes a pool takes: floating ones, with i64 (the average pools),
/// or with every integer one (the max pools), as PyTorch's CPU.
enum class PoolDtypes { Floating, FloatingOrI64, NotBool };

static bool poolInputDtype(KernelContext &ctx, const Tensor &x, const char *op,
                           PoolDtypes take = PoolDtypes::Floating) {
  if (isFloatingDType(x.dtype) ||
      (take == PoolDtypes::FloatingOrI64 && x.dtype == DType::I64) ||
      (take == PoolDtypes::NotBool && x.dtype != DType::Bool))
    return true;
  ctx.fail(strCat(op) + " supports floating" +
           (take == PoolDtypes::FloatingOrI64 ? " and i64"
            : take == PoolDtypes::NotBool     ? " and integer"
                                              : "") +
           " dtypes, got " + dtypeName(x.dtype));
  return false;
}
static bool floatingPoolInput(KernelContext &ctx, const Tensor &x,
                              const char *op) {
  return poolInputDtype(ctx, x, op);
}

/// PyTorch's pooling checks of a pool over `spatial` dims: an input of
/// spatial + 1 or spatial + 2 dims, every one but the batch dim nonzero.
static bool poolInputShape(KernelContext &ctx, const Tensor &x, const char *op,
                           int spatial = 2) {
  if (x.rank() != spatial + 1 && x.rank() != spatial + 2) {
    ctx.fail(strCat(op) + ": expected a " + strCat(spatial + 1) + "-D or " +
             strCat(spatial + 2) + "-D input, got " + shapeToString(x.shape));
    return false;
  }
  for (int64_t d = x.rank() == spatial + 2 ? 1 : 0; d < x.rank(); ++d)
    if (x.shape[d] == 0) {
      ctx.fail(strCat(op) + ": expected a " + strCat(spatial + 1) + "-D or " +
               strCat(spatial + 2) +
               "-D input with nonzero sizes for the non-batch dims, got " +
               shapeToString(x.shape));
      return false;
    }
  return true;
}

/// The pooling result: `x`'s leading dims, then `sizes` (each positive, or,
/// where `zeroOk`, non-negative).
static bool poolResult(KernelContext &ctx, const Tensor &x,
                       std::span<const int64_t> sizes, const char *op,
                       bool zeroOk = false) {
  Shape want(x.shape.begin(), x.shape.end() - sizes.size());
  bool ok = true;
  for (int64_t s : sizes) {
    want.push_back(s);
    ok &= zeroOk ? s >= 0 : s > 0;
  }
  if (ok && ctx.result(0).shape == want)
    return true;
  ctx.fail(strCat(op) + " of " + shapeToString(x.shape) +
           " has no result of shape " + shapeToString(ctx.result(0).shape));
  return false;
}

/// The max and average pools: `decode`'s window over the last N dims of an
/// input of the dtypes `take` says.
template <size_t N, typename Args, typename Decoder>
static bool windowPoolArgs(KernelContext &ctx, Args &a, Decoder decode,
                           const char *op, PoolDtypes take) {
  const Tensor &x = ctx.tensor(0);
  if (!poolInputDtype(ctx, x, op, take) || !decodeArgs(ctx, decode, a) ||
      !poolInputShape(ctx, x, op, N))
    return false;
  // PyTorch's max_pool*_with_indices / avg_pool* checks and
  // pooling_output_shape; a window that does not fit gives size 0, which
  // poolResult refuses.
  std::array<int64_t, N> size;
  for (size_t d = 0; d < N; ++d)
    size[d] = a.outputSize(d, x.shape[x.rank() - N + d]).value_or(0);
  return poolResult(ctx, x, size, op);
}

template <size_t N>
bool traceir::maxPoolArgs(KernelContext &ctx, MaxPoolArgs<N> &a, bool indices) {
  const char *op = N == 3    ? "max_pool3d_with_indices"
                   : indices ? "max_pool2d_with_indices"
                             : "max_pool2d";
  // Every dtype but bool, as PyTorch's CPU (its CUDA takes floating ones
  // only; the one per-element kernel serves both devices, so CUDA takes
  // integers too).
  bool ok;
  if constexpr (N == 3)
    ok = windowPoolArgs<N>(ctx, a, decodeMaxPool3d, op, PoolDtypes::NotBool);
  else
    ok = windowPoolArgs<N>(ctx, a, decodeMaxPool2d, op, PoolDtypes::NotBool);
  if (!ok || !indices)
    return ok;
  if (ctx.numResults() == 2 && ctx.result(1).dtype == DType::I64 &&
      ctx.result(1).shape == ctx.result(0).shape &&
      ctx.result(1).isContiguous())
    return true;
  ctx.fail(strCat(op) + " returns the output and its i64 indices of one "
                        "shape");
  return false;
}
template bool traceir::maxPoolArgs<2>(KernelContext &, MaxPool2dArgs &, bool);
template bool traceir::maxPoolArgs<3>(KernelContext &, MaxPool3dArgs &, bool);

bool traceir::maxPool2dBackwardArgs(KernelContext &ctx, MaxPool2dArgs &a) {
  const char *op = "max_pool2d_with_indices_backward";
  const Tensor &g = ctx.tensor(0), &x = ctx.tensor(1), &idx = ctx.tensor(7);
  if (!floatingPoolInput(ctx, x, op) ||
      !decodeArgs(ctx, decodeMaxPool2dBackward, a) ||
      !poolInputShape(ctx, x, op))
    return false;
  Shape want(x.shape.begin(), x.shape.end() - 2);
  for (int d = 0; d < 2; ++d)
    want.push_back(a.outputSize(d, x.shape[x.rank() - 2 + d]).value_or(0));
  if (g.dtype != x.dtype || idx.dtype != DType::I64 || g.shape != want ||
      idx.shape != want) {
    ctx.fail(strCat(op) + ": grad_output and indices must be " +
             dtypeName(x.dtype) + " and i64 of the pooled shape " +
             shapeToString(want) + ", got " + dtypeName(g.dtype) +
             shapeToString(g.shape) + " and " + dtypeName(idx.dtype) +
             shapeToString(idx.shape));
    return false;
  }
  if (ctx.result(0).shape != x.shape || ctx.result(0).dtype != x.dtype) {
    ctx.fail(strCat(op) + ": the result must be " + dtypeName(x.dtype) +
             shapeToString(x.shape));
    return false;
  }
  return true;
}

void traceir::failPoolIndex(KernelContext &ctx, int64_t index,
                            int64_t planeSize) {
  ctx.fail(deviceErrorMessage(
      deviceError(DeviceErrorCode::PoolIndex, index, planeSize)));
}

bool traceir::convolutionBackwardArgs(KernelContext &ctx, ConvGeometry &g,
                                      bool mask[3]) {
  const char *op = "convolution_backward";
  const Tensor &gO = ctx.tensor(0), &x = ctx.tensor(1), &w = ctx.tensor(2);
  if ((x.dtype != DType::F32 && x.dtype != DType::F64) || w.dtype != x.dtype ||
      gO.dtype != x.dtype) {
    ctx.fail(strCat(op) +
             " supports f32 and f64 grad_output, input and "
             "weight of one dtype, got " +
             dtypeName(gO.dtype) + ", " + dtypeName(x.dtype) + " and " +
             dtypeName(w.dtype));
    return false;
  }
  if (x.rank() != 4 || w.rank() != 4) {
    ctx.fail(strCat(op) +
             " supports 2-D convolutions (input [N, C, H, W], "
             "weight [O, C/groups, kH, kW]), got " +
             shapeToString(x.shape) + " and " + shapeToString(w.shape));
    return false;
  }
  ConvolutionBackwardArgs cb;
  if (!decodeArgs(ctx, decodeConvolutionBackward, cb))
    return false;
  g.N = x.shape[0];
  g.C = x.shape[1];
  g.H = x.shape[2];
  g.W = x.shape[3];
  g.O = w.shape[0];
  g.Cg = w.shape[1];
  g.kH = w.shape[2];
  g.kW = w.shape[3];
  g.groups = cb.conv.groups;
  g.sH = cb.conv.stride[0];
  g.sW = cb.conv.stride[1];
  g.pT = cb.conv.padding[0];
  g.pL = cb.conv.padding[1];
  g.dH = cb.conv.dilation[0];
  g.dW = cb.conv.dilation[1];
  std::optional<int64_t> channels = checkedMul(g.Cg, g.groups);
  if (!channels || g.C != *channels || g.O % g.groups != 0) {
    ctx.fail(strCat(op) + ": input channels " + strCat(g.C) + ", weight " +
             shapeToString(w.shape) + " and groups=" + strCat(g.groups) +
             " disagree");
    return false;
  }
  std::optional<int64_t> OH = cb.conv.outputSize(0, g.H, g.kH),
                         OW = cb.conv.outputSize(1, g.W, g.kW);
  Shape want = {g.N, g.O, OH.value_or(-1), OW.value_or(-1)};
  if (!OH || !OW || gO.shape != want) {
    ctx.fail(strCat(op) + ": grad_output " + shapeToString(gO.shape) +
             " is not the output of a convolution of " +
             shapeToString(x.shape) + " by " + shapeToString(w.shape));
    return false;
  }
  g.OH = *OH;
  g.OW = *OW;
  Shape bias = {g.O}, none = {0};
  const Shape *shapes[3] = {&x.shape, &w.shape, &bias};
  if (ctx.numResults() != 3) {
    ctx.fail(strCat(op) + " returns three results");
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    mask[i] = cb.mask[i];
    const Shape &r = mask[i] ? *shapes[i] : none;
    if (ctx.result(i).shape != r || ctx.result(i).dtype != x.dtype) {
      ctx.fail(strCat(op) + ": result #" + strCat(i) + " must be " +
               dtypeName(x.dtype) + shapeToString(r) + ", got " +
               dtypeName(ctx.result(i).dtype) +
               shapeToString(ctx.result(i).shape));
      return false;
    }
  }
  return true;
}

template <size_t N>
bool traceir::avgPoolArgs(KernelContext &ctx, AvgPoolArgs<N> &a) {
  if constexpr (N == 3)
    return windowPoolArgs<N>(ctx, a, decodeAvgPool3d, "avg_pool3d",
                             PoolDtypes::FloatingOrI64);
  else
    return windowPoolArgs<N>(ctx, a, decodeAvgPool2d, "avg_pool2d",
                             PoolDtypes::FloatingOrI64);
}
template bool traceir::avgPoolArgs<2>(KernelContext &, AvgPool2dArgs &);
template bool traceir::avgPoolArgs<3>(KernelContext &, AvgPool3dArgs &);

bool traceir::adaptiveAvgPoolArgs(KernelContext &ctx, int spatial) {
  const Tensor &x = ctx.tensor(0);
  const char *op =
      spatial == 3 ? "_adaptive_avg_pool3d" : "adaptive_avg_pool2d";
  if (!floatingPoolInput(ctx, x, op) || !poolInputShape(ctx, x, op, spatial))
    return false;
  // The output size is the result's (inference checks it against
  // output_size in a verified graph); PyTorch takes a zero one.
  const Shape &out = ctx.result(0).shape;
  if (static_cast<int64_t>(out.size()) != x.rank()) {
    ctx.fail(strCat(op) + " of " + shapeToString(x.shape) +
             " has no result of shape " + shapeToString(out));
    return false;
  }
  return poolResult(
      ctx, x, std::span<const int64_t>(out).subspan(out.size() - spatial), op,
      /*zeroOk=*/true);
}

bool traceir::batchNormArgs(KernelContext &ctx, BatchNormArgs &a, bool native) {
  const Tensor &x = ctx.tensor(0);
  if (x.rank() < 2) {
    ctx.fail("batch_norm expects an input [N, C, *], got " +
             shapeToString(x.shape));
    return false;
  }
  int64_t C = x.shape[1];
  for (unsigned i = 1; i <= 4; ++i)
    if (ctx.isTensor(i) && ctx.tensor(i).numel() != C) {
      ctx.fail("batch_norm: argument #" + strCat(i) + " " +
               shapeToString(ctx.tensor(i).shape) + " does not hold one " +
               "element per channel (" + strCat(C) + ")");
      return false;
    }
  if (ctx.numResults() < (native ? 3u : 1u) || ctx.result(0).shape != x.shape ||
      (native && (ctx.result(1).numel() != C || ctx.result(2).numel() != C))) {
    ctx.fail("batch_norm: the results do not have the input's shape" +
             std::string(native ? " and one mean and invstd per channel" : ""));
    return false;
  }
  if (!decodeArgs(ctx, decodeBatchNorm, a))
    return false;
  if (!isFloatingDType(x.dtype)) {
    ctx.fail(strCat("batch_norm expects a floating input, got ") +
             dtypeName(x.dtype));
    return false;
  }
  if (ctx.isTensor(3) != ctx.isTensor(4)) {
    ctx.fail("running_mean and running_var must either both be None "
             "or neither be None");
    return false;
  }
  if (!a.training && !ctx.isTensor(3)) {
    ctx.fail("batch_norm in eval mode needs running_mean and "
             "running_var");
    return false;
  }
  return true;
}

bool traceir::batchNormBackwardArgs(KernelContext &ctx, unsigned first,
                                    unsigned maskArg,
                                    BatchNormBackwardArgs &a) {
  a.training = boolArg(ctx, first, false);
  a.eps = numberArg(ctx, first + 1, 1e-5);
  return outputMask(ctx, maskArg, a.mask);
}

bool traceir::batchNormBackwardShapes(
    KernelContext &ctx, unsigned input,
    std::initializer_list<unsigned> likeInput,
    std::initializer_list<unsigned> perChannel, const bool resultLikeInput[3]) {
  const Tensor &x = ctx.tensor(input);
  if (x.rank() < 2) {
    ctx.fail("batch norm expects an input [N, C, *], got " +
             shapeToString(x.shape));
    return false;
  }
  int64_t C = x.shape[1];
  for (unsigned i : likeInput)
    if (ctx.isTensor(i) && ctx.tensor(i).shape != x.shape) {
      ctx.fail("argument #" + strCat(i) + " " +
               shapeToString(ctx.tensor(i).shape) +
               " does not have the input's shape " + shapeToString(x.shape));
      return false;
    }
  for (unsigned i : perChannel)
    if (ctx.isTensor(i) && ctx.tensor(i).numel() != C) {
      ctx.fail("argument #" + strCat(i) + " " +
               shapeToString(ctx.tensor(i).shape) + " does not hold one " +
               "element per channel (" + strCat(C) + ")");
      return false;
    }
  if (ctx.numResults() < 3) {
    ctx.fail("batch norm backward passes have three results, got " +
             strCat(ctx.numResults()));
    return false;
  }
  for (unsigned r = 0; r < 3; ++r) {
    const Tensor &t = ctx.result(r);
    if (resultLikeInput[r] ? t.shape != x.shape : t.numel() != C) {
      ctx.fail("result #" + strCat(r) + " " + shapeToString(t.shape) +
               (resultLikeInput[r] ? " does not have the input's shape"
                                   : " does not hold one element per "
                                     "channel"));
      return false;
    }
  }
  return true;
}

bool traceir::batchNormStatsArgs(KernelContext &ctx, bool training,
                                 unsigned saveMean, unsigned runningMean,
                                 unsigned &meanArg, unsigned &varArg) {
  meanArg = training ? saveMean : runningMean;
  varArg = meanArg + 1;
  if (ctx.isTensor(meanArg) && ctx.isTensor(varArg))
    return true;
  ctx.fail(training ? "training mode needs save_mean and save_invstd"
                    : "eval mode needs running_mean and running_var");
  return false;
}

bool traceir::lossArgs(KernelContext &ctx, LossArgs &a, unsigned first) {
  const Tensor &x = ctx.tensor(first);
  if (!isFloatingDType(x.dtype)) {
    ctx.fail(strCat("the input must be floating, got ") + dtypeName(x.dtype));
    return false;
  }
  if (!decodeArgs(ctx, decodeLossReduction, first + 3, a.reduction))
    return false;
  if (x.rank() == 0) {
    ctx.fail("the input must have a class dim, got a 0-d tensor");
    return false;
  }
  bool flat = x.rank() == 1;
  a.N = flat ? 1 : x.shape[0];
  a.C = x.shape[flat ? 0 : 1];
  a.S = 1;
  for (int64_t d = 2; d < x.rank(); ++d)
    a.S *= x.shape[d];
  if (ctx.isTensor(first + 2)) {
    const Tensor &wt = ctx.tensor(first + 2);
    if (wt.rank() != 1 || wt.shape[0] != a.C) {
      ctx.fail("weight tensor should be defined either for all " + strCat(a.C) +
               " classes or no classes but got weight tensor of "
               "shape: " +
               shapeToString(wt.shape));
      return false;
    }
  }
  // What inference checks in a verified graph, and the kernels index by:
  // one class index per position (or, for cross_entropy, probabilities
  // shaped like the input), and results of the reduction's size (the
  // backward pass: the input's shape).
  const Tensor &target = ctx.tensor(first + 1);
  int64_t positions = a.N * a.S;
  bool targetOk = isFloatingDType(target.dtype) ? target.shape == x.shape
                                                : target.numel() == positions;
  if (!targetOk) {
    ctx.fail("the target " + shapeToString(target.shape) +
             " does not match the input " + shapeToString(x.shape));
    return false;
  }
  const Tensor &out = ctx.result(0);
  bool outOk = first == 1                       ? out.shape == x.shape
               : a.reduction == Reduction::None ? out.numel() == positions
                                                : out.numel() == 1;
  if (!outOk || (ctx.numResults() > 1 && ctx.result(1).numel() != 1)) {
    ctx.fail("the result " + shapeToString(out.shape) +
             " is not the loss's for the input " + shapeToString(x.shape));
    return false;
  }
  return true;
}

bool traceir::labelSmoothingArg(KernelContext &ctx, bool crossEntropy,
                                double &smoothing) {
  smoothing =
      crossEntropy ? (ctx.isNone(5) ? 0.0 : ctx.scalar(5).number()) : 0.0;
  if (!(smoothing < 0 || smoothing > 1)) // NaN is let through
    return true;
  ctx.fail("label_smoothing must be between 0.0 and 1.0. Got: " +
           strCat(std::to_string(smoothing)));
  return false;
}

bool traceir::classIndexTarget(KernelContext &ctx, const Tensor &target) {
  if (!isFloatingDType(target.dtype) && target.dtype != DType::Bool)
    return true;
  ctx.fail(strCat("the target must hold class indices "
                  "(integers), got ") +
           dtypeName(target.dtype));
  return false;
}

int64_t traceir::ignoreIndexArg(KernelContext &ctx, unsigned i) {
  return ctx.isNone(i) ? -100 : ctx.scalar(i).i;
}

bool traceir::nllLossBackwardArgs(KernelContext &ctx, LossArgs &a) {
  if (!lossArgs(ctx, a, 1) || !classIndexTarget(ctx, ctx.tensor(2)))
    return false;
  const Tensor &g = ctx.tensor(0), &x = ctx.tensor(1), &tw = ctx.tensor(6);
  for (const Tensor *t : {&g, &tw})
    if (t->dtype != x.dtype) {
      ctx.fail(strCat("expected scalar type ") + dtypeName(x.dtype) +
               " but found " + dtypeName(t->dtype));
      return false;
    }
  if (tw.numel() != 1) {
    ctx.fail("expected total_weight to be a single element tensor, got: " +
             shapeToString(tw.shape) + " (" + strCat(tw.numel()) +
             " elements)");
    return false;
  }
  // reduction none keeps one gradient per position, else one in all.
  if (a.reduction == Reduction::None && x.rank() == 2) {
    if (g.rank() != 1 || g.shape[0] != a.N) {
      ctx.fail("Expected a tensor of dimension 1 and tensor.size[0] == " +
               strCat(a.N) + " but got: " + shapeToString(g.shape));
      return false;
    }
  } else if (g.rank() > 1 || g.numel() != 1) {
    ctx.fail("Expected a single element grad_output tensor, but got: " +
             shapeToString(g.shape));
    return false;
  }
  return true;
}

bool traceir::logSoftmaxBackwardArgs(KernelContext &ctx, int64_t &dim) {
  const Tensor &g = ctx.tensor(0), &o = ctx.tensor(1);
  if (!isFloatingDType(g.dtype) || o.dtype != g.dtype) {
    ctx.fail(strCat("_log_softmax_backward_data needs floating "
                    "grad_output and output of one dtype, got ") +
             dtypeName(g.dtype) + " and " + dtypeName(o.dtype));
    return false;
  }
  if (g.shape != o.shape) {
    ctx.fail("grad_output " + shapeToString(g.shape) + " and output " +
             shapeToString(o.shape) + " must have the same shape");
    return false;
  }
  int64_t rank = std::max<int64_t>(g.rank(), 1), d = ctx.scalar(2).i;
  if (d < -rank || d >= rank) {
    ctx.fail("dim " + strCat(d) + " is out of range for rank " +
             strCat(g.rank()));
    return false;
  }
  dim = d < 0 ? d + rank : d;
  return true;
}

bool traceir::softmaxArgs(KernelContext &ctx, int64_t &dim) {
  const Tensor &in = ctx.tensor(0);
  dim = views::wrapDim(ctx.scalar(1).i, in.rank());
  if (in.rank() > 0 && (dim < 0 || dim >= in.rank())) {
    ctx.fail("dim " + strCat(ctx.scalar(1).i) + " is out of range for rank " +
             strCat(in.rank()));
    return false;
  }
  return checkResultShape(ctx, 0, in.shape);
}

int64_t LayerNormArgs::numRows() const {
  int64_t n = 1;
  for (int64_t d = 0; d < rows.rank() - normDims; ++d)
    n *= rows.shape[d];
  return n;
}

bool traceir::layerNormArgs(KernelContext &ctx, LayerNormArgs &a, bool native) {
  const Tensor &in = ctx.tensor(0);
  a.rows = in;
  const std::vector<int64_t> &normalized = ctx.scalar(1).ints;
  a.normDims = normalized.size();
  a.eps = ctx.isNone(4) ? 1e-5 : ctx.scalar(4).number();
  if (a.normDims > in.rank()) {
    ctx.fail("normalized_shape has more dims than the input");
    return false;
  }
  // What inference checks in a verified graph; a saved executable states
  // its own types, and the kernels index by these.
  if (!std::equal(normalized.begin(), normalized.end(),
                  in.shape.end() - a.normDims)) {
    ctx.fail("normalized_shape " + shapeToString(normalized) +
             " is not the trailing dims of the input " +
             shapeToString(in.shape));
    return false;
  }
  int64_t inner = 1;
  for (int64_t d : normalized)
    inner *= d;
  int64_t outer = inner ? in.numel() / inner : 0;
  a.weight = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  a.bias = ctx.isTensor(3) ? &ctx.tensor(3) : nullptr;
  for (const Tensor *t : {a.weight, a.bias}) {
    if (t && !t->isContiguous()) {
      ctx.fail("layer_norm weight and bias must be contiguous");
      return false;
    }
    if (t && t->numel() != inner) {
      ctx.fail("layer_norm weight and bias need " + strCat(inner) +
               " elements, got " + shapeToString(t->shape));
      return false;
    }
  }
  if (ctx.numResults() < (native ? 3u : 1u) ||
      ctx.result(0).shape != in.shape ||
      (native &&
       (ctx.result(1).numel() != outer || ctx.result(2).numel() != outer))) {
    ctx.fail("the results do not have the input's shape" +
             std::string(native ? " and one mean and rstd per row" : ""));
    return false;
  }
  return true;
}

bool traceir::groupNormArgs(KernelContext &ctx, LayerNormArgs &a) {
  const Tensor &in = ctx.tensor(0);
  GroupNormArgs g;
  if (!decodeArgs(ctx, decodeGroupNorm, g))
    return false;
  // What inference checks in a verified graph; a saved executable states
  // its own types, and the kernels index by these.
  int64_t hxw = 1;
  for (int64_t d = 2; d < in.rank(); ++d)
    hxw *= in.shape[d];
  if (in.rank() < 2 || in.shape[0] != g.N || in.shape[1] != g.C ||
      hxw != g.HxW) {
    ctx.fail("input " + shapeToString(in.shape) + " is not [N=" + strCat(g.N) +
             ", C=" + strCat(g.C) + ", *] with HxW=" + strCat(g.HxW) +
             " elements in *");
    return false;
  }
  a.normDims = in.rank() - 1;
  a.eps = g.eps;
  a.groups = g.group;
  a.span = g.HxW;
  a.weight = ctx.isTensor(1) ? &ctx.tensor(1) : nullptr;
  a.bias = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  for (const Tensor *t : {a.weight, a.bias})
    if (t && (!t->isContiguous() || t->rank() != 1 || t->shape[0] != g.C)) {
      ctx.fail("native_group_norm weight and bias must be None or hold C=" +
               strCat(g.C) + " contiguous elements, got " +
               shapeToString(t->shape));
      return false;
    }
  // [N, C, *] as [N, group, C / group, *]: C splits without a copy.
  a.rows = in;
  int64_t cpg = g.C / g.group;
  a.rows.shape.insert(a.rows.shape.begin() + 1, g.group);
  a.rows.shape[2] = cpg;
  a.rows.strides.insert(a.rows.strides.begin() + 1, in.strides[1] * cpg);
  int64_t stats[2] = {g.N, g.group};
  if (ctx.numResults() != 3) {
    ctx.fail("native_group_norm returns three results (out, mean, rstd)");
    return false;
  }
  return checkResultShape(ctx, 0, in.shape) &&
         checkResultShape(ctx, 1, stats) && checkResultShape(ctx, 2, stats);
}

bool traceir::dropoutArgs(KernelContext &ctx, DropoutArgs &a, bool native) {
  if (!decodeArgs(ctx, decodeDropout, a))
    return false;
  const Shape &in = ctx.tensor(0).shape;
  if (ctx.result(0).shape != in) {
    ctx.fail("the result " + shapeToString(ctx.result(0).shape) +
             " is not the input's " + shapeToString(in));
    return false;
  }
  if (!native ||
      (ctx.numResults() == 2 && ctx.result(1).shape == in &&
       ctx.result(1).dtype == DType::Bool && ctx.result(1).isContiguous()))
    return true;
  ctx.fail("native_dropout returns the output and a contiguous bool mask "
           "of the input's shape " +
           shapeToString(in));
  return false;
}

KeepDraw::KeepDraw(double keep) {
  if (keep >= 1.0) {
    all = true;
    return;
  }
  if (!(keep > 0.0)) // never kept, NaN included (u < NaN is false)
    return;
  // Rounding to double is monotone, so the draws kept are those below the
  // first whose rounding reaches keep * 2^64 (an exact product).
  double t = keep * 0x1p64;
  uint64_t lo = 0, hi = UINT64_MAX;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (static_cast<double>(mid) >= t)
      hi = mid;
    else
      lo = mid + 1;
  }
  below = lo;
}

bool traceir::embeddingArgs(KernelContext &ctx) {
  const Tensor &w = ctx.tensor(0), &idx = ctx.tensor(1);
  const Tensor &out = ctx.result(0);
  if (w.rank() != 2) {
    ctx.fail("embedding weight must have rank 2, got rank " + strCat(w.rank()));
    return false;
  }
  if (isFloatingDType(idx.dtype)) {
    ctx.fail(strCat("embedding indices must be integers, got ") +
             dtypeName(idx.dtype));
    return false;
  }
  Shape want = idx.shape;
  want.push_back(w.shape[1]);
  if (out.shape != want || out.dtype != w.dtype) {
    ctx.fail(strCat("the result is ") + dtypeName(out.dtype) +
             shapeToString(out.shape) + ", but the rows gathered are " +
             dtypeName(w.dtype) + shapeToString(want));
    return false;
  }
  return true;
}

void traceir::failEmbeddingIndex(KernelContext &ctx, int64_t index,
                                 int64_t rows) {
  ctx.fail(deviceErrorMessage(
      deviceError(DeviceErrorCode::EmbeddingIndex, index, rows)));
}

int64_t AttentionArgs::batchOffset(const AttentionOperand &o, int64_t b) const {
  int64_t off = o.offset;
  for (int64_t d = static_cast<int64_t>(batchShape.size()) - 1; d >= 0; --d) {
    off += (b % batchShape[d]) * o.batchStrides[d];
    b /= batchShape[d];
  }
  return off;
}

bool AttentionArgs::evenlySpaced(const AttentionOperand &o,
                                 int64_t &stride) const {
  stride = B > 1 ? batchOffset(o, 1) - o.offset : 0;
  for (int64_t b = 2; b < B; ++b)
    if (batchOffset(o, b) != o.offset + b * stride)
      return false;
  return true;
}

/// Lays `t` out as batches over `batch` and a [rows, cols] matrix; missing
/// and size-1 dims broadcast (stride 0).
void traceir::attentionOperand(const Tensor &t, std::span<const int64_t> batch,
                               AttentionOperand &o) {
  int64_t full = static_cast<int64_t>(batch.size()) + 2;
  o.t = &t;
  o.offset = t.offset;
  auto strideAt = [&](int64_t d) -> int64_t { // d indexes the padded dims
    int64_t td = d - (full - t.rank());
    return td < 0 || t.shape[td] == 1 ? 0 : t.strides[td];
  };
  o.batchStrides.clear();
  for (int64_t d = 0; d < full - 2; ++d)
    o.batchStrides.push_back(strideAt(d));
  o.rs = strideAt(full - 2);
  o.cs = strideAt(full - 1);
}

bool traceir::attentionArgs(KernelContext &ctx, AttentionArgs &a,
                            const AttentionArgOrder &order) {
  auto fail = [&](const std::string &msg) {
    ctx.fail(msg);
    return false;
  };
  const Tensor &q = ctx.tensor(0), &k = ctx.tensor(1), &v = ctx.tensor(2);
  if (!isFloatingDType(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype)
    return fail(strCat("query, key and value must have one floating "
                       "dtype, got ") +
                dtypeName(q.dtype) + ", " + dtypeName(k.dtype) + " and " +
                dtypeName(v.dtype));
  if (q.rank() < 2 || k.rank() < 2 || v.rank() < 2)
    return fail("query, key and value must have rank >= 2");
  a.L = q.shape[q.rank() - 2];
  a.E = q.shape[q.rank() - 1];
  a.S = k.shape[k.rank() - 2];
  a.Ev = v.shape[v.rank() - 1];
  if (k.shape[k.rank() - 1] != a.E || v.shape[v.rank() - 2] != a.S)
    return fail("key must be [..., S, E] and value [..., S, Ev] for query "
                "[..., L, E]");
  double p =
      ctx.isNone(order.dropout) ? 0.0 : ctx.scalar(order.dropout).number();
  if (p != 0)
    return fail("dropout_p = " + strCat(std::to_string(p)) +
                " is not supported (only 0: export in eval mode)");
  if (order.gqa != ~0u && boolArg(ctx, order.gqa, false))
    return fail("enable_gqa=True is not supported");
  a.causal = boolArg(ctx, order.causal, false);
  a.hasMask = ctx.isTensor(order.mask);
  if (a.causal && a.hasMask)
    return fail("an explicit attn_mask must not be set when is_causal=True");
  a.scale = ctx.isNone(order.scale) ? 1.0 / std::sqrt(static_cast<double>(a.E))
                                    : ctx.scalar(order.scale).number();
  // The broadcast batch dims: the result's leading dims. A saved
  // executable states the result type itself (inference checks it in a
  // verified graph): it must be [batch..., L, Ev] of the query's dtype, and
  // every operand's batch dims must broadcast to it.
  const Shape &out = ctx.resultShape(0);
  if (out.size() < 2 || out[out.size() - 2] != a.L || out.back() != a.Ev ||
      ctx.result(0).dtype != q.dtype)
    return fail(strCat("the result must be ") + dtypeName(q.dtype) + "[..., " +
                strCat(a.L) + ", " + strCat(a.Ev) + "], got " +
                dtypeName(ctx.result(0).dtype) + shapeToString(out));
  a.batchShape.assign(out.begin(), out.end() - 2);
  a.B = 1;
  for (int64_t d : a.batchShape)
    a.B *= d;
  auto batchOf = [](const Shape &s) {
    return std::span<const int64_t>(s.data(), s.size() - 2);
  };
  for (const Tensor *t : {&q, &k, &v})
    if (!broadcastsTo(batchOf(t->shape), a.batchShape))
      return fail("query, key and value batch dims must broadcast to the "
                  "result's");
  attentionOperand(q, a.batchShape, a.q);
  attentionOperand(k, a.batchShape, a.k);
  attentionOperand(v, a.batchShape, a.v);
  if (a.hasMask) {
    const Tensor &m = ctx.tensor(order.mask);
    a.maskIsBool = m.dtype == DType::Bool;
    if (!a.maskIsBool && m.dtype != q.dtype)
      return fail(strCat("attn_mask must be bool or ") + dtypeName(q.dtype) +
                  ", got " + dtypeName(m.dtype));
    Shape scores = a.batchShape;
    scores.push_back(a.L);
    scores.push_back(a.S);
    if (!broadcastsTo(m.shape, scores))
      return fail("attn_mask " + shapeToString(m.shape) +
                  " does not broadcast to the attention scores " +
                  shapeToString(scores));
    attentionOperand(m, a.batchShape, a.mask);
  }
  return true;
}

bool traceir::flashAttentionForCpuArgs(KernelContext &ctx, AttentionArgs &a) {
  const Tensor &q = ctx.tensor(0), &k = ctx.tensor(1), &v = ctx.tensor(2);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
    ctx.fail("query, key and value must have rank 4 ([N, H, L, E])");
    return false;
  }
  if (!attentionArgs(ctx, a, AttentionArgOrder::flashForCpu()))
    return false;
  if (a.Ev != a.E) {
    ctx.fail("query, key and value must have the same head size");
    return false;
  }
  if (a.hasMask && a.maskIsBool) {
    ctx.fail("attn_mask must have the query's dtype (ATen's kernel takes no "
             "bool mask)");
    return false;
  }
  const Tensor &lse = ctx.result(1);
  DType acc = q.dtype == DType::F64 ? DType::F64 : DType::F32;
  Shape want(a.batchShape.begin(), a.batchShape.end());
  want.push_back(a.L);
  if (lse.dtype != acc || lse.shape != want) {
    ctx.fail(strCat("the logsumexp result must be ") + dtypeName(acc) +
             shapeToString(want) + ", got " + dtypeName(lse.dtype) +
             shapeToString(lse.shape));
    return false;
  }
  return true;
}

/// Every weight must have the shape nn.LSTM / nn.GRU gives it (the registry
/// only checks what static shapes tell it).
static bool rnnWeightShapes(KernelContext &ctx, const RnnConfig &cfg) {
  const Tensor &x = ctx.tensor(0), &h0 = ctx.tensor(1);
  int64_t dirs = cfg.bidirectional ? 2 : 1, layers = cfg.layers;
  int64_t inputSize = x.shape[2], hidden = h0.shape[2];
  int64_t gatesSize = rnnGates(cfg.cell) * hidden, features = dirs * hidden;
  unsigned perLayer = cfg.hasBiases ? 4 : 2, first = 1 + rnnStates(cfg.cell);
  static const char *const names[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < dirs; ++d)
      for (unsigned k = 0; k < perLayer; ++k) {
        const Tensor &w = ctx.tensor(first + (l * dirs + d) * perLayer + k);
        Shape want;
        if (k == 0)
          want = {gatesSize, l == 0 ? inputSize : features};
        else if (k == 1)
          want = {gatesSize, hidden};
        else
          want = {gatesSize};
        if (w.shape != want) {
          ctx.fail(strCat(rnnName(cfg.cell)) + ": " + names[k] + " of layer " +
                   strCat(l) + (d ? " (reverse)" : "") + " must be " +
                   shapeToString(want) + ", got " + shapeToString(w.shape));
          return false;
        }
      }
  return true;
}

bool traceir::rnnArgs(KernelContext &ctx, RnnCell cell, RnnConfig &cfg) {
  cfg.cell = cell;
  while (ctx.isTensor(cfg.numTensors))
    ++cfg.numTensors;
  unsigned nt = cfg.numTensors, states = rnnStates(cell);
  std::string name(rnnName(cell));
  std::string stateNames = cell == RnnCell::Lstm ? "h0 and c0" : "h0";
  auto fail = [&](const std::string &message) {
    ctx.fail(message);
    return false;
  };
  if (nt < 1 + states)
    return fail(name + " expects input and " + stateNames + " tensors");
  auto boolAt = [&](unsigned i, bool dflt) {
    return ctx.isNone(i) ? dflt : ctx.scalar(i).number() != 0;
  };
  cfg.hasBiases = boolAt(nt, true);
  cfg.layers = ctx.isNone(nt + 1) ? 0 : ctx.scalar(nt + 1).i;
  cfg.dropout = ctx.isNone(nt + 2) ? 0.0 : ctx.scalar(nt + 2).number();
  cfg.train = boolAt(nt + 3, false);
  cfg.bidirectional = boolAt(nt + 4, false);
  cfg.batchFirst = boolAt(nt + 5, false);

  const Tensor &x = ctx.tensor(0);
  if (cfg.layers <= 0)
    return fail(name + ": num_layers must be positive, got " +
                strCat(cfg.layers));
  if (cfg.dropout < 0 || cfg.dropout > 1)
    return fail(name + ": dropout must be in [0, 1], got " +
                strCat(std::to_string(cfg.dropout)));
  int64_t dirs = cfg.bidirectional ? 2 : 1;
  int64_t perLayer = cfg.hasBiases ? 4 : 2;
  // num_layers is the user's scalar: checked, so a huge one cannot wrap
  // around to the number of weights given. Past this check num_layers x
  // dirs x perLayer is that (small) number.
  std::optional<int64_t> weights = checkedMul(cfg.layers, dirs * perLayer);
  if (!weights)
    return fail(name + ": num_layers " + strCat(cfg.layers) + " is too large");
  if (int64_t(nt) - 1 - states != *weights)
    return fail(name + ": expects " + strCat(*weights) +
                " weight tensors, got " + strCat(nt - 1 - states));
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    return fail(name + " supports f32 and f64, got " + dtypeName(x.dtype));
  for (unsigned i = 1; i < nt; ++i)
    if (ctx.tensor(i).dtype != x.dtype)
      return fail(name + ": argument #" + strCat(i) + " is " +
                  dtypeName(ctx.tensor(i).dtype) + " but the input is " +
                  dtypeName(x.dtype));
  for (unsigned i = 0; i <= states; ++i)
    if (ctx.tensor(i).rank() != 3)
      return fail(name + ": input and " + stateNames + " must have rank 3");
  const Tensor &h0 = ctx.tensor(1);
  int64_t batch = x.shape[cfg.batchFirst ? 0 : 1];
  Shape state = {cfg.layers * dirs, batch, h0.shape[2]};
  for (unsigned i = 1; i <= states; ++i)
    if (ctx.tensor(i).shape != state)
      return fail(name + ": " + (i == 1 ? "h0" : "c0") + " must be " +
                  shapeToString(state) + ", got " +
                  shapeToString(ctx.tensor(i).shape));
  int64_t seq = x.shape[cfg.batchFirst ? 1 : 0];
  int64_t features = dirs * h0.shape[2];
  Shape output = cfg.batchFirst ? Shape{batch, seq, features}
                                : Shape{seq, batch, features};
  // The layers write their dtype into the results: a saved executable
  // that declares another would have them write past the results' storage.
  bool resultsOk = ctx.numResults() == 1 + states &&
                   ctx.result(0).shape == output &&
                   ctx.result(0).dtype == x.dtype;
  for (unsigned i = 1; resultsOk && i <= states; ++i)
    resultsOk = ctx.result(i).shape == state && ctx.result(i).dtype == x.dtype;
  if (!resultsOk)
    return fail(name + ": results must be " + dtypeName(x.dtype) +
                shapeToString(output) + " and " + strCat(states) + " x " +
                dtypeName(x.dtype) + shapeToString(state));
  return rnnWeightShapes(ctx, cfg);
}
