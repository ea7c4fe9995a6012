//===- trace-translate.cpp - TraceIR translation driver -------------------===//

#include "TraceIR/Import/ANFImporter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::trace::registerTraceTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "TraceIR translation driver\n"));
}
