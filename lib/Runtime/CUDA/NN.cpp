//===- NN.cpp - Host side of embedding, dropout, layer_norm, cat on CUDA --===//
//
// Reads the arguments and checks them as CPU/NN.cpp does, then launches
// NN.cu (cat is one strided device copy per input).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <string>

using namespace traceir;

namespace {
void failLaunch(KernelContext &ctx, std::string_view what, const char *err) {
  ctx.fail(std::string(what) + " kernel failed on CUDA: " + err);
}

void failRank(KernelContext &ctx, const Tensor &t) {
  ctx.fail("tensors of rank " + strCat(t.rank()) +
           " are not supported on CUDA here (at most " + strCat(kRdMaxRank) +
           ")");
}
} // namespace

/// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
/// gathers rows; an out-of-range index is an error naming it.
void cuda::embedding(KernelContext &ctx) {
  const Tensor &w = ctx.tensor(0), &idx = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  if (!embeddingArgs(ctx))
    return;
  if (idx.rank() > kRdMaxRank)
    return failRank(ctx, idx);
  int64_t rows = w.shape[0], dim = w.shape[1], n = idx.numel();
  if (n == 0)
    return;
  EmbeddingLaunch L;
  L.indices = idx.bytes();
  L.indexDtype = static_cast<int32_t>(idx.dtype);
  L.indexRank = idx.rank();
  for (int64_t d = 0; d < idx.rank(); ++d) {
    L.indexShape[d] = idx.shape[d];
    L.indexStrides[d] = idx.strides[d];
  }
  L.numIndices = n;
  L.weight = w.bytes();
  L.rows = rows;
  L.dim = dim;
  L.rowStride = w.strides[0];
  L.colStride = w.strides[1];
  L.elementSize = dtypeSize(w.dtype);
  L.out = out.bytes();
  L.scratch = ctx.scratch(n, sizeof(int64_t));
  if (!L.scratch)
    return; // scratch() failed the call
  // A bad index is recorded on the device and fails the run at its end.
  L.errors = ctx.deviceErrors();
  if (const char *err = launchEmbeddingCUDA(L))
    return failLaunch(ctx, "embedding", err);
}

/// dropout(input, p, train): in training, zero each element with
/// probability p and scale the rest by 1/(1-p). The mask comes from Philox
/// keyed by one draw from the run's seeded generator per call. Eval mode
/// and p = 0 are views (the registry says so), so the result already is the
/// input.
/// native_dropout (`mask`) as CPU/NN.cpp's.
static void dropoutInto(KernelContext &ctx, Tensor &out,
                        Tensor *mask = nullptr) {
  const Tensor &in = ctx.tensor(0);
  DropoutArgs dropout;
  if (!dropoutArgs(ctx, dropout, mask != nullptr))
    return;
  double p = dropout.train ? dropout.p : 0.0;
  bool identity = dropout.isIdentity();
  if (identity && !mask) {
    if (out.storage != in.storage && !cuda::copyStrided(in, out))
      ctx.fail("copying on CUDA failed");
    return;
  }
  if (in.rank() > kRdMaxRank)
    return failRank(ctx, in);
  DropoutLaunch L;
  L.rank = in.rank();
  L.numel = in.numel();
  for (int64_t d = 0; d < in.rank(); ++d) {
    L.shape[d] = in.shape[d];
    L.inStrides[d] = in.strides[d];
    L.outStrides[d] = out.strides[d];
  }
  L.in = in.bytes();
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.p = p;
  L.scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  L.mask = mask ? mask->bytes() : nullptr;
  L.keepAll = identity;
  // A fresh key per call, fixed by the run's seed; none drawn for eval.
  L.seed = identity ? 0 : ctx.rng()();
  if (const char *err = launchDropoutCUDA(L))
    failLaunch(ctx, mask ? "native_dropout" : "dropout", err);
}

void cuda::dropout(KernelContext &ctx) {
  Tensor &out = ctx.result(0);
  if (!ctx.resultIsFresh(0))
    out = ctx.tensor(0); // eval / p == 0: the input itself
  dropoutInto(ctx, out);
}

void cuda::dropout_(KernelContext &ctx) {
  ctx.result(0) = ctx.tensor(0);
  dropoutInto(ctx, ctx.result(0));
}

/// native_dropout(input, p, train) -> (output, mask).
void cuda::native_dropout(KernelContext &ctx) {
  dropoutInto(ctx, ctx.result(0), &ctx.result(1));
}

/// layer_norm over the trailing normalized dims; native_layer_norm also
/// returns mean and rstd (shape [..., 1, ...]); native_group_norm over the
/// rows of groupNormArgs's view, as CPU/NN.cpp.
/// native_layer_norm's mean and rstd (results 1 and 2) into either
/// launch's fields.
template <typename Launch> static void setStats(KernelContext &ctx, Launch &L) {
  Tensor &m = ctx.result(1), &r = ctx.result(2);
  L.mean = m.bytes();
  L.meanDtype = static_cast<int32_t>(m.dtype);
  L.rstd = r.bytes();
  L.rstdDtype = static_cast<int32_t>(r.dtype);
}

