//===- KernelArgs.h - Reading scalar arguments in kernels -------*- C++ -*-===//
//
// Scalar-argument readers shared by the CPU and CUDA host halves of the
// kernels, so both accept the same arguments with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_KERNELARGS_H
#define TRACEIR_RUNTIME_KERNELARGS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/SortRows.h"
#include "TraceIR/Support/OpArgs.h"

namespace traceir {

/// A kernel's call as the argument decoders of Support/OpArgs.h read it,
/// so that kernels decode with the registry's own decoders.
class KernelCallArgs final : public CallArgs {
public:
  explicit KernelCallArgs(const KernelContext &ctx) : ctx(ctx) {}
  bool isTensor(unsigned i) const override { return ctx.isTensor(i); }
  const Scalar &scalar(unsigned i) const override { return ctx.scalar(i); }

private:
  const KernelContext &ctx;
};

/// Runs decoder `decode` (decodeConv2d, ...) on the call's arguments and
/// `a` (the decoder's parameters between the call and its message), failing
/// the call with the decoder's message when it refuses them.
template <typename Decoder, typename... A>
bool decodeArgs(KernelContext &ctx, Decoder decode, A &&...a) {
  std::string why;
  if (decode(KernelCallArgs(ctx), std::forward<A>(a)..., why))
    return true;
  ctx.fail(why);
  return false;
}

/// A bool flag (a bool, or an int read as nonzero); `dflt` when None/absent.
bool boolArg(KernelContext &ctx, unsigned i, bool dflt);
/// A number; `dflt` when None/absent.
double numberArg(KernelContext &ctx, unsigned i, double dflt);
/// An output_mask: a list of three bools (the build decodes bools as 0/1
/// ints). None means all three. Fails the call otherwise.
bool outputMask(KernelContext &ctx, unsigned i, bool mask[3]);
/// Fails the call unless result `r` has `shape`. Kernels whose result
/// shapes follow from their operands check them: type inference does for a
/// verified graph, but a saved executable states its own result types, and
/// the kernels write by them.
bool checkResultShape(KernelContext &ctx, unsigned r,
                      std::span<const int64_t> shape);
/// var(self, dim, correction, keepdim): the correction (1 when None), the
/// divisor of a group of `n` then max(0, n - correction), as PyTorch's.
bool varCorrection(KernelContext &ctx, double &correction);
/// cumsum(self, dim, dtype): the wrapped `dim` (0 for a 0-d input). Fails
/// the call unless result 0 has the input's shape.
bool cumsumArgs(KernelContext &ctx, int64_t &dim);
/// arange(start, end, step, dtype, ...): decodeArange for result 0's
/// dtype (bool refused, as PyTorch's), which must be 1-D of its length.
bool arangeArgs(KernelContext &ctx, ArangeArgs &a);
/// max.dim/min.dim(self, dim, keepdim): fails the call unless it has two
/// results (values, indices) and a dim (not None); reductionArgs reads the
/// rest.
bool valuesIndicesArgs(KernelContext &ctx);
/// sort(self, dim, descending) and topk(self, k, dim, largest, sorted):
/// the rows to sort (SortRows.h), decoded by decodeSort. Fails the call
/// unless it has two results (values, indices) of self's shape with k
/// along dim, values in self's dtype and indices int64, or where the
/// tensors' rank is beyond what SortRows holds.
bool sortArgs(KernelContext &ctx, bool topk, SortRows &rows);
/// rand and randn: fails the call unless result 0 is floating.
bool randomResult(KernelContext &ctx);
/// randperm(n, dtype, ...): `n`, checked against result 0 ([n], not bool)
/// and randpermMaxN of its dtype (Support/OpArgs.h).
bool randpermArgs(KernelContext &ctx, int64_t &n);
/// cat(tensors..., dim): the number of tensors `n` and the wrapped `dim`
/// of result 0. Fails the call unless every input but PyTorch's legacy
/// empty [0] matches the result in rank and in every dim but `dim`, and the
/// inputs' sizes along `dim` add up to the result's.
bool catArgs(KernelContext &ctx, unsigned &n, int64_t &dim);
/// Fails the call unless `out` has one element per group of `in` that
/// `reduced` leaves (with or without keepdim's 1s).
bool checkReducedResult(KernelContext &ctx, const Tensor &in,
                        const std::vector<bool> &reduced, const Tensor &out);
/// The dims a reduction over dims (sum, mean, amax, amin, prod, any)
/// reduces: its dim argument 1 read as `form` says, with `out` checked by
/// checkReducedResult and, where `needsElement` (amax and amin, which have
/// no identity), every reduced dim checked nonempty. The CPU and CUDA host
/// halves both read their calls with it.
bool reductionArgs(KernelContext &ctx, const Tensor &in, const Tensor &out,
                   DimArg form, bool needsElement, std::vector<bool> &reduced);

} // namespace traceir

#endif // TRACEIR_RUNTIME_KERNELARGS_H
