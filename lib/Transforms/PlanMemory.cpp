//===- PlanMemory.cpp - Record arena offsets in the IR --------------------===//

#include "TraceIR/Analysis/MemoryPlan.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::trace {
#define GEN_PASS_DEF_PLANMEMORY
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

namespace {
struct PlanMemoryPass
    : public mlir::trace::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    if (failed(checkArenaAlignment(graph, "plan-memory", alignment)))
      return signalPassFailure();
    // A plan already there is made again: drop it first.
    Operation *g = graph.getOperation();
    g->removeAttr(TraceDialect::kArenaBytesAttrName);
    g->removeAttr(TraceDialect::kArenaAlignmentAttrName);
    for (Operation &op : graph.getBody().front())
      op.removeAttr(TraceDialect::kArenaOffsetsAttrName);

    if (budget < 0) {
      graph.emitError("--plan-memory: budget must not be negative, not ")
          << static_cast<int64_t>(budget);
      return signalPassFailure();
    }
    StorageLiveness liveness(graph);
    MemoryPlan plan(liveness, alignment);
    if (budget && plan.getArenaBytes() > budget) {
      InFlightDiagnostic diag =
          graph.emitError("--plan-memory: @")
          << graph.getSymName() << "'s arena needs " << plan.getArenaBytes()
          << " bytes, " << plan.getArenaBytes() - budget
          << " over the budget of " << static_cast<int64_t>(budget);
      if (plan.getLowerBoundBytes() > budget)
        diag << "; no placement fits: " << plan.getLowerBoundBytes()
             << " bytes are alive at once in this order (try "
                "--reorder-for-memory first)";
      return signalPassFailure();
    }
    // One offset per result of each op with a planned result.
    llvm::MapVector<Operation *, SmallVector<int64_t>> offsets;
    for (const MemoryPlan::Buffer &b : plan.getBuffers()) {
      auto result = cast<OpResult>(liveness.getStorages()[b.storage].root);
      Operation *op = result.getOwner();
      auto &list = offsets[op];
      if (list.empty())
        list.assign(op->getNumResults(), -1);
      list[result.getResultNumber()] = b.offset;
    }
    Builder builder(&getContext());
    for (auto &[op, list] : offsets)
      op->setAttr(TraceDialect::kArenaOffsetsAttrName,
                  builder.getDenseI64ArrayAttr(list));
    g->setAttr(TraceDialect::kArenaBytesAttrName,
               builder.getI64IntegerAttr(plan.getArenaBytes()));
    g->setAttr(TraceDialect::kArenaAlignmentAttrName,
               builder.getI64IntegerAttr(alignment));
    numPlanned += plan.getBuffers().size();
    arenaBytes += plan.getArenaBytes();
  }
};
} // namespace
