//===- Attention.cpp - scaled_dot_product_attention on CUDA ---------------===//
//
// Arguments are read by attentionArgs (NNArgs.h), shared with the CPU
// kernel. Two strided-batched cuBLAS products around Attention.cu's masked
// softmax: scores[B, L, S] = scale * Q @ K^T (f32 accumulation and storage,
// f64 for f64), P = softmax(mask(scores)) in the query's dtype, out = P @ V.
// An operand whose batches are not evenly spaced (broadcast over several
// dims) or whose matrices are neither row- nor column-major is gathered
// into contiguous scratch first; the views TransformerEncoderLayer passes
// (heads split off a [B, L, H * D] projection) go in as they are.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/NNArgs.h"
#include "TraceIR/Support/CheckedMath.h"

#include <algorithm>
#include <cublas_v2.h>
#include <cuda_runtime.h>

using namespace traceir;

namespace {
/// A batch of matrices as cuBLAS takes them (row-major terms): base pointer,
/// leading dimension, transposed flag, batch stride (elements).
struct BatchedOperand {
  const char *data;
  int64_t ld;
  bool trans; // stored column-major
  int64_t batchStride;
};

/// rows x cols with strides (rs, cs) as a cuBLAS operand, as Linalg.cpp's
/// describe does.
bool describe(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t &ld,
              bool &trans) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) {
    ld = std::max<int64_t>({rs, cols, 1});
    trans = false;
    return true;
  }
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows)) {
    ld = std::max<int64_t>({cs, rows, 1});
    trans = true;
    return true;
  }
  return false;
}

/// `o` (its matrix [rows, cols] with row and column strides rs, cs) as a
/// batched cuBLAS operand; gathered into contiguous scratch when needed.
bool prepare(KernelContext &ctx, const AttentionArgs &a,
             const AttentionOperand &o, int64_t rows, int64_t cols, int64_t rs,
             int64_t cs, BatchedOperand &out) {
  const Tensor &t = *o.t;
  size_t es = dtypeSize(t.dtype);
  int64_t stride;
  bool trans;
  int64_t ld;
  if (a.evenlySpaced(o, stride) && describe(rows, cols, rs, cs, ld, trans)) {
    out = {static_cast<const char *>(t.storage->data) +
               a.batchOffset(o, 0) * es,
           ld, trans, stride};
    return true;
  }
  // A dense copy of the broadcast operand: B x rows x cols is no verified
  // tensor's size, so it is checked.
  std::optional<int64_t> rc = checkedMul(rows, cols);
  std::optional<int64_t> n = rc ? checkedMul(a.B, *rc) : std::nullopt;
  if (!n) {
    ctx.fail("scaled_dot_product_attention: an operand's gathered size "
             "overflows");
    return false;
  }
  char *buf = static_cast<char *>(ctx.scratch(*n, es, 1));
  if (!buf)
    return false;
  Storage dst{buf, static_cast<int64_t>(*n * es), t.storage->device};
  Tensor from, to;
  from.storage = t.storage;
  from.offset = o.offset;
  to.storage = &dst;
  from.dtype = to.dtype = t.dtype;
  from.shape.assign(a.batchShape.begin(), a.batchShape.end());
  from.shape.insert(from.shape.end(), {rows, cols});
  from.strides.assign(o.batchStrides.begin(), o.batchStrides.end());
  from.strides.insert(from.strides.end(), {rs, cs});
  to.shape = from.shape;
  to.strides = Tensor::contiguousStrides(to.shape);
  if (!cuda::copyStrided(from, to)) {
    ctx.fail("gathering an operand failed");
    return false;
  }
  out = {buf, std::max<int64_t>(cols, 1), false, *rc};
  return true;
}

/// C[b] (row-major [M, N], contiguous, batch stride M * N, type cType) =
/// alpha * A[b] @ B[b] for every batch: as Linalg.cpp, the column-major
/// C^T = B^T @ A^T with the operands swapped.
bool gemmBatched(cublasHandle_t h, DType abType, const BatchedOperand &A,
                 const BatchedOperand &B, char *C, DType cType, int64_t M,
                 int64_t N, int64_t K, int64_t batches, double alpha) {
  bool f64 = abType == DType::F64;
  float alpha32 = static_cast<float>(alpha), beta32 = 0;
  double beta64 = 0;
  const void *al = f64 ? static_cast<const void *>(&alpha)
                       : static_cast<const void *>(&alpha32);
  const void *be = f64 ? static_cast<const void *>(&beta64)
                       : static_cast<const void *>(&beta32);
  cublasStatus_t st = cublasGemmStridedBatchedEx(
      h, B.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
      A.trans ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(N),
      static_cast<int>(M), static_cast<int>(K), al, B.data,
      cuda::dataType(abType), static_cast<int>(B.ld), B.batchStride, A.data,
      cuda::dataType(abType), static_cast<int>(A.ld), A.batchStride, be, C,
      cuda::dataType(cType), static_cast<int>(N), M * N,
      static_cast<int>(batches), f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS;
}
} // namespace

