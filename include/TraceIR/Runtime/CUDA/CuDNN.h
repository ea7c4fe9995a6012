//===- CuDNN.h - The optimized CUDA tier's cuDNN calls ----------*- C++ -*-===//
//
// Forward convolutions on cuDNN (CUDA/CuDNN.cpp) for conv2d and
// aten.convolution on CUDA while the optimized tier is on. In a build
// without cuDNN (TRACEIR_USE_CUDNN=OFF, or none found) they take nothing
// and the portable kernels run every call; cuda::cudnnVersion() (Backend.h)
// says which.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_CUDNN_H
#define TRACEIR_RUNTIME_CUDA_CUDNN_H

#include "TraceIR/Runtime/Convolution.h"
#include "TraceIR/Runtime/Executable.h"

namespace traceir::cuda {

/// out = the forward convolution of plan `p` (its sizes, dtype and groups;
/// its pointers and strides are not read) over the contiguous input `x`
/// [N, C, *in] and weight `w` [O, C / groups, *k], into the contiguous
/// `out` [N, O, *out], without the bias. False, having done nothing, where
/// cuDNN does not take the call (cudnnConvShape says no, a dtype it does
/// not compute, no cuDNN in the build or at run time, no algorithm within
/// the workspace budget): the caller runs its portable kernel. True when it
/// ran the call or failed it (ctx's error says why).
bool cudnnConvolutionForward(KernelContext &ctx, const ConvolutionPlan &p,
                             const char *x, const char *w, char *out);

} // namespace traceir::cuda

#endif // TRACEIR_RUNTIME_CUDA_CUDNN_H
