//===- Embedding.cpp - Optimized embedding: one memcpy a row --------------===//
//
// embedding(weight, indices, ...) gathers rows: for a weight whose rows are
// unit-stride and contiguous indices (i64 or i32), each index is checked,
// then its row copied with one memcpy straight from the indices, rows
// split over threads. The portable kernel first copies the indices into an
// i64 scratch list through the strided copy, and copies on one thread.
// Arguments are read and checked by the portable kernel's embeddingArgs,
// an out-of-range index fails with its failEmbeddingIndex, at the first
// such index in order, as there. padding_idx, scale_grad_by_freq and
// sparse only matter to the backward.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/NNArgs.h"

#include <algorithm>
#include <cstring>

using namespace traceir;

namespace {
constexpr int64_t kPrefetchAhead = 8;

template <typename I>
bool gatherRows(KernelContext &ctx, const Tensor &w, const I *idx, int64_t n,
                Tensor &out) {
  int64_t rows = w.shape[0];
  // Every index is checked before any row is written, in order, so the
  // error names the first bad one (as the portable kernel's) and threads
  // need not agree on one.
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= rows) {
      failEmbeddingIndex(ctx, static_cast<int64_t>(idx[i]), rows);
      return true;
    }
  size_t es = dtypeSize(w.dtype);
  size_t rowBytes = static_cast<size_t>(w.shape[1]) * es;
  if (rowBytes == 0)
    return true;
  const char *src = w.bytes();
  char *dst = out.bytes();
  int64_t rowStride = w.strides[0] * static_cast<int64_t>(es);
  int64_t grain = std::max<int64_t>(1, cpu::grainSize() * 4 /
                                           static_cast<int64_t>(rowBytes));
  cpu::parallelFor(n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      // Rows of a large table are scattered in memory beyond the cache:
      // each copy waits on memory that the hardware prefetcher cannot
      // guess. The row kPrefetchAhead indices on is asked for meanwhile.
      if (i + kPrefetchAhead < e) {
        const char *next =
            src + static_cast<int64_t>(idx[i + kPrefetchAhead]) * rowStride;
        for (size_t off = 0; off < rowBytes; off += 64)
          __builtin_prefetch(next + off);
      }
      std::memcpy(dst + i * rowBytes,
                  src + static_cast<int64_t>(idx[i]) * rowStride, rowBytes);
    }
  });
  return true;
}
} // namespace

bool cpu::fast::embedding(KernelContext &ctx) {
  if (!embeddingArgs(ctx))
    return true; // failed, as the portable kernel would
  const Tensor &w = ctx.tensor(0), &idx = ctx.tensor(1);
  Tensor &out = ctx.result(0);
  // A weight whose rows are strided (a transposed table) and strided
  // indices are the portable kernel's.
  if ((w.shape[1] > 1 && w.strides[1] != 1) || !idx.isContiguous() ||
      !out.isContiguous())
    return false;
  if (idx.dtype == DType::I64)
    return gatherRows(ctx, w, idx.data<int64_t>(), idx.numel(), out);
  if (idx.dtype == DType::I32)
    return gatherRows(ctx, w, idx.data<int32_t>(), idx.numel(), out);
  return false;
}
