//===- TestPrintMemoryPlan.cpp - Print the memory plan --------------------===//
//
// `--test-print-memory-plan` prints, for every graph, each planned buffer
// (its storage, aligned bytes, lifetime and offset), then the arena, the
// lower bound, greedy by size's arena, the order kept and StorageLiveness's
// predicted peak (unaligned, returned values included), and whether the
// placement verifies, so lit tests can check the analysis directly.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/MemoryPlan.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::trace;

namespace {
struct TestPrintMemoryPlanPass
    : public PassWrapper<TestPrintMemoryPlanPass, OperationPass<GraphOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintMemoryPlanPass)
  TestPrintMemoryPlanPass() = default;
  TestPrintMemoryPlanPass(const TestPrintMemoryPlanPass &other)
      : PassWrapper(other) {}
  StringRef getArgument() const final { return "test-print-memory-plan"; }
  StringRef getDescription() const final {
    return "Print the arena offsets planned for each trace.graph's storages";
  }
  Option<int64_t> alignment{
      *this, "alignment", llvm::cl::desc("Bytes each offset is a multiple of"),
      llvm::cl::init(MemoryPlan::kDefaultAlignment)};

  void runOnOperation() override {
    GraphOp graph = getOperation();
    const int64_t align = alignment;
    if (align <= 0 || (align & (align - 1)) != 0) {
      graph.emitError("alignment must be a power of two, not ") << align;
      return signalPassFailure();
    }
    StorageLiveness liveness(graph);
    MemoryPlan plan(liveness, align);
    AsmState state(graph);
    llvm::raw_ostream &os = llvm::errs();
    os << "graph @" << graph.getSymName() << "\n";
    for (const MemoryPlan::Buffer &b : plan.getBuffers()) {
      os << "  buffer ";
      liveness.getStorages()[b.storage].root.printAsOperand(os, state);
      os << ": " << b.size << " bytes, #" << b.first << "..#" << b.last
         << ", offset " << b.offset << "\n";
    }
    os << "  arena " << plan.getArenaBytes() << " bytes, lower bound "
       << plan.getLowerBoundBytes() << ", greedy by size "
       << plan.getGreedyBySizeBytes() << ", order " << plan.getOrder()
       << "; predicted peak " << liveness.getPeakBytes() << "\n";
    std::string error = MemoryPlan::verify(
        plan.getBuffers(), plan.getArenaBytes(), plan.getAlignment());
    os << "  " << (error.empty() ? "verified" : error) << "\n";
  }
};
} // namespace

namespace mlir::trace {
void registerTestPrintMemoryPlanPass() {
  PassRegistration<TestPrintMemoryPlanPass>();
}
} // namespace mlir::trace
