//===- Sorting.cpp - sort and topk on the CPU -----------------------------===//
//
// sort orders each row's positions by SortRows.h's total order (any
// algorithm gives the same result under a total order, so CUDA/Sorting.cu
// agrees to the bit). topk instead does what ATen's CPU topk does
// (ATen/native/TopKImpl.h): it compares values only and selects with the
// same standard algorithms, so equal values come out in eager's order, the
// indices a user compares with PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// ATen's topk comparison of two elements of a row: by value alone, NaN
/// above every number. Strict weak, not total: ties are left to the
/// algorithm, as in ATen.
template <typename T> struct TopkBefore {
  const SortRows &L;
  const T *v; ///< the row's values, widened (T: double or int64_t)
  bool operator()(int64_t a, int64_t b) const {
    T x = v[a], y = v[b];
    if constexpr (std::is_floating_point_v<T>) {
      bool xn = x != x, yn = y != y;
      return L.descending ? (xn && !yn) || x > y : (!xn && yn) || x < y;
    } else {
      return L.descending ? x > y : x < y;
    }
  }
};

/// The row's first L.k positions in `pos`, as ATen's topk_impl_loop picks
/// them: a partial sort when k is small against the row (k * 64 <= n), else
/// nth_element, then a sort of the first k - 1 when `sorted`. Permuting
/// positions under a comparison of their values moves them exactly as
/// ATen's (value, index) pairs move, the algorithms being the same.
template <typename T>
void topkRow(const SortRows &L, int64_t base, std::vector<T> &vals,
             std::vector<int64_t> &pos) {
  int es = ewSize(L.inDtype);
  for (int64_t r = 0; r < L.n; ++r) {
    const char *p = L.data + (base + r * L.stride) * es;
    if constexpr (std::is_floating_point_v<T>)
      vals[r] = ewLoadDouble(p, L.inDtype);
    else
      vals[r] = ewLoadInt(p, L.inDtype);
  }
  TopkBefore<T> before{L, vals.data()};
  if (L.k * 64 <= L.n) {
    std::partial_sort(pos.begin(), pos.begin() + L.k, pos.end(), before);
    return;
  }
  std::nth_element(pos.begin(), pos.begin() + L.k - 1, pos.end(), before);
  if (L.sorted)
    std::sort(pos.begin(), pos.begin() + L.k - 1, before);
}
} // namespace

static void sortImpl(KernelContext &ctx, bool topk) {
  SortRows L;
  if (!sortArgs(ctx, topk, L))
    return;
  if (L.k == 0)
    return;
  std::vector<int64_t> pos(L.n);
  std::vector<double> floats(topk && L.floating ? L.n : 0);
  std::vector<int64_t> ints(topk && !L.floating ? L.n : 0);
  for (int64_t k = 0; k < L.in.numKept; ++k) {
    int64_t base = rdKeptOffset(L.in, k);
    std::iota(pos.begin(), pos.end(), 0);
    if (!topk)
      std::sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) {
        return sortBefore(L, base, a, b);
      });
    else if (L.floating)
      topkRow(L, base, floats, pos);
    else
      topkRow(L, base, ints, pos);
    sortWriteRow(L, k, pos.data());
  }
}

void cpu::sort(KernelContext &ctx) { sortImpl(ctx, false); }
void cpu::topk(KernelContext &ctx) { sortImpl(ctx, true); }
