//===- OpArgs.cpp - Each op family's ATen arguments, decoded once ---------===//

#include "TraceIR/Support/OpArgs.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace traceir;

namespace {
/// "argument #i (what) must be ...".
bool argError(std::string &err, unsigned i, const char *what,
              const char *must) {
  err = "argument #" + std::to_string(i) + " (" + what + ") must be " + must;
  return false;
}

/// A double as a message shows it: 0.5, 2, -1e+30.
std::string numberString(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
} // namespace

const Scalar &ListCallArgs::scalar(unsigned i) const {
  static const Scalar none;
  return i < scalars.size() ? scalars[i] : none;
}

std::string traceir::intListString(std::span<const int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

bool traceir::readInt(const CallArgs &args, unsigned i, const char *what,
                      int64_t &v, std::optional<int64_t> dflt,
                      std::string &err) {
  if (dflt && args.isNone(i)) {
    v = *dflt;
    return true;
  }
  const Scalar &s = args.scalar(i);
  if (s.kind != Scalar::Kind::Int)
    return argError(err, i, what, "an int");
  v = s.i;
  return true;
}

bool traceir::readBool(const CallArgs &args, unsigned i, const char *what,
                       bool &v, std::optional<bool> dflt, std::string &err) {
  if (dflt && args.isNone(i)) {
    v = *dflt;
    return true;
  }
  const Scalar &s = args.scalar(i);
  if (s.kind == Scalar::Kind::Bool) {
    v = s.b;
    return true;
  }
  // PyTorch accepts 0/1 for a flag.
  if (s.kind == Scalar::Kind::Int && (s.i == 0 || s.i == 1)) {
    v = s.i == 1;
    return true;
  }
  return argError(err, i, what, "a bool");
}

bool traceir::readNumber(const CallArgs &args, unsigned i, const char *what,
                         double &v, std::optional<double> dflt,
                         std::string &err) {
  if (dflt && args.isNone(i)) {
    v = *dflt;
    return true;
  }
  const Scalar &s = args.scalar(i);
  if (s.kind != Scalar::Kind::Int && s.kind != Scalar::Kind::Float)
    return argError(err, i, what, "a number");
  v = s.number();
  return true;
}

bool traceir::readIntList(const CallArgs &args, unsigned i, const char *what,
                          std::vector<int64_t> &v, std::string &err) {
  const Scalar &s = args.scalar(i);
  // decodeScalar gives an int a one-element list too.
  if (s.kind != Scalar::Kind::Int && s.kind != Scalar::Kind::IntList)
    return argError(err, i, what, "an int or a tuple/list of ints");
  v = s.ints;
  return true;
}

template <size_t N>
bool traceir::readTuple(const CallArgs &args, unsigned i, const char *what,
                        std::array<int64_t, N> &v, std::array<int64_t, N> dflt,
                        std::string &err, bool emptyIsDefault) {
  if (args.isNone(i)) {
    v = dflt;
    return true;
  }
  std::vector<int64_t> list;
  if (!readIntList(args, i, what, list, err))
    return false;
  if (list.empty() && emptyIsDefault) {
    v = dflt;
    return true;
  }
  if (list.size() != 1 && list.size() != N) {
    err = std::string(what) + " must have 1 or " + std::to_string(N) +
          " values, got " + intListString(list);
    return false;
  }
  for (size_t d = 0; d < N; ++d)
    v[d] = list.size() == 1 ? list[0] : list[d];
  return true;
}
template bool traceir::readTuple<2>(const CallArgs &, unsigned, const char *,
                                    std::array<int64_t, 2> &,
                                    std::array<int64_t, 2>, std::string &,
                                    bool);
template bool traceir::readTuple<3>(const CallArgs &, unsigned, const char *,
                                    std::array<int64_t, 3> &,
                                    std::array<int64_t, 3>, std::string &,
                                    bool);

//===--- Convolution and pooling ------------------------------------------===//

/// The checks conv2d and convolution_backward share.
static bool checkConvWindow(const Conv2dArgs &a, std::string &err) {
  for (int d = 0; d < 2; ++d) {
    if (a.stride[d] <= 0 || a.dilation[d] <= 0) {
      err = "stride and dilation must be positive, got stride " +
            intListString(a.stride) + " and dilation " +
            intListString(a.dilation);
      return false;
    }
    if (a.padding[d] < 0) {
      err = "padding must be non-negative, got " + intListString(a.padding);
      return false;
    }
  }
  if (a.same && (a.stride[0] != 1 || a.stride[1] != 1)) {
    err = "padding='same' is not supported for strided convolutions";
    return false;
  }
  if (a.groups <= 0) {
    err = "groups must be positive, got " + std::to_string(a.groups);
    return false;
  }
  return true;
}

bool traceir::decodeConv2d(const CallArgs &args, Conv2dArgs &a,
                           std::string &err) {
  a = Conv2dArgs();
  const Scalar &pad = args.scalar(4);
  if (pad.kind == Scalar::Kind::String) {
    if (pad.s != "same" && pad.s != "valid") {
      err = "padding must be 'same', 'valid' or ints, got '" + pad.s + "'";
      return false;
    }
    a.same = pad.s == "same";
  } else if (!readPair(args, 4, "padding", a.padding, {0, 0}, err)) {
    return false;
  }
  return readPair(args, 3, "stride", a.stride, {1, 1}, err) &&
         readPair(args, 5, "dilation", a.dilation, {1, 1}, err) &&
         readInt(args, 6, "groups", a.groups, 1, err) &&
         checkConvWindow(a, err);
}

bool traceir::decodeConvolutionBackward(const CallArgs &args,
                                        ConvolutionBackwardArgs &a,
                                        std::string &err) {
  a = ConvolutionBackwardArgs();
  bool transposed = false;
  std::vector<int64_t> mask;
  if (!readPair(args, 4, "stride", a.conv.stride, {1, 1}, err) ||
      !readPair(args, 5, "padding", a.conv.padding, {0, 0}, err) ||
      !readPair(args, 6, "dilation", a.conv.dilation, {1, 1}, err) ||
      !readBool(args, 7, "transposed", transposed, false, err) ||
      !readInt(args, 9, "groups", a.conv.groups, 1, err) ||
      !checkConvWindow(a.conv, err))
    return false;
  if (transposed) {
    err = "transposed convolutions are not supported";
    return false;
  }
  if (args.isNone(10))
    return true;
  if (!readIntList(args, 10, "output_mask", mask, err))
    return false;
  if (mask.size() != 3) {
    err = "output_mask must be three bools, got " + intListString(mask);
    return false;
  }
  for (int i = 0; i < 3; ++i)
    a.mask[i] = mask[i] != 0;
  return true;
}

std::optional<std::array<int64_t, 2>> Conv2dArgs::pads(int d, int64_t k) const {
  if (!same)
    return std::array<int64_t, 2>{padding[d], padding[d]};
  std::optional<int64_t> total = checkedMul(dilation[d], k - 1);
  if (!total || *total < 0)
    return std::nullopt;
  return std::array<int64_t, 2>{*total / 2, *total - *total / 2};
}

std::optional<int64_t> Conv2dArgs::outputSize(int d, int64_t in,
                                              int64_t k) const {
  if (same)
    return pads(d, k) && in >= 0 && k > 0 ? std::optional<int64_t>(in)
                                          : std::nullopt;
  return checkedWindowOutput(in, k, stride[d], padding[d], dilation[d]);
}

/// The pooling window the max and average pools take: kernel_size,
/// stride and padding at arguments 1 to 3, then dilation at `dilationArg`
/// where the op has one (-1: the average pools' is 1), ceil_mode at
/// `ceilArg`.
template <size_t N>
static bool decodePoolWindow(const CallArgs &args, MaxPoolArgs<N> &a,
                             int dilationArg, unsigned ceilArg,
                             std::string &err) {
  if (args.isNone(1)) {
    err = "kernel_size is required";
    return false;
  }
  std::array<int64_t, N> zeros{}, ones;
  ones.fill(1);
  if (!readTuple<N>(args, 1, "kernel_size", a.kernel, zeros, err) ||
      !readTuple<N>(args, 2, "stride", a.stride, a.kernel, err,
                    /*emptyIsDefault=*/true) ||
      !readTuple<N>(args, 3, "padding", a.padding, zeros, err) ||
      (dilationArg >= 0 &&
       !readTuple<N>(args, dilationArg, "dilation", a.dilation, ones, err)) ||
      !readBool(args, ceilArg, "ceil_mode", a.ceil, false, err))
    return false;
  for (size_t d = 0; d < N; ++d) {
    if (a.kernel[d] <= 0 || a.stride[d] <= 0 || a.dilation[d] <= 0) {
      err = "kernel_size, stride and dilation must be positive, got " +
            intListString(a.kernel) + ", " + intListString(a.stride) + " and " +
            intListString(a.dilation);
      return false;
    }
    if (a.padding[d] < 0) {
      err = "padding must be non-negative, got " + intListString(a.padding);
      return false;
    }
    // pad <= k / 2 (not 2 * pad <= k, which wraps for a pad of 2^62).
    if (a.padding[d] > a.kernel[d] / 2) {
      err = "padding " + std::to_string(a.padding[d]) +
            " must be at most half of kernel " + std::to_string(a.kernel[d]);
      return false;
    }
  }
  return true;
}

bool traceir::decodeMaxPool2d(const CallArgs &args, MaxPool2dArgs &a,
                              std::string &err) {
  a = MaxPool2dArgs();
  return decodePoolWindow(args, a, 4, 5, err);
}

bool traceir::decodeMaxPool3d(const CallArgs &args, MaxPool3dArgs &a,
                              std::string &err) {
  a = MaxPool3dArgs();
  return decodePoolWindow(args, a, 4, 5, err);
}

bool traceir::decodeMaxPool2dBackward(const CallArgs &args, MaxPool2dArgs &a,
                                      std::string &err) {
  return decodeMaxPool2d(OffsetCallArgs(args, 1), a, err);
}

template <size_t N>
static bool decodeAvgPool(const CallArgs &args, AvgPoolArgs<N> &a,
                          std::string &err) {
  a = AvgPoolArgs<N>();
  if (!decodePoolWindow<N>(args, a, -1, 4, err) ||
      !readBool(args, 5, "count_include_pad", a.countIncludePad, true, err) ||
      !readInt(args, 6, "divisor_override", a.divisor, 0, err))
    return false;
  if (!args.isNone(6) && a.divisor == 0) {
    err = "divisor must be not zero";
    return false;
  }
  return true;
}

bool traceir::decodeAvgPool2dBackward(const CallArgs &args, AvgPool2dArgs &a,
                                      std::string &err) {
  return decodeAvgPool2d(OffsetCallArgs(args, 1), a, err);
}

bool traceir::decodeAvgPool2d(const CallArgs &args, AvgPool2dArgs &a,
                              std::string &err) {
  return decodeAvgPool(args, a, err);
}

bool traceir::decodeAvgPool3d(const CallArgs &args, AvgPool3dArgs &a,
                              std::string &err) {
  return decodeAvgPool(args, a, err);
}

template <size_t N>
std::optional<int64_t> MaxPoolArgs<N>::outputSize(int d, int64_t in) const {
  std::optional<int64_t> o = checkedWindowOutput(in, kernel[d], stride[d],
                                                 padding[d], dilation[d], ceil);
  return o && *o > 0 ? o : std::nullopt;
}
template struct traceir::MaxPoolArgs<2>;
template struct traceir::MaxPoolArgs<3>;

bool traceir::decodeCol2im(const CallArgs &args, std::span<const int64_t> shape,
                           Col2imArgs &a, std::string &err) {
  a = Col2imArgs();
  // int[2] each: one int, or a list of exactly two, as ATen's checks.
  const char *names[5] = {"output_size", "kernel_size", "dilation", "padding",
                          "stride"};
  std::array<int64_t, 2> *fields[5] = {&a.outputSize, &a.kernel, &a.dilation,
                                       &a.padding, &a.stride};
  for (unsigned i = 0; i < 5; ++i) {
    std::vector<int64_t> list;
    if (!readIntList(args, i + 1, names[i], list, err))
      return false;
    if (list.size() != 2 &&
        !(list.size() == 1 && args.scalar(i + 1).kind == Scalar::Kind::Int)) {
      err = std::string(names[i]) + " must have 2 values, got " +
            intListString(list);
      return false;
    }
    *fields[i] = {list.front(), list.back()};
  }
  auto pair = [](const std::array<int64_t, 2> &v) { return intListString(v); };
  if (a.kernel[0] <= 0 || a.kernel[1] <= 0) {
    err = "kernel size should be greater than zero, got " + pair(a.kernel);
    return false;
  }
  if (a.stride[0] <= 0 || a.stride[1] <= 0) {
    err = "stride should be greater than zero, got " + pair(a.stride);
    return false;
  }
  if (a.dilation[0] <= 0 || a.dilation[1] <= 0) {
    err = "dilation should be greater than zero, got " + pair(a.dilation);
    return false;
  }
  if (a.padding[0] < 0 || a.padding[1] < 0) {
    err = "padding should be non-negative, got " + pair(a.padding);
    return false;
  }
  int64_t rank = static_cast<int64_t>(shape.size());
  if ((rank != 2 && rank != 3) || shape[rank - 2] == 0 ||
      shape[rank - 1] == 0) {
    err = "expected a 2-D or 3-D (batch mode) input with nonzero non-batch "
          "dims, got " +
          intListString(shape);
    return false;
  }
  for (int d = 0; d < 2; ++d) {
    std::optional<int64_t> b = checkedWindowOutput(
        a.outputSize[d], a.kernel[d], a.stride[d], a.padding[d], a.dilation[d]);
    if (!b) {
      err = "output_size " + pair(a.outputSize) + " with kernel_size " +
            pair(a.kernel) + ", dilation " + pair(a.dilation) + ", padding " +
            pair(a.padding) + " and stride " + pair(a.stride) +
            " leaves no sliding block";
      return false;
    }
    a.blocks[d] = *b;
  }
  std::optional<int64_t> kernelArea = checkedMul(a.kernel[0], a.kernel[1]);
  std::optional<int64_t> blocks = checkedMul(a.blocks[0], a.blocks[1]);
  if (!kernelArea || !blocks) {
    err = "kernel_size " + pair(a.kernel) +
          " or the number of sliding "
          "blocks overflows int64";
    return false;
  }
  int64_t channels = shape[rank - 2], length = shape[rank - 1];
  if (channels >= 0 && channels % *kernelArea != 0) {
    err = "expected the input's dim " + std::to_string(rank - 2) + " (" +
          std::to_string(channels) +
          ") to be divisible by the product of kernel_size " + pair(a.kernel);
    return false;
  }
  if (length >= 0 && length != *blocks) {
    err = "expected the input's dim " + std::to_string(rank - 1) +
          " to be the number of sliding blocks " + std::to_string(a.blocks[0]) +
          " * " + std::to_string(a.blocks[1]) + " = " +
          std::to_string(*blocks) + ", got " + std::to_string(length);
    return false;
  }
  if (rank == 3)
    a.result.push_back(shape[0]);
  a.result.push_back(channels >= 0 ? channels / *kernelArea : -1);
  a.result.push_back(a.outputSize[0]);
  a.result.push_back(a.outputSize[1]);
  return true;
}

//===--- Padding and resampling -------------------------------------------===//

bool traceir::decodePad(const CallArgs &args, PadMode mode, int spatial,
                        std::span<const int64_t> shape, PadArgs &a,
                        std::string &err) {
  a = PadArgs();
  a.mode = mode;
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> pad;
  if (!readIntList(args, 1, mode == PadMode::Constant ? "pad" : "padding", pad,
                   err))
    return false;
  if (mode == PadMode::Constant) {
    if (pad.size() % 2 != 0) {
      err = "Length of pad must be even but instead it equals " +
            std::to_string(pad.size());
      return false;
    }
    if (static_cast<int64_t>(pad.size() / 2) > rank) {
      err = "Length of pad should be no more than twice the number of "
            "dimensions of the input. Pad length is " +
            std::to_string(pad.size()) + " while the input has " +
            std::to_string(rank) + " dimensions.";
      return false;
    }
    const Scalar &v = args.scalar(2);
    if (v.kind == Scalar::Kind::Int || v.kind == Scalar::Kind::Bool) {
      a.intValue = v.i;
      a.value = static_cast<double>(v.i);
    } else if (!readNumber(args, 2, "value", a.value, 0.0, err)) {
      return false;
    } else {
      a.valueIsInt = args.isNone(2);
    }
  } else {
    if (static_cast<int64_t>(pad.size()) != 2 * spatial) {
      err = "padding size is expected to be " + std::to_string(2 * spatial) +
            ", but got: " + std::to_string(pad.size());
      return false;
    }
    // An (N+1)-D input, or an (N+2)-D batch whose batch alone may be empty.
    bool batched = rank == spatial + 2;
    bool ok = batched || rank == spatial + 1;
    for (int64_t d = batched ? 1 : 0; ok && d < rank; ++d)
      ok = shape[d] != 0;
    if (!ok) {
      err = "Expected " + std::to_string(spatial + 1) + "D or " +
            std::to_string(spatial + 2) +
            "D (batch mode) tensor with possibly 0 batch size and other "
            "non-zero dimensions for input, but got: " +
            intListString(shape);
      return false;
    }
  }
  a.before.assign(rank, 0);
  a.after.assign(rank, 0);
  a.resultShape.assign(shape.begin(), shape.end());
  // pad[2i], pad[2i + 1] pad dim rank - 1 - i.
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = rank - 1 - static_cast<int64_t>(i), in = shape[d];
    int64_t l = pad[2 * i], r = pad[2 * i + 1];
    a.before[d] = l;
    a.after[d] = r;
    if (in < 0) {
      a.resultShape[d] = -1;
      continue;
    }
    if (mode == PadMode::Reflect && (l >= in || r >= in)) {
      err = "Argument #4: Padding size should be less than the corresponding "
            "input dimension, but got: padding (" +
            std::to_string(l) + ", " + std::to_string(r) + ") at dimension " +
            std::to_string(d) + " of input " + intListString(shape);
      return false;
    }
    std::optional<int64_t> lr = checkedAdd(l, r);
    std::optional<int64_t> out = lr ? checkedAdd(in, *lr) : lr;
    if (!out) {
      err = "padding (" + std::to_string(l) + ", " + std::to_string(r) +
            ") of dimension " + std::to_string(d) + " overflows int64";
      return false;
    }
    if (mode == PadMode::Constant && *out < 0) {
      err = "The input size " + std::to_string(in) +
            ", plus negative padding " + std::to_string(l) + " and " +
            std::to_string(r) +
            " resulted in a negative output size, which is invalid. Check "
            "dimension " +
            std::to_string(d) + " of your input.";
      return false;
    }
    if (mode != PadMode::Constant && *out < 1) {
      err = "input (size " + std::to_string(in) + " at dimension " +
            std::to_string(d) +
            ") is too small. Calculated output size: " + std::to_string(*out);
      return false;
    }
    a.resultShape[d] = *out;
  }
  return true;
}

bool traceir::decodeUpsample2d(const CallArgs &args, bool bilinear,
                               std::span<const int64_t> shape, UpsampleArgs &a,
                               std::string &err) {
  a = UpsampleArgs();
  unsigned scalesArg = bilinear ? 3 : 2;
  if (bilinear &&
      !readBool(args, 2, "align_corners", a.alignCorners, std::nullopt, err))
    return false;
  bool hasSize = !args.isNone(1), hasScales = !args.isNone(scalesArg);
  if (hasSize == hasScales) {
    err = "Must specify exactly one of output_size and scale_factors";
    return false;
  }
  if (shape.size() != 4) {
    err = "It is expected input_size equals to 4, but got size " +
          std::to_string(shape.size());
    return false;
  }
  if (hasSize) {
    std::vector<int64_t> size;
    if (!readIntList(args, 1, "output_size", size, err))
      return false;
    if (size.size() != 2) {
      err = "output_size must have 2 values, got " + intListString(size);
      return false;
    }
    a.size = {size[0], size[1]};
  } else {
    const Scalar &s = args.scalar(scalesArg);
    if (s.numbers.size() != 2) {
      err = "argument #" + std::to_string(scalesArg) +
            " (scale_factors) must be a list of 2 numbers";
      return false;
    }
    for (int d = 0; d < 2; ++d) {
      a.scales[d] = s.numbers[d];
      if (shape[2 + d] < 0) {
        a.size[d] = -1;
        continue;
      }
      // PyTorch's compute_output_size: the product, truncated.
      double odim = static_cast<double>(shape[2 + d]) * s.numbers[d];
      if (!(odim > -9.2e18 && odim < 9.2e18)) {
        err = "scale_factors " + numberString(s.numbers[d]) +
              " gives an output size out of range";
        return false;
      }
      a.size[d] = static_cast<int64_t>(odim);
    }
  }
  // A size from the scales of an unknown input size is unknown.
  bool bad = shape[2] == 0 || shape[3] == 0;
  for (int d = 0; d < 2; ++d)
    bad = bad || ((hasSize || shape[2 + d] >= 0) && a.size[d] <= 0);
  if (bad) {
    err = "Input and output sizes should be greater than 0, but got input "
          "(H: " +
          std::to_string(shape[2]) + ", W: " + std::to_string(shape[3]) +
          ") output (H: " + std::to_string(a.size[0]) +
          ", W: " + std::to_string(a.size[1]) + ")";
    return false;
  }
  // Every dim but the batch: PyTorch's "non-empty 4D data tensor".
  if (shape[1] == 0) {
    err = "Non-empty 4D data tensor expected but got a tensor with sizes " +
          intListString(shape);
    return false;
  }
  return true;
}

bool traceir::decodeRepeat(const CallArgs &args, std::span<const int64_t> shape,
                           std::vector<int64_t> &result, std::string &err) {
  std::vector<int64_t> repeats;
  if (!readIntList(args, 1, "repeats", repeats, err))
    return false;
  if (repeats.size() < shape.size()) {
    err = "Number of dimensions of repeat dims can not be smaller than "
          "number of dimensions of tensor";
    return false;
  }
  size_t lead = repeats.size() - shape.size();
  result.assign(repeats.size(), 0);
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) {
      err = "Trying to create tensor with negative dimension " +
            std::to_string(repeats[d]) + ": " + intListString(repeats);
      return false;
    }
    int64_t in = d < lead ? 1 : shape[d - lead];
    std::optional<int64_t> r = checkedMul(in, repeats[d]);
    if (in >= 0 && !r) {
      err = "repeats " + intListString(repeats) + " overflow int64";
      return false;
    }
    result[d] = in < 0 ? -1 : *r;
  }
  return true;
}

