//===- OpArgs.cpp - Each op family's ATen arguments, decoded once ---------===//

#include "TraceIR/Support/OpArgs.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <cmath>

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

bool traceir::readPair(const CallArgs &args, unsigned i, const char *what,
                       std::array<int64_t, 2> &v, std::array<int64_t, 2> dflt,
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
  if (list.empty() || list.size() > 2) {
    err = std::string(what) + " must have 1 or 2 values, got " +
          intListString(list);
    return false;
  }
  v = {list.front(), list.back()};
  return true;
}

//===--- Convolution and pooling ------------------------------------------===//

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
  if (!readPair(args, 3, "stride", a.stride, {1, 1}, err) ||
      !readPair(args, 5, "dilation", a.dilation, {1, 1}, err) ||
      !readInt(args, 6, "groups", a.groups, 1, err))
    return false;
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

/// The pooling window both max_pool2d and avg_pool2d take: kernel_size,
/// stride and padding at arguments 1 to 3, then dilation at `dilationArg`
/// where the op has one (-1: avg_pool2d's is 1), ceil_mode at `ceilArg`.
static bool decodePoolWindow(const CallArgs &args, MaxPool2dArgs &a,
                             int dilationArg, unsigned ceilArg,
                             std::string &err) {
  if (args.isNone(1)) {
    err = "kernel_size is required";
    return false;
  }
  if (!readPair(args, 1, "kernel_size", a.kernel, {0, 0}, err) ||
      !readPair(args, 2, "stride", a.stride, a.kernel, err,
                /*emptyIsDefault=*/true) ||
      !readPair(args, 3, "padding", a.padding, {0, 0}, err) ||
      (dilationArg >= 0 &&
       !readPair(args, dilationArg, "dilation", a.dilation, {1, 1}, err)) ||
      !readBool(args, ceilArg, "ceil_mode", a.ceil, false, err))
    return false;
  for (int d = 0; d < 2; ++d) {
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

bool traceir::decodeAvgPool2d(const CallArgs &args, AvgPool2dArgs &a,
                              std::string &err) {
  a = AvgPool2dArgs();
  if (!decodePoolWindow(args, a, -1, 4, err) ||
      !readBool(args, 5, "count_include_pad", a.countIncludePad, true, err) ||
      !readInt(args, 6, "divisor_override", a.divisor, 0, err))
    return false;
  if (!args.isNone(6) && a.divisor == 0) {
    err = "divisor must be not zero";
    return false;
  }
  return true;
}

std::optional<int64_t> MaxPool2dArgs::outputSize(int d, int64_t in) const {
  std::optional<int64_t> o = checkedWindowOutput(in, kernel[d], stride[d],
                                                 padding[d], dilation[d], ceil);
  return o && *o > 0 ? o : std::nullopt;
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
