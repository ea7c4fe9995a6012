//===- Elementwise.cpp - Optimized elementwise loops on the CPU -----------===//
//
// Built once per CPU variant (Optimized.h); the dispatch between them is in
// Dispatch.cpp.
//
// What PyTorch's TensorIterator and cpu_kernel_vec do, for the elementwise
// ops models spend their time in: the launch's dims are coalesced, the work
// (rows of the innermost dim) is split over threads, and each row runs a
// loop instantiated for its op, dtype and operand kinds, each operand
// either unit-stride or hoisted (a broadcast value or a Python number), so
// the common cases are straight loops over arrays the compiler vectorizes.
// Other inner strides get the same typed loop with strides. The op's
// semantics are Elementwise.h's ewCompute, the portable kernels' own; the
// ops covered, the dtypes' compute types and the coalescing are
// ElementwisePlan.h's, which CUDA's typed loop shares.
//
//===----------------------------------------------------------------------===//

#include "Loops.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/KernelTier.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace traceir;
using namespace traceir::cpu::optimized;

namespace {

/// One row: n outputs at `out` (stride os) from N operands at in[j]
/// (stride is[j]; null: the hoisted value c[j]).
template <typename C> struct Row {
  char *out;
  int64_t os;
  const char *in[kEwMaxOperands];
  int64_t is[kEwMaxOperands];
  C c[kEwMaxOperands];
  int64_t n;
};

/// `rows` rows of one shape, the first `first`, each the one before moved
/// by the outer strides (elements): the next row's out by ros, in[j] by
/// ris[j]. An operand hoisted from a tensor (h[j], not null) is reloaded
/// from there, moved the same way, for each row. A launch's rows of the
/// innermost dim go to the row loops this way rather than one call each:
/// a bias add over 512 rows of 256 floats spent a fifth of its time
/// between rows.
template <typename C> struct Rows {
  Row<C> first;
  int64_t rows;
  int64_t ros;
  int64_t ris[kEwMaxOperands];
  const char *h[kEwMaxOperands];
};

/// Elements per block. Every element of a launch is computed inside a
/// block of this many by the same (vectorized) loop: a short row or a
/// thread's last elements are padded to a block, not run by a scalar
/// epilogue, whose libm results could differ from libmvec's in the last
/// bit. So results do not depend on the thread count, the split into rows
/// or the operands' layout. (Arithmetic, exact in a lane and in a scalar
/// alike, runs a short strided row element by element: stridedRow.)
constexpr int kBlock = 64;

/// The op on one block of operand values (v[j][k]; only the first m
/// results are used).
template <EwOp Op, typename C, int N>
TRACEIR_VARIANT_TARGET void
computeBlock(const EwLaunch &__restrict L,
             const C (&__restrict v)[kEwMaxOperands][kBlock],
             C (&__restrict res)[kBlock]) {
  TRACEIR_OMP_SIMD
  for (int k = 0; k < kBlock; ++k) {
    C a[kEwMaxOperands] = {};
    for (int j = 0; j < N; ++j)
      a[j] = v[j][k];
    res[k] = ewCompute<C, Math>(Op, L, a);
  }
}

/// computeBlock on unit-stride operands in place (bit j of Vec; the
/// others hoisted in c) into `out`, for dtypes computed as they are stored:
/// no staging copies, whose 16-byte stores stalled the 32-byte loads that
/// followed them. The same loop as computeBlock's, so the same results.
template <EwOp Op, typename C, int N, unsigned Vec>
TRACEIR_VARIANT_TARGET void
computeDenseBlock(const EwLaunch &__restrict L,
                  const C *const (&__restrict in)[kEwMaxOperands],
                  const C (&__restrict c)[kEwMaxOperands], C *out) {
  // `out` may be in[0] (in place): each element is read before it is
  // written, in the same lane.
  TRACEIR_OMP_SIMD
  for (int k = 0; k < kBlock; ++k) {
    C a[kEwMaxOperands] = {};
    for (int j = 0; j < N; ++j)
      a[j] = (Vec >> j) & 1 ? in[j][k] : c[j];
    out[k] = ewCompute<C, Math>(Op, L, a);
  }
}

/// Whether an op calls the math library, whose vector and scalar
/// functions may differ in the last bit (the others are IEEE arithmetic
/// and comparisons, the same in a vector lane and in a scalar epilogue).
constexpr bool callsLibm(EwOp op) {
  switch (op) {
  case EwOp::Exp:
  case EwOp::Log:
  case EwOp::Tanh:
  case EwOp::Sigmoid:
  case EwOp::Gelu:
  case EwOp::GeluTanh:
  case EwOp::Silu:
  case EwOp::Erf:
  case EwOp::Sin:
  case EwOp::Cos:
  case EwOp::Pow:
    return true;
  default:
    return false;
  }
}

/// Any strides: gathered into blocks of kBlock values, computed by
/// computeBlock, scattered; operand j hoisted (r.c[j]) where r.in[j] is null.
template <EwOp Op, int32_t DT, int N>
TRACEIR_VARIANT_TARGET void
stridedRow(const EwLaunch &__restrict L,
           const Row<typename Elt<DT>::C> &__restrict r) {
  using E = Elt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  T *out = reinterpret_cast<T *>(r.out);
  if constexpr (!callsLibm(Op)) {
    // Arithmetic on a short run (a broadcast multiply over a 2x2 image's
    // channels: runs of 4) element by element: a block's fixed cost was
    // most of the time there (ConvNeXt's layer scale took 0.11 ms on 1536
    // elements), and exact arithmetic gives the block's results.
    if (r.n < kBlock) {
      for (int64_t i = 0; i < r.n; ++i) {
        C a[kEwMaxOperands] = {};
        for (int j = 0; j < N; ++j)
          a[j] =
              !r.in[j]
                  ? r.c[j]
                  : E::load(reinterpret_cast<const T *>(r.in[j])[i * r.is[j]]);
        out[i * r.os] = E::store(ewCompute<C, Math>(Op, L, a));
      }
      return;
    }
  }
  C v[kEwMaxOperands][kBlock], res[kBlock];
  for (int64_t i0 = 0; i0 < r.n; i0 += kBlock) {
    int m = static_cast<int>(std::min<int64_t>(kBlock, r.n - i0));
    for (int j = 0; j < N; ++j) {
      const T *in = reinterpret_cast<const T *>(r.in[j]);
      for (int k = 0; k < kBlock; ++k)
        v[j][k] = !in ? r.c[j] : k < m ? E::load(in[(i0 + k) * r.is[j]]) : C(0);
    }
    computeBlock<Op, C, N>(L, v, res);
    for (int k = 0; k < m; ++k)
      out[(i0 + k) * r.os] = E::store(res[k]);
  }
}

/// A row with unit-stride output, operand j unit-stride where bit j of
/// Vec is set and hoisted (r.c[j]) where not.
template <EwOp Op, int32_t DT, int N, unsigned Vec>
TRACEIR_VARIANT_TARGET void
denseRow(const EwLaunch &__restrict L,
         const Row<typename Elt<DT>::C> &__restrict r) {
  using E = Elt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  if constexpr (callsLibm(Op)) {
    // The library's functions run in blocks (kBlock). Whole blocks read
    // their unit-stride operands where they lie (f32, f64) or load them
    // with constant bounds (f16, bf16), loops the compiler vectorizes
    // (stridedRow's gather, by runtime stride and with its padding test,
    // ran one element at a time: 40% of sigmoid's time); the last, partial
    // block is stridedRow's, padded as there. The same loop computes
    // every block, so each element's result is what it would be if the
    // whole row were stridedRow's.
#ifdef TRACEIR_VARIANT_EXPF_ROW
    // The variant's exp over the row at once (the same lanes' results).
    if constexpr (Op == EwOp::Exp && std::is_same_v<T, float> && N == 1 &&
                  Vec == 1) {
      TRACEIR_VARIANT_EXPF_ROW(reinterpret_cast<const float *>(r.in[0]),
                               reinterpret_cast<float *>(r.out), r.n);
      return;
    }
#endif
    const int64_t whole = r.n / kBlock * kBlock;
    T *out = reinterpret_cast<T *>(r.out);
    if constexpr (std::is_same_v<T, C>) {
      const C *in[kEwMaxOperands] = {};
      C c[kEwMaxOperands] = {};
      for (int j = 0; j < N; ++j) {
        in[j] = reinterpret_cast<const C *>(r.in[j]);
        c[j] = r.c[j];
      }
      for (int64_t i0 = 0; i0 < whole; i0 += kBlock) {
        const C *at[kEwMaxOperands] = {};
        for (int j = 0; j < N; ++j)
          at[j] = (Vec >> j) & 1 ? in[j] + i0 : nullptr;
        computeDenseBlock<Op, C, N, Vec>(L, at, c, out + i0);
      }
    } else {
      C v[kEwMaxOperands][kBlock], res[kBlock];
      for (int j = 0; j < N; ++j)
        if (!((Vec >> j) & 1))
          for (int k = 0; k < kBlock; ++k)
            v[j][k] = r.c[j];
      for (int64_t i0 = 0; i0 < whole; i0 += kBlock) {
        for (int j = 0; j < N; ++j) {
          if (!((Vec >> j) & 1))
            continue;
          const T *in = reinterpret_cast<const T *>(r.in[j]) + i0;
          for (int k = 0; k < kBlock; ++k)
            v[j][k] = E::load(in[k]);
        }
        computeBlock<Op, C, N>(L, v, res);
        for (int k = 0; k < kBlock; ++k)
          out[i0 + k] = E::store(res[k]);
      }
    }
    if (whole < r.n) {
      Row<C> tail = r;
      tail.n = r.n - whole;
      tail.out = r.out + whole * static_cast<int64_t>(sizeof(T));
      for (int j = 0; j < N; ++j)
        if ((Vec >> j) & 1)
          tail.in[j] = r.in[j] + whole * static_cast<int64_t>(sizeof(T));
      stridedRow<Op, DT, N>(L, tail);
    }
  } else {
    // Arithmetic only: one straight loop, its epilogue exact like its body.
    // Locals, not r's fields: the output may alias r as far as the
    // compiler knows, and reloading them each element stops vectorizing.
    const T *in[kEwMaxOperands] = {};
    C c[kEwMaxOperands] = {};
    for (int j = 0; j < N; ++j) {
      in[j] = reinterpret_cast<const T *>(r.in[j]);
      c[j] = r.c[j];
    }
    const int64_t n = r.n;
    // Not __restrict: an in-place op writes over its first operand (the
    // same element it reads, which no vectorized loop gets wrong).
    T *out = reinterpret_cast<T *>(r.out);
    // No dependence between elements (in place, an element is read before
    // it is written): no alias check, so in-place ops vectorize too.
    TRACEIR_IVDEP
    for (int64_t i = 0; i < n; ++i) {
      C a[kEwMaxOperands] = {};
      for (int j = 0; j < N; ++j)
        a[j] = (Vec >> j) & 1 ? E::load(in[j][i]) : c[j];
      out[i] = E::store(ewCompute<C, Math>(Op, L, a));
    }
  }
}

/// Runs RowF (a row loop) over each of rs's rows.
template <int32_t DT, int N,
          void (*RowF)(const EwLaunch &, const Row<typename Elt<DT>::C> &)>
TRACEIR_VARIANT_TARGET void eachRow(const EwLaunch &L,
                                    const Rows<typename Elt<DT>::C> &rs) {
  using E = Elt<DT>;
  using T = typename E::T;
  constexpr int64_t es = sizeof(T);
  Row<typename E::C> r = rs.first;
  for (int64_t k = 0;;) {
    for (int j = 0; j < N; ++j)
      if (rs.h[j])
        r.c[j] =
            E::load(*reinterpret_cast<const T *>(rs.h[j] + k * rs.ris[j] * es));
    RowF(L, r);
    if (++k == rs.rows)
      return;
    r.out += rs.ros * es;
    for (int j = 0; j < N; ++j)
      if (r.in[j])
        r.in[j] += rs.ris[j] * es;
  }
}

template <typename C>
using RowsFn = void (*)(const EwLaunch &, const Rows<C> &);

/// The row loop for an op, dtype and operand count: dense (by operand
/// kinds) or strided.
template <EwOp Op, int32_t DT, int N> struct Loops {
  using C = typename Elt<DT>::C;
  template <unsigned Vec>
  static constexpr RowsFn<C> denseRows =
      eachRow<DT, N, denseRow<Op, DT, N, Vec>>;
  static RowsFn<C> dense(unsigned vec) {
    static const RowsFn<C> table[] = {denseRows<0>, denseRows<1>, denseRows<2>,
                                      denseRows<3>, denseRows<4>, denseRows<5>,
                                      denseRows<6>, denseRows<7>};
    return table[vec & ((1u << N) - 1)];
  }
  static RowsFn<C> strided() { return eachRow<DT, N, stridedRow<Op, DT, N>>; }
};

/// Calls row(outOffset, inOffsets, n, rows) for the runs of the innermost
/// dim that cover the plan's elements, split over threads: offsets in
/// elements to the first run's first element (for N operands), n its
/// length; where rows > 1, that many whole runs, one after another along
/// the next dim out (strides p.os[rank - 2], p.is[j][rank - 2]).
template <typename RowF>
void forEachRun(const EwPlan &p, int N, int64_t numel, const RowF &row) {
  const int in = p.rank - 1; // the innermost dim
  const int64_t inner = p.shape[in];
  if (numel == 0 || inner == 0)
    return;
  cpu::parallelFor(numel, cpu::grainSize(), [&](int64_t b, int64_t e) {
    int64_t col = b % inner;
    // The first run's outer index, walked by increments after it.
    int64_t idx[kEwMaxRank] = {};
    for (int64_t r = b / inner, d = in - 1; d >= 0; --d) {
      idx[d] = r % p.shape[d];
      r /= p.shape[d];
    }
    while (b < e) {
      int64_t oo = col * p.os[in], io[kEwMaxOperands] = {};
      for (int j = 0; j < N; ++j)
        io[j] = col * p.is[j][in];
      for (int d = 0; d < in; ++d) {
        oo += idx[d] * p.os[d];
        for (int j = 0; j < N; ++j)
          io[j] += idx[d] * p.is[j][d];
      }
      int64_t n = std::min(inner - col, e - b), rows = 1;
      // Whole runs: as many as this chunk and the next dim out hold.
      if (in > 0 && n == inner)
        rows = std::min((e - b) / inner, p.shape[in - 1] - idx[in - 1]);
      row(oo, io, n, rows);
      b += n * rows;
      col = 0;
      if (in > 0 && rows > 1)
        idx[in - 1] += rows - 1;
      for (int d = in - 1; d >= 0; --d) {
        if (++idx[d] < p.shape[d])
          break;
        idx[d] = 0;
      }
    }
  });
}

/// Runs the coalesced launch with the row loops of one op, dtype and
/// operand count.
template <EwOp Op, int32_t DT, int N> void run(const EwLaunch &L) {
  using E = Elt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  const EwPlan p = ewCoalesce(L);
  const int in = p.rank - 1;
  // Operands hoisted in every run: numbers, and tensors broadcast along
  // the innermost dim (their value changes only between runs).
  bool dense = p.os[in] == 1;
  unsigned vec = 0;
  for (int j = 0; j < N; ++j) {
    if (!L.in[j].data || p.is[j][in] == 0)
      continue;
    if (p.is[j][in] == 1)
      vec |= 1u << j;
    else
      dense = false;
  }
  RowsFn<C> fn =
      dense ? Loops<Op, DT, N>::dense(vec) : Loops<Op, DT, N>::strided();
  const int64_t es = sizeof(T);
  forEachRun(p, N, L.numel,
             [&](int64_t oo, const int64_t *io, int64_t n, int64_t rows) {
               Rows<C> rs;
               Row<C> &r = rs.first;
               rs.rows = rows;
               rs.ros = in > 0 ? p.os[in - 1] : 0;
               r.n = n;
               r.out = L.out + oo * es;
               r.os = p.os[in];
               for (int j = 0; j < N; ++j) {
                 const EwOperand &o = L.in[j];
                 r.is[j] = p.is[j][in];
                 rs.ris[j] = in > 0 ? p.is[j][in - 1] : 0;
                 r.in[j] = nullptr;
                 rs.h[j] = nullptr;
                 if (!o.data) {
                   r.c[j] = C(o.number);
                   continue;
                 }
                 const char *at = o.data + io[j] * es;
                 if (r.is[j] == 0 && dense)
                   rs.h[j] = at; // eachRow loads it, row by row
                 else
                   r.in[j] = at;
               }
               fn(L, rs);
             });
}

#ifndef TRACEIR_LOOPS_ONLY
/// The side of a transposing copy's tiles: 32 x 32 elements (4 KiB of
/// f32), inside L1 (16 and 64 measured slower on attention's 8x64x256).
constexpr int64_t kTile = 32;

/// A copy whose output's innermost dim reads the input strided while
/// another dim `d` of the input is unit-stride (a transpose, a permute to
/// channels-first, attention's heads moved back): those two dims walked in
/// tiles, each tile's columns read along d, contiguous, and written
/// strided into the tile's rows, which stay in cache, where a run of the
/// innermost dim would read one element per cache line (ATen blocks its
/// 2-D transposing copy the same way). False (nothing done) where the plan
/// is not one.
template <typename T>
bool transposeRuns(const EwPlan &p, int64_t numel, T *out, const T *src) {
  const int in = p.rank - 1;
  int d = -1;
  for (int k = 0; k < in; ++k)
    if (p.is[0][k] == 1)
      d = k;
  if (numel == 0 || d < 0 || p.os[in] != 1 || p.is[0][in] == 1)
    return false;
  const int64_t R = p.shape[d], C = p.shape[in];
  const int64_t tilesR = (R + kTile - 1) / kTile,
                tilesC = (C + kTile - 1) / kTile;
  const int64_t tasks = numel / (R * C) * tilesR * tilesC;
  const int64_t grain =
      std::max<int64_t>(1, cpu::grainSize() / (kTile * kTile));
  cpu::parallelFor(tasks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t c0 = t % tilesC * kTile, r0 = t / tilesC % tilesR * kTile;
      // The tile's place in the other dims.
      int64_t rest = t / (tilesC * tilesR), oo = 0, io = 0;
      for (int k = in - 1; k >= 0; --k) {
        if (k == d)
          continue;
        const int64_t idx = rest % p.shape[k];
        rest /= p.shape[k];
        oo += idx * p.os[k];
        io += idx * p.is[0][k];
      }
      const int64_t r1 = std::min(R, r0 + kTile), c1 = std::min(C, c0 + kTile);
      const int64_t is = p.is[0][in];
      for (int64_t c = c0; c < c1; ++c) {
        T *o = out + oo + c;
        const T *s = src + io + c * is;
        const int64_t os = p.os[d];
        for (int64_t r = r0; r < r1; ++r)
          o[r * os] = s[r];
      }
    }
  });
  return true;
}

