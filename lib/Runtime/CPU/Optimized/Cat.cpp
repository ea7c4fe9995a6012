//===- Cat.cpp - Optimized cat: the result written once, in order ---------===//
//
// cat of contiguous inputs of the result's dtype into a contiguous result
// is, for each index of the dims before `dim`, each input's block in turn:
// the result is written front to back as byte ranges, split over threads
// by bytes (ATen's serial cat kernel, threaded). The portable kernel
// copies one input at a time into its strided slice, a pass over the
// result per input: at resnet's 2 x 8x64x56x56 along dim 1, 870 us
// against 705 here on one thread. Other layouts and mixed dtypes (cat
// promotes) are the portable kernel's.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace traceir;

bool cpu::fast::cat(KernelContext &ctx) {
  unsigned n;
  int64_t dim;
  if (!catArgs(ctx, n, dim))
    return true; // failed, as the portable kernel would
  Tensor &out = ctx.result(0);
  if (!out.isContiguous())
    return false;
  for (unsigned i = 0; i < n; ++i) {
    const Tensor &t = ctx.tensor(i);
    // PyTorch's legacy empty [0] inputs (another rank) are the portable
    // kernel's, which skips them.
    if (t.dtype != out.dtype || t.rank() != out.rank() || !t.isContiguous())
      return false;
  }
  const int64_t es = static_cast<int64_t>(dtypeSize(out.dtype));
  int64_t outer = 1, inner = es;
  for (int64_t d = 0; d < dim; ++d)
    outer *= out.shape[d];
  for (int64_t d = dim + 1; d < out.rank(); ++d)
    inner *= out.shape[d];
  // Input i's block of each row of the result starts start[i] bytes in.
  std::vector<int64_t> start(n + 1, 0);
  for (unsigned i = 0; i < n; ++i)
    start[i + 1] = start[i] + ctx.tensor(i).shape[dim] * inner;
  const int64_t row = start[n], total = outer * row;
  if (total == 0)
    return true;
  char *o = out.bytes();
  // A copy moves bytes cheaply: a thread is worth a few grains' bytes.
  const int64_t grain = cpu::grainSize() * 8;
  cpu::parallelFor(total, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t at = lo; at < hi;) {
      const int64_t r = at / row, in = at - r * row;
      // The input whose block holds byte `in` of the row (blocks of size
      // zero hold none).
      unsigned i = static_cast<unsigned>(
          std::upper_bound(start.begin(), start.end(), in) - start.begin() - 1);
      const int64_t block = start[i + 1] - start[i];
      const int64_t len = std::min(hi - at, start[i + 1] - in);
      std::memcpy(o + at, ctx.tensor(i).bytes() + r * block + (in - start[i]),
                  len);
      at += len;
    }
  });
  return true;
}