//===--- Reductions -------------------------------------------------------===//

bool traceir::decodeReducedDims(const CallArgs &args, unsigned i, int64_t rank,
                                DimArg form, std::vector<bool> &reduced,
                                std::string &err) {
  std::vector<int64_t> dims;
  bool none = args.isNone(i);
  if (!none && form == DimArg::One) {
    int64_t d;
    if (!readInt(args, i, "dim", d, std::nullopt, err))
      return false;
    dims.push_back(d);
  } else if (!none && !readIntList(args, i, "dim", dims, err)) {
    return false;
  }
  reduced.assign(rank, none || (dims.empty() && form == DimArg::List));
  for (int64_t d : dims) {
    int64_t w = views::wrapDim(d, rank);
    if (w < 0 || w >= std::max<int64_t>(rank, 1)) {
      err = "dim " + std::to_string(d) + " is out of range for a tensor of " +
            "rank " + std::to_string(rank);
      return false;
    }
    if (rank == 0)
      continue;
    if (reduced[w]) {
      err = "dim " + std::to_string(w) +
            " appears more than once in the list of dims";
      return false;
    }
    reduced[w] = true;
  }
  return true;
}

bool traceir::checkReducedNonEmpty(std::span<const int64_t> shape,
                                   const std::vector<bool> &reduced,
                                   std::string &err) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d] && shape[d] == 0) {
      err = "reduction dim " + std::to_string(d) +
            " has size 0, and a reduction without an identity needs at "
            "least one element";
      return false;
    }
  }
  return true;
}

