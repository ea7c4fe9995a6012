//===- Linalg.cpp - Matrix products on the CPU ----------------------------===//
//
// f32 and f64 products go to the BLAS's sgemm/dgemm: a matrix whose last
// two dims are row- or column-major is passed as is (with the transpose
// flag), anything else is gathered into scratch first. f16 and bf16 run
// sgemm on float copies and round once; the integer dtypes accumulate
// exactly in uint64 (wrapping, as ATen). Batched products loop over the
// broadcast batch dims.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/BatchedMatmul.h"
#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Support/CheckedMath.h"

#include "TraceIR/Runtime/CPU/Gemm.h"
#include <cstring>

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// A 2-D operand for gemm: pointer, leading dimension and transpose flag.
struct Mat {
  const char *data;
  int64_t ld;
  bool trans;
};

/// Describes rows x cols at `base` with strides (rs, cs) for BLAS, or
/// returns false when it is neither row- nor column-major.
bool asBlas(const char *base, int64_t rows, int64_t cols, int64_t rs,
            int64_t cs, Mat &m) {
  if (cs == 1 || cols == 1) {
    m = {base, std::max<int64_t>({rs, cols, 1}), false};
    return rows == 1 || rs >= cols;
  }
  if (rs == 1 || rows == 1) {
    m = {base, std::max<int64_t>({cs, rows, 1}), true};
    return cols == 1 || cs >= rows;
  }
  return false;
}

} // namespace

bool cpu::blasTakes(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  Mat m;
  return asBlas(nullptr, rows, cols, rs, cs, m);
}

namespace {
/// Integer products as ATen's CPU computes them: wrapping arithmetic in the
/// dtype. Sums and products modulo 2^64 reduce to the same values modulo
/// 2^8, 2^16 or 2^32, so one accumulation in uint64 truncated once gives
/// ATen's result bit for bit in every integer dtype (no BLAS has them).
/// Alpha and beta are the dtype's integers, as ATen's `alpha.to<int>()`.
void gemmInteger(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
                 int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
                 int64_t ldc, int64_t M, int64_t N, int64_t K, int64_t alpha,
                 int64_t beta) {
  size_t es = dtypeSize(dtype);
  auto *row = static_cast<uint64_t *>(ctx.scratch(N, sizeof(uint64_t)));
  if (!row)
    return;
  for (int64_t i = 0; i < M; ++i) {
    std::fill(row, row + N, uint64_t(0));
    for (int64_t k = 0; k < K; ++k) {
      auto aik = uint64_t(loadInt(a + (i * ars + k * acs) * es, dtype));
      if (aik == 0)
        continue;
      const char *bk = b + k * brs * es;
      for (int64_t j = 0; j < N; ++j)
        row[j] += aik * uint64_t(loadInt(bk + j * bcs * es, dtype));
    }
    for (int64_t j = 0; j < N; ++j) {
      char *cij = c + (i * ldc + j) * es;
      uint64_t v = uint64_t(alpha) * row[j];
      // beta == 0 ignores C, as BLAS does.
      if (beta != 0)
        v += uint64_t(beta) * uint64_t(loadInt(cij, dtype));
      storeInt(cij, dtype, int64_t(v));
    }
  }
}

/// f16 and bf16 as ATen's CPU computes them: float copies of the operands
/// (exact), the product and beta * C accumulated in float by sgemm, each
/// result rounded once. torch.mm's f16 and bf16 results equal
/// (a.float() @ b.float()).half() this way.
void gemmInFloat(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
                 int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
                 int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha,
                 double beta) {
  size_t es = dtypeSize(dtype);
  std::optional<int64_t> mk = checkedMul(M, K), kn = checkedMul(K, N),
                         mn = checkedMul(M, N);
  if (!mk || !kn || !mn)
    return ctx.fail("a matmul operand's rows x cols overflows");
  auto *fa = static_cast<float *>(ctx.scratch(*mk, sizeof(float)));
  auto *fb = static_cast<float *>(ctx.scratch(*kn, sizeof(float)));
  auto *fc = static_cast<float *>(ctx.scratch(*mn, sizeof(float)));
  if (!fa || !fb || !fc)
    return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      fa[i * K + k] = float(loadDouble(a + (i * ars + k * acs) * es, dtype));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j)
      fb[k * N + j] = float(loadDouble(b + (k * brs + j * bcs) * es, dtype));
  if (beta != 0)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        fc[i * N + j] = float(loadDouble(c + (i * ldc + j) * es, dtype));
  cpu::sgemm(false, false, M, N, K, float(alpha), fa, std::max<int64_t>(K, 1),
             fb, std::max<int64_t>(N, 1), float(beta), fc,
             std::max<int64_t>(N, 1));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      storeDouble(c + (i * ldc + j) * es, dtype, fc[i * N + j]);
}
} // namespace

