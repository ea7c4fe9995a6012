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
#include "TraceIR/Support/LLVMError.h"

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

/// Where a run's generated kernels come from: a fatbin written by
/// `trace-translate --emit-gpu-binary` for the same graph, or (empty path)
/// compiled now for the device's chip with `toolkit`.
struct GeneratedKernelsSource {
  std::string gpuBinary;
  std::string toolkit = "/usr/local/cuda";
};

/// A graph's generated kernels, planned and loaded on a CUDA device: what
/// buildExecutable takes to launch them in place of the runtime's.
struct LoadedGeneratedKernels {
  traceir::GeneratedKernels kernels;
  std::shared_ptr<traceir::GpuLibrary> library;
};

/// Reads and checks the fatbin (before anything else, so a wrong file is
/// named even without a GPU), checks that `device` is a CUDA device, plans
/// the launches (compiling the fatbin for the device's chip when there is
/// none) and loads the fatbin's kernels. trace-run --gpu-binary /
/// --compile-gpu-kernels and the Python package's compile() share it.
llvm::Expected<LoadedGeneratedKernels>
loadGeneratedKernels(GraphOp graph, traceir::Device device,
                     const GeneratedKernelsSource &source);

} // namespace mlir::trace

#endif // TRACEIR_CONVERSION_KERNELPLAN_H
