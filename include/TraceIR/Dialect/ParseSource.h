//===- ParseSource.h - Parsing TraceIR modules from user input --*- C++ -*-===//
//
// The one way TraceIR's tools and bindings parse MLIR: the input is first
// checked against the nesting bound of Support/NestingDepth.h, since MLIR's
// parser and verifier recurse once per nested attribute, type or region and
// would overflow the stack on hostile input.
//
// MLIR bytecode is refused. Its reader resolves deeply nested builtin
// attributes from a heap worklist, in time quadratic in the depth, and reads
// every attribute without a bytecode encoding (all of the trace dialect's)
// from its text form, with the text parser's unbounded recursion and no
// bracket scan possible beforehand. TraceIR writes text only.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_DIALECT_PARSESOURCE_H
#define TRACEIR_DIALECT_PARSESOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir::trace {

/// Where `buffer` nests deeper than kMaxNestingDepth (or, for MLIR
/// bytecode, its start), and the message to report there; nullopt if it is
/// text within the bound.
std::optional<std::pair<llvm::SMLoc, std::string>>
findUnsafeInput(const llvm::MemoryBuffer &buffer);

/// Fails with a diagnostic (file:line:col) if buffer `bufferId` of
/// `sourceMgr` nests too deep or is bytecode.
LogicalResult checkInputLimits(const llvm::SourceMgr &sourceMgr,
                               unsigned bufferId, MLIRContext *context);

/// Registers a trace-translate translation from MLIR, as
/// TranslateFromMLIRRegistration does (parse, verify, call `function`), with
/// checkInputLimits before the parse.
void registerFromMLIRTranslation(
    llvm::StringRef name, llvm::StringRef description,
    const TranslateFromMLIRFunction &function,
    const std::function<void(DialectRegistry &)> &dialectRegistration);

/// parseSourceFile<ModuleOp> on the main buffer of `sourceMgr`, after
/// checkInputLimits.
OwningOpRef<ModuleOp> parseTraceSource(llvm::SourceMgr &sourceMgr,
                                       const ParserConfig &config);
/// The same for a file (or "-" for standard input) added to `sourceMgr`.
OwningOpRef<ModuleOp> parseTraceSourceFile(llvm::StringRef filename,
                                           llvm::SourceMgr &sourceMgr,
                                           const ParserConfig &config);

} // namespace mlir::trace

#endif // TRACEIR_DIALECT_PARSESOURCE_H
