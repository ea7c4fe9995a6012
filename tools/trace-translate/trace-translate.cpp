//===- trace-translate.cpp - TraceIR translation driver -------------------===//

#include "TraceIR/Conversion/Pipelines.h"
#include "TraceIR/Import/ANFImporter.h"
#include "TraceIR/Runtime/EmitExecutable.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::trace::registerTraceTranslations();
  mlir::trace::registerGpuBinaryTranslation();
  traceir::registerExecutableTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "TraceIR translation driver\n"));
}
