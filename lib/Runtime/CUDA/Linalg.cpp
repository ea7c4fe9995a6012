//===- Linalg.cpp - Matrix products on CUDA through cuBLAS ----------------===//
//
// Row-major C = A @ B is column-major C^T = B^T @ A^T, so every product is
// one cuBLAS gemm with the operands swapped. An operand whose last two dims
// are row- or column-major is passed as is (with the transpose flag);
// anything else is gathered on the device first. f16 and bf16 go through
// cublasGemmEx with f32 accumulation. At the optimized tier, linear with a
// bias runs as one cuBLASLt product with the bias in its epilogue, as
// PyTorch's CUDA addmm does, where the operands allow (linearLt).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/BatchedMatmul.h"
#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Support/CheckedMath.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

using namespace traceir;

namespace {
struct Operand {
  const char *data;
  int64_t ld;
  bool trans; // stored column-major (the transpose of a row-major matrix)
};

bool describe(const char *base, int64_t rows, int64_t cols, int64_t rs,
              int64_t cs, Operand &m) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) {
    m = {base, std::max<int64_t>({rs, cols, 1}), false};
    return true;
  }
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows)) {
    m = {base, std::max<int64_t>({cs, rows, 1}), true};
    return true;
  }
  return false;
}

/// C[M,N] (row-major, ldc) = A[M,K] @ B[K,N] for one matrix of each.
bool gemm(KernelContext &ctx, DType dtype, const Tensor &scratchOwner,
          const char *a, int64_t ars, int64_t acs, const char *b, int64_t brs,
          int64_t bcs, char *c, int64_t ldc, int64_t M, int64_t N, int64_t K) {
  size_t es = dtypeSize(dtype);
  auto prepare = [&](const char *p, int64_t rows, int64_t cols, int64_t rs,
                     int64_t cs, Operand &m) {
    if (describe(p, rows, cols, rs, cs, m))
      return true;
    // A dense copy of one operand matrix: its size is checked (rows x cols
    // of a broadcast operand is no verified tensor's).
    std::optional<int64_t> count = checkedMul(rows, cols);
    char *buf = count ? static_cast<char *>(ctx.scratch(*count, es)) : nullptr;
    if (!count)
      ctx.fail("a matmul operand's rows x cols overflows");
    if (!buf)
      return false;
    // scratch() succeeded, so *count * es fits.
    Storage src{const_cast<char *>(p), *count * int64_t(es),
                scratchOwner.storage->device};
    Storage dst{buf, *count * int64_t(es), scratchOwner.storage->device};
    PanelGather g = panelGather(src, dst, dtype, rows, cols, rs, cs);
    if (!cuda::copyStrided(g.from, g.to))
      return false;
    m = {buf, std::max<int64_t>(cols, 1), false};
    return true;
  };
  Operand A, B;
  if (!prepare(a, M, K, ars, acs, A) || !prepare(b, K, N, brs, bcs, B))
    return false;
  if (M == 0 || N == 0)
    return true;
  cublasHandle_t h = cuda::cublasHandle(scratchOwner.storage->device.index);
  if (!h)
    return false;
  // Column-major view: C^T[N,M] = B^T[N,K] @ A^T[K,M].
  cublasOperation_t opB = B.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = A.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  float alpha32 = 1, beta32 = 0;
  double alpha64 = 1, beta64 = 0;
  cublasStatus_t st;
  if (dtype == DType::F64)
    st = cublasDgemm(h, opB, opA, N, M, K, &alpha64,
                     reinterpret_cast<const double *>(B.data), B.ld,
                     reinterpret_cast<const double *>(A.data), A.ld, &beta64,
                     reinterpret_cast<double *>(c), ldc);
  else if (dtype == DType::F32)
    st = cublasSgemm(h, opB, opA, N, M, K, &alpha32,
                     reinterpret_cast<const float *>(B.data), B.ld,
                     reinterpret_cast<const float *>(A.data), A.ld, &beta32,
                     reinterpret_cast<float *>(c), ldc);
  else
    st = cublasGemmEx(
        h, opB, opA, N, M, K, &alpha32, B.data, cuda::dataType(dtype), B.ld,
        A.data, cuda::dataType(dtype), A.ld, &beta32, c, cuda::dataType(dtype),
        ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS;
}

/// torch.matmul into a fresh contiguous `out` (batch dims broadcast).
void matmulInto(KernelContext &ctx, const Tensor &x, const Tensor &y,
                Tensor &out) {
  if (x.dtype != y.dtype || (x.dtype != DType::F32 && x.dtype != DType::F64 &&
                             x.dtype != DType::F16 && x.dtype != DType::BF16))
    return ctx.fail(strCat("matrix products on CUDA support f32, f64, "
                           "f16 and bf16, got ") +
                    dtypeName(x.dtype) + " and " + dtypeName(y.dtype));
  if (std::string err = matmulShapeError(x, y, out); !err.empty())
    return ctx.fail(err);
  forEachMatmul(x, y, out, [&](const MatmulPanel &p) {
    if (gemm(ctx, x.dtype, out, p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.c,
             p.ldc, p.M, p.N, p.K))
      return true;
    ctx.fail("cuBLAS gemm failed");
    return false;
  });
}

/// out = out * scaleOut + bias * scaleBias, broadcast (an elementwise launch).
bool addScaled(const Tensor &bias, Tensor &out, double scaleOut,
               double scaleBias) {
  // Verified types always broadcast; a saved executable's may not (the
  // caller fails the op).
  if (!broadcastsTo(bias.shape, out.shape))
    return false;
  EwLaunch L;
  L.op = EwOp::Add;
  L.rank = out.rank();
  L.numel = out.numel();
  for (int64_t d = 0; d < out.rank(); ++d) {
    L.shape[d] = out.shape[d];
    L.outStrides[d] = out.strides[d];
    L.in[0].strides[d] = out.strides[d];
  }
  int64_t off = out.rank() - bias.rank();
  for (int64_t d = 0; d < bias.rank(); ++d)
    L.in[1].strides[off + d] = bias.shape[d] == 1 ? 0 : bias.strides[d];
  L.out = out.bytes();
  L.outDtype = static_cast<int32_t>(out.dtype);
  L.numOperands = 2;
  L.in[0].data = out.bytes();
  L.in[0].dtype = L.outDtype;
  L.in[1].data = bias.bytes();
  L.in[1].dtype = static_cast<int32_t>(bias.dtype);
  L.floating = true;
  L.alpha = scaleBias;
  if (scaleOut != 1.0) {
    EwLaunch S = L;
    S.op = EwOp::Mul;
    S.numOperands = 2;
    S.in[1] = EwOperand();
    S.in[1].number = scaleOut;
    if (!launchElementwiseCUDA(S)) // floating: nothing to check
      return false;
  }
  return launchElementwiseCUDA(L);
}
/// cuBLASLt's workspace for one product: PyTorch's default for its Lt
/// calls (CUBLASLT_WORKSPACE_SIZE, 1 MiB), from the op's scratch.
constexpr size_t kLtWorkspaceBytes = size_t(1) << 20;

/// The largest power of two (up to 256, what cuBLASLt asks about) dividing
/// `p`'s address: a heuristic must not pick a kernel whose vector loads
/// assume more alignment than an operand has.
uint32_t alignmentOf(const void *p) {
  uint32_t a = 256;
  while (a > 1 && reinterpret_cast<uintptr_t>(p) % a != 0)
    a /= 2;
  return a;
}

/// Destroys a cuBLASLt object when the product is done.
template <typename T, cublasStatus_t (*Destroy)(T)> struct LtOwned {
  T v = nullptr;
  ~LtOwned() {
    if (v)
      Destroy(v);
  }
};

/// out [..., N] = x [..., K] @ wt [K, N] + bias [N] as one cuBLASLt
/// product with CUBLASLT_EPILOGUE_BIAS, for f32 (no TF32: f32 math), f16
/// and bf16 (f32 accumulation) operands of one dtype, a unit-stride 16-byte
/// aligned bias, a contiguous result and an x of rank 2 or more whose rows
/// fold into one matrix (foldedRowStride). False,
/// having written nothing, where it does not apply or cuBLASLt offers no
/// algorithm; true when it ran or failed the op.
bool linearLt(KernelContext &ctx, const Tensor &x, const Tensor &wt,
              const Tensor &bias, Tensor &out) {
  DType dt = x.dtype;
  if ((dt != DType::F32 && dt != DType::F16 && dt != DType::BF16) ||
      wt.dtype != dt || bias.dtype != dt || out.dtype != dt || wt.rank() != 2 ||
      bias.rank() != 1 || x.rank() < 2 || out.rank() != x.rank() ||
      !out.isContiguous())
    return false;
  const int64_t K = wt.shape[0], N = wt.shape[1];
  std::optional<int64_t> rs = foldedRowStride(x);
  if (!rs || x.shape.back() != K || x.numel() == 0 || N == 0 || K == 0 ||
      bias.shape[0] != N || (N > 1 && bias.strides[0] != 1) ||
      alignmentOf(bias.bytes()) < 16 || N > INT32_MAX || K > INT32_MAX)
    return false;
  const int64_t M = x.numel() / K;
  if (M > INT32_MAX)
    return false;
  Operand A, B;
  if (!describe(x.bytes(), M, K, *rs, x.strides.back(), A) ||
      !describe(wt.bytes(), K, N, wt.strides[0], wt.strides[1], B))
    return false;
  cublasLtHandle_t h = cuda::perDeviceHandle<cublasLtHandle_t>(
      out.storage->device.index, [](cublasLtHandle_t &lt) {
        return cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS;
      });
  if (!h)
    return false;
  // Column-major, as gemm(): D^T [N, M] = op(B^T) [N, K] @ op(A^T) [K, M].
  const cudaDataType_t type = cuda::dataType(dt);
  LtOwned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc;
  LtOwned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> la, lb, lc;
  LtOwned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  cublasOperation_t opB = B.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = A.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const void *biasData = bias.bytes();
  uint64_t workspace = kLtWorkspaceBytes;
  auto ok = [](cublasStatus_t st) { return st == CUBLAS_STATUS_SUCCESS; };
  if (!ok(cublasLtMatmulDescCreate(&desc.v, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
      !ok(cublasLtMatmulDescSetAttribute(desc.v, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opB, sizeof opB)) ||
      !ok(cublasLtMatmulDescSetAttribute(desc.v, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opA, sizeof opA)) ||
      !ok(cublasLtMatmulDescSetAttribute(desc.v, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                         &epilogue, sizeof epilogue)) ||
      !ok(cublasLtMatmulDescSetAttribute(desc.v,
                                         CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                         &biasData, sizeof biasData)) ||
      !ok(cublasLtMatrixLayoutCreate(&la.v, type, B.trans ? K : N,
                                     B.trans ? N : K, B.ld)) ||
      !ok(cublasLtMatrixLayoutCreate(&lb.v, type, A.trans ? M : K,
                                     A.trans ? K : M, A.ld)) ||
      !ok(cublasLtMatrixLayoutCreate(&lc.v, type, N, M, N)) ||
      !ok(cublasLtMatmulPreferenceCreate(&pref.v)) ||
      !ok(cublasLtMatmulPreferenceSetAttribute(
          pref.v, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
          sizeof workspace)))
    return false;
  // Lt's A is our B, its B our A; C and D are the result.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, const void *>
      alignments[] = {
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, B.data},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, A.data},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, out.bytes()},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, out.bytes()}};
  for (const auto &[attribute, data] : alignments) {
    uint32_t alignment = alignmentOf(data);
    if (!ok(cublasLtMatmulPreferenceSetAttribute(pref.v, attribute, &alignment,
                                                 sizeof alignment)))
      return false;
  }
  cublasLtMatmulHeuristicResult_t best = {};
  int found = 0;
  if (!ok(cublasLtMatmulAlgoGetHeuristic(h, desc.v, la.v, lb.v, lc.v, lc.v,
                                         pref.v, 1, &best, &found)) ||
      found == 0)
    return false;
  void *ws = nullptr;
  if (best.workspaceSize && !(ws = ctx.scratch(best.workspaceSize)))
    return true; // scratch() failed the op
  const float one = 1, zero = 0;
  if (!ok(cublasLtMatmul(h, desc.v, &one, B.data, la.v, A.data, lb.v, &zero,
                         out.bytes(), lc.v, out.bytes(), lc.v, &best.algo, ws,
                         best.workspaceSize, /*stream=*/0)))
    ctx.fail("cuBLASLt matmul with a bias epilogue failed");
  return true;
}
} // namespace

