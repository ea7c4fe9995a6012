//===- Reinplace.cpp - Elementwise ops into a dying operand's storage -----===//
//
// Rewrites a pure elementwise op into its in-place form where its first
// argument's storage dies at the op (see Passes.td). Decisions come from
// one StorageLiveness of the graph as it came: the rewrites only merge a
// fresh result's storage into a storage whose last use is the op that makes
// it, so every later decision's storage, last use and layout read from the
// original graph still hold in the rewritten one. Linear in the graph's ops
// and uses.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::trace {
#define GEN_PASS_DEF_REINPLACE
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

namespace {

/// Whether `op`'s first argument may become its result (Passes.td's
/// conditions, but the in-place form's existence).
bool mayReuseFirst(PyOp op, const StorageLiveness &liveness,
                   const llvm::DenseMap<Value, unsigned> &storageOf) {
  if (op->getNumResults() != 1)
    return false;
  PyArgs args(op.getCconv(), op.getTensors().getTypes(),
              op.getScalars().getValue());
  if (!args.isTensor(0))
    return false;
  Value self = op.getTensors()[args.operandIndex(0)];
  auto type = dyn_cast<RankedTensorType>(self.getType());
  if (!type || type != op->getResult(0).getType() || !type.hasStaticShape())
    return false;
  Value root = getStorageRoot(self);
  auto it = storageOf.find(root);
  if (it == storageOf.end())
    return false;
  const StorageLiveness::Storage &s = liveness.getStorages()[it->second];
  int64_t bytes = StorageLiveness::getStaticBytes(type);
  if (s.owner != StorageLiveness::Owner::Run || !s.keepReason.empty() ||
      s.hasMayAlias || s.dynamic || s.tiedBytes != 0 || s.lastUser != op ||
      bytes <= 0 || s.bytes != bytes)
    return false;
  // Exactly the storage, laid out as a fresh result of this type would be.
  std::optional<traceir::views::Layout> layout = liveness.getLayout(self);
  if (!layout || layout->offset != 0 || !layout->isContiguous())
    return false;
  // mul(x, x) reads each element before writing it; another value of the
  // storage may read elements already written.
  for (Value other : op.getTensors())
    if (other != self && getStorageRoot(other) == root)
      return false;
  return true;
}

struct ReinplacePass : public mlir::trace::impl::ReinplaceBase<ReinplacePass> {
  void runOnOperation() override {
    GraphOp graph = getOperation();
    if (graph->hasAttr(TraceDialect::kArenaBytesAttrName)) {
      graph.emitError("--reinplace: the graph carries a memory plan "
                      "(trace.arena_bytes) that new aliasing would break; "
                      "run it before --plan-memory");
      return signalPassFailure();
    }
    Block &block = graph.getBody().front();
    for (Operation &op : block)
      if (isa<FreeOp>(op)) {
        op.emitError("--reinplace: the graph has trace.free ops, which free "
                     "storages an in-place op would keep using; run it "
                     "before --free-dead-tensors");
        return signalPassFailure();
      }

    StorageLiveness liveness(graph);
    llvm::DenseMap<Value, unsigned> storageOf;
    for (auto [i, s] : llvm::enumerate(liveness.getStorages()))
      storageOf[s.root] = i;
    SmallVector<std::pair<PyOp, const OpInfo *>> rewrites;
    for (Operation *op : liveness.getOps()) {
      auto py = dyn_cast<PyOp>(op);
      if (!py)
        continue;
      if (const OpInfo *inPlace = lookupInPlaceVariant(py.getOpName()))
        if (mayReuseFirst(py, liveness, storageOf))
          rewrites.emplace_back(py, inPlace);
    }
    if (rewrites.empty())
      return markAllAnalysesPreserved();
    for (auto [py, inPlace] : rewrites) {
      py.setOpName(inPlace->name);
      ++numReinplaced;
      bytesReused +=
          StorageLiveness::getStaticBytes(py->getResult(0).getType());
    }
  }
};

} // namespace
