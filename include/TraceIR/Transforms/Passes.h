//===- Passes.h - TraceIR transformation passes -----------------*- C++ -*-===//

#ifndef TRACEIR_TRANSFORMS_PASSES_H
#define TRACEIR_TRANSFORMS_PASSES_H

#include "TraceIR/Dialect/TraceDialect.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace mlir::trace {

#define GEN_PASS_DECL
#include "TraceIR/Transforms/Passes.h.inc"

/// The symbol --trace-split-ops gives the graph of the `index`-th pyop
/// (counting every trace.pyop of `graph` in order) named `opName`.
std::string splitOpSymbol(llvm::StringRef graph, unsigned index,
                          llvm::StringRef opName);

/// Why --trace-split-ops gives `op` no graph of its own (dynamic shapes, a
/// view or in-place result, a write into an operand, random numbers, an
/// unknown op), or nullopt when it does.
std::optional<std::string> whyNotSplittable(PyOp op);

#define GEN_PASS_REGISTRATION
#include "TraceIR/Transforms/Passes.h.inc"

} // namespace mlir::trace

#endif // TRACEIR_TRANSFORMS_PASSES_H
