//===- FuzzCommon.h - What the TraceIR fuzz harnesses share -----*- C++ -*-===//
//
// Each harness feeds its input to a production entry point, exactly as the
// tools do (parseTraceSource, importANFTrace, ...): a harness rejects nothing
// the entry point accepts, so what it finds is what a user can hit. Errors
// are expected and ignored; a crash, a sanitizer report, a hang or a broken
// invariant (checked with fuzzCheck) is a finding. What needs no LLVM or
// MLIR is in FuzzRuntime.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_FUZZ_FUZZCOMMON_H
#define TRACEIR_FUZZ_FUZZCOMMON_H

#include "FuzzRuntime.h"

#include "TraceIR/Dialect/ParseSource.h"
#include "TraceIR/Dialect/TraceDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace traceir::fuzz {

/// An LLVM error, dropped as ignore(traceir::Error) drops the runtime's.
inline void ignore(llvm::Error err) {
  if (verbose() && err)
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
  else
    llvm::consumeError(std::move(err));
}

/// Diagnostics likewise.
inline void quietDiagnostics(mlir::MLIRContext &context) {
  if (!verbose())
    context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
}

/// A context for one input, as the tools make theirs: the trace dialect
/// loaded (passes load the dialects they produce), no threads, quiet
/// diagnostics. Only trace-dialect text parses: upstream dialects' parsers,
/// which trace-opt also registers, are MLIR's to fuzz; the one defect found
/// in them so far is guarded in ParseSource.cpp.
struct FuzzContext : mlir::MLIRContext {
  FuzzContext() : mlir::MLIRContext(Threading::DISABLED) {
    loadDialect<mlir::trace::TraceDialect>();
    quietDiagnostics(*this);
  }
};

/// The input as a source buffer named "fuzz-input".
inline std::unique_ptr<llvm::MemoryBuffer> inputBuffer(const uint8_t *data,
                                                       size_t size) {
  return llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "fuzz-input");
}

/// `op` printed as the tools print it (custom form, or generic).
inline std::string printed(mlir::Operation *op, bool generic = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return text;
}

/// The input parsed as MLIR text, as the tools parse theirs.
inline mlir::OwningOpRef<mlir::ModuleOp>
parseInput(const uint8_t *data, size_t size, mlir::MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(inputBuffer(data, size), llvm::SMLoc());
  return mlir::trace::parseTraceSource(sourceMgr, mlir::ParserConfig(&context));
}

/// Parses `text` as a tool would, in `context`.
inline mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text,
                                               mlir::MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text),
                               llvm::SMLoc());
  return mlir::trace::parseTraceSource(sourceMgr, mlir::ParserConfig(&context));
}

} // namespace traceir::fuzz

#endif // TRACEIR_FUZZ_FUZZCOMMON_H
