//===- ANFImporter.h - Import the 2017 text trace form ----------*- C++ -*-===//
//
// Reads the text form of PyTorch's 2017 tracer (see docs/OpRegistry.md):
//
//   graph word_lm
//   param %0 : f32[10000,200] encoder.weight
//   input %11 : i64[35,20] tokens
//   %14 = Embedding %11, %0, -1, None, 2, False, False
//   Ret %14
//
// and builds a module holding one trace.graph. Errors carry the line and
// column; on error no module is returned.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_IMPORT_ANFIMPORTER_H
#define TRACEIR_IMPORT_ANFIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace mlir::trace {

/// Imports the main buffer of `sourceMgr`. Diagnostics go to the context's
/// handler; returns null on error.
OwningOpRef<ModuleOp> importANFTrace(llvm::SourceMgr &sourceMgr,
                                     MLIRContext *context);

/// Writes the 2017-name mapping table of docs/OpRegistry.md.
void printANFNameTable(llvm::raw_ostream &os);
/// The op each 2017 name becomes, in the table's order.
llvm::SmallVector<llvm::StringRef> getANFTargetOps();

/// Registers `--import-anf` and `--print-op-registry` with mlir-translate.
void registerTraceTranslations();

} // namespace mlir::trace

#endif // TRACEIR_IMPORT_ANFIMPORTER_H
