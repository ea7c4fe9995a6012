//===- trace-opt.cpp - TraceIR optimizer driver ---------------------------===//

#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::trace {
void registerTestPasses();
} // namespace mlir::trace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::trace::TraceDialect>();
  // Generic cleanups users run before freeing: canonicalize, cse, ...
  mlir::registerTransformsPasses();
  mlir::trace::registerTraceTransformsPasses();
  mlir::trace::registerTestPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TraceIR optimizer driver\n", registry));
}
