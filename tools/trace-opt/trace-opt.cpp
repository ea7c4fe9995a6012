//===- trace-opt.cpp - TraceIR optimizer driver ---------------------------===//

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
  // What --convert-trace-to-linalg produces, so its output parses again,
  // and what the lowering pipelines produce and consume (linalg, gpu, nvvm,
  // llvm, ...; kernels are translated to LLVM IR).
  registry.insert<mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::tensor::TensorDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect>();
  mlir::trace::registerTracePipelineDialects(registry);
  // Generic cleanups users run before freeing: canonicalize, cse, ...
  mlir::registerTransformsPasses();
  // Upstream passes too: the lowering pipelines are built from them, and
  // --mlir-print-ir-after=<pass> or a hand-run piece of a pipeline needs
  // their names.
  mlir::registerAllPasses();
  mlir::trace::registerTraceTransformsPasses();
  mlir::trace::registerTraceConversionPasses();
  mlir::trace::registerTestPasses();
  mlir::trace::registerTracePipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TraceIR optimizer driver\n", registry));
}
