//===- FreeDeadTensors.cpp - Insert trace.free after last uses ------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "free-dead-tensors"

namespace mlir::trace {
#define GEN_PASS_DEF_FREEDEADTENSORS
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

namespace {
struct FreeDeadTensorsPass
    : public mlir::trace::impl::FreeDeadTensorsBase<FreeDeadTensorsPass> {
  void runOnOperation() override {
    GraphOp graph = getOperation();
    StorageLiveness liveness(graph);
    Block &block = graph.getBody().front();
    // Build the frees with Operation::create directly: FreeOp::create would
    // look the op name up by string and go through an OperationState and an
    // attribute dictionary for every free, several times the cost of the
    // analysis on large graphs.
    OperationName freeName(FreeOp::getOperationName(), &getContext());
    auto noAttrs = DictionaryAttr::get(&getContext());
    auto &opList = block.getOperations();
    unsigned inserted = 0;
    // Walking the storages backwards and inserting each free right after its
    // point leaves the frees that share a point in definition order.
    for (const auto &s : llvm::reverse(liveness.getStorages())) {
      if (!StorageLiveness::isFreeable(s))
        continue;
      // Right after the last use; right after the definition when nothing
      // uses it; at the start for an unused donated input.
      Operation *after = s.lastUser ? s.lastUser : s.root.getDefiningOp();
      Location loc = after ? after->getLoc() : graph.getLoc();
      LLVM_DEBUG(llvm::dbgs() << "free " << s.root << "\n");
      Operation *free = Operation::create(
          loc, freeName, /*resultTypes=*/{}, /*operands=*/s.root, noAttrs,
          /*properties=*/nullptr, /*successors=*/{},
          /*numRegions=*/0);
      opList.insert(after ? std::next(Block::iterator(after)) : opList.begin(),
                    free);
      ++inserted;
    }
    numFrees += inserted;
    if (inserted == 0)
      markAllAnalysesPreserved();
  }
};
} // namespace
