//===- KernelPlan.h - Generated kernels for the runtime ---------*- C++ -*-===//
//
// The bridge from --trace-lower-to-gpu to the runtime: lowers a graph in
// per-op mode (one host function per compute op, --trace-split-ops), stops
// before the host code goes to LLVM, and reads each op's host function
// (allocations, constants, views and gpu.launch_func, in order) into a
// traceir::GeneratedOp the runtime executes with cudaLaunchKernel. An op
// whose host code does anything else (a loop, a host copy) keeps the
// runtime's kernel, and the reason is recorded.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_CONVERSION_KERNELPLAN_H
#define TRACEIR_CONVERSION_KERNELPLAN_H

#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/GeneratedKernels.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::trace {

/// The generated kernels of `graph` under `options` (chip, features,
/// toolkit, tile sizes; per-op mode and merged modules are implied). The
/// fatbin is compiled here (ptxas runs) unless `prebuilt` holds the one
/// `trace-translate --emit-gpu-binary` wrote for the same graph and
/// options; the kernel names carry a fingerprint of the host code, so a
/// fatbin of another graph fails to load rather than computing garbage.
/// Errors are the pipeline's diagnostics.
llvm::Expected<traceir::GeneratedKernels>
buildGeneratedKernels(GraphOp graph, const GpuPipelineOptions &options,
                      std::optional<std::string> prebuilt = std::nullopt);

} // namespace mlir::trace

#endif // TRACEIR_CONVERSION_KERNELPLAN_H
