//===- Linalg.cpp - Matrix products on the CPU through BLAS ---------------===//
//
// Every product goes to OpenBLAS's sgemm/dgemm. A matrix whose last two
// dims are row- or column-major is passed as is (with the transpose flag);
// anything else is gathered into scratch first. Batched products loop over
// the broadcast batch dims.
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

void cpu::gemm(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
               int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
               int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha,
               double beta) {
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
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(buf + (i * cols + j) * es, p + (i * rs + j * cs) * es, es);
    m = {buf, std::max<int64_t>(cols, 1), false};
    return true;
  };
  Mat A, B;
  if (!prepare(a, M, K, ars, acs, A) || !prepare(b, K, N, brs, bcs, B))
    return;
  if (M == 0 || N == 0)
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
/// out = x @ y with torch.matmul's rules; `out` is fresh and contiguous.
/// 1-D operands are treated as a row (x) or a column (y) and the batch dims
/// broadcast.
void matmulInto(KernelContext &ctx, const Tensor &x, const Tensor &y,
                Tensor &out) {
  if (x.dtype != y.dtype || (x.dtype != DType::F32 && x.dtype != DType::F64))
    return ctx.fail(strCat("matrix products support f32 and f64, got ") +
                    dtypeName(x.dtype) + " and " + dtypeName(y.dtype));
  if (std::string err = matmulShapeError(x, y, out); !err.empty())
    return ctx.fail(err);
  forEachMatmul(x, y, out, [&](const MatmulPanel &p) {
    gemm(ctx, x.dtype, p.a, p.ars, p.acs, p.b, p.brs, p.bcs, p.c, p.ldc, p.M,
         p.N, p.K, 1.0, 0.0);
    return !ctx.failed();
  });
}

/// out += bias, broadcast over the leading dims (bias is [N] or broadcastable
/// to out).
void addBias(KernelContext &ctx, const Tensor &bias, Tensor &out, double beta) {
  if (!broadcastsTo(bias.shape, out.shape))
    return ctx.fail("the bias " + shapeToString(bias.shape) +
                    " does not broadcast to the result's " +
                    shapeToString(out.shape));
  Tensor b = bias;
  int64_t off = out.rank() - b.rank();
  Shape strides(out.rank(), 0);
  for (int64_t d = 0; d < b.rank(); ++d)
    if (b.shape[d] != 1)
      strides[off + d] = b.strides[d];
  int64_t n = out.numel(), rank = out.rank();
  Shape index(rank, 0);
  size_t es = dtypeSize(out.dtype), bs = dtypeSize(b.dtype);
  char *o = out.bytes();
  const char *bp = b.bytes();
  for (int64_t k = 0; k < n; ++k) {
    int64_t boff = 0;
    for (int64_t d = 0; d < rank; ++d)
      boff += index[d] * strides[d];
    double v = loadDouble(o + k * es, out.dtype) +
               beta * loadDouble(bp + boff * bs, b.dtype);
    storeDouble(o + k * es, out.dtype, v);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out.shape[d])
        break;
      index[d] = 0;
    }
  }
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
  matmulInto(ctx, ctx.tensor(0), wt, ctx.result(0));
  if (!ctx.failed() && ctx.isTensor(2))
    addBias(ctx, ctx.tensor(2), ctx.result(0), 1.0);
}

void cpu::addmm(KernelContext &ctx) {
  // beta * self + alpha * (mat1 @ mat2)
  double beta = ctx.isNone(3) ? 1.0 : ctx.scalar(3).number();
  double alpha = ctx.isNone(4) ? 1.0 : ctx.scalar(4).number();
  Tensor &out = ctx.result(0);
  matmulInto(ctx, ctx.tensor(1), ctx.tensor(2), out);
  if (ctx.failed())
    return;
  if (alpha != 1.0)
    for (int64_t k = 0, n = out.numel(); k < n; ++k) {
      char *p = out.bytes() + k * dtypeSize(out.dtype);
      storeDouble(p, out.dtype, alpha * loadDouble(p, out.dtype));
    }
  if (beta != 0.0)
    addBias(ctx, ctx.tensor(0), out, beta);
}
