//===- anf-importer-fuzzer.cpp - Fuzz the 2017 trace importer -------------===//
//
// Input: the text of a 2017 trace, as `trace-translate --import-anf` reads
// it. Invariant: what the importer accepts is a verified module whose
// printed text (custom and generic form) parses again.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Import/ANFImporter.h"

#include "mlir/IR/Verifier.h"

using namespace traceir::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzContext context;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(inputBuffer(data, size), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::trace::importANFTrace(sourceMgr, &context);
  if (!module)
    return 0;
  fuzzCheck(mlir::succeeded(mlir::verify(*module)),
            "the importer returned a module that does not verify");
  for (bool generic : {false, true}) {
    FuzzContext again;
    fuzzCheck(bool(parse(printed(*module, generic), again)),
              generic ? "an imported module's generic form does not parse"
                      : "an imported module's text does not parse again");
  }
  return 0;
}
