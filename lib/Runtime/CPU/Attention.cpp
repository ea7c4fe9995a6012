//===- Attention.cpp - scaled_dot_product_attention on the CPU ------------===//
//
// PyTorch's math backend, one batch matrix at a time: scores = scale * Q @
// K^T through BLAS (the gemm of Linalg.cpp, which takes the strided views
// TransformerEncoderLayer produces without copying), then mask, causal mask
// and a softmax that subtracts the row's max (in double), then P @ V into the
// result. A row that is masked out entirely gives zeros, as PyTorch does
// (its _safe_softmax), not NaN. Arguments are read by attentionArgs
// (NNArgs.h), shared with the CUDA kernel.
// f16 and bf16 compute in float on float copies, rounding the result once.
// _scaled_dot_product_flash_attention_for_cpu is the same computation,
// returning each score row's logsumexp (max + log(sum of exp)) too.
// The optimized tier (cpu::fast::scaled_dot_product_attention, f32 and
// f64) shares the per-batch loop and its GEMMs; it masks the scores in
// their own dtype and runs the optimized row softmax (Optimized.h) over
// each L x S block, in float for f32 as ATen does, and splits the batches
// over threads where the products are small.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Support/CheckedMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// Masks one row of scores (in place, as doubles in `row`) and turns it into
/// probabilities stored as T at `p`; the row's logsumexp (-inf where
/// nothing is left to attend to) goes to `lse` where it is not null.
template <typename T>
void softmaxRow(const AttentionArgs &a, int64_t b, int64_t i, const T *scores,
                double *row, T *p, double *lse) {
  const double ninf = -std::numeric_limits<double>::infinity();
  int64_t mbase = a.hasMask ? a.batchOffset(a.mask, b) + i * a.mask.rs : 0;
  const char *mdata =
      a.hasMask ? static_cast<const char *>(a.mask.t->storage->data) : nullptr;
  size_t mes = a.hasMask ? dtypeSize(a.mask.t->dtype) : 0;
  double mx = ninf;
  for (int64_t j = 0; j < a.S; ++j) {
    double x = scores[j];
    if (a.causal && j > i)
      x = ninf;
    else if (a.hasMask) {
      const char *mp = mdata + (mbase + j * a.mask.cs) * mes;
      if (a.maskIsBool)
        x = loadInt(mp, DType::Bool) ? x : ninf;
      else
        x += loadDouble(mp, a.mask.t->dtype);
    }
    row[j] = x;
    mx = std::max(mx, x);
  }
  if (mx == ninf) { // nothing to attend to: zeros, as PyTorch
    for (int64_t j = 0; j < a.S; ++j)
      p[j] = T(0);
    if (lse)
      *lse = ninf;
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < a.S; ++j)
    sum += row[j] = std::exp(row[j] - mx);
  if (lse)
    *lse = mx + std::log(sum);
  for (int64_t j = 0; j < a.S; ++j)
    p[j] = static_cast<T>(row[j] / sum);
}

/// Scratch for `n` L x S blocks of T (scores, probabilities), or null with
/// the context failed.
template <typename T>
T *scoreBlocks(KernelContext &ctx, const AttentionArgs &a, int64_t n) {
  std::optional<int64_t> count = checkedMul(a.L, a.S);
  if (count)
    count = checkedMul(*count, n);
  if (!count) {
    ctx.fail("scaled_dot_product_attention: L x S overflows");
    return nullptr;
  }
  return static_cast<T *>(ctx.scratch(*count, sizeof(T), 1));
}

