//===- Indexing.cpp - Gathers and scatters on the CPU ---------------------===//
//
// index_select, gather, index.Tensor (gathers) and scatter, scatter_add,
// scatter_reduce, index_put (scatters): IndexArgs.cpp reads the call into an
// Indexing.h map, every index is range-checked first, then the map's
// element functions (the CUDA kernels' own) run in a loop; a gather by
// rows of its last dim (ixGatherRow, the same elements). slice_scatter and
// select_scatter copy self, then src into the view of the part it replaces.
// masked_scatter runs MaskedScatter.h's element function in order.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/IndexArgs.h"

#include <cstring>

using namespace traceir;

namespace {
/// Fails the call at the first index out of range (row-major, the index
/// tensors in order).
bool checkIndices(KernelContext &ctx, const IndexCall &call) {
  if (call.numel == 0)
    return true;
  for (const IxCheck &c : call.checks) {
    const auto *v =
        static_cast<const int64_t *>(cpu::gatherAs(ctx, *c.t, DType::I64));
    if (!v)
      return false;
    for (int64_t i = 0, n = c.t->numel(); i < n; ++i)
      if (!ixIndexInRange(v[i], c.size, c.negative)) {
        failIndexRange(ctx, c, v[i]);
        return false;
      }
  }
  return true;
}

/// Runs a call read by one of IndexArgs.h's readers (false when it failed).
void run(KernelContext &ctx, bool read, IndexCall &call) {
  if (!read || !checkIndices(ctx, call))
    return;
  const IxMap &m = call.map;
  if (!call.scatter) {
    cpu::forRows(
        call.numel, m.rank, m.rank ? m.shape[m.rank - 1] : 1,
        [&](int64_t r) { ixGatherRow(m, r); },
        [&](int64_t k) { ixGatherElement(m, k); });
    return;
  }
  Tensor &out = ctx.result(0);
  cpu::copyTensor(ctx.tensor(0), out);
  if (m.counts)
    std::memset(m.counts, 0, out.numel() * sizeof(int64_t));
  if (call.numel == 0)
    return;
  int64_t lines, perLine;
  ixLines(m, lines, perLine);
  for (int64_t l = 0; l < lines; ++l)
    ixScatterLine(m, l, perLine);
  if (call.mean)
    for (int64_t i = 0, n = out.numel(); i < n; ++i)
      ixMeanElement(m, i);
}

/// slice_scatter and select_scatter: self, then src over `view`.
void copyInto(KernelContext &ctx, bool read, Tensor &view) {
  if (!read)
    return;
  cpu::copyTensor(ctx.tensor(0), ctx.result(0));
  cpu::copyTensor(ctx.tensor(1), view);
}
} // namespace

void cpu::index_select(KernelContext &ctx) {
  IndexCall call;
  run(ctx, indexSelectCall(ctx, call), call);
}

void cpu::gather(KernelContext &ctx) {
  IndexCall call;
  run(ctx, gatherCall(ctx, call), call);
}

void cpu::index(KernelContext &ctx) {
  IndexCall call;
  run(ctx, indexCall(ctx, call), call);
}

void cpu::scatter(KernelContext &ctx) {
  IndexCall call;
  run(ctx, scatterCall(ctx, ScatterOp::Scatter, call), call);
}

void cpu::scatter_add(KernelContext &ctx) {
  IndexCall call;
  run(ctx, scatterCall(ctx, ScatterOp::ScatterAdd, call), call);
}

void cpu::scatter_reduce(KernelContext &ctx) {
  IndexCall call;
  run(ctx, scatterCall(ctx, ScatterOp::ScatterReduce, call), call);
}

void cpu::index_put(KernelContext &ctx) {
  IndexCall call;
  run(ctx, indexPutCall(ctx, call), call);
}

void cpu::slice_scatter(KernelContext &ctx) {
  Tensor view;
  copyInto(ctx, sliceScatterView(ctx, view), view);
}

void cpu::select_scatter(KernelContext &ctx) {
  Tensor view;
  copyInto(ctx, selectScatterView(ctx, view), view);
}

/// masked_scatter: counts the mask's Trues first, so a short source fails
/// the call before anything reads past its end.
void cpu::masked_scatter(KernelContext &ctx) {
  MaskedScatterLaunch L;
  if (!maskedScatterCall(ctx, L))
    return;
  int64_t trues = 0;
  for (int64_t i = 0; i < L.numel; ++i)
    trues += msMaskAt(L, i);
  if (trues > L.sourceNumel)
    return failMaskedScatterCount(ctx, trues, L.sourceNumel);
  for (int64_t i = 0, k = 0; i < L.numel; ++i) {
    bool masked = msMaskAt(L, i);
    msElement(L, i, masked, k);
    k += masked;
  }
}
