//===- Linear.cpp - Optimized linear for a few rows -----------------------===//
//
// Built once per CPU variant (Optimized.h, Dispatch.cpp), as Norm.cpp.
//
// linear(input, weight, bias) with a few rows of input (a batch of one
// image's pooled features, the last stages of a ConvNeXt at a small
// resolution) is a matrix-vector product bound by reading the weight.
// OpenBLAS 0.3.21's sgemm packs the whole weight into its panel layout
// first even for one row, reading and writing it once more than the
// product needs: ConvNeXt-tiny's 768x3072 layers took twice eager's (MKL)
// time. Here each thread streams its share of the weight's rows once and
// takes their dot products with every input row while the row is in L1.
// Each output element is one dot product summed in kLanes partial sums
// combined in a fixed order, so results do not depend on the thread count.
// Everything else (more rows, other dtypes, a weight whose rows are not
// unit-stride) goes to the portable kernel, whose one sgemm is as good.
//
//===----------------------------------------------------------------------===//

#include "Loops.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"

#include <algorithm>

#ifndef TRACEIR_LOOPS_ONLY
#include "TraceIR/Runtime/BatchedMatmul.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#endif

using namespace traceir;
using namespace traceir::cpu::optimized;

namespace {

/// out[r, n + c] = bias[n + c] + dot(x[r, :], w[n + c, :]) for the rows
/// r < R and columns c < C (compile-time counts, so the R * C partial sums
/// stay in registers). C weight rows at a time where R is small: one row
/// alone is one chain of dependent FMAs and one stream from memory, which
/// ran at 8 GB/s here against eager's 12.
template <typename T, int R, int C>
TRACEIR_VARIANT_TARGET inline void skinnyDots(const SkinnyLinear &s, const T *x,
                                              T *out, int64_t n) {
  const T *bias = static_cast<const T *>(s.bias);
  const T *w = static_cast<const T *>(s.w) + n * s.ldw;
  const int64_t K = s.K;
  T acc[R][C][kLanes] = {};
  int64_t k = 0;
  // One simd loop per partial-sum vector: written as one loop nest over
  // r and l, GCC built each weight vector from 16 scalar inserts and kept
  // the sums on the stack (1.6 ms for 4 x 768 -> 3072, now 1.3).
  for (; k + kLanes <= K; k += kLanes)
    for (int c = 0; c < C; ++c) {
      const T *wk = w + c * s.ldw + k;
      for (int r = 0; r < R; ++r) {
        const T *xr = x + r * s.ldx + k;
        TRACEIR_OMP_SIMD
        for (int l = 0; l < kLanes; ++l)
          acc[r][c][l] += xr[l] * wk[l];
      }
    }
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) {
      T tail = 0;
      for (int64_t j = k; j < K; ++j)
        tail += x[r * s.ldx + j] * w[c * s.ldw + j];
      T sum = combineLanes(acc[r][c]) + tail;
      out[r * s.N + n + c] = bias ? sum + bias[n + c] : sum;
    }
}

/// The rows r0 .. r0 + R of output columns [nb, ne), C columns at a time.
/// Each output element is the same dot product whatever C is.
template <typename T, int R, int C>
TRACEIR_VARIANT_TARGET void skinnyBlock(const SkinnyLinear &s, int64_t r0,
                                        int64_t nb, int64_t ne) {
  const T *x = static_cast<const T *>(s.x) + r0 * s.ldx;
  T *out = static_cast<T *>(s.out) + r0 * s.N;
  int64_t n = nb;
  for (; n + C <= ne; n += C)
    skinnyDots<T, R, C>(s, x, out, n);
  for (; n < ne; ++n)
    skinnyDots<T, R, 1>(s, x, out, n);
}