/// A copy between tensors of one dtype (any: the bits move), by element
/// size: memcpy for unit strides, tiles for a transpose, else a strided
/// loop.
template <typename T> void copyRuns(const EwLaunch &L) {
  const EwPlan p = ewCoalesce(L);
  if (transposeRuns(p, L.numel, reinterpret_cast<T *>(L.out),
                    reinterpret_cast<const T *>(L.in[0].data)))
    return;
  const int in = p.rank - 1;
  const int64_t os = p.os[in], is = p.is[0][in];
  T *out = reinterpret_cast<T *>(L.out);
  const T *src = reinterpret_cast<const T *>(L.in[0].data);
  const int64_t ros = in > 0 ? p.os[in - 1] : 0,
                ris = in > 0 ? p.is[0][in - 1] : 0;
  forEachRun(p, 1, L.numel,
             [&](int64_t oo, const int64_t *io, int64_t n, int64_t rows) {
               for (int64_t k = 0; k < rows; ++k) {
                 T *o = out + oo + k * ros;
                 const T *s = src + io[0] + k * ris;
                 if (os == 1 && is == 1) {
                   std::memcpy(o, s, n * sizeof(T));
                   continue;
                 }
                 for (int64_t i = 0; i < n; ++i)
                   o[i * os] = s[i * is];
               }
             });
}
#endif

