//===- EmitExecutable.h - Saving a graph's executable -----------*- C++ -*-===//
//
// The compiler side of saved executables (the runtime side is
// ExecutableFile.h): trace-translate --emit-executable and the Python
// package's CompiledGraph.save().
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_EMITEXECUTABLE_H
#define TRACEIR_RUNTIME_EMITEXECUTABLE_H

#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>

namespace traceir {

/// The .trx bytes of `graph` built for `device`; with `generatedKernels`,
/// the ops the GPU lowering covers run its kernels, compiled for the
/// options' chip. Needs no device.
llvm::Expected<std::string>
emitExecutable(mlir::trace::GraphOp graph, Device device,
               const mlir::trace::GpuPipelineOptions *generatedKernels,
               const std::string &producer);

/// Registers trace-translate --emit-executable (with --device, --graph and
/// --generated-kernels).
void registerExecutableTranslation();

} // namespace traceir

#endif // TRACEIR_RUNTIME_EMITEXECUTABLE_H