template <typename T> void skinnyTyped(const SkinnyLinear &s) {
  // Threads split the output columns, so each reads its share of the
  // weight once; grain: a thread is worth it from ~kGrainSize weights.
  int64_t grain =
      std::max<int64_t>(1, cpu::grainSize() / std::max<int64_t>(s.K, 1));
  // Rows four at a time, then the rest: four rows of partial sums still
  // fit the registers. Each group reads the weight rows again, so the
  // groups take a tile of weight rows at a time, one that stays in L1 (16
  // KiB: 5 rows of K = 768 floats, 1 of 3072): the weight then comes from
  // memory once. Done as one pass over all columns per group, the
  // second group re-read vit_b_16's weights (9 MiB a layer, 5 rows) from
  // memory: its linears took 89 ms at one thread against eager's 51.
  constexpr int64_t kTileBytes = 16 << 10;
  const int64_t tile = std::max<int64_t>(
      1, kTileBytes / std::max<int64_t>(1, s.K * int64_t(sizeof(T))));
  cpu::parallelFor(s.N, grain, [&](int64_t nb, int64_t ne) {
    for (int64_t tb = nb; tb < ne; tb += tile) {
      const int64_t te = std::min(ne, tb + tile);
      for (int64_t r = 0; r < s.M;) {
        int64_t left = s.M - r;
        if (left >= 4) {
          skinnyBlock<T, 4, 1>(s, r, tb, te);
          r += 4;
        } else if (left == 3) {
          skinnyBlock<T, 3, 1>(s, r, tb, te);
          r += 3;
        } else if (left == 2) {
          skinnyBlock<T, 2, 2>(s, r, tb, te);
          r += 2;
        } else {
          skinnyBlock<T, 1, 4>(s, r, tb, te);
          r += 1;
        }
      }
    }
  });
}

} // namespace

void cpu::optimized::TRACEIR_CPU_VARIANT::skinnyLinear(const SkinnyLinear &s) {
  if (s.f64)
    skinnyTyped<double>(s);
  else
    skinnyTyped<float>(s);
}

#ifndef TRACEIR_LOOPS_ONLY
//===--- The kernel: cpu::fast::linear (Ops.def's FAST_CPU) ---------------===//

bool cpu::fast::linear(KernelContext &ctx) {
  const Tensor &x = ctx.tensor(0), &w = ctx.tensor(1);
  const Tensor *bias = ctx.isTensor(2) ? &ctx.tensor(2) : nullptr;
  Tensor &out = ctx.result(0);
  DType dt = x.dtype;
  if ((dt != DType::F32 && dt != DType::F64) || w.dtype != dt ||
      out.dtype != dt || !out.isContiguous() || w.rank() != 2 || x.rank() < 1)
    return false;
  int64_t K = x.shape.back(), N = w.shape[0];
  if (w.shape[1] != K || x.numel() == 0 || N == 0 || K == 0)
    return false; // errors and empty products: the portable kernel's
  // Rows of x one stride apart with unit-stride elements (any contiguous
  // x, a slice of its last dim); a 1-D x is one row.
  int64_t M = x.numel() / K, ldx = K;
  if (x.rank() >= 2) {
    std::optional<int64_t> rs = foldedRowStride(x);
    if (!rs)
      return false;
    ldx = M == 1 ? K : *rs;
  }
  if ((K > 1 && x.strides.back() != 1) || (K > 1 && w.strides[1] != 1) ||
      (M > 1 && ldx < K))
    return false;
  // Beyond a few rows the BLAS's blocking reuses each weight panel across
  // rows from cache, which this loop does not.
  if (M > kSkinnyRows)
    return false;
  Shape want = x.shape;
  want.back() = N;
  if (out.shape != want)
    return false;
  if (bias && (bias->dtype != dt || bias->rank() != 1 || bias->shape[0] != N ||
               (N > 1 && bias->strides[0] != 1)))
    return false;
  SkinnyLinear s;
  s.x = x.bytes();
  s.w = w.bytes();
  s.bias = bias ? bias->bytes() : nullptr;
  s.out = out.bytes();
  s.M = M;
  s.N = N;
  s.K = K;
  s.ldx = ldx;
  s.ldw = N > 1 ? w.strides[0] : K;
  s.f64 = dt == DType::F64;
  cpu::optimized::skinnyLinear(s);
  return true;
}
#endif
