//===- NN.cpp - embedding, dropout, layer_norm, cat on the CPU ------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/ElementwisePlan.h"
#include "TraceIR/Runtime/KernelArgs.h"
#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

using namespace traceir;
using namespace traceir::cpu;

/// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
/// gathers rows; an out-of-range index is an error naming it.
void cpu::embedding(KernelContext &ctx) {
  const Tensor &w = ctx.tensor(0), &idx = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  if (!embeddingArgs(ctx))
    return;
  int64_t rows = w.shape[0], dim = w.shape[1], n = idx.numel();
  // Scratch, so that --memory-limit counts it.
  auto *indices = static_cast<int64_t *>(ctx.scratch(n, sizeof(int64_t)));
  if (!indices)
    return;
  {
    // Gather the indices (any strides) into a flat list.
    Storage host;
    host.data = indices;
    Tensor dst;
    dst.storage = &host;
    dst.dtype = DType::I64;
    dst.shape = idx.shape;
    dst.strides = Tensor::contiguousStrides(idx.shape);
    copyTensor(idx, dst);
  }
  size_t es = dtypeSize(w.dtype);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = indices[i];
    if (r < 0 || r >= rows)
      return failEmbeddingIndex(ctx, r, rows);
    char *dst = out.bytes() + i * dim * es;
    const char *src = w.bytes() + r * w.strides[0] * es;
    if (w.strides[1] == 1)
      std::memcpy(dst, src, dim * es);
    else
      for (int64_t j = 0; j < dim; ++j)
        std::memcpy(dst + j * es, src + j * w.strides[1] * es, es);
  }
}

/// dropoutInto's loop over n contiguous elements of floating dtype DT, a
/// constant here: the same draws in the same order and the same arithmetic
/// and stores, but the draws for a block of elements come first and the
/// arithmetic after, without a dtype switch per element or the index walk
/// (the optimized tier's dropout).
template <int32_t DT>
static void dropoutDense(const char *x, char *y, bool *kept, int64_t n,
                         bool identity, const KeepDraw &keep,
                         std::mt19937_64 &g, double scale) {
  constexpr int64_t es = sizeof(typename EwElt<DT>::T), kBlock = 1024;
  bool block[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t m = std::min(kBlock, n - b);
    bool *k = kept ? kept + b : block;
    if (identity)
      std::fill(k, k + m, true);
    else
      for (int64_t e = 0; e < m; ++e)
        k[e] = keep(g);
    const char *xb = x + b * es;
    char *yb = y + b * es;
    // Without branches on k, which are mispredicted often: native_dropout
    // multiplies by 0 (a NaN stays NaN), dropout stores 0 (the bits of
    // x * scale under a mask).
    if (kept)
      for (int64_t e = 0; e < m; ++e)
        ewStoreDouble(yb + e * es, DT,
                      ewLoadDouble(xb + e * es, DT) * (scale * k[e]));
    else
      for (int64_t e = 0; e < m; ++e) {
        double v = ewLoadDouble(xb + e * es, DT) * scale;
        uint64_t on = uint64_t(0) - uint64_t(k[e]);
        ewStoreDouble(yb + e * es, DT,
                      std::bit_cast<double>(std::bit_cast<uint64_t>(v) & on));
      }
  }
}

/// dropout(input, p, train): in training, zero each element with
/// probability p and scale the rest by 1/(1-p), drawing from the run's
/// seeded generator. Eval mode and p = 0 are views (the registry says so),
/// so the result already is the input. native_dropout (`mask`, its fresh
/// contiguous bool result) also records which elements were kept, and
/// multiplies as ATen's (input * mask * scale: a NaN stays NaN); its eval
/// mode copies the input, draws nothing and keeps every element.
static void dropoutInto(KernelContext &ctx, Tensor &out,
                        Tensor *mask = nullptr) {
  const Tensor &in = ctx.tensor(0);
  DropoutArgs dropout;
  if (!dropoutArgs(ctx, dropout, mask != nullptr))
    return;
  double p = dropout.p;
  bool identity = dropout.isIdentity();
  if (identity && !mask) {
    if (out.storage != in.storage)
      copyTensor(in, out);
    return;
  }
  // Eval mode returns the input; train with p = 0 keeps every element.
  if (!dropout.train)
    p = 0;
  KeepDraw keep(1.0 - p);
  double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  bool *kept = mask ? mask->data<bool>() : nullptr;
  Tensor src = in;
  int64_t n = in.numel(), rank = in.rank();
  if (optimizedTierEnabled() && in.isContiguous() && out.isContiguous() &&
      out.dtype == in.dtype) {
    auto dense = [&](auto dt) {
      dropoutDense<decltype(dt)::value>(in.bytes(), out.bytes(), kept, n,
                                        identity, keep, ctx.rng(), scale);
      ctx.ranTier(KernelTier::Optimized);
    };
    switch (in.dtype) {
    case DType::F32:
      return dense(std::integral_constant<int32_t, F32>());
    case DType::F64:
      return dense(std::integral_constant<int32_t, F64>());
    case DType::F16:
      return dense(std::integral_constant<int32_t, F16>());
    case DType::BF16:
      return dense(std::integral_constant<int32_t, BF16>());
    default:
      break;
    }
  }
  Shape index(rank, 0);
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype);
  for (int64_t e = 0; e < n; ++e) {
    int64_t si = 0, oi = 0;
    for (int64_t d = 0; d < rank; ++d) {
      si += index[d] * src.strides[d];
      oi += index[d] * out.strides[d];
    }
    double v = loadDouble(src.bytes() + si * es, in.dtype);
    bool k = identity || keep(ctx.rng());
    if (kept)
      kept[e] = k;
    storeDouble(out.bytes() + oi * os, out.dtype,
                kept ? v * (k ? scale : 0.0)
                : k  ? v * scale
                     : 0.0);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < in.shape[d])
        break;
      index[d] = 0;
    }
  }
}