bool traceir::decodeSort(const CallArgs &args, std::span<const int64_t> shape,
                         bool topk, SortArgs &a, std::string &err) {
  a = SortArgs();
  unsigned d = topk ? 2 : 1;
  if (!readInt(args, d, "dim", a.dim, -1, err) ||
      !readBool(args, d + 1, topk ? "largest" : "descending", a.descending,
                topk, err) ||
      (topk && !readBool(args, 4, "sorted", a.sorted, true, err)))
    return false;
  int64_t rank = static_cast<int64_t>(shape.size()),
          r = std::max<int64_t>(rank, 1);
  if (a.dim < -r || a.dim >= r) {
    err = "dim " + std::to_string(a.dim) +
          " is out of range for a tensor of rank " + std::to_string(rank);
    return false;
  }
  if (a.dim < 0)
    a.dim += r;
  int64_t size = rank ? shape[a.dim] : 1;
  if (!topk) {
    a.k = size;
    return true;
  }
  if (!readInt(args, 1, "k", a.k, std::nullopt, err))
    return false;
  if (a.k < 0 || (size >= 0 && a.k > size)) {
    err = "selected index k out of range: k = " + std::to_string(a.k) +
          " for a dim of size " + std::to_string(size);
    return false;
  }
  return true;
}

bool traceir::decodeLossReduction(const CallArgs &args, unsigned i,
                                  Reduction &r, std::string &err) {
  r = Reduction::Mean;
  if (args.isNone(i))
    return true;
  const Scalar &s = args.scalar(i);
  int64_t v = -1;
  if (s.kind == Scalar::Kind::String)
    v = s.s == "none" ? 0 : s.s == "mean" ? 1 : s.s == "sum" ? 2 : -1;
  else if (s.kind == Scalar::Kind::Int)
    v = s.i;
  if (v < 0 || v > 2) {
    err = "reduction must be 0/'none', 1/'mean' or 2/'sum'";
    return false;
  }
  r = static_cast<Reduction>(v);
  return true;
}

