//===- Build.h - Lower a trace.graph to an Executable -----------*- C++ -*-===//
//
// The one place the runtime touches MLIR: once, at build time.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_BUILD_H
#define TRACEIR_RUNTIME_BUILD_H

#include "TraceIR/Conversion/KernelPlan.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Support/LLVMError.h"

#include "mlir/IR/BuiltinOps.h"

namespace traceir {

/// Lowers `graph` for `device`: binds a kernel to every op (an op without a
/// kernel on the device is an error naming it, the device and the source
/// location), decodes scalars, records result types, and takes the
/// predicted peak from StorageLiveness. With `generated` (built for this
/// graph, see Conversion/KernelPlan.h), the ops it covers launch its
/// kernels from `library` instead of the runtime's. `forSaving` builds
/// one to save (ExecutableFile.h) on a machine that may lack the device:
/// no allocator, no library.
llvm::Expected<std::unique_ptr<Executable>>
buildExecutable(mlir::trace::GraphOp graph, Device device,
                const GeneratedKernels *generated = nullptr,
                std::shared_ptr<GpuLibrary> library = nullptr,
                bool forSaving = false);

/// The runtime dtype of an MLIR element type, or none; and back.
std::optional<DType> dtypeOf(mlir::Type elementType);
mlir::Type elementTypeOf(mlir::MLIRContext *ctx, DType dtype);

/// The trace.graph named `name` in `module`, or its only graph when `name`
/// is empty; errors say which (`where` names the module, e.g. its file).
llvm::Expected<mlir::trace::GraphOp>
findGraph(mlir::ModuleOp module, llvm::StringRef name, llvm::StringRef where);

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
  GeneratedKernels kernels;
  std::shared_ptr<GpuLibrary> library;
};

/// Reads and checks the fatbin (before anything else, so a wrong file is
/// named even without a GPU), checks that `device` is a CUDA device, plans
/// the launches (compiling the fatbin for the device's chip when there is
/// none) and loads the fatbin's kernels. trace-run --gpu-binary /
/// --compile-gpu-kernels and the Python package's compile() share it.
llvm::Expected<LoadedGeneratedKernels>
loadGeneratedKernels(mlir::trace::GraphOp graph, Device device,
                     const GeneratedKernelsSource &source);

} // namespace traceir

#endif // TRACEIR_RUNTIME_BUILD_H
