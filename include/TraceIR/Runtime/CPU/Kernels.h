//===- Kernels.h - CPU kernels and their shared helpers ---------*- C++ -*-===//
//
// Every kernel has the signature `void(KernelContext &)` and reads its
// arguments in the original (ATen) order. Fresh results arrive preallocated
// and contiguous with their static shape; view kernels set their result to
// share the input's storage.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_KERNELS_H
#define TRACEIR_RUNTIME_CPU_KERNELS_H

#include "TraceIR/Runtime/Executable.h"

namespace traceir::cpu {

//===--- Helpers shared by the kernels ------------------------------------===//

double loadDouble(const char *p, DType dtype);
int64_t loadInt(const char *p, DType dtype);
void storeDouble(char *p, DType dtype, double v);
void storeInt(char *p, DType dtype, int64_t v);
bool isFloating(DType dtype);

/// Gathers a strided host tensor into contiguous host memory at `dst`.
void copyStridedToContiguous(const Tensor &src, void *dst);
/// Copies `src` into `dst` element by element (same shape; dtypes may
/// differ), both strided.
void copyTensor(const Tensor &src, Tensor &dst);
/// `t`'s elements as a contiguous array of `dtype`: `t`'s own memory when it
/// already is one, else a converted copy in kernel scratch (null after a
/// failure).
const void *gatherAs(KernelContext &ctx, const Tensor &t, DType dtype);
inline const double *gatherF64(KernelContext &ctx, const Tensor &t) {
  return static_cast<const double *>(gatherAs(ctx, t, DType::F64));
}
/// C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C (row-major, ldc) for one
/// matrix of each, in any dtype but bool (f32 and f64 through BLAS, f16 and
/// bf16 through sgemm on float copies, integers exactly with wrapping); A
/// and B strided (row and column strides in elements), gathered into
/// scratch when BLAS cannot take them. beta == 0 does not read C.
void gemm(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
          int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
          int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha,
          double beta);
/// Whether gemm passes a rows x cols matrix with strides (rs, cs) to the
/// BLAS as it lies (row- or column-major): an f32 or f64 product of such
/// operands touches no scratch and cannot fail, so threads may run several.
bool blasTakes(int64_t rows, int64_t cols, int64_t rs, int64_t cs);
/// Normalizes a possibly negative dim.
int64_t wrapDim(int64_t dim, int64_t rank);

/// A gather's loop over its `numel` result elements: row(r) for each run
/// of the last dim, `rowLen` elements (the divisions that find an
/// element's source then come once per row), or element(k) for each
/// element where there are no rows (a 0-d result).
template <typename Row, typename Element>
void forRows(int64_t numel, int rank, int64_t rowLen, Row &&row,
             Element &&element) {
  if (rank == 0 || numel == 0) {
    for (int64_t k = 0; k < numel; ++k)
      element(k);
    return;
  }
  for (int64_t r = 0, rows = numel / rowLen; r < rows; ++r)
    row(r);
}

//===--- Kernels ----------------------------------------------------------===//

// The kernels of Ops.def's CPU column (a KERNEL in the family's file:
// Elementwise.cpp, Linalg.cpp, Reductions.cpp, Views.cpp, NN.cpp, Conv.cpp,
// Norm.cpp, Loss.cpp, Attention.cpp, RNN.cpp; an ELEMENTWISE one made in
// Elementwise.cpp). A name is the PyOp name it implements.
#define TRACEIR_CPU_DECLARE_KERNEL(NAME) void NAME(KernelContext &ctx);
#define TRACEIR_CPU_DECLARE_ELEMENTWISE(NAME) void NAME(KernelContext &ctx);
#define TRACEIR_CPU_DECLARE_NONE(NAME)
#define TRACEIR_CPU_DECLARE_ALIAS(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CPU_DECLARE_##CPU(NAME)
#include "TraceIR/Ops.def"
#undef TRACEIR_CPU_DECLARE_KERNEL
#undef TRACEIR_CPU_DECLARE_ELEMENTWISE
#undef TRACEIR_CPU_DECLARE_NONE
#undef TRACEIR_CPU_DECLARE_ALIAS

} // namespace traceir::cpu

namespace traceir::cpu {
/// The oneDNN version the optimized tier's conv2d and 2-D pools run on
/// (CPU/Optimized/DNNL.cpp), or null in a build without oneDNN.
const char *dnnlVersion();
} // namespace traceir::cpu

namespace traceir::cpu::fast {
// The optimized tier's kernels of Ops.def's FAST column: each returns false,
// having written nothing, for an op, dtype or layout it does not cover.
#define TRACEIR_CPU_DECLARE_FAST_CPU(NAME) bool NAME(KernelContext &ctx);
#define TRACEIR_CPU_DECLARE_NOFAST(NAME)
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  TRACEIR_CPU_DECLARE_##FAST(NAME)
#include "TraceIR/Ops.def"
#undef TRACEIR_CPU_DECLARE_FAST_CPU
#undef TRACEIR_CPU_DECLARE_NOFAST
} // namespace traceir::cpu::fast

#endif // TRACEIR_RUNTIME_CPU_KERNELS_H
