//===- ConvolutionArgs.cpp - aten.convolution's arguments -----------------===//

#include "TraceIR/Support/ConvolutionArgs.h"
#include "TraceIR/Support/CheckedMath.h"

using namespace traceir;

int traceir::convolutionSpatialDims(int64_t weightRank, std::string &err) {
  if (weightRank >= 3 && weightRank <= 5)
    return static_cast<int>(weightRank - 2);
  err = "weight must have 3, 4 or 5 dims ([out, in / groups, *kernel], for "
        "1 to 3 spatial dims), got " +
        std::to_string(weightRank);
  return 0;
}

/// One of stride, padding, dilation, output_padding: `spatial` ints, or one
/// for all of them (PyTorch's expand_param_if_needed).
static bool readWindowList(const CallArgs &args, unsigned i, const char *what,
                           int spatial, std::vector<int64_t> &v,
                           std::string &err) {
  if (!readIntList(args, i, what, v, err))
    return false;
  if (v.size() == 1)
    v.assign(spatial, v.front());
  if (static_cast<int>(v.size()) != spatial) {
    err = std::string(what) + " must have 1 or " + std::to_string(spatial) +
          " values for " + std::to_string(spatial) + " spatial dims, got " +
          intListString(v);
    return false;
  }
  return true;
}

bool traceir::decodeConvolution(const CallArgs &args, int spatial,
                                ConvolutionArgs &a, std::string &err) {
  a = ConvolutionArgs();
  a.spatial = spatial;
  if (!readWindowList(args, 3, "stride", spatial, a.stride, err) ||
      !readWindowList(args, 4, "padding", spatial, a.padding, err) ||
      !readWindowList(args, 5, "dilation", spatial, a.dilation, err) ||
      !readBool(args, 6, "transposed", a.transposed, std::nullopt, err) ||
      !readWindowList(args, 7, "output_padding", spatial, a.outputPadding,
                      err) ||
      !readInt(args, 8, "groups", a.groups, std::nullopt, err))
    return false;
  for (int d = 0; d < spatial; ++d) {
    if (a.stride[d] <= 0) {
      err = "non-positive stride is not supported, got " +
            intListString(a.stride);
      return false;
    }
    if (a.dilation[d] <= 0) {
      err = "dilation should be greater than zero, got " +
            intListString(a.dilation);
      return false;
    }
    if (a.padding[d] < 0) {
      err =
          "negative padding is not supported, got " + intListString(a.padding);
      return false;
    }
    if (a.outputPadding[d] < 0) {
      err = "negative output_padding is not supported, got " +
            intListString(a.outputPadding);
      return false;
    }
    // Only a transposed convolution reads output_padding; PyTorch bounds it
    // so that the extra outputs still come from the last input position.
    if (a.transposed && a.outputPadding[d] >= a.stride[d] &&
        a.outputPadding[d] >= a.dilation[d]) {
      err = "output padding must be smaller than either stride or dilation, "
            "got output_padding " +
            intListString(a.outputPadding) + ", stride " +
            intListString(a.stride) + " and dilation " +
            intListString(a.dilation);
      return false;
    }
  }
  if (a.groups <= 0) {
    err =
        "non-positive groups is not supported, got " + std::to_string(a.groups);
    return false;
  }
  return true;
}

std::optional<int64_t> ConvolutionArgs::outputSize(int d, int64_t in,
                                                   int64_t k) const {
  if (!transposed)
    return checkedWindowOutput(in, k, stride[d], padding[d], dilation[d]);
  if (in < 0 || k <= 0)
    return std::nullopt;
  // (in - 1) * s - 2p + d(k - 1) + output_padding + 1, every step checked.
  std::optional<int64_t> r = checkedMul(in - 1, stride[d]);
  std::optional<int64_t> twoPad = checkedMul(padding[d], 2);
  std::optional<int64_t> span = checkedMul(dilation[d], k - 1);
  if (r && twoPad)
    r = checkedSub(*r, *twoPad);
  if (r && span)
    r = checkedAdd(*r, *span);
  if (r)
    r = checkedAdd(*r, outputPadding[d]);
  if (r)
    r = checkedAdd(*r, 1);
  if (!r || !twoPad || !span || *r < 0)
    return std::nullopt;
  return r;
}