//===--- Dropout and batch norm -------------------------------------------===//

bool traceir::decodeDropout(const CallArgs &args, DropoutArgs &a,
                            std::string &err) {
  a = DropoutArgs();
  if (!readNumber(args, 1, "p", a.p, std::nullopt, err) ||
      !readBool(args, 2, "train", a.train, true, err))
    return false;
  if (!(a.p >= 0 && a.p <= 1)) { // NaN too
    err = "dropout probability must be in [0, 1], got " + numberString(a.p);
    return false;
  }
  return true;
}

bool traceir::decodeBatchNorm(const CallArgs &args, BatchNormArgs &a,
                              std::string &err) {
  a = BatchNormArgs();
  return readBool(args, 5, "training", a.training, false, err) &&
         readNumber(args, 6, "momentum", a.momentum, 0.1, err) &&
         readNumber(args, 7, "eps", a.eps, 1e-5, err);
}

//===--- Indexing ---------------------------------------------------------===//

namespace {
/// Wraps `dim` against `rank` (a 0-d tensor counts as rank 1).
bool wrapIndexingDim(int64_t &dim, int64_t rank, std::string &err) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) {
    err = "dim " + std::to_string(dim) +
          " is out of range for a tensor of rank " + std::to_string(rank);
    return false;
  }
  if (dim < 0)
    dim += r;
  return true;
}

