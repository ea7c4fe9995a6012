//===- TestPrintStorageLiveness.cpp - Print the storage analysis ----------===//
//
// `--test-print-storage-liveness` prints, for every graph, each storage with
// its members' owner, bytes and last use, then the live bytes after every
// instruction and the peak, so lit tests can check the analysis directly.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/StorageLiveness.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::trace;

namespace {
StringRef ownerName(StorageLiveness::Owner owner) {
  switch (owner) {
  case StorageLiveness::Owner::Run:
    return "run";
  case StorageLiveness::Owner::Donated:
    return "donated";
  case StorageLiveness::Owner::Param:
    return "param";
  case StorageLiveness::Owner::Input:
    return "input";
  case StorageLiveness::Owner::Constant:
    return "constant";
  }
  llvm_unreachable("unknown owner");
}

struct TestPrintStorageLivenessPass
    : public PassWrapper<TestPrintStorageLivenessPass, OperationPass<GraphOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintStorageLivenessPass)
  StringRef getArgument() const final { return "test-print-storage-liveness"; }
  StringRef getDescription() const final {
    return "Print storages, last uses and live bytes of each trace.graph";
  }

  void runOnOperation() override {
    GraphOp graph = getOperation();
    StorageLiveness liveness(graph);
    AsmState state(graph);
    llvm::raw_ostream &os = llvm::errs();
    auto name = [&](Value v) {
      std::string s;
      llvm::raw_string_ostream ss(s);
      v.printAsOperand(ss, state);
      return s;
    };
    llvm::DenseMap<Operation *, int> position;
    for (auto [i, op] : llvm::enumerate(liveness.getOps()))
      position[op] = i;
    auto opName = [&](int pos) -> std::string {
      if (pos < 0)
        return "never";
      Operation *op = liveness.getOps()[pos];
      if (auto py = dyn_cast<PyOp>(op))
        return ("pyop \"" + py.getOpName() + "\"").str();
      return op->getName().getStringRef().str();
    };

    os << "graph @" << graph.getSymName() << "\n";
    for (const auto &s : liveness.getStorages()) {
      os << "  storage " << name(s.root) << "(" << ownerName(s.owner) << ", ";
      if (s.dynamic)
        os << "? bytes)";
      else
        os << s.bytes << " bytes)";
      if (s.hasMayAlias)
        os << " +may-alias";
      int last = s.lastUser ? position.lookup(s.lastUser) : -1;
      os << ": last use #" << last << " " << opName(last);
      if (StorageLiveness::isFreeable(s))
        os << ", freeable";
      else if (s.alreadyFreed)
        os << ", freed";
      else
        os << ", kept: " << s.keepReason;
      os << "\n";
    }
    for (auto [pos, bytes] : llvm::enumerate(liveness.getLiveBytes()))
      os << "  #" << pos << " " << opName(pos) << ": live " << bytes
         << " bytes\n";
    os << "  peak " << liveness.getPeakBytes() << " bytes"
       << (liveness.isLowerBound()
               ? " (lower bound: dynamic shapes or unknown ops)"
               : "")
       << "\n";
  }
};
} // namespace

namespace mlir::trace {
void registerTestPrintMemoryPlanPass();
void registerTestPrintOrderBoundPass();
void registerTestPasses() {
  PassRegistration<TestPrintStorageLivenessPass>();
  registerTestPrintMemoryPlanPass();
  registerTestPrintOrderBoundPass();
}
} // namespace mlir::trace
