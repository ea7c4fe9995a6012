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
    ArrayRef<Operation *> ops = liveness.getOps();

    // Bucket the frees by insertion point (counting sort keeps it linear and
    // keeps definition order within a point). Slot 0 is the graph's start,
    // slot p + 1 is right after op p.
    struct Pending {
      int slot;
      Value value;
    };
    std::vector<Pending> pending;
    for (unsigned id : liveness.getStorageIds()) {
      if (!liveness.isFreeable(id))
        continue;
      const auto &storage = liveness.getStorage(id);
      int slot = storage.lastUse + 1;
      // A storage used by the terminator is returned, hence never freeable,
      // so no free lands after the terminator.
      assert(slot < static_cast<int>(ops.size()));
      for (Value v : liveness.getValuesToFree(id))
        pending.push_back({slot, v});
    }
    std::vector<unsigned> start(ops.size() + 2, 0);
    for (const Pending &p : pending)
      ++start[p.slot + 1];
    for (size_t i = 1; i < start.size(); ++i)
      start[i] += start[i - 1];
    std::vector<Value> bySlot(pending.size());
    for (const Pending &p : pending)
      bySlot[start[p.slot]++] = p.value;
    // `start[s]` now ends slot s, and slot s begins where slot s - 1 ended.

    OpBuilder builder(&getContext());
    Block &block = graph.getBody().front();
    size_t next = 0, inserted = 0;
    for (size_t slot = 0; slot <= ops.size(); ++slot) {
      size_t end = start[slot];
      if (next == end)
        continue;
      if (slot == 0)
        builder.setInsertionPointToStart(&block);
      else
        builder.setInsertionPointAfter(ops[slot - 1]);
      Location loc = slot == 0 ? graph.getLoc() : ops[slot - 1]->getLoc();
      for (; next < end; ++next) {
        LLVM_DEBUG(llvm::dbgs() << "free at slot " << slot << "\n");
        FreeOp::create(builder, loc, bySlot[next]);
        ++inserted;
      }
    }
    numFrees += inserted;
    if (inserted == 0)
      markAllAnalysesPreserved();
  }
};
} // namespace