/// Dim `d` of `s`, 1 past its rank (a 0-d tensor as [1]).
int64_t dimOr1(std::span<const int64_t> s, size_t d) {
  return d < s.size() ? s[d] : 1;
}
} // namespace

bool traceir::checkGatherScatter(std::span<const int64_t> self,
                                 std::span<const int64_t> index,
                                 const std::vector<int64_t> *src, int64_t &dim,
                                 std::string &err) {
  if (!wrapIndexingDim(dim, self.size(), err))
    return false;
  auto rank = [](size_t n) { return std::max<size_t>(n, 1); };
  if (rank(index.size()) != rank(self.size())) {
    err = "index must have self's rank " + std::to_string(self.size()) +
          ", got shape " + intListString(index);
    return false;
  }
  if (src && rank(src->size()) != rank(self.size())) {
    err = "src must have self's rank " + std::to_string(self.size()) +
          ", got shape " + intListString(*src);
    return false;
  }
  for (size_t d = 0; d < rank(self.size()); ++d) {
    int64_t i = dimOr1(index, d);
    if (i < 0)
      continue;
    int64_t s = dimOr1(self, d);
    if (int64_t(d) != dim && s >= 0 && i > s) {
      err = "index " + intListString(index) + " is larger than self " +
            intListString(self) + " outside dim " + std::to_string(dim);
      return false;
    }
    if (src && dimOr1(*src, d) >= 0 && i > dimOr1(*src, d)) {
      err = "index " + intListString(index) + " is larger than src " +
            intListString(*src);
      return false;
    }
  }
  return true;
}

