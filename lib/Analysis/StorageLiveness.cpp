//===- StorageLiveness.cpp - Def-use analysis over storages ---------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::trace;

int64_t StorageLiveness::getStaticBytes(Type type) {
  // A plain cast, not the ShapedType interface: this runs for every value.
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  Type elt = shaped.getElementType();
  if (!elt.isIntOrFloat())
    return -1;
  // PyTorch stores bool (i1) in a byte.
  int64_t eltBytes = (elt.getIntOrFloatBitWidth() + 7) / 8;
  return shaped.getNumElements() * eltBytes;
}

void StorageLiveness::addStorage(Value root, Owner owner) {
  Storage s;
  s.root = root;
  s.owner = owner;
  int64_t bytes = getStaticBytes(root.getType());
  if (bytes < 0)
    s.dynamic = true;
  else
    s.bytes = bytes;
  storages.push_back(s);
}

/// Whether `v` owns memory the run allocated (a fresh PyOp result), as
/// opposed to a view, an unknown op's maybe-alias or a caller's tensor.
static bool isRunAllocation(Value v) {
  auto res = dyn_cast<OpResult>(v);
  if (!res)
    return false;
  auto py = dyn_cast<PyOp>(res.getOwner());
  return py && getResultAlias(py, res.getResultNumber()).kind ==
                   AliasKind::Fresh;
}

StorageLiveness::StorageLiveness(GraphOp graph) {
  Block &block = graph.getBody().front();
  size_t numOps = block.getOperations().size();
  ops.reserve(numOps);
  liveBytes.reserve(numOps);
  storages.reserve(block.getNumArguments() + numOps);

  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    addStorage(arg, graph.isParam(i)     ? Owner::Param
                    : graph.isDonated(i) ? Owner::Donated
                                         : Owner::Input);
  }

  // Definitions, and the live bytes under the graph's own frees.
  int64_t live = 0;
  SmallVector<ResultAlias, 4> aliases;
  for (Operation &op : block) {
    ops.push_back(&op);
    if (auto free = dyn_cast<FreeOp>(op)) {
      Value root = getStorageRoot(free.getTensor());
      if (isRunAllocation(root))
        live -= std::max<int64_t>(getStaticBytes(root.getType()), 0);
    } else if (isa<ConstantOp>(op)) {
      addStorage(op.getResult(0), Owner::Constant);
    } else if (auto py = dyn_cast<PyOp>(op)) {
      aliases.clear();
      getResultAliases(py, aliases);
      for (auto [res, alias] : llvm::zip(py->getResults(), aliases)) {
        if (alias.kind != AliasKind::Fresh)
          continue;
        addStorage(res, Owner::Run);
        live += storages.back().bytes;
        dynamicSizes |= storages.back().dynamic;
      }
    }
    liveBytes.push_back(live);
    peakBytes = std::max(peakBytes, live);
  }

  // Last uses: each storage walks the uses of its values.
  for (Storage &s : storages) {
    walkStorageUses(s.root, /*followMayAlias=*/true, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (isa<FreeOp>(user)) {
        // A free is not a use: it must not extend the lifetime it ends.
        s.alreadyFreed = true;
        return;
      }
      if (isa<RetOp>(user))
        s.returned = true;
      else if (auto py = dyn_cast<PyOp>(user); py && !py.getOpInfo())
        s.hasMayAlias = true;
      if (!s.lastUser || s.lastUser->isBeforeInBlock(user))
        s.lastUser = user;
    });
    switch (s.owner) {
    case Owner::Param:
      s.keepReason = "parameter";
      break;
    case Owner::Input:
      s.keepReason = "input (not donated)";
      break;
    case Owner::Constant:
      s.keepReason = "constant";
      break;
    case Owner::Run:
    case Owner::Donated:
      if (s.returned)
        s.keepReason = "returned";
      break;
    }
  }
}
