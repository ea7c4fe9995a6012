//===- Preconditions.cpp - What the memory passes refuse ------------------===//
//
// --reorder-for-memory, --reinplace and --plan-memory check the same things
// of a graph before they change it; each says in its own words why.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::trace;

LogicalResult mlir::trace::checkArenaAlignment(GraphOp graph,
                                               llvm::StringRef flag,
                                               int64_t alignment) {
  if (alignment > 0 && (alignment & (alignment - 1)) == 0)
    return success();
  return graph.emitError("--")
         << flag << ": alignment must be a power of two, not " << alignment;
}

LogicalResult mlir::trace::checkNoFreesOrPlan(GraphOp graph,
                                              llvm::StringRef flag,
                                              llvm::StringRef planBreaks,
                                              llvm::StringRef freesWould) {
  if (graph->hasAttr(TraceDialect::kArenaBytesAttrName))
    return graph.emitError("--")
           << flag << ": the graph carries a memory plan (trace.arena_bytes) "
           << "that " << planBreaks << "; run it before --plan-memory";
  for (Operation &op : graph.getBody().front())
    if (isa<FreeOp>(op))
      return op.emitError("--")
             << flag << ": the graph has trace.free ops, which " << freesWould
             << "; run it before --free-dead-tensors";
  return success();
}