/// The per-batch loop both tiers share, over batches [b0, b1) (all by
/// default): scores = scale * Q @ K^T into `scores` (one L x S block,
/// reused), `probs(b, scores)` turns them into probabilities (returning
/// where it put them: in place or elsewhere), then out = P @ V.
/// `probsOnly`: the probabilities are wanted even where the result is
/// empty (their logsumexp is).
template <typename T, typename Probs>
void attentionBatches(KernelContext &ctx, const AttentionArgs &a, Tensor &out,
                      T *scores, bool probsOnly, Probs probs, int64_t b0 = 0,
                      int64_t b1 = -1) {
  DType dtype = a.q.t->dtype;
  size_t es = sizeof(T);
  if (a.B == 0 || a.L == 0 || (a.Ev == 0 && !probsOnly))
    return;
  // batchOffset counts from the storage's start (it includes the tensor's
  // own offset).
  auto base = [](const AttentionOperand &o) {
    return static_cast<const char *>(o.t->storage->data);
  };
  const char *qd = base(a.q), *kd = base(a.k), *vd = base(a.v);
  if (b1 < 0)
    b1 = a.B;
  for (int64_t b = b0; b < b1 && !ctx.failed(); ++b) {
    const char *qb = qd + a.batchOffset(a.q, b) * es;
    const char *kb = kd + a.batchOffset(a.k, b) * es;
    const char *vb = vd + a.batchOffset(a.v, b) * es;
    char *ob = out.bytes() + b * a.L * a.Ev * es;
    // scores[L, S] = scale * Q[L, E] @ K^T[E, S]
    gemm(ctx, dtype, qb, a.q.rs, a.q.cs, kb, a.k.cs, a.k.rs,
         reinterpret_cast<char *>(scores), a.S, a.L, a.S, a.E, a.scale, 0.0);
    if (ctx.failed())
      return;
    const T *p = probs(b, scores);
    if (a.Ev == 0)
      continue;
    // out[L, Ev] = P[L, S] @ V[S, Ev]
    gemm(ctx, dtype, reinterpret_cast<const char *>(p), a.S, 1, vb, a.v.rs,
         a.v.cs, ob, a.Ev, a.L, a.Ev, a.S, 1.0, 0.0);
  }
}

/// The attention of `a` into result 0 and, where `lse` is not null, each
/// score row's logsumexp into it ([B, L], contiguous): the softmax in
/// double, a row at a time.
template <typename T>
void attention(KernelContext &ctx, const AttentionArgs &a, Tensor *lse,
               Tensor &out) {
  T *scores = scoreBlocks<T>(ctx, a, 1);
  auto *row = static_cast<double *>(ctx.scratch(a.S, sizeof(double), 1));
  if (!scores || !row)
    return;
  attentionBatches<T>(
      ctx, a, out, scores, lse != nullptr, [&](int64_t b, T *s) -> const T * {
        for (int64_t i = 0; i < a.L; ++i) {
          double l = 0;
          softmaxRow<T>(a, b, i, s + i * a.S, row, s + i * a.S,
                        lse ? &l : nullptr);
          if (lse)
            storeDouble(lse->bytes() + (b * a.L + i) * dtypeSize(lse->dtype),
                        lse->dtype, l);
        }
        return s;
      });
}

/// `f(x[j], m[j * cs])` into x[j] for j < n; the unit-stride case is its own
/// loop so that the compiler vectorizes it.
template <typename T, typename M, typename F>
void maskLoop(T *x, const M *m, int64_t cs, int64_t n, F f) {
  if (cs == 1) {
    for (int64_t j = 0; j < n; ++j)
      x[j] = f(x[j], m[j]);
  } else {
    for (int64_t j = 0; j < n; ++j)
      x[j] = f(x[j], m[j * cs]);
  }
}

/// Masks row i of batch b's scores in place in T, as softmaxRow does in
/// double (the causal mask first: a masked-out entry stays -inf whatever
/// the mask adds), and says whether nothing is left to attend to (every
/// entry -inf), which the softmax would turn into NaN.
template <typename T>
bool maskRowFast(const AttentionArgs &a, int64_t b, int64_t i, T *x) {
  const T ninf = -std::numeric_limits<T>::infinity();
  int64_t kept = a.causal ? std::min(i + 1, a.S) : a.S;
  std::fill(x + kept, x + a.S, ninf);
  if (a.hasMask) {
    const char *m =
        static_cast<const char *>(a.mask.t->storage->data) +
        (a.batchOffset(a.mask, b) + i * a.mask.rs) * dtypeSize(a.mask.t->dtype);
    if (a.maskIsBool)
      maskLoop(x, reinterpret_cast<const uint8_t *>(m), a.mask.cs, kept,
               [ninf](T v, uint8_t keep) { return keep ? v : ninf; });
    else // attentionArgs: a float mask has the query's dtype
      maskLoop(x, reinterpret_cast<const T *>(m), a.mask.cs, kept,
               [](T v, T add) { return v + add; });
  }
  // An OR of compares, which vectorizes (a NaN counts as live, as it does
  // in the softmax).
  int live = 0;
  for (int64_t j = 0; j < kept; ++j)
    live |= x[j] != ninf;
  return !live;
}