void cuda::matmul(KernelContext &ctx) {
  matmulInto(ctx, ctx.tensor(0), ctx.tensor(1), ctx.result(0));
}

void cuda::linear(KernelContext &ctx) {
  Tensor wt = ctx.tensor(1);
  std::reverse(wt.shape.begin(), wt.shape.end());
  std::reverse(wt.strides.begin(), wt.strides.end());
  if (optimizedTierEnabled() && ctx.isTensor(2) &&
      linearLt(ctx, ctx.tensor(0), wt, ctx.tensor(2), ctx.result(0))) {
    if (!ctx.failed())
      ctx.ranTier(KernelTier::Optimized);
    return;
  }
  matmulInto(ctx, ctx.tensor(0), wt, ctx.result(0));
  if (!ctx.failed() && ctx.isTensor(2) &&
      !addScaled(ctx.tensor(2), ctx.result(0), 1.0, 1.0))
    ctx.fail("adding the bias failed");
}

void cuda::addmm(KernelContext &ctx) {
  double beta = ctx.isNone(3) ? 1.0 : ctx.scalar(3).number();
  double alpha = ctx.isNone(4) ? 1.0 : ctx.scalar(4).number();
  Tensor &out = ctx.result(0);
  matmulInto(ctx, ctx.tensor(1), ctx.tensor(2), out);
  if (!ctx.failed() && !addScaled(ctx.tensor(0), out, alpha, beta))
    ctx.fail("scaling and adding self failed");
}