bool traceir::indexSelectShape(std::span<const int64_t> self,
                               std::span<const int64_t> index, int64_t &dim,
                               std::vector<int64_t> &result, std::string &err) {
  if (!wrapIndexingDim(dim, self.size(), err))
    return false;
  if (index.size() > 1) {
    err = "index must be a vector or 0-d, got shape " + intListString(index);
    return false;
  }
  int64_t n = index.empty() ? 1 : index[0];
  result.assign(self.begin(), self.end());
  if (self.empty()) {
    if (n >= 0 && n != 1) {
      err = "index_select of a 0-d tensor takes one index, got " +
            std::to_string(n);
      return false;
    }
    return true;
  }
  result[dim] = n;
  return true;
}

bool traceir::decodeScatterReduce(const CallArgs &args, unsigned i,
                                  ScatterReduce &r, std::string &err) {
  // One comparison per name: a table of them would be a list of op names
  // outside Ops.def (test_op_list.py).
  const Scalar &s = args.scalar(i);
  bool known = s.kind == Scalar::Kind::String;
  if (known && s.s == "sum")
    r = ScatterReduce::Sum;
  else if (known && s.s == "prod")
    r = ScatterReduce::Prod;
  else if (known && s.s == "mean")
    r = ScatterReduce::Mean;
  else if (known && s.s == "amax")
    r = ScatterReduce::Amax;
  else if (known && s.s == "amin")
    r = ScatterReduce::Amin;
  else
    known = false;
  if (known)
    return true;
  return argError(err, i, "reduce",
                  "one of \"sum\", \"prod\", \"mean\", \"amax\", \"amin\"");
}

bool traceir::decodeIndexEntries(const CallArgs &args, unsigned first,
                                 unsigned end, int64_t rank,
                                 std::vector<int64_t> &dims, std::string &err) {
  dims.clear();
  if (int64_t(end) - int64_t(first) > rank) {
    err = "too many indices for a tensor of rank " + std::to_string(rank) +
          " (got " + std::to_string(end - first) + ")";
    return false;
  }
  for (unsigned i = first; i < end; ++i) {
    if (args.isTensor(i))
      dims.push_back(i - first);
    else if (!args.isNone(i))
      return argError(err, i, "indices", "a tensor or None");
  }
  if (dims.empty()) {
    err = "needs at least one index tensor";
    return false;
  }
  return true;
}

bool traceir::indexLayout(std::span<const int64_t> self,
                          std::span<const int64_t> dims,
                          const std::vector<std::vector<int64_t>> &indexShapes,
                          IndexLayout &layout, std::string &err) {
  std::vector<int64_t> &b = layout.broadcast;
  b.clear();
  for (const std::vector<int64_t> &s : indexShapes) {
    // NumPy's broadcasting, right-aligned; an unknown dim takes the other
    // side's size unless that is 1.
    std::vector<int64_t> r(std::max(b.size(), s.size()), 1);
    for (size_t i = 0; i < r.size(); ++i) {
      int64_t x = i < b.size() ? b[b.size() - 1 - i] : 1;
      int64_t y = i < s.size() ? s[s.size() - 1 - i] : 1;
      int64_t &o = r[r.size() - 1 - i];
      if (x == 1 || x == y || (x < 0 && y != 1))
        o = y;
      else if (y == 1 || y < 0)
        o = x;
      else {
        err = "the index tensors' shapes " + intListString(b) + " and " +
              intListString(s) + " cannot be broadcast together";
        return false;
      }
    }
    b = std::move(r);
  }
  bool adjacent = dims.back() - dims.front() + 1 == int64_t(dims.size());
  layout.position = adjacent ? dims.front() : 0;
  std::vector<int64_t> &r = layout.result;
  r.clear();
  for (int64_t d = 0; d < int64_t(self.size()); ++d) {
    if (d == layout.position)
      r.insert(r.end(), b.begin(), b.end());
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      r.push_back(self[d]);
  }
  return true;
}

bool traceir::decodeIndexPut(const CallArgs &args, unsigned n, unsigned &values,
                             bool &accumulate, std::string &err) {
  accumulate = false;
  values = n - 1;
  if (n >= 1 && !args.isTensor(n - 1)) {
    values = n - 2;
    if (!readBool(args, n - 1, "accumulate", accumulate, false, err))
      return false;
  }
  if (n < 3 || values < 2 || !args.isTensor(values)) {
    err = "takes self, indices, a values tensor and accumulate";
    return false;
  }
  return true;
}

