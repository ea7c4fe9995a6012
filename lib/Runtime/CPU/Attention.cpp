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
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
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

/// The attention of `a` into result 0 and, where `lse` is not null, each
/// score row's logsumexp into it ([B, L], contiguous).
template <typename T>
void attention(KernelContext &ctx, const AttentionArgs &a, Tensor *lse,
               Tensor &out) {
  DType dtype = a.q.t->dtype;
  size_t es = sizeof(T);
  if (a.B == 0 || a.L == 0 || (a.Ev == 0 && !lse))
    return;
  // Scores and then probabilities of one batch matrix, reused.
  std::optional<int64_t> nScores = checkedMul(a.L, a.S);
  if (!nScores) {
    ctx.fail("scaled_dot_product_attention: L x S overflows");
    return;
  }
  T *scores = static_cast<T *>(ctx.scratch(*nScores, es, 1));
  auto *row = static_cast<double *>(ctx.scratch(a.S, sizeof(double), 1));
  if (!scores || !row)
    return;
  // batchOffset counts from the storage's start (it includes the tensor's
  // own offset).
  auto base = [](const AttentionOperand &o) {
    return static_cast<const char *>(o.t->storage->data);
  };
  const char *qd = base(a.q), *kd = base(a.k), *vd = base(a.v);
  for (int64_t b = 0; b < a.B && !ctx.failed(); ++b) {
    const char *qb = qd + a.batchOffset(a.q, b) * es;
    const char *kb = kd + a.batchOffset(a.k, b) * es;
    const char *vb = vd + a.batchOffset(a.v, b) * es;
    char *ob = out.bytes() + b * a.L * a.Ev * es;
    // scores[L, S] = scale * Q[L, E] @ K^T[E, S]
    gemm(ctx, dtype, qb, a.q.rs, a.q.cs, kb, a.k.cs, a.k.rs,
         reinterpret_cast<char *>(scores), a.S, a.L, a.S, a.E, a.scale, 0.0);
    if (ctx.failed())
      return;
    for (int64_t i = 0; i < a.L; ++i) {
      double l = 0;
      softmaxRow<T>(a, b, i, scores + i * a.S, row, scores + i * a.S,
                    lse ? &l : nullptr);
      if (lse)
        storeDouble(lse->bytes() + (b * a.L + i) * dtypeSize(lse->dtype),
                    lse->dtype, l);
    }
    if (a.Ev == 0)
      continue;
    // out[L, Ev] = P[L, S] @ V[S, Ev]
    gemm(ctx, dtype, reinterpret_cast<const char *>(scores), a.S, 1, vb, a.v.rs,
         a.v.cs, ob, a.Ev, a.L, a.Ev, a.S, 1.0, 0.0);
  }
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

/// The same attention, with the logsumexp of each (scaled, masked) score
/// row as its second result.
void cpu::_scaled_dot_product_flash_attention_for_cpu(KernelContext &ctx) {
  AttentionArgs a;
  if (flashAttentionForCpuArgs(ctx, a))
    attentionOf(ctx, a, &ctx.result(1),
                "_scaled_dot_product_flash_attention_for_cpu");
}
