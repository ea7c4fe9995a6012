//===- trace-opt.cpp - TraceIR optimizer driver ---------------------------===//

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::trace {
void registerTestPasses();
} // namespace mlir::trace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
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

  // MlirOptMain(argc, argv, ...) as upstream writes it, with the input
  // checked against TraceIR's nesting bound before MLIR parses it.
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "TraceIR optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &message);
  if (!file) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (auto error = mlir::trace::findUnsafeInput(*file)) {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    sourceMgr.PrintMessage(llvm::errs(), error->first,
                           llvm::SourceMgr::DK_Error, error->second);
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &message);
  if (!output) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  // Only a successful run leaves its output file.
  output->keep();
  return 0;
}