/// Products of more multiply-adds than this split over the threads
/// themselves (cpu::sgemm), one batch at a time, which keeps one part's
/// scratch for the scores; smaller ones are cheaper split by batches.
constexpr int64_t kSerialGemmMACs = 65536 * 4;
/// The fewest multiply-adds worth a second thread (about 0.15 ms here: a
/// parallel region's wake-up costs tens of microseconds).
constexpr int64_t kParallelAttentionMACs = int64_t(1) << 22;

/// How many threads share the batch matrices: each its own batches, its
/// own scratch, the BLAS on one thread in each (ATen's CPU attention
/// splits batch x heads the same way). One where the products are large
/// enough to split themselves, where gemm would gather an operand
/// into scratch (the kernel context is not shared), or where the work is
/// too small to pay for a thread.
int64_t attentionParts(const AttentionArgs &a) {
  int64_t threads = std::min<int64_t>(cpu::numThreads(), a.B);
  if (threads < 2 || a.Ev == 0)
    return 1;
  std::optional<int64_t> ls = checkedMul(a.L, a.S);
  std::optional<int64_t> qk = ls ? checkedMul(*ls, a.E) : std::nullopt;
  std::optional<int64_t> pv = ls ? checkedMul(*ls, a.Ev) : std::nullopt;
  if (!qk || !pv || *qk > kSerialGemmMACs || *pv > kSerialGemmMACs)
    return 1;
  std::optional<int64_t> total = checkedMul(*qk + *pv, a.B);
  if (!total || *total < kParallelAttentionMACs)
    return 1;
  if (!cpu::blasTakes(a.L, a.E, a.q.rs, a.q.cs) ||
      !cpu::blasTakes(a.E, a.S, a.k.cs, a.k.rs) ||
      !cpu::blasTakes(a.S, a.Ev, a.v.rs, a.v.cs))
    return 1;
  return threads;
}

/// The optimized tier's attention for T = float or double: the same loop,
/// the mask applied to the scores in T and the softmax in T through the
/// optimized row softmax, over the L x S block at once; the batches split
/// over threads where attentionParts says so. Each batch is computed the
/// same way whichever thread runs it, so results do not depend on the
/// thread count.
template <typename T>
void attentionFast(KernelContext &ctx, const AttentionArgs &a) {
  const int64_t parts = attentionParts(a);
  // Per part: the scores and the probabilities (the softmax reads the one
  // and writes the other: its loops take them as not aliasing), and which
  // rows are masked out entirely.
  T *scores = scoreBlocks<T>(ctx, a, 2 * parts);
  auto *dead = static_cast<uint8_t *>(ctx.scratch(a.L * parts, 1, 1));
  if (!scores || !dead)
    return;
  Tensor &out = ctx.result(0);
  auto batches = [&](int64_t part, int64_t b0, int64_t b1) {
    T *s0 = scores + 2 * part * a.L * a.S;
    T *probs = s0 + a.L * a.S;
    uint8_t *deadRows = dead + part * a.L;
    optimized::SoftmaxRows r{reinterpret_cast<const char *>(s0),
                             reinterpret_cast<char *>(probs),
                             static_cast<int32_t>(a.q.t->dtype),
                             a.L,
                             a.S,
                             1,
                             false};
    attentionBatches<T>(
        ctx, a, out, s0, false,
        [&](int64_t b, T *s) -> const T * {
          bool anyDead = false;
          for (int64_t i = 0; i < a.L; ++i) {
            deadRows[i] = maskRowFast<T>(a, b, i, s + i * a.S);
            anyDead = anyDead || deadRows[i];
          }
          // Inside a part's thread its loops run on that thread.
          optimized::softmax(r);
          // Rows masked out entirely: zeros, as PyTorch's _safe_softmax.
          if (anyDead)
            for (int64_t i = 0; i < a.L; ++i)
              if (deadRows[i])
                std::fill(probs + i * a.S, probs + (i + 1) * a.S, T(0));
          return probs;
        },
        b0, b1);
  };
  if (parts == 1)
    return batches(0, 0, a.B);
  cpu::parallelFor(parts, 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p)
      batches(p, p * a.B / parts, (p + 1) * a.B / parts);
  });
}
} // namespace