/// native_group_norm's N, C, HxW, group (arguments 3 to 6) and, where
/// `eps`, eps (7): the forward's and, two arguments later, the backward's.
static bool decodeGroupNormSizes(const CallArgs &args, GroupNormArgs &a,
                                 bool eps, std::string &err) {
  a = GroupNormArgs();
  if (!readInt(args, 3, "N", a.N, std::nullopt, err) ||
      !readInt(args, 4, "C", a.C, std::nullopt, err) ||
      !readInt(args, 5, "HxW", a.HxW, std::nullopt, err) ||
      !readInt(args, 6, "group", a.group, std::nullopt, err) ||
      (eps && !readNumber(args, 7, "eps", a.eps, std::nullopt, err)))
    return false;
  if (a.N < 0 || a.C < 0 || a.HxW < 0) {
    err = "N, C and HxW must be non-negative, got " + std::to_string(a.N) +
          ", " + std::to_string(a.C) + " and " + std::to_string(a.HxW);
    return false;
  }
  if (a.group <= 0 || a.C % a.group != 0) {
    err = "Expected number of channels in input to be divisible by "
          "num_groups, but got C=" +
          std::to_string(a.C) + " and num_groups=" + std::to_string(a.group);
    return false;
  }
  return true;
}

bool traceir::decodeGroupNorm(const CallArgs &args, GroupNormArgs &a,
                              std::string &err) {
  return decodeGroupNormSizes(args, a, /*eps=*/true, err);
}

/// A backward op's output_mask at `i`: three bools (None: all three).
static bool readOutputMask(const CallArgs &args, unsigned i,
                           std::array<bool, 3> &mask, std::string &err) {
  mask = {true, true, true};
  if (args.isNone(i))
    return true;
  std::vector<int64_t> m;
  if (!readIntList(args, i, "output_mask", m, err))
    return false;
  if (m.size() != 3) {
    err = "output_mask must be three bools, got " + intListString(m);
    return false;
  }
  for (int k = 0; k < 3; ++k)
    mask[k] = m[k] != 0;
  return true;
}

bool traceir::decodeGroupNormBackward(const CallArgs &args, GroupNormArgs &a,
                                      std::array<bool, 3> &mask,
                                      std::string &err) {
  return decodeGroupNormSizes(OffsetCallArgs(args, 2), a, /*eps=*/false, err) &&
         readOutputMask(args, 9, mask, err);
}

bool traceir::decodeLayerNormBackward(const CallArgs &args,
                                      std::vector<int64_t> &normalized,
                                      std::array<bool, 3> &mask,
                                      std::string &err) {
  if (!readIntList(args, 2, "normalized_shape", normalized, err))
    return false;
  for (int64_t d : normalized)
    if (d < 0) {
      err = "normalized_shape must hold non-negative sizes, got " +
            intListString(normalized);
      return false;
    }
  return readOutputMask(args, 7, mask, err);
}

bool traceir::decodeEmbeddingDenseBackward(const CallArgs &args,
                                           EmbeddingBackwardArgs &a,
                                           std::string &err) {
  a = EmbeddingBackwardArgs();
  if (!readInt(args, 2, "num_weights", a.numWeights, std::nullopt, err) ||
      !readInt(args, 3, "padding_idx", a.paddingIdx, -1, err) ||
      !readBool(args, 4, "scale_grad_by_freq", a.scaleGradByFreq, false, err))
    return false;
  if (a.numWeights < 0) {
    err =
        "num_weights must be non-negative, got " + std::to_string(a.numWeights);
    return false;
  }
  return true;
}

//===--- Tensors made from scalars ----------------------------------------===//

bool traceir::decodeArange(const CallArgs &args, ArangeKind kind, ArangeArgs &a,
                           std::string &err) {
  a = ArangeArgs();
  static const char *names[] = {"start", "end", "step"};
  const Scalar *s[3];
  double d[3];
  bool allInts = true;
  for (unsigned i = 0; i < 3; ++i) {
    static const Scalar one = [] {
      Scalar v;
      v.kind = Scalar::Kind::Int;
      v.i = 1;
      return v;
    }();
    s[i] = i == 2 && args.isNone(2) ? &one : &args.scalar(i);
    if (args.isTensor(i) ||
        (s[i]->kind != Scalar::Kind::Int && s[i]->kind != Scalar::Kind::Float &&
         s[i]->kind != Scalar::Kind::Bool))
      return argError(err, i, names[i], "a number");
    allInts &= s[i]->kind != Scalar::Kind::Float;
    d[i] = s[i]->number();
  }
  if (kind == ArangeKind::Default)
    kind = allInts ? ArangeKind::Int64 : ArangeKind::Floating;
  a.kind = kind;
  // PyTorch's arange_check_bounds, on the numbers as doubles.
  if (!(d[2] > 0 || d[2] < 0)) {
    err = "step must be nonzero";
    return false;
  }
  if (!std::isfinite(d[0]) || !std::isfinite(d[1])) {
    err = "unsupported range: " + numberString(d[0]) + " -> " +
          numberString(d[1]);
    return false;
  }
  if (!((d[2] > 0 && d[1] >= d[0]) || (d[2] < 0 && d[1] <= d[0]))) {
    err = "upper bound and lower bound inconsistent with step sign";
    return false;
  }
  // An integer result steps in int64 from the numbers truncated, as
  // Scalar::to<int64_t>, which refuses what int64 cannot hold.
  int64_t x[3] = {0, 0, 0};
  if (kind != ArangeKind::Floating)
    for (unsigned i = 0; i < 3; ++i) {
      if (s[i]->kind != Scalar::Kind::Float) {
        x[i] = s[i]->kind == Scalar::Kind::Bool ? s[i]->b : s[i]->i;
        continue;
      }
      double t = std::trunc(d[i]);
      if (!(t >= -0x1p63 && t < 0x1p63)) {
        err = std::string(names[i]) + " " + numberString(d[i]) +
              " cannot be converted to int64 without overflow";
        return false;
      }
      x[i] = static_cast<int64_t>(t);
    }
  a.startI = x[0];
  a.stepI = x[2];
  a.startD = d[0];
  a.stepD = d[2];
  // The length: exact for int64 from ints (int64 holds more than a double
  // does), else ceil((end - start) / step) in double, as PyTorch's
  // compute_arange_size.
  if (kind == ArangeKind::Int64 && allInts) {
    int64_t sgn = (x[2] > 0) - (x[2] < 0);
    __int128 n = (static_cast<__int128>(x[1]) - x[0] + x[2] - sgn) / x[2];
    if (n < 0 || n > std::numeric_limits<int64_t>::max()) {
      err = "invalid size, possible overflow?";
      return false;
    }
    a.size = static_cast<int64_t>(n);
    return true;
  }
  double n = std::ceil((d[1] - d[0]) / d[2]);
  if (!(n >= 0 && n < 0x1p63)) {
    err = "invalid size, possible overflow?";
    return false;
  }
  a.size = static_cast<int64_t>(n);
  return true;
}