/// layer_norm on the optimized tier's typed row kernel (TypedRows.h):
/// contiguous rows, weight and bias of the input's dtype, not group norm's
/// view. False, having launched nothing, where it does not apply.
static bool layerNormRows(KernelContext &ctx, const LayerNormArgs &a,
                          bool stats, std::string_view name) {
  const Tensor &in = a.rows;
  Tensor &out = ctx.result(0);
  auto plain = [&](const Tensor *t) {
    return !t || (t->dtype == in.dtype && t->isContiguous());
  };
  if (!optimizedTierEnabled() || a.groups != 1 || a.span != 1 ||
      !isFloatingDType(in.dtype) || out.dtype != in.dtype ||
      !in.isContiguous() || !out.isContiguous() || !plain(a.weight) ||
      !plain(a.bias))
    return false;
  LayerNormRowsPlan p;
  p.rows = a.numRows();
  p.n = p.rows == 0 ? 0 : in.numel() / p.rows;
  if (p.n == 0)
    return false; // empty rows: the portable kernel's NaN statistics
  p.in = in.bytes();
  p.out = out.bytes();
  p.weight = a.weight ? a.weight->bytes() : nullptr;
  p.bias = a.bias ? a.bias->bytes() : nullptr;
  p.dtype = static_cast<int32_t>(in.dtype);
  p.eps = a.eps;
  if (stats)
    setStats(ctx, p);
  p.vec = layerNormRowsVectorWidth(p);
  if (const char *err = launchLayerNormRowsCUDA(p))
    failLaunch(ctx, name, err);
  else
    ctx.ranTier(KernelTier::Optimized);
  return true;
}

static void layerNorm(KernelContext &ctx, const LayerNormArgs &a, bool stats,
                      std::string_view name) {
  if (layerNormRows(ctx, a, stats, name))
    return;
  const Tensor &in = a.rows;
  int64_t normDims = a.normDims;
  double eps = a.eps;
  Tensor &out = ctx.result(0);
  const Tensor *w = a.weight, *b = a.bias;
  LayerNormLaunch L;
  // Outer dims kept, normalized dims reduced: row o, element j in the
  // row-major order of the CPU's contiguous copy.
  int64_t outerRank = in.rank() - normDims;
  if (outerRank > kRdMaxRank || normDims > kRdMaxRank)
    return failRank(ctx, in);
  L.in.offset = in.offset;
  L.in.keptRank = outerRank;
  L.in.redRank = normDims;
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool kept = d < outerRank;
    int64_t i = kept ? d : d - outerRank;
    (kept ? L.in.keptShape : L.in.redShape)[i] = in.shape[d];
    (kept ? L.in.keptStrides : L.in.redStrides)[i] = in.strides[d];
    (kept ? L.in.numKept : L.in.numRed) *= in.shape[d];
  }
  L.data = static_cast<const char *>(in.storage->data);
  L.inDtype = static_cast<int32_t>(in.dtype);
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  if (w) {
    L.weight = w->bytes();
    L.weightDtype = static_cast<int32_t>(w->dtype);
  }
  if (b) {
    L.bias = b->bytes();
    L.biasDtype = static_cast<int32_t>(b->dtype);
  }
  L.groups = a.groups;
  L.span = a.span;
  if (stats)
    setStats(ctx, L);
  L.eps = eps;
  if (const char *err = launchLayerNormCUDA(L))
    failLaunch(ctx, name, err);
}

static void layerNorm(KernelContext &ctx, bool native) {
  LayerNormArgs a;
  if (layerNormArgs(ctx, a, native))
    layerNorm(ctx, a, native, native ? "native_layer_norm" : "layer_norm");
}

void cuda::layer_norm(KernelContext &ctx) { layerNorm(ctx, false); }
void cuda::native_layer_norm(KernelContext &ctx) { layerNorm(ctx, true); }
void cuda::native_group_norm(KernelContext &ctx) {
  LayerNormArgs a;
  if (groupNormArgs(ctx, a))
    layerNorm(ctx, a, true, "native_group_norm");
}

/// cat(tensors..., dim): copies each input into its slice of the result.
void cuda::cat(KernelContext &ctx) {
  Tensor &out = ctx.result(0);
  if (out.rank() > kRdMaxRank)
    return failRank(ctx, out);
  unsigned n;
  int64_t dim;
  if (!catArgs(ctx, n, dim))
    return;
  int64_t offset = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Tensor &t = ctx.tensor(i);
    if (t.rank() == 1 && t.shape[0] == 0 && out.rank() != 1)
      continue; // legacy empty tensors are skipped, as in PyTorch
    Tensor slice = out;
    slice.shape[dim] = t.shape[dim];
    slice.offset = out.offset + offset * out.strides[dim];
    if (!cuda::copyStrided(t, slice))
      return ctx.fail("copying input " + strCat(i) + " of cat on CUDA failed");
    offset += t.shape[dim];
  }
}