/// f16 and bf16, as ATen's CPU kernels: float copies of the operands (and
/// of a float mask), the attention in float, the result rounded once.
static void attentionInFloat(KernelContext &ctx, const AttentionArgs &a,
                             Tensor *lse) {
  Tensor &out = ctx.result(0);
  std::vector<Storage> storages(5);
  std::vector<Tensor> copies(5);
  unsigned used = 0;
  auto toFloat = [&](const Tensor &t, bool copy = true) -> Tensor * {
    Storage &st = storages[used];
    Tensor &f = copies[used++];
    st.device = t.storage->device;
    st.nbytes = t.numel() * int64_t(sizeof(float));
    st.data = ctx.scratch(t.numel(), sizeof(float), 1);
    if (!st.data)
      return nullptr;
    f.storage = &st;
    f.dtype = DType::F32;
    f.shape = t.shape;
    f.strides = Tensor::contiguousStrides(t.shape);
    if (copy)
      copyTensor(t, f);
    return &f;
  };
  AttentionArgs af = a;
  const Tensor *q = toFloat(*a.q.t), *k = toFloat(*a.k.t), *v = toFloat(*a.v.t);
  const Tensor *m = a.hasMask && !a.maskIsBool ? toFloat(*a.mask.t) : a.mask.t;
  Tensor *o = toFloat(out, /*copy=*/false);
  if (!q || !k || !v || (a.hasMask && !m) || !o)
    return;
  attentionOperand(*q, af.batchShape, af.q);
  attentionOperand(*k, af.batchShape, af.k);
  attentionOperand(*v, af.batchShape, af.v);
  if (a.hasMask)
    attentionOperand(*m, af.batchShape, af.mask);
  attention<float>(ctx, af, lse, *o);
  if (!ctx.failed())
    copyTensor(*o, out);
}

static void attentionOf(KernelContext &ctx, const AttentionArgs &a, Tensor *lse,
                        const char *op) {
  switch (a.q.t->dtype) {
  case DType::F32:
    return attention<float>(ctx, a, lse, ctx.result(0));
  case DType::F64:
    return attention<double>(ctx, a, lse, ctx.result(0));
  case DType::F16:
  case DType::BF16:
    return attentionInFloat(ctx, a, lse);
  default:
    return ctx.fail(strCat(op, " on the CPU supports floating dtypes, got ") +
                    dtypeName(a.q.t->dtype));
  }
}

void cpu::scaled_dot_product_attention(KernelContext &ctx) {
  AttentionArgs a;
  if (attentionArgs(ctx, a))
    attentionOf(ctx, a, nullptr, "scaled_dot_product_attention");
}

/// The optimized tier (Ops.def's FAST_CPU): f32 and f64; f16 and bf16 run
/// on the portable kernel (float copies).
bool cpu::fast::scaled_dot_product_attention(KernelContext &ctx) {
  AttentionArgs a;
  if (!attentionArgs(ctx, a))
    return true;
  // No keys (S == 0): the softmax's rows would be empty; portable.
  if (a.S == 0)
    return false;
  switch (a.q.t->dtype) {
  case DType::F32:
    attentionFast<float>(ctx, a);
    return true;
  case DType::F64:
    attentionFast<double>(ctx, a);
    return true;
  default:
    return false;
  }
}

/// The same attention, with the logsumexp of each (scaled, masked) score
/// row as its second result.
void cpu::_scaled_dot_product_flash_attention_for_cpu(KernelContext &ctx) {
  AttentionArgs a;
  if (flashAttentionForCpuArgs(ctx, a))
    attentionOf(ctx, a, &ctx.result(1),
                "_scaled_dot_product_flash_attention_for_cpu");
}