void cpu::gemm(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
               int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
               int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha,
               double beta) {
  if (M == 0 || N == 0)
    return;
  if (isFloating(dtype) && dtype != DType::F32 && dtype != DType::F64)
    return gemmInFloat(ctx, dtype, a, ars, acs, b, brs, bcs, c, ldc, M, N, K,
                       alpha, beta);
  if (!isFloating(dtype))
    return gemmInteger(ctx, dtype, a, ars, acs, b, brs, bcs, c, ldc, M, N, K,
                       int64_t(alpha), int64_t(beta));
  size_t es = dtypeSize(dtype);
  auto prepare = [&](const char *p, int64_t rows, int64_t cols, int64_t rs,
                     int64_t cs, Mat &m) {
    if (asBlas(p, rows, cols, rs, cs, m))
      return true;
    // A dense copy of one operand matrix: its size is checked (rows x cols
    // of a broadcast operand is no verified tensor's).
    std::optional<int64_t> count = checkedMul(rows, cols);
    char *buf = count ? static_cast<char *>(ctx.scratch(*count, es)) : nullptr;
    if (!count)
      ctx.fail("a matmul operand's rows x cols overflows");
    if (!buf)
      return false;
    // Through copyTensor, whose optimized copy coalesces and threads it.
    Storage src, dst;
    src.data = const_cast<char *>(p);
    dst.data = buf;
    PanelGather g = panelGather(src, dst, dtype, rows, cols, rs, cs);
    copyTensor(g.from, g.to);
    m = {buf, std::max<int64_t>(cols, 1), false};
    return true;
  };
  Mat A, B;
  if (!prepare(a, M, K, ars, acs, A) || !prepare(b, K, N, brs, bcs, B))
    return;
  if (dtype == DType::F32)
    cpu::sgemm(A.trans, B.trans, M, N, K, static_cast<float>(alpha),
               reinterpret_cast<const float *>(A.data), A.ld,
               reinterpret_cast<const float *>(B.data), B.ld,
               static_cast<float>(beta), reinterpret_cast<float *>(c), ldc);
  else
    cpu::dgemm(A.trans, B.trans, M, N, K, alpha,
               reinterpret_cast<const double *>(A.data), A.ld,
               reinterpret_cast<const double *>(B.data), B.ld, beta,
               reinterpret_cast<double *>(c), ldc);
}

namespace {
/// out = alpha * (x @ y) + beta * out with torch.matmul's rules; `out` is
/// contiguous, and read only where beta != 0 (addmm and a biased linear
/// fill it first). 1-D operands are treated as a row (x) or a column (y)
/// and the batch dims broadcast. Every dtype but bool, as ATen's CPU.
void matmulInto(KernelContext &ctx, const Tensor &x, const Tensor &y,
                Tensor &out, double alpha = 1.0, double beta = 0.0) {
  if (x.dtype != y.dtype || x.dtype == DType::Bool)
    return ctx.fail(
        strCat("matrix products take two operands of one dtype other than "
               "bool, got ") +
        dtypeName(x.dtype) + " and " + dtypeName(y.dtype));
  if (std::string err = matmulShapeError(x, y, out); !err.empty())
    return ctx.fail(err);
  // A batch of rows that does not fold against a matrix is gathered once
  // into a contiguous copy that does, as torch's linear reshapes it: one
  // large product, not one small one per matrix.
  Tensor folded = x;
  Storage copy;
  if (y.rank() <= 2 && x.rank() > 2 && x.numel() > 0 && !foldedRowStride(x)) {
    copy.data = ctx.scratch(x.numel(), dtypeSize(x.dtype));
    if (!copy.data)
      return;
    folded.storage = &copy;
    folded.offset = 0;
    folded.strides = Tensor::contiguousStrides(x.shape);
    copyTensor(x, folded);
  }
  forEachMatmul(folded, y, out, [&](const MatmulPanel &p) {
    gemm(ctx, x.dtype, p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.c, p.ldc, p.M,
         p.N, p.K, alpha, beta);
    return !ctx.failed();
  });
}

/// out = `bias` broadcast over out's leading dims (and cast to its dtype),
/// for the product to add itself onto as gemm's beta * C, as ATen's addmm
/// does.
bool fillWithBias(KernelContext &ctx, const Tensor &bias, Tensor &out) {
  if (!broadcastsTo(bias.shape, out.shape)) {
    ctx.fail("the bias " + shapeToString(bias.shape) +
             " does not broadcast to the result's " + shapeToString(out.shape));
    return false;
  }
  Tensor b = bias;
  int64_t off = out.rank() - bias.rank();
  b.shape = out.shape;
  b.strides.assign(out.rank(), 0);
  for (int64_t d = 0; d < bias.rank(); ++d)
    if (bias.shape[d] != 1)
      b.strides[off + d] = bias.strides[d];
  copyTensor(b, out);
  return true;
}
} // namespace

void cpu::matmul(KernelContext &ctx) {
  matmulInto(ctx, ctx.tensor(0), ctx.tensor(1), ctx.result(0));
}

void cpu::linear(KernelContext &ctx) {
  // input @ weight.t() (+ bias): transpose the weight as a view.
  const Tensor &w = ctx.tensor(1);
  Tensor wt = w;
  std::reverse(wt.shape.begin(), wt.shape.end());
  std::reverse(wt.strides.begin(), wt.strides.end());
  if (!ctx.isTensor(2))
    return matmulInto(ctx, ctx.tensor(0), wt, ctx.result(0));
  if (fillWithBias(ctx, ctx.tensor(2), ctx.result(0)))
    matmulInto(ctx, ctx.tensor(0), wt, ctx.result(0), 1.0, 1.0);
}

void cpu::addmm(KernelContext &ctx) {
  // beta * self + alpha * (mat1 @ mat2): self broadcast into the result
  // first, then one gemm; beta == 0 ignores self (NaN included), as ATen.
  double beta = ctx.isNone(3) ? 1.0 : ctx.scalar(3).number();
  double alpha = ctx.isNone(4) ? 1.0 : ctx.scalar(4).number();
  Tensor &out = ctx.result(0);
  if (beta != 0.0 && !fillWithBias(ctx, ctx.tensor(0), out))
    return;
  matmulInto(ctx, ctx.tensor(1), ctx.tensor(2), out, alpha, beta);
}