bool traceir::convolutionShape(const ConvolutionArgs &a,
                               std::span<const int64_t> x,
                               std::span<const int64_t> w,
                               std::optional<int64_t> biasSize,
                               std::vector<int64_t> &result, std::string &err) {
  int spatial = a.spatial;
  if (static_cast<int>(w.size()) != spatial + 2 || x.size() != w.size()) {
    err = "expected a " + std::to_string(w.size()) + "-D input [N, C, *] for " +
          "the " + std::to_string(w.size()) + "-D weight " + intListString(w) +
          ", got " + intListString(x);
    return false;
  }
  auto known = [](int64_t v) { return v >= 0; };
  // The weight's channels: non-transposed [O, C / groups, *], transposed
  // [C, O / groups, *].
  int64_t inChannels = x[1], outChannels = -1;
  if (known(w[0]) && w[0] % a.groups != 0) {
    err = "weight " + intListString(w) + " has " + std::to_string(w[0]) +
          (a.transposed ? " input" : " output") +
          " channels, not divisible by groups=" + std::to_string(a.groups);
    return false;
  }
  std::optional<int64_t> wanted =
      a.transposed ? std::optional<int64_t>(w[0])
                   : (known(w[1]) ? checkedMul(w[1], a.groups)
                                  : std::optional<int64_t>(-1));
  if (!wanted) {
    err = "weight " + intListString(w) +
          " with groups=" + std::to_string(a.groups) +
          " overflows its channel count";
    return false;
  }
  if (known(inChannels) && known(*wanted) && inChannels != *wanted) {
    err = "input " + intListString(x) + " has " + std::to_string(inChannels) +
          " channels but weight " + intListString(w) +
          " with groups=" + std::to_string(a.groups) +
          (a.transposed ? " (transposed)" : "") + " expects " +
          std::to_string(*wanted);
    return false;
  }
  if (!a.transposed) {
    outChannels = w[0];
  } else if (known(w[1])) {
    std::optional<int64_t> o = checkedMul(w[1], a.groups);
    if (!o) {
      err = "weight " + intListString(w) +
            " with groups=" + std::to_string(a.groups) +
            " overflows its channel count";
      return false;
    }
    outChannels = *o;
  }
  if (biasSize && known(*biasSize) && known(outChannels) &&
      *biasSize != outChannels) {
    err = "bias must have " + std::to_string(outChannels) +
          " elements (the output channels), got " + std::to_string(*biasSize);
    return false;
  }
  result.assign(
      {known(x[0]) ? x[0] : -1, known(outChannels) ? outChannels : -1});
  for (int d = 0; d < spatial; ++d) {
    int64_t in = x[2 + d], k = w[2 + d];
    if (!known(in) || !known(k)) {
      result.push_back(-1);
      continue;
    }
    if (k == 0) {
      err = "weight " + intListString(w) + " has an empty kernel";
      return false;
    }
    std::optional<int64_t> o = a.outputSize(d, in, k);
    if (!o) {
      err = a.transposed
                ? "the transposed convolution of input " + intListString(x) +
                      " by weight " + intListString(w) + " with stride " +
                      intListString(a.stride) + ", padding " +
                      intListString(a.padding) + ", dilation " +
                      intListString(a.dilation) + " and output_padding " +
                      intListString(a.outputPadding) +
                      " has a negative or overflowing output size"
                : "kernel " + intListString(w) + " (dilation " +
                      intListString(a.dilation) + ", padding " +
                      intListString(a.padding) +
                      ") is larger than the padded input " + intListString(x) +
                      ", or its size overflows int64";
      return false;
    }
    result.push_back(*o);
  }
  return true;
}
