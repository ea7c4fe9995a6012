//===- Sorting.cpp - sort and topk on the CPU -----------------------------===//
//
// Each row's positions ordered by SortRows.h's total order (std::sort: any
// algorithm gives the same result under a total order), then its first k
// elements and their positions written. CUDA/Sorting.cu orders by the same
// comparison, so both devices agree to the bit.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <algorithm>
#include <numeric>
#include <vector>

using namespace traceir;
using namespace traceir::cpu;

static void sortImpl(KernelContext &ctx, bool topk) {
  SortRows L;
  if (!sortArgs(ctx, topk, L))
    return;
  std::vector<int64_t> pos(L.n);
  for (int64_t k = 0; k < L.in.numKept; ++k) {
    int64_t base = rdKeptOffset(L.in, k);
    std::iota(pos.begin(), pos.end(), 0);
    auto before = [&](int64_t a, int64_t b) {
      return sortBefore(L, base, a, b);
    };
    // topk needs only the first k in order.
    std::partial_sort(pos.begin(), pos.begin() + L.k, pos.end(), before);
    sortWriteRow(L, k, pos.data());
  }
}

void cpu::sort(KernelContext &ctx) { sortImpl(ctx, false); }
void cpu::topk(KernelContext &ctx) { sortImpl(ctx, true); }
