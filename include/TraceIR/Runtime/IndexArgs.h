//===- IndexArgs.h - Reading the indexing ops' calls ------------*- C++ -*-===//
//
// The host reading the CPU and CUDA kernels of the indexing ops share
// (CPU/Indexing.cpp, CUDA/Indexing.cpp): each call read and checked, with
// Support/OpArgs.h's shape rules, into the Indexing.h map its kernels run
// and the index tensors to range-check before running it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_INDEXARGS_H
#define TRACEIR_RUNTIME_INDEXARGS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/Indexing.h"
#include "TraceIR/Runtime/MaskedScatter.h"

#include <vector>

namespace traceir {

/// One index tensor's range check: every element of `t` must address dim
/// `dim` of `size` elements (from the end too where `negative`).
struct IxCheck {
  const Tensor *t = nullptr;
  int64_t dim = 0, size = 0;
  bool negative = false;
};

/// An indexing call read and checked: the map its kernels run over
/// `numel` points, and the index tensors to check first (all of them pass
/// when the space is empty: nothing is read then, as in PyTorch).
struct IndexCall {
  IxMap map;
  int64_t numel = 0;
  std::vector<IxCheck> checks;
  /// A scatter: the result starts as a copy of self (argument 0) and is the
  /// map's base; then, for scatter_reduce's mean, each element is divided
  /// by its count (ixMeanElement over the result's elements).
  bool scatter = false, mean = false;
};

/// index_select(self, dim, index), gather(self, dim, index, sparse_grad),
/// index.Tensor(self, indices...): gathers into the (contiguous) result.
bool indexSelectCall(KernelContext &ctx, IndexCall &call);
bool gatherCall(KernelContext &ctx, IndexCall &call);
bool indexCall(KernelContext &ctx, IndexCall &call);

/// Which scatter a kernel runs.
enum class ScatterOp { Scatter, ScatterAdd, ScatterReduce };
/// scatter(self, dim, index, src or value), scatter_add(self, dim, index,
/// src), scatter_reduce(self, dim, index, src, reduce, include_self) and
/// index_put(self, indices..., values, accumulate): scatters into the
/// result. scatter_reduce's counts are kernel scratch, to be zeroed.
bool scatterCall(KernelContext &ctx, ScatterOp op, IndexCall &call);
bool indexPutCall(KernelContext &ctx, IndexCall &call);

/// Fails the call on index `value` of a check, in PyTorch's words.
void failIndexRange(KernelContext &ctx, const IxCheck &check, int64_t value);

/// slice_scatter(self, src, dim, start, end, step) and select_scatter(self,
/// src, dim, index): `view` is the part of the result src is copied into
/// (after self is), checked to have src's shape.
bool sliceScatterView(KernelContext &ctx, Tensor &view);
bool selectScatterView(KernelContext &ctx, Tensor &view);

/// masked_scatter(self, mask, source): `L` over the (contiguous) result,
/// self and the bool mask broadcast to it, source of self's dtype. How many
/// Trues the mask has, and so whether source has enough elements, each
/// device counts itself (failMaskedScatterCount).
bool maskedScatterCall(KernelContext &ctx, MaskedScatterLaunch &L);
/// Fails the call: the mask has `trues` True positions, source fewer.
void failMaskedScatterCount(KernelContext &ctx, int64_t trues,
                            int64_t sourceNumel);

} // namespace traceir

#endif // TRACEIR_RUNTIME_INDEXARGS_H
