//===- ConvolutionArgs.h - aten.convolution's arguments --------*- C++ -*-===//
//
// convolution(input, weight, bias, stride, padding, dilation, transposed,
// output_padding, groups), the Core ATen convolution of 1, 2 or 3 spatial
// dims, transposed or not, decoded once: the registry's inference, the CPU
// and the CUDA host code call these, so the three accept the same calls,
// compute the same result shape (overflow-checked) and refuse the rest with
// the same message. conv2d keeps its own decoder (OpArgs.h): its padding
// may be 'same' or 'valid', which aten.convolution's never is.
//
// Plain C++ (the runtime-only build has it).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_CONVOLUTIONARGS_H
#define TRACEIR_SUPPORT_CONVOLUTIONARGS_H

#include "TraceIR/Support/OpArgs.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace traceir {

/// The window of a convolution of `spatial` dims: one entry per spatial dim
/// in each list (PyTorch expands a one-element list to all of them).
struct ConvolutionArgs {
  int spatial = 0;
  std::vector<int64_t> stride, padding, dilation, outputPadding;
  bool transposed = false;
  int64_t groups = 1;

  /// The output size along spatial dim `d` of an input of size `in` and a
  /// kernel of size `k`: (in + 2p - d(k - 1) - 1) / s + 1, or transposed
  /// (in - 1)s - 2p + d(k - 1) + output_padding + 1. nullopt when the
  /// arithmetic overflows or the size would be negative (the kernel is
  /// larger than the padded input).
  std::optional<int64_t> outputSize(int d, int64_t in, int64_t k) const;
};

/// Decodes arguments 3 to 8 of a convolution whose weight has `spatial` + 2
/// dims (1 <= spatial <= 3): stride and dilation positive, padding and
/// output_padding non-negative, output_padding smaller than the stride or
/// the dilation when transposed (as PyTorch), groups positive.
bool decodeConvolution(const CallArgs &args, int spatial, ConvolutionArgs &a,
                       std::string &err);

/// The result shape of convolution `a` of an input `x` by a weight `w`
/// (a negative dim is unknown, and gives -1 where the result's depends on
/// it), with a bias of `biasSize` elements where there is one: the input
/// [N, C, *] of w's rank; w [O, C / groups, *] or, transposed, [C, O /
/// groups, *]; channels that agree with groups; a bias of O. Decodes
/// `a.spatial` from w; the other fields must have been decoded for it
/// (call decodeConvolution with w's rank - 2 first).
bool convolutionShape(const ConvolutionArgs &a, std::span<const int64_t> x,
                      std::span<const int64_t> w,
                      std::optional<int64_t> biasSize,
                      std::vector<int64_t> &result, std::string &err);

/// The number of spatial dims of a convolution whose weight has rank
/// `weightRank`, or 0 (with `err` set) when it is not 3, 4 or 5.
int convolutionSpatialDims(int64_t weightRank, std::string &err);

/// Whether convolution and conv2d take operands of a dtype called `name`
/// that is `floating` or `int64`: every floating dtype and int64, which
/// PyTorch's CPU kernels take in every configuration (the narrower
/// integers only where no dilated or transposed kernel runs, which
/// TraceIR does not follow). Sets `err` when not.
inline bool convolutionTakesDtype(bool floating, bool int64,
                                  const std::string &name, std::string &err) {
  if (floating || int64)
    return true;
  err = "convolution supports floating-point dtypes and int64, got " + name;
  return false;
}

} // namespace traceir

#endif // TRACEIR_SUPPORT_CONVOLUTIONARGS_H
