//===- TestPrintOrderBound.cpp - Print the arena bound of any order -------===//
//
// `--test-print-order-bound` prints, for every graph, a lower bound on
// MemoryPlan's lower bound (the most aligned bytes of planned storages
// alive at once) under every order of its ops that the dependences allow
// (OpDependences, the DAG --reorder-for-memory schedules), with each
// storage freed right after its last use; and MemoryPlan's lower bound of
// the graph as it stands. When the two are equal, no reordering can lower
// the arena's bound.
//
// The bound is a cut: while op L runs, every planned storage defined by L
// or by an op L depends on (transitively), and used by L or by an op that
// depends on L (its uses extended through unknown ops' results, which may
// alias it), is alive in any legal order; the bound is the most bytes of
// such storages over every L. A storage nothing uses is alive while its
// definition runs. Trace.free ops are no nodes: the bound is the same
// before --free-dead-tensors and after.
//
// Ancestor sets are bitsets, quadratic in the number of ops: this is for
// tests and benchmarks (graphs of up to a few thousand ops), and a graph
// above max-ops ops (20000 unless told) gets no bound.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/MemoryPlan.h"
#include "TraceIR/Analysis/OpDependences.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/MathExtras.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::trace;

namespace {
struct TestPrintOrderBoundPass
    : public PassWrapper<TestPrintOrderBoundPass, OperationPass<GraphOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintOrderBoundPass)
  TestPrintOrderBoundPass() = default;
  TestPrintOrderBoundPass(const TestPrintOrderBoundPass &other)
      : PassWrapper(other) {}
  StringRef getArgument() const final { return "test-print-order-bound"; }
  StringRef getDescription() const final {
    return "Print the least arena bound any legal order of each trace.graph "
           "may reach";
  }
  Option<int64_t> alignment{
      *this, "alignment", llvm::cl::desc("Bytes each offset is a multiple of"),
      llvm::cl::init(MemoryPlan::kDefaultAlignment)};
  Option<unsigned> maxOps{
      *this, "max-ops",
      llvm::cl::desc("The most ops a graph may have: its ancestor bitsets "
                     "take ops^2 bits (50 MB at the default)"),
      llvm::cl::init(20000)};

  void runOnOperation() override {
    GraphOp graph = getOperation();
    const int64_t align = alignment;
    if (align <= 0 || (align & (align - 1)) != 0) {
      graph.emitError("alignment must be a power of two, not ") << align;
      return signalPassFailure();
    }
    // One write per graph: graphs run in parallel.
    std::string text;
    llvm::raw_string_ostream os(text);
    print(graph, align, os);
    llvm::errs() << text;
  }

  void print(GraphOp graph, int64_t align, llvm::raw_ostream &os) {
    os << "graph @" << graph.getSymName() << "\n";
    Block &block = graph.getBody().front();
    if (block.empty() || !isa<RetOp>(block.back())) {
      os << "  order bound: no trace.ret\n";
      return;
    }
    // The nodes OpDependences will have: the ops but the frees and the
    // terminator.
    uint64_t numOps = 0;
    for (Operation &op : block.without_terminator())
      numOps += !isa<FreeOp>(op);
    if (numOps > maxOps) {
      os << "  order bound: graph too large (" << numOps << " ops)\n";
      return;
    }
    StorageLiveness liveness(graph);
    const int64_t traced = MemoryPlan(liveness, align).getLowerBoundBytes();
    OpDependences dag(graph, liveness, align);
    const uint32_t n = dag.size();

    // Each node's ancestors (nodes are in a topological order).
    std::vector<llvm::BitVector> ancestors(n, llvm::BitVector(n));
    for (uint32_t node = 0; node < n; ++node)
      for (uint32_t p : dag.preds[node]) {
        ancestors[node] |= ancestors[p];
        ancestors[node].set(p);
      }

    // Each planned storage adds its bytes to every node it is alive at in
    // every order: the users' ancestors (and the users) that descend from
    // its definition (or are it).
    std::vector<int64_t> bound(n, 0);
    llvm::BitVector cover(n), seen(dag.rootDef.size());
    std::vector<uint32_t> stack;
    for (uint32_t r = 0; r < dag.rootDef.size(); ++r) {
      if (dag.arenaBytes[r] <= 0 || dag.rootDef[r] == OpDependences::kNone)
        continue;
      const uint32_t def = dag.rootDef[r];
      cover.reset();
      cover.set(def);
      seen.reset();
      seen.set(r);
      stack.assign(1, r);
      while (!stack.empty()) {
        uint32_t root = stack.back();
        stack.pop_back();
        for (uint32_t user : dag.rootUsers[root]) {
          if (user == n)
            continue; // the terminator: after every node
          cover |= ancestors[user];
          cover.set(user);
          if (!dag.mayAlias[user])
            continue;
          for (uint32_t i = 0; i < dag.numResultRoots[user]; ++i) {
            uint32_t res = dag.firstResultRoot[user] + i;
            if (!seen.test(res)) {
              seen.set(res);
              stack.push_back(res);
            }
          }
        }
      }
      for (unsigned node : cover.set_bits())
        if (node == def || ancestors[node].test(def))
          if (llvm::AddOverflow(bound[node], dag.arenaBytes[r], bound[node]))
            bound[node] = INT64_MAX;
    }

    int64_t best = 0;
    uint32_t at = 0;
    for (uint32_t node = 0; node < n; ++node)
      if (bound[node] > best) {
        best = bound[node];
        at = node;
      }
    os << "  order bound " << best << " bytes";
    if (best > 0) {
      Operation *op = dag.ops[at];
      uint32_t pos = 0;
      while (liveness.getOps()[pos] != op)
        ++pos;
      os << " at op #" << pos << " '";
      if (auto py = dyn_cast<PyOp>(op))
        os << py.getOpName();
      else
        os << op->getName();
      os << "'";
    }
    os << "; traced order's bound " << traced << "\n";
  }
};
} // namespace

namespace mlir::trace {
void registerTestPrintOrderBoundPass() {
  PassRegistration<TestPrintOrderBoundPass>();
}
} // namespace mlir::trace
