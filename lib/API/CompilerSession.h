//===- CompilerSession.h - The compiler half's shared parts -----*- C++ -*-===//
//
// Private to lib/API: the context and diagnostics every compiler-side call
// uses, and the pass pipeline runner, shared by the text functions of
// API.cpp and the held modules of IR.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_LIB_API_COMPILERSESSION_H
#define TRACEIR_LIB_API_COMPILERSESSION_H

#include "TraceIR/Dialect/TraceDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace traceir::api {
class IRModule;
}

namespace traceir::api::detail {

/// A context and a source manager whose diagnostics (with file:line:col
/// and the source line) collect into `diagnostics`.
struct Session {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream{diagnostics};
  mlir::SourceMgrDiagnosticHandler handler{sourceMgr, &context, diagStream};

  Session() { context.loadDialect<mlir::trace::TraceDialect>(); }

  /// Parses and verifies `text` (the nesting bound of parseTraceSource).
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text,
                                          const std::string &name);
  /// The diagnostics collected since the last call (then cleared), or
  /// `fallback` when there are none.
  std::string error(llvm::StringRef fallback);
};

/// The module's text with its locations, so a round trip through Python
/// keeps them for errors and profiles.
std::string print(mlir::ModuleOp module);

/// Runs `pipeline` (graph passes nested under trace.graph, as trace-opt's
/// flags do) on `module`; returns an error message or "".
std::string runPipeline(Session &s, mlir::ModuleOp module,
                        const std::string &pipeline);

/// The module an IRModule holds, the name it was read from, and the
/// session its diagnostics go to.
mlir::ModuleOp moduleOf(IRModule &module);
std::string sourceNameOf(const IRModule &module);
Session &sessionOf(IRModule &module);

} // namespace traceir::api::detail

#endif // TRACEIR_LIB_API_COMPILERSESSION_H
