//===- BatchedMatmul.h - torch.matmul's batch broadcasting ------*- C++ -*-===//
//
// Splits a torch.matmul into its per-matrix products, so the CPU (BLAS) and
// CUDA (cuBLAS) kernels broadcast batch dims and treat 1-D operands alike
// and differ only in the gemm they run.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_BATCHEDMATMUL_H
#define TRACEIR_RUNTIME_BATCHEDMATMUL_H

#include "TraceIR/Runtime/Tensor.h"

#include <functional>
#include <optional>
#include <string>

namespace traceir {

/// One product C[M, N] = A[M, K] @ B[K, N]: A and B strided (row and column
/// strides in elements), C row-major with leading dimension ldc.
struct MatmulPanel {
  const char *a;
  int64_t ars, acs;
  const char *b;
  int64_t brs, bcs;
  char *c;
  int64_t ldc;
  int64_t M, N, K;
};

/// Runs `gemm` on every matrix of out = x @ y (same dtype; out fresh and
/// contiguous) with torch.matmul's rules: a 1-D x is a row, a 1-D y a
/// column, and the batch dims broadcast. Stops when `gemm` returns false.
void forEachMatmul(const Tensor &x, const Tensor &y, Tensor &out,
                   std::function<bool(const MatmulPanel &)> gemm);

/// The stride between the rows of x (rank >= 2) when every dim but the
/// last folds into one dim of rows (any contiguous x, a slice of its last
/// dim), as torch.matmul folds a batch against a matrix; nullopt when its
/// rows are not one stride apart (a transposed [S, B, E] seen as [B, S,
/// E]). forEachMatmul then runs one product of all the rows.
std::optional<int64_t> foldedRowStride(const Tensor &x);

/// One operand matrix of a panel (rows x cols, strides rs and cs, at
/// `src`'s data) and its dense row-major copy (at `dst`'s), as the tensors
/// a device's strided copy takes: how the CPU and CUDA products gather an
/// operand their BLAS cannot read as it is.
struct PanelGather {
  Tensor from, to;
};
PanelGather panelGather(Storage &src, Storage &dst, DType dtype, int64_t rows,
                        int64_t cols, int64_t rs, int64_t cs);

/// Why out = x @ y cannot be computed into `out` (empty when it can): a 0-d
/// operand, inner dims that differ, batch dims that do not broadcast, or an
/// `out` of another shape or dtype than torch.matmul's result, or not
/// contiguous. Type inference rules these out in a verified graph; a saved
/// executable is not verified, and forEachMatmul's panels read and write by
/// these shapes.
std::string matmulShapeError(const Tensor &x, const Tensor &y,
                             const Tensor &out);

} // namespace traceir

#endif // TRACEIR_RUNTIME_BATCHEDMATMUL_H
