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
/// C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C (row-major, ldc) through
/// BLAS, f32 or f64, for one matrix of each; A and B strided (row and column
/// strides in elements), gathered into scratch when BLAS cannot take them.
void gemm(KernelContext &ctx, DType dtype, const char *a, int64_t ars,
          int64_t acs, const char *b, int64_t brs, int64_t bcs, char *c,
          int64_t ldc, int64_t M, int64_t N, int64_t K, double alpha,
          double beta);
/// Normalizes a possibly negative dim.
int64_t wrapDim(int64_t dim, int64_t rank);

//===--- Kernels ----------------------------------------------------------===//

// One list per family of kernels (each in its own source file); the
// registry merges and sorts them. A name is the PyOp name it implements.
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CPU_KERNELS_CORE(X)                                            \
  X(abs)                                                                       \
  X(add)                                                                       \
  X(add_)                                                                      \
  X(addmm)                                                                     \
  X(amax)                                                                      \
  X(bmm)                                                                       \
  X(cat)                                                                       \
  X(clone)                                                                     \
  X(contiguous)                                                                \
  X(copy_)                                                                     \
  X(div)                                                                       \
  X(div_)                                                                      \
  X(dropout)                                                                   \
  X(dropout_)                                                                  \
  X(embedding)                                                                 \
  X(eq)                                                                        \
  X(exp)                                                                       \
  X(expand)                                                                    \
  X(fill_)                                                                     \
  X(flatten)                                                                   \
  X(ge)                                                                        \
  X(gelu)                                                                      \
  X(gt)                                                                        \
  X(layer_norm)                                                                \
  X(le)                                                                        \
  X(linear)                                                                    \
  X(log)                                                                       \
  X(log_softmax)                                                               \
  X(lt)                                                                        \
  X(matmul)                                                                    \
  X(mean)                                                                      \
  X(mm)                                                                        \
  X(mul)                                                                       \
  X(mul_)                                                                      \
  X(narrow)                                                                    \
  X(native_layer_norm)                                                         \
  X(ne)                                                                        \
  X(neg)                                                                       \
  X(permute)                                                                   \
  X(pow)                                                                       \
  X(relu)                                                                      \
  X(relu_)                                                                     \
  X(reshape)                                                                   \
  X(rsqrt)                                                                     \
  X(select)                                                                    \
  X(sigmoid)                                                                   \
  X(slice)                                                                     \
  X(softmax)                                                                   \
  X(sqrt)                                                                      \
  X(squeeze)                                                                   \
  X(sub)                                                                       \
  X(sub_)                                                                      \
  X(sum)                                                                       \
  X(t)                                                                         \
  X(tanh)                                                                      \
  X(transpose)                                                                 \
  X(unflatten)                                                                 \
  X(unsqueeze)                                                                 \
  X(view)                                                                      \
  X(where)                                                                     \
  X(zero_)
// clang-format on

/// Convolution, pooling, batch norm (and its backward passes), losses,
/// attention: lib/Runtime/CPU/Conv.cpp, Norm.cpp, Loss.cpp, Attention.cpp.
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CPU_KERNELS_NN(X)                                              \
  X(adaptive_avg_pool2d)                                                       \
  X(batch_norm)                                                                \
  X(batch_norm_double_backward)                                                \
  X(conv2d)                                                                    \
  X(cross_entropy)                                                             \
  X(max_pool2d)                                                                \
  X(native_batch_norm)                                                         \
  X(native_batch_norm_backward)                                                \
  X(nll_loss)                                                                  \
  X(scaled_dot_product_attention)
// clang-format on

/// The ops a joint forward+backward graph (aot_autograd) adds: alias
/// (Views.cpp), ones_like and threshold_backward (Elementwise.cpp), the
/// log_softmax pair (Reductions.cpp) and the nll_loss pair (Loss.cpp).
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CPU_KERNELS_BACKWARD(X)                                        \
  X(_log_softmax)                                                              \
  X(_log_softmax_backward_data)                                                \
  X(alias)                                                                     \
  X(nll_loss_backward)                                                         \
  X(nll_loss_forward)                                                          \
  X(ones_like)                                                                 \
  X(threshold_backward)
// clang-format on

/// Recurrent layers: lib/Runtime/CPU/RNN.cpp.
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CPU_KERNELS_RNN(X)                                             \
  X(gru)                                                                       \
  X(lstm)
// clang-format on

/// Views only compute shapes and strides (copies go through the device's
/// allocator), so every device uses these same kernels.
// clang-format off: one entry per line, kept by hand
#define TRACEIR_DEVICE_NEUTRAL_KERNELS(X)                                      \
  X(contiguous)                                                                \
  X(expand)                                                                    \
  X(alias)                                                                     \
  X(flatten)                                                                   \
  X(narrow)                                                                    \
  X(permute)                                                                   \
  X(reshape)                                                                   \
  X(select)                                                                    \
  X(slice)                                                                     \
  X(squeeze)                                                                   \
  X(t)                                                                         \
  X(transpose)                                                                 \
  X(unflatten)                                                                 \
  X(unsqueeze)                                                                 \
  X(view)
// clang-format on

// clang-format off: one entry per line, kept by hand
#define TRACEIR_CPU_KERNELS(X)                                                 \
  TRACEIR_CPU_KERNELS_CORE(X)                                                  \
  TRACEIR_CPU_KERNELS_NN(X)                                                    \
  TRACEIR_CPU_KERNELS_RNN(X)                                                   \
  TRACEIR_CPU_KERNELS_BACKWARD(X)
// clang-format on

#define TRACEIR_DECLARE_KERNEL(NAME) void NAME(KernelContext &ctx);
TRACEIR_CPU_KERNELS(TRACEIR_DECLARE_KERNEL)
#undef TRACEIR_DECLARE_KERNEL

} // namespace traceir::cpu

#endif // TRACEIR_RUNTIME_CPU_KERNELS_H