void cpu::dropout(KernelContext &ctx) {
  Tensor &out = ctx.result(0);
  if (!ctx.resultIsFresh(0))
    out = ctx.tensor(0); // eval / p == 0: the input itself
  dropoutInto(ctx, out);
}

void cpu::dropout_(KernelContext &ctx) {
  ctx.result(0) = ctx.tensor(0);
  dropoutInto(ctx, ctx.result(0));
}

/// native_dropout(input, p, train) -> (output, mask).
void cpu::native_dropout(KernelContext &ctx) {
  dropoutInto(ctx, ctx.result(0), &ctx.result(1));
}

/// layer_norm over the trailing normalized dims; native_layer_norm also
/// returns mean and rstd (shape [..., 1, ...]); native_group_norm is the
/// same over the rows of groupNormArgs's view, with mean and rstd [N, group]
/// and a weight and bias per channel.
static void layerNorm(KernelContext &ctx, const LayerNormArgs &a, bool stats) {
  const Tensor &in = a.rows;
  int64_t normDims = a.normDims;
  double eps = a.eps;
  Tensor &out = ctx.result(0);
  int64_t inner = 1;
  for (int64_t d = in.rank() - normDims; d < in.rank(); ++d)
    inner *= in.shape[d];
  int64_t outer = a.numRows();
  // Work on a contiguous copy of the input when it is a strided view.
  const char *xb = in.bytes();
  if (!in.isContiguous()) {
    char *buf =
        static_cast<char *>(ctx.scratch(in.numel(), dtypeSize(in.dtype)));
    if (!buf)
      return;
    copyStridedToContiguous(in, buf);
    xb = buf;
  }
  auto load = [&](const Tensor *t, int64_t j) {
    if (!t)
      return 1.0;
    return loadDouble(t->bytes() + j * dtypeSize(t->dtype), t->dtype);
  };
  const Tensor *w = a.weight, *b = a.bias;
  size_t es = dtypeSize(in.dtype), os = dtypeSize(out.dtype);
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < inner; ++j)
      mean += loadDouble(xb + (o * inner + j) * es, in.dtype);
    mean /= inner;
    for (int64_t j = 0; j < inner; ++j) {
      double d = loadDouble(xb + (o * inner + j) * es, in.dtype) - mean;
      var += d * d;
    }
    var /= inner;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < inner; ++j) {
      double v =
          (loadDouble(xb + (o * inner + j) * es, in.dtype) - mean) * rstd;
      int64_t wi = a.weightIndex(o, j, inner);
      v = v * load(w, wi) + (b ? load(b, wi) : 0.0);
      storeDouble(out.bytes() + (o * inner + j) * os, out.dtype, v);
    }
    if (stats) {
      Tensor &m = ctx.result(1), &r = ctx.result(2);
      storeDouble(m.bytes() + o * dtypeSize(m.dtype), m.dtype, mean);
      storeDouble(r.bytes() + o * dtypeSize(r.dtype), r.dtype, rstd);
    }
  }
}

static void layerNorm(KernelContext &ctx, bool native) {
  LayerNormArgs a;
  if (layerNormArgs(ctx, a, native))
    layerNorm(ctx, a, native);
}

void cpu::layer_norm(KernelContext &ctx) { layerNorm(ctx, false); }
void cpu::native_layer_norm(KernelContext &ctx) { layerNorm(ctx, true); }
void cpu::native_group_norm(KernelContext &ctx) {
  LayerNormArgs a;
  if (groupNormArgs(ctx, a))
    layerNorm(ctx, a, true);
}

/// cat(tensors..., dim): copies each input into its slice of the result.
void cpu::cat(KernelContext &ctx) {
  Tensor &out = ctx.result(0);
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
    copyTensor(t, slice);
    offset += t.shape[dim];
  }
}
