//===- Kernels.h - CUDA kernels ---------------------------------*- C++ -*-===//
//
// The CUDA backend's kernels. Elementwise ops share their host half with the
// CPU (ElementwiseKernels.h) and run Elementwise.cu's device loop; view ops
// are pure metadata and use the CPU's view kernels as they are (their copies
// go through the device's allocator); matrix products go to cuBLAS.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_KERNELS_H
#define TRACEIR_RUNTIME_CUDA_KERNELS_H

#include "TraceIR/Runtime/ElementwiseKernels.h"
#include "TraceIR/Runtime/Executable.h"

namespace traceir::cuda {

/// Copies `src` into `dst` on the device (any strides and dtypes).
bool copyStrided(const Tensor &src, Tensor &dst);

#define TRACEIR_CUDA_DECLARE(NAME) void NAME(KernelContext &ctx);
TRACEIR_ELEMENTWISE_KERNELS(TRACEIR_CUDA_DECLARE)
#undef TRACEIR_CUDA_DECLARE

/// cuBLAS products (Linalg.cpp).
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CUDA_LINALG_KERNELS(X)                                         \
  X(addmm)                                                                     \
  X(bmm)                                                                       \
  X(linear)                                                                    \
  X(matmul)                                                                    \
  X(mm)
// clang-format on
#define TRACEIR_CUDA_DECLARE(NAME) void NAME(KernelContext &ctx);
TRACEIR_CUDA_LINALG_KERNELS(TRACEIR_CUDA_DECLARE)
#undef TRACEIR_CUDA_DECLARE

/// Reductions, softmax, normalization, embedding, dropout, cat
/// (Reductions.cpp/.cu, NN.cpp/.cu).
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CUDA_REDUCE_KERNELS(X)                                         \
  X(amax)                                                                      \
  X(cat)                                                                       \
  X(dropout)                                                                   \
  X(dropout_)                                                                  \
  X(embedding)                                                                 \
  X(layer_norm)                                                                \
  X(log_softmax)                                                               \
  X(mean)                                                                      \
  X(native_layer_norm)                                                         \
  X(softmax)                                                                   \
  X(sum)
// clang-format on
/// Convolution, pooling, batch norm and its backward passes, losses,
/// attention (Conv.cpp/.cu, Norm.cpp/.cu, Loss.cpp/.cu, Attention.cpp/.cu).
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CUDA_NN_KERNELS(X)                                             \
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
/// Recurrent layers (RNN.cpp/.cu).
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CUDA_RNN_KERNELS(X)                                            \
  X(gru)                                                                       \
  X(lstm)
// clang-format on
/// The log_softmax and nll_loss pairs of a joint forward+backward graph
/// (Reductions.cpp/.cu, Loss.cpp/.cu); its other new ops are elementwise or
/// views.
// clang-format off: one entry per line, kept by hand
#define TRACEIR_CUDA_BACKWARD_KERNELS(X)                                       \
  X(_log_softmax)                                                              \
  X(_log_softmax_backward_data)                                                \
  X(nll_loss_backward)                                                         \
  X(nll_loss_forward)
// clang-format on

#define TRACEIR_CUDA_DECLARE(NAME) void NAME(KernelContext &ctx);
TRACEIR_CUDA_REDUCE_KERNELS(TRACEIR_CUDA_DECLARE)
TRACEIR_CUDA_NN_KERNELS(TRACEIR_CUDA_DECLARE)
TRACEIR_CUDA_RNN_KERNELS(TRACEIR_CUDA_DECLARE)
TRACEIR_CUDA_BACKWARD_KERNELS(TRACEIR_CUDA_DECLARE)
#undef TRACEIR_CUDA_DECLARE

} // namespace traceir::cuda

#endif // TRACEIR_RUNTIME_CUDA_KERNELS_H
