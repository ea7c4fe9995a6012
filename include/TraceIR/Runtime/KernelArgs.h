//===- KernelArgs.h - Reading scalar arguments in kernels -------*- C++ -*-===//
//
// Scalar-argument readers shared by the CPU and CUDA host halves of the
// kernels, so both accept the same arguments with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_KERNELARGS_H
#define TRACEIR_RUNTIME_KERNELARGS_H

#include "TraceIR/Runtime/Executable.h"

namespace traceir {

/// A bool flag (a bool, or an int read as nonzero); `dflt` when None/absent.
bool boolArg(KernelContext &ctx, unsigned i, bool dflt);
/// A number; `dflt` when None/absent.
double numberArg(KernelContext &ctx, unsigned i, double dflt);
/// An output_mask: a list of three bools (the build decodes bools as 0/1
/// ints). None means all three. Fails the call otherwise.
bool outputMask(KernelContext &ctx, unsigned i, bool mask[3]);
/// A (h, w) pair argument: None (or, when `emptyIsDefault`, an empty list)
/// gives `dflt`; one int applies to both dims. Fails the call otherwise.
bool pairArg(KernelContext &ctx, unsigned i, const char *what,
             const int64_t dflt[2], int64_t out[2],
             bool emptyIsDefault = false);

/// A loss reduction: 0/'none', 1/'mean' (the default) or 2/'sum'.
enum class Reduction { None = 0, Mean = 1, Sum = 2 };
bool reductionArg(KernelContext &ctx, unsigned i, Reduction &r);

/// The dims of `in` a reduction's dim argument `i` marks (sum, mean, amax):
/// an int list, negative dims wrapped; None or empty marks every dim. A
/// 0-d tensor has no dim to mark.
std::vector<bool> reducedDimsArg(KernelContext &ctx, unsigned i,
                                 const Tensor &in);

/// Fails the call unless result `r` has `shape`. Kernels whose result
/// shapes follow from their operands check them: type inference does for a
/// verified graph, but a saved executable states its own result types, and
/// the kernels write by them.
bool checkResultShape(KernelContext &ctx, unsigned r,
                      std::span<const int64_t> shape);
/// cat(tensors..., dim): the number of tensors `n` and the wrapped `dim`
/// of result 0. Fails the call unless every input but PyTorch's legacy
/// empty [0] matches the result in rank and in every dim but `dim`, and the
/// inputs' sizes along `dim` add up to the result's.
bool catArgs(KernelContext &ctx, unsigned &n, int64_t &dim);
/// Fails the call unless `out` has one element per group of `in` that
/// `reduced` leaves (with or without keepdim's 1s).
bool checkReducedResult(KernelContext &ctx, const Tensor &in,
                        const std::vector<bool> &reduced, const Tensor &out);

} // namespace traceir

#endif // TRACEIR_RUNTIME_KERNELARGS_H