int64_t traceir::randpermMaxN(RandpermDtype dtype) {
  switch (dtype) {
  case RandpermDtype::U8:
    return 256;
  case RandpermDtype::I8:
    return 128;
  case RandpermDtype::I16:
    return 32768;
  case RandpermDtype::I32:
    return int64_t(1) << 31;
  case RandpermDtype::I64:
    return INT64_MAX;
  case RandpermDtype::F16:
    return (int64_t(1) << 11) + 1;
  case RandpermDtype::BF16:
    return (int64_t(1) << 8) + 1;
  case RandpermDtype::F32:
    return (int64_t(1) << 24) + 1;
  case RandpermDtype::F64:
    return (int64_t(1) << 53) + 1;
  }
  return 0;
}

const char *traceir::randpermDtypeName(RandpermDtype dtype) {
  static const char *const names[] = {"uint8",    "int8",    "int16",
                                      "int32",    "int64",   "float16",
                                      "bfloat16", "float32", "float64"};
  return names[static_cast<int>(dtype)];
}

//===--- Distances, bags of embeddings and grid sampling ------------------===//

namespace {
bool readDistanceP(const CallArgs &args, unsigned i, double &p,
                   std::optional<double> dflt, std::string &err) {
  if (!readNumber(args, i, "p", p, dflt, err))
    return false;
  if (!(p >= 0)) {
    err = "supports non-negative p values only, got p = " + numberString(p);
    return false;
  }
  return true;
}
} // namespace

bool traceir::decodeCdist(const CallArgs &args, DistanceArgs &a,
                          std::string &err) {
  a = DistanceArgs();
  if (!readDistanceP(args, 2, a.p, std::nullopt, err) ||
      !readInt(args, 3, "compute_mode", a.computeMode, 0, err))
    return false;
  if (a.computeMode < 0 || a.computeMode > 2) {
    err =
        "possible modes: None, 1, 2, but was: " + std::to_string(a.computeMode);
    return false;
  }
  return true;
}

bool traceir::decodePdist(const CallArgs &args, DistanceArgs &a,
                          std::string &err) {
  a = DistanceArgs();
  return readDistanceP(args, 1, a.p, 2.0, err);
}

bool traceir::decodeEmbeddingBag(const CallArgs &args, EmbeddingBagArgs &a,
                                 std::string &err) {
  a = EmbeddingBagArgs();
  bool flag = false;
  if (!readBool(args, 3, "scale_grad_by_freq", flag, false, err) ||
      !readInt(args, 4, "mode", a.mode, 0, err) ||
      !readBool(args, 5, "sparse", flag, false, err) ||
      !readBool(args, 7, "include_last_offset", a.includeLastOffset, false,
                err) ||
      !readInt(args, 8, "padding_idx", a.paddingIdx, -1, err))
    return false;
  if (a.mode < 0 || a.mode > 2) {
    err = "mode must be 0 (sum), 1 (mean) or 2 (max), got " +
          std::to_string(a.mode);
    return false;
  }
  a.hasPerSampleWeights = args.isTensor(6);
  if (!a.hasPerSampleWeights && !args.isNone(6)) {
    err = "argument #6 (per_sample_weights) must be a tensor or None";
    return false;
  }
  if (a.hasPerSampleWeights && a.mode != 0) {
    err = "per_sample_weights only supported with mode='sum'";
    return false;
  }
  return true;
}

bool traceir::decodeGridSampler(const CallArgs &args, GridSamplerArgs &a,
                                std::string &err) {
  a = GridSamplerArgs();
  if (!readInt(args, 2, "interpolation_mode", a.interpolation, std::nullopt,
               err) ||
      !readInt(args, 3, "padding_mode", a.padding, std::nullopt, err) ||
      !readBool(args, 4, "align_corners", a.alignCorners, std::nullopt, err))
    return false;
  if (a.interpolation < 0 || a.interpolation > 2) {
    err = "interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 "
          "(bicubic), got " +
          std::to_string(a.interpolation);
    return false;
  }
  if (a.padding < 0 || a.padding > 2) {
    err = "padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), "
          "got " +
          std::to_string(a.padding);
    return false;
  }
  return true;
}
