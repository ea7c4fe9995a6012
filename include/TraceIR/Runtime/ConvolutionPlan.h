//===- ConvolutionPlan.h - Plans of aten.convolution ------------*- C++ -*-===//
//
// Reads and checks a call of convolution with the registry's decoder
// (Support/ConvolutionArgs.h) and builds the plan (Convolution.h) that the
// CPU and the CUDA kernels both run, so the two devices accept the same
// calls and fail with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CONVOLUTIONPLAN_H
#define TRACEIR_RUNTIME_CONVOLUTIONPLAN_H

#include "TraceIR/Runtime/Convolution.h"
#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/NNArgs.h"

namespace traceir {

/// convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups): one floating dtype for the operands and the
/// result, a 1-D bias, and a result of convolutionShape's shape (a saved
/// executable states its own result type, and the kernels write by it).
/// Fails the call (and returns false) otherwise.
bool convolutionPlan(KernelContext &ctx, ConvolutionPlan &p);

/// conv2d's geometry as a plan of the same convolution (two spatial dims;
/// no data pointers or strides).
ConvolutionPlan convolutionPlanOf(const ConvGeometry &g);

/// A forward convolution as cuDNN's Nd descriptors state it (CUDA/CuDNN.cpp):
/// packed NC[D]HW tensors of rank 4 (one or two spatial dims; a 1-D
/// convolution is a 2-D one over a height of 1) or 5 (three), and per
/// spatial dim one padding on both sides, a stride and a dilation. Plain
/// ints, no cuDNN types, so that the mapping is tested where there is no
/// GPU and no cuDNN.
struct CudnnConvShape {
  int rank = 4;
  int x[5] = {}, w[5] = {}, y[5] = {};
  int pad[3] = {}, stride[3] = {}, dil[3] = {};
  int groups = 1;
};

/// Plan `p` in cuDNN's terms; false where cuDNN's descriptors cannot state
/// it: a transposed convolution, an empty tensor, a size or a tensor's
/// element count past INT_MAX (cuDNN's dims are ints), or an output size
/// other than what cuDNN computes from symmetric padding (conv2d's
/// padding='same' with an even kernel pads the bottom and right one more).
bool cudnnConvShape(const ConvolutionPlan &p, CudnnConvShape &s);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CONVOLUTIONPLAN_H