template <int32_t DT> bool runDtype(const EwLaunch &L) {
#define TRACEIR_OPT_CASE(OP, N)                                                \
  if (L.op == EwOp::OP && L.numOperands == N) {                                \
    run<EwOp::OP, DT, N>(L);                                                   \
    return true;                                                               \
  }
  TRACEIR_TYPED_EW_OPS(TRACEIR_OPT_CASE)
#undef TRACEIR_OPT_CASE
  return false;
}

} // namespace

bool cpu::optimized::TRACEIR_CPU_VARIANT::elementwise(const EwLaunch &L) {
  if (!optimizedTierEnabled() || !ewTypedCovers(L))
    return false;
  switch (L.outDtype) {
  case F32:
    return runDtype<F32>(L);
  case F64:
    return runDtype<F64>(L);
  case F16:
    return runDtype<F16>(L);
  case BF16:
    return runDtype<BF16>(L);
  default:
    return false;
  }
}

// A copy moves bits, memcpy at its best already: the base variant alone
// has one (Dispatch.cpp).
#ifndef TRACEIR_LOOPS_ONLY
bool cpu::optimized::base::copy(const Tensor &src, Tensor &dst) {
  if (!optimizedTierEnabled() || src.dtype != dst.dtype ||
      src.shape != dst.shape || dst.rank() > kEwMaxRank)
    return false;
  EwLaunch L;
  L.op = EwOp::Copy;
  L.rank = static_cast<int32_t>(dst.rank());
  L.numel = dst.numel();
  L.out = dst.bytes();
  L.outDtype = static_cast<int32_t>(dst.dtype);
  L.numOperands = 1;
  L.in[0].data = src.bytes();
  L.in[0].dtype = L.outDtype;
  for (int d = 0; d < L.rank; ++d) {
    L.shape[d] = dst.shape[d];
    L.outStrides[d] = dst.strides[d];
    L.in[0].strides[d] = src.strides[d];
  }
  switch (dtypeSize(dst.dtype)) {
  case 1:
    copyRuns<uint8_t>(L);
    return true;
  case 2:
    copyRuns<uint16_t>(L);
    return true;
  case 4:
    copyRuns<uint32_t>(L);
    return true;
  case 8:
    copyRuns<uint64_t>(L);
    return true;
  default:
    return false;
  }
}
#endif // TRACEIR_LOOPS_ONLY
