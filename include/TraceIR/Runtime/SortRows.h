//===- SortRows.h - sort and topk's rows, on either device ------*- C++ -*-===//
//
// sort orders each row of the input (its elements along `dim`) by one
// total order, sortBefore: by value (NaN above every number, as PyTorch's),
// ties by position. Being total, every sorting algorithm gives the same
// result: the CPU's and CUDA's sorts agree to the bit, and equal values keep
// their order (a stable sort's result). CUDA's topk uses it too; the CPU's
// topk instead breaks ties as ATen's CPU topk does (CPU/Sorting.cpp), since
// users compare its indices with eager's. Plain data and __host__
// __device__ functions: nvcc compiles it too.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_SORTROWS_H
#define TRACEIR_RUNTIME_SORTROWS_H

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

namespace traceir {

/// A sort or topk call: `in` split around `dim` (row k holds the elements
/// at rdKeptOffset(in, k) + r * stride, r < n); `out` the results' split
/// (values and indices share a shape and contiguous strides), whose first
/// `k` elements per row are written.
struct SortRows {
  RdGroups in, out;
  int64_t n = 0, stride = 0, outStride = 0, k = 0;
  const char *data = nullptr;
  int32_t inDtype = F32;
  /// Floating elements compare as doubles (NaN last), the rest as int64.
  bool floating = false;
  bool descending = false;
  /// topk's `sorted` (sort: true).
  bool sorted = true;
  char *values = nullptr;
  int32_t valuesDtype = F32;
  char *indices = nullptr; ///< int64
  /// CUDA: numKept * n int64 positions of device scratch.
  int64_t *scratch = nullptr;
};

/// Whether element `a` of the row at `base` goes before element `b`.
TRACEIR_HD inline bool sortBefore(const SortRows &L, int64_t base, int64_t a,
                                  int64_t b) {
  int es = ewSize(L.inDtype);
  const char *pa = L.data + (base + a * L.stride) * es;
  const char *pb = L.data + (base + b * L.stride) * es;
  int c; // the values' order: -1, 0, 1
  if (L.floating) {
    double x = ewLoadDouble(pa, L.inDtype), y = ewLoadDouble(pb, L.inDtype);
    bool xn = x != x, yn = y != y;
    c = xn || yn ? (xn == yn ? 0 : xn ? 1 : -1) : (x < y ? -1 : x > y ? 1 : 0);
  } else {
    int64_t x = ewLoadInt(pa, L.inDtype), y = ewLoadInt(pb, L.inDtype);
    c = x < y ? -1 : x > y ? 1 : 0;
  }
  if (c == 0)
    return a < b;
  return L.descending ? c > 0 : c < 0;
}

/// Writes row `k`'s first L.k elements in the order `pos` (positions in
/// the row) gives.
TRACEIR_HD inline void sortWriteRow(const SortRows &L, int64_t k,
                                    const int64_t *pos) {
  int es = ewSize(L.inDtype), vs = ewSize(L.valuesDtype);
  int64_t base = rdKeptOffset(L.in, k), obase = rdKeptOffset(L.out, k);
  for (int64_t r = 0; r < L.k; ++r) {
    const char *p = L.data + (base + pos[r] * L.stride) * es;
    int64_t o = obase + r * L.outStride;
    // The element itself: exact in double for floats, int64 for the rest.
    if (L.floating)
      ewStoreDouble(L.values + o * vs, L.valuesDtype,
                    ewLoadDouble(p, L.inDtype));
    else
      ewStoreInt(L.values + o * vs, L.valuesDtype, ewLoadInt(p, L.inDtype));
    ewStoreInt(L.indices + o * 8, I64, pos[r]);
  }
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_SORTROWS_H
