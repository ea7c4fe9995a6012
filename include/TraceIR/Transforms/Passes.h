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

/// Fails `graph` (an error naming the pass's `flag`) unless `alignment`, an
/// arena alignment option, is a power of two.
LogicalResult checkArenaAlignment(GraphOp graph, llvm::StringRef flag,
                                  int64_t alignment);

/// Fails `graph` where it has a memory plan or trace.free ops, both made
/// for the order and aliasing it has now: a pass that changes either runs
/// before them. The error names `flag` and says what the pass would do to
/// the plan (`planBreaks`: "another order would break") or why the frees
/// are in its way (`freesWould`: "pin the order it would change").
LogicalResult checkNoFreesOrPlan(GraphOp graph, llvm::StringRef flag,
                                 llvm::StringRef planBreaks,
                                 llvm::StringRef freesWould);

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
