//===- StorageLiveness.cpp - Def-use analysis over storages ---------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::trace;

int64_t StorageLiveness::getStaticBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  Type elt = shaped.getElementType();
  if (!elt.isIntOrFloat())
    return -1;
  // PyTorch stores bool (i1) in a byte.
  int64_t eltBytes = (elt.getIntOrFloatBitWidth() + 7) / 8;
  return shaped.getNumElements() * eltBytes;
}

unsigned StorageLiveness::find(unsigned id) {
  while (parent[id] != id) {
    parent[id] = parent[parent[id]]; // path halving
    id = parent[id];
  }
  return id;
}

void StorageLiveness::unite(unsigned a, unsigned b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return;
  // Keep the earlier-defined storage as representative so classes stay in
  // definition order.
  if (b < a)
    std::swap(a, b);
  parent[b] = a;
  Storage &sa = storages[a], &sb = storages[b];
  sa.lastUse = std::max(sa.lastUse, sb.lastUse);
  sa.returned |= sb.returned;
  sa.alreadyFreed |= sb.alreadyFreed;
  sa.hasMayAlias |= sb.hasMayAlias;
}

unsigned StorageLiveness::newStorage() {
  unsigned id = storages.size();
  storages.emplace_back();
  parent.push_back(id);
  return id;
}

unsigned StorageLiveness::addAllocation(Value v, Owner owner) {
  unsigned a = allocations.size();
  Allocation alloc{v, owner};
  int64_t bytes = getStaticBytes(v.getType());
  if (bytes < 0)
    alloc.dynamic = true;
  else
    alloc.bytes = bytes;
  allocations.push_back(alloc);
  allocationOf[v] = a;
  storageOf[v] = newStorage();
  return a;
}

unsigned StorageLiveness::getStorageId(Value v) {
  return find(storageOf.lookup(v));
}

StorageLiveness::StorageLiveness(GraphOp graph) {
  Block &block = graph.getBody().front();
  size_t numOps = block.getOperations().size();
  ops.reserve(numOps);
  liveBytes.reserve(numOps);
  storageOf.reserve(numOps + block.getNumArguments());
  allocationOf.reserve(numOps + block.getNumArguments());

  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    Owner owner = graph.isParam(i)     ? Owner::Param
                  : graph.isDonated(i) ? Owner::Donated
                                       : Owner::Input;
    addAllocation(arg, owner);
  }

  int64_t live = 0;
  SmallVector<ResultAlias, 4> aliases;
  for (Operation &op : block) {
    int pos = ops.size();
    ops.push_back(&op);
    if (auto free = dyn_cast<FreeOp>(op)) {
      // A free is not a use: it must not extend the lifetime it ends.
      Value v = free.getTensor();
      storages[getStorageId(v)].alreadyFreed = true;
      auto it = allocationOf.find(v);
      if (it != allocationOf.end() &&
          allocations[it->second].owner == Owner::Run)
        live -= allocations[it->second].bytes;
      liveBytes.push_back(live);
      continue;
    }
    for (Value operand : op.getOperands()) {
      Storage &s = storages[getStorageId(operand)];
      s.lastUse = pos;
      if (isa<RetOp>(op))
        s.returned = true;
    }
    auto py = dyn_cast<PyOp>(op);
    aliases.clear();
    if (py)
      getResultAliases(py, aliases);
    else if (isa<ConstantOp>(op))
      aliases.assign(op.getNumResults(), ResultAlias{AliasKind::Fresh});
    else
      aliases.assign(op.getNumResults(), ResultAlias{AliasKind::MayAlias});

    for (auto [res, alias] : llvm::zip(op.getResults(), aliases)) {
      switch (alias.kind) {
      case AliasKind::Fresh: {
        bool isConst = isa<ConstantOp>(op);
        unsigned a = addAllocation(res, isConst ? Owner::Constant : Owner::Run);
        storages[storageOf[res]].lastUse = pos;
        if (!isConst) {
          live += allocations[a].bytes;
          dynamicSizes |= allocations[a].dynamic;
        }
        break;
      }
      case AliasKind::MustAlias: {
        Value base = py.getTensors()[alias.operand];
        storageOf[res] = storageOf.lookup(base);
        auto it = allocationOf.find(base);
        if (it != allocationOf.end())
          allocationOf[res] = it->second;
        break;
      }
      case AliasKind::MayAlias: {
        unsigned s = newStorage();
        storageOf[res] = s;
        storages[s].lastUse = pos;
        storages[s].hasMayAlias = true;
        for (Value operand : op.getOperands())
          unite(s, storageOf.lookup(operand));
        break;
      }
      }
    }
    liveBytes.push_back(live);
    peakBytes = std::max(peakBytes, live);
  }

  for (auto [i, alloc] : llvm::enumerate(allocations))
    storages[getStorageId(alloc.value)].allocations.push_back(i);
  for (unsigned id = 0, e = storages.size(); id < e; ++id) {
    if (find(id) != id)
      continue;
    Storage &s = storages[id];
    for (unsigned a : s.allocations) {
      switch (allocations[a].owner) {
      case Owner::Param:
        s.keepReason = "parameter";
        break;
      case Owner::Input:
        s.keepReason = "input (not donated)";
        break;
      case Owner::Constant:
        s.keepReason = "constant";
        break;
      default:
        break;
      }
      if (!s.keepReason.empty())
        break;
    }
    if (s.keepReason.empty() && s.returned)
      s.keepReason = "returned";
    if (s.keepReason.empty() && s.allocations.empty())
      s.keepReason = "no allocation";
  }
}

SmallVector<unsigned> StorageLiveness::getStorageIds() {
  SmallVector<unsigned> ids;
  for (unsigned id = 0, e = storages.size(); id < e; ++id)
    if (find(id) == id)
      ids.push_back(id);
  return ids;
}

SmallVector<Value, 1> StorageLiveness::getValuesToFree(unsigned id) const {
  SmallVector<Value, 1> values;
  for (unsigned a : storages[id].allocations)
    if (allocations[a].owner == Owner::Run ||
        allocations[a].owner == Owner::Donated)
      values.push_back(allocations[a].value);
  return values;
}