/// The attention of `a` into result 0 and, where `lse` is not null, each
/// score row's logsumexp into it ([B, L], contiguous).
static void attention(KernelContext &ctx, const AttentionArgs &a, Tensor *lse) {
  Tensor &out = ctx.result(0);
  DType dtype = a.q.t->dtype;
  if (a.B == 0 || a.L == 0 || (a.Ev == 0 && !lse))
    return;
  if (a.S == 0) { // no keys: every row attends to nothing, zeros as on CPU
    if (out.nbytes() > 0 &&
        cudaMemset(out.bytes(), 0, out.nbytes()) != cudaSuccess)
      return ctx.fail("clearing the result failed");
    if (lse) { // -inf each: the softmax kernel reads no score
      AttentionSoftmaxLaunch L;
      L.B = a.B;
      L.L = a.L;
      L.lse = lse->bytes();
      L.lseDtype = static_cast<int32_t>(lse->dtype);
      if (const char *err = launchAttentionSoftmaxCUDA(L))
        ctx.fail(strCat("softmax kernel failed on CUDA: ") + err);
    }
    return;
  }
  if (a.B > INT32_MAX || a.L > INT32_MAX || a.S > INT32_MAX ||
      a.E > INT32_MAX || a.Ev > INT32_MAX)
    return ctx.fail("scaled_dot_product_attention on CUDA: sizes must fit in "
                    "32 bits");
  cublasHandle_t h = cuda::cublasHandle(out.storage->device.index);
  if (!h)
    return ctx.fail("cuBLAS could not start");
  // K^T as a strided [E, S] matrix: K's strides swapped.
  BatchedOperand Q, Kt, V;
  if (!prepare(ctx, a, a.q, a.L, a.E, a.q.rs, a.q.cs, Q) ||
      !prepare(ctx, a, a.k, a.E, a.S, a.k.cs, a.k.rs, Kt) ||
      !prepare(ctx, a, a.v, a.S, a.Ev, a.v.rs, a.v.cs, V))
    return;
  DType acc = dtype == DType::F64 ? DType::F64 : DType::F32;
  int64_t nScores = a.B * a.L * a.S;
  char *scores = static_cast<char *>(ctx.scratch(nScores, dtypeSize(acc), 1));
  char *probs = static_cast<char *>(ctx.scratch(nScores, dtypeSize(dtype), 1));
  if (!scores || !probs)
    return;
  if (a.E == 0) {
    if (cudaMemset(scores, 0, nScores * dtypeSize(acc)) != cudaSuccess)
      return ctx.fail("clearing the scores failed");
  } else if (!gemmBatched(h, dtype, Q, Kt, scores, acc, a.L, a.S, a.E, a.B,
                          a.scale)) {
    return ctx.fail("cuBLAS gemm (Q @ K^T) failed");
  }
  AttentionSoftmaxLaunch L;
  L.scores = scores;
  L.scoreDtype = static_cast<int32_t>(acc);
  L.probs = probs;
  L.probDtype = static_cast<int32_t>(dtype);
  L.B = a.B;
  L.L = a.L;
  L.S = a.S;
  L.causal = a.causal;
  if (lse) {
    L.lse = lse->bytes();
    L.lseDtype = static_cast<int32_t>(lse->dtype);
  }
  if (a.hasMask) {
    if (static_cast<int64_t>(a.batchShape.size()) > kRdMaxRank)
      return ctx.fail("scaled_dot_product_attention on CUDA supports at most " +
                      strCat(kRdMaxRank) + " batch dims with a mask");
    L.mask = static_cast<const char *>(a.mask.t->storage->data);
    L.maskDtype = static_cast<int32_t>(a.mask.t->dtype);
    L.batchRank = static_cast<int32_t>(a.batchShape.size());
    for (int32_t d = 0; d < L.batchRank; ++d) {
      L.batchShape[d] = a.batchShape[d];
      L.maskBatchStrides[d] = a.mask.batchStrides[d];
    }
    L.maskOffset = a.mask.offset;
    L.maskRs = a.mask.rs;
    L.maskCs = a.mask.cs;
  }
  if (const char *err = launchAttentionSoftmaxCUDA(L))
    return ctx.fail(strCat("softmax kernel failed on CUDA: ") + err);
  if (a.Ev == 0)
    return;
  BatchedOperand P{probs, a.S, false, a.L * a.S};
  if (!gemmBatched(h, dtype, P, V, out.bytes(), dtype, a.L, a.Ev, a.S, a.B,
                   1.0))
    ctx.fail("cuBLAS gemm (P @ V) failed");
}

void cuda::scaled_dot_product_attention(KernelContext &ctx) {
  AttentionArgs a;
  if (attentionArgs(ctx, a))
    attention(ctx, a, nullptr);
}

/// The same attention, with each score row's logsumexp as result 1.
void cuda::_scaled_dot_product_flash_attention_for_cpu(KernelContext &ctx) {
  AttentionArgs a;
  if (flashAttentionForCpuArgs(ctx, a))
    attention(ctx, a, &ctx.result(1));
}
