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

namespace traceir {

/// convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups): one floating dtype for the operands and the
/// result, a 1-D bias, and a result of convolutionShape's shape (a saved
/// executable states its own result type, and the kernels write by it).
/// Fails the call (and returns false) otherwise.
bool convolutionPlan(KernelContext &ctx, ConvolutionPlan &p);

} // namespace traceir

#endif // TRACEIR_RUNTIME_CONVOLUTIONPLAN_H
