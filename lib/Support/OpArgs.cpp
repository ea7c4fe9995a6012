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

bool traceir::decodeMaxPool2d(const CallArgs &args, MaxPool2dArgs &a,
                              std::string &err) {
  a = MaxPool2dArgs();
  if (args.isNone(1)) {
    err = "kernel_size is required";
    return false;
  }
  if (!readPair(args, 1, "kernel_size", a.kernel, {0, 0}, err) ||
      !readPair(args, 2, "stride", a.stride, a.kernel, err,
                /*emptyIsDefault=*/true) ||
      !readPair(args, 3, "padding", a.padding, {0, 0}, err) ||
      !readPair(args, 4, "dilation", a.dilation, {1, 1}, err) ||
      !readBool(args, 5, "ceil_mode", a.ceil, false, err))
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

std::optional<int64_t> MaxPool2dArgs::outputSize(int d, int64_t in) const {
  std::optional<int64_t> o = checkedWindowOutput(in, kernel[d], stride[d],
                                                 padding[d], dilation[d], ceil);
  return o && *o > 0 ? o : std::nullopt;
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
