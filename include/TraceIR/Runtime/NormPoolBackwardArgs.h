//===- NormPoolBackwardArgs.h - Plans of the backward kernels ---*- C++ -*-===//
//
// Reads and checks a call of avg_pool2d_backward,
// _adaptive_avg_pool2d_backward, native_layer_norm_backward,
// native_group_norm_backward or embedding_dense_backward and builds its plan
// (NormPoolBackward.h), for the CPU and CUDA host halves alike, so both
// devices accept the same calls and fail with the same messages. The
// scalars are decoded by the registry's own decoders (Support/OpArgs.h),
// the forward ops' read one or two arguments later. Each fails the call
// (and returns false) on bad input; device pointers the plan needs beyond
// the call's tensors (rowSums, order, start) are left to the caller.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_NORMPOOLBACKWARDARGS_H
#define TRACEIR_RUNTIME_NORMPOOLBACKWARDARGS_H

#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/NormPoolBackward.h"

namespace traceir {

/// avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
/// ceil_mode, count_include_pad, divisor_override): a floating or i64 3-D
/// or 4-D self with nonzero non-batch dims, grad_output of its dtype and
/// the pooled shape, a result of self's type.
bool avgPool2dBackwardPlan(KernelContext &ctx, PoolBackwardPlan &p);
/// _adaptive_avg_pool2d_backward(grad_output, self): a floating 3-D or 4-D
/// self with nonzero non-batch dims, grad_output of its dtype and leading
/// dims with a nonzero output size, a result of self's type.
bool adaptiveAvgPool2dBackwardPlan(KernelContext &ctx, PoolBackwardPlan &p);

/// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
/// weight, bias, output_mask) and native_group_norm_backward(grad_out,
/// input, mean, rstd, weight, N, C, HxW, group, output_mask): floating
/// grad_out and input of one dtype and shape, mean and rstd of one element
/// per row, weight (and bias) of the normalized shape ([C] for group
/// norm), three results shaped as inference says (an empty [0] where
/// output_mask leaves one out; its pointer null in the plan).
bool layerNormBackwardPlan(KernelContext &ctx, NormBackwardPlan &p);
bool groupNormBackwardPlan(KernelContext &ctx, NormBackwardPlan &p);

/// embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
/// scale_grad_by_freq): integer indices (any strides, `indices`), a
/// floating or integer grad_output indices.shape + [D] and a result
/// [num_weights, D] of its dtype. The caller checks each index's range
/// (failEmbeddingBackwardIndex) and sorts the positions into order/start.
bool embeddingDenseBackwardPlan(KernelContext &ctx, EmbeddingBackwardPlan &p,
                                StridedOperand &indices);
/// Fails embedding_dense_backward on an index outside [0, num_weights).
void failEmbeddingBackwardIndex(KernelContext &ctx, int64_t index,
                                int64_t numWeights);

} // namespace traceir

#endif // TRACEIR_RUNTIME_NORMPOOLBACKWARDARGS_H
