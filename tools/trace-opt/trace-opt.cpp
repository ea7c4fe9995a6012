//===- trace-opt.cpp - TraceIR optimizer driver ---------------------------===//

#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::trace {
void registerTestPasses();
} // namespace mlir::trace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::trace::TraceDialect>();
  // The lowering pipelines produce and consume upstream dialects (linalg,
  // gpu, nvvm, llvm, ...) and translate kernels to LLVM IR.
  mlir::trace::registerTracePipelineDialects(registry);
  // Generic cleanups users run before freeing: canonicalize, cse, ...
  mlir::registerTransformsPasses();
  // Upstream passes too: the lowering pipelines are built from them, and
  // --mlir-print-ir-after=<pass> or a hand-run piece of a pipeline needs
  // their names.
  mlir::registerAllPasses();
  mlir::trace::registerTraceTransformsPasses();
  mlir::trace::registerTestPasses();
  mlir::trace::registerTracePipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TraceIR optimizer driver\n", registry));
}
