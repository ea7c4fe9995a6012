//===- OpDependences.cpp - A graph's ops as a dependence DAG --------------===//

#include "TraceIR/Analysis/OpDependences.h"
#include "TraceIR/Dialect/OpRegistry.h"

#include "TraceIR/Support/CheckedMath.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::trace;

namespace {

/// Lists from (list, item) pairs, in the pairs' order, without repeats
/// within a list.
OpDependences::Lists
makeLists(uint32_t numLists,
          llvm::ArrayRef<std::pair<uint32_t, uint32_t>> pairs) {
  OpDependences::Lists l;
  l.begin.assign(numLists + 1, 0);
  for (auto [list, item] : pairs)
    ++l.begin[list + 1];
  for (uint32_t i = 0; i < numLists; ++i)
    l.begin[i + 1] += l.begin[i];
  l.items.resize(pairs.size());
  std::vector<uint32_t> fill(l.begin.begin(), l.begin.end() - 1);
  for (auto [list, item] : pairs)
    l.items[fill[list]++] = item;
  // Drop repeats, compacting in place: `seen[item] == list` marks an item
  // this list already has.
  std::vector<uint32_t> seen;
  uint32_t maxItem = 0;
  for (uint32_t item : l.items)
    maxItem = std::max(maxItem, item + 1);
  seen.assign(maxItem, UINT32_MAX);
  uint32_t out = 0;
  for (uint32_t i = 0; i < numLists; ++i) {
    uint32_t start = out;
    for (uint32_t k = l.begin[i]; k < l.begin[i + 1]; ++k) {
      uint32_t item = l.items[k];
      if (seen[item] == i)
        continue;
      seen[item] = i;
      l.items[out++] = item;
    }
    l.begin[i] = start;
  }
  l.begin[numLists] = out;
  l.items.resize(out);
  return l;
}

} // namespace

OpDependences::OpDependences(GraphOp graph, const StorageLiveness &liveness,
                             int64_t alignment) {
  Block &block = graph.getBody().front();
  // The ops but the frees; the terminator stays last.
  for (auto [pos, op] : llvm::enumerate(liveness.getOps()))
    if (!isa<FreeOp>(op)) {
      ops.push_back(op);
      alloc.push_back(liveness.getAllocBytes()[pos]);
    }
  numNodes = ops.size() - 1;
  alloc.pop_back();
  arenaAlloc.assign(numNodes, 0);
  mayAlias.assign(numNodes, 0);
  firstResultRoot.assign(numNodes, 0);
  numResultRoots.assign(numNodes, 0);

  llvm::DenseMap<Operation *, uint32_t> nodeOf;
  nodeOf.reserve(numNodes);
  for (uint32_t i = 0; i < numNodes; ++i)
    nodeOf[ops[i]] = i;

  // The root of every value: arguments' first, then each op's results.
  llvm::ArrayRef<StorageLiveness::Storage> storages = liveness.getStorages();
  size_t nextStorage = 0;
  std::vector<uint32_t> argRoot, resultRoot, resultBase(numNodes + 1, 0);
  auto newRoot = [&](Value v, int32_t def) {
    uint32_t r = rootDef.size();
    rootDef.push_back(def);
    int64_t bytes = -1, planned = 0;
    bool viaUnknown = false;
    // StorageLiveness lists its storages in this same definition order;
    // roots that are no storage (an unknown op's results) get none.
    if (nextStorage < storages.size() && storages[nextStorage].root == v) {
      const StorageLiveness::Storage &s = storages[nextStorage++];
      // Whether the graph may free it, freed now or not.
      if (s.keepReason.empty())
        bytes = (s.owner == StorageLiveness::Owner::Run ? s.bytes : 0) +
                s.tiedBytes;
      viaUnknown = s.hasMayAlias;
      // As MemoryPlan picks and sizes its buffers.
      if (s.owner == StorageLiveness::Owner::Run && !s.dynamic && !s.returned &&
          s.bytes > 0)
        planned = static_cast<int64_t>(llvm::alignTo(
            static_cast<uint64_t>(s.bytes), static_cast<uint64_t>(alignment)));
    }
    freeBytes.push_back(bytes);
    arenaBytes.push_back(planned);
    rootMayAlias.push_back(viaUnknown);
    return r;
  };
  for (BlockArgument arg : block.getArguments())
    argRoot.push_back(newRoot(arg, kNone));
  auto rootOf = [&](Value v) -> uint32_t {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return argRoot[arg.getArgNumber()];
    auto res = cast<OpResult>(v);
    return resultRoot[resultBase[nodeOf.find(res.getOwner())->second] +
                      res.getResultNumber()];
  };

  // Per storage class (union-find over roots: an unknown op joins its
  // operands' and results' classes, as they may be one storage), the last
  // op that wrote it and the ops that read it since.
  std::vector<uint32_t> classOf;
  std::vector<int32_t> lastWriter, readHead;
  struct Reader {
    uint32_t node;
    int32_t next;
  };
  std::vector<Reader> readers;
  auto find = [&](uint32_t r) {
    while (classOf[r] != r) {
      classOf[r] = classOf[classOf[r]];
      r = classOf[r];
    }
    return r;
  };
  std::vector<std::pair<uint32_t, uint32_t>> edges, uses;
  auto edge = [&](int32_t from, uint32_t to) {
    if (from != kNone && static_cast<uint32_t>(from) != to)
      edges.emplace_back(from, to);
  };
  auto read = [&](uint32_t c, uint32_t node) {
    edge(lastWriter[c], node);
    if (readHead[c] == kNone || readers[readHead[c]].node != node) {
      readers.push_back({node, readHead[c]});
      readHead[c] = readers.size() - 1;
    }
  };
  auto write = [&](uint32_t c, uint32_t node) {
    for (int32_t k = readHead[c]; k != kNone; k = readers[k].next)
      edge(readers[k].node, node);
    edge(lastWriter[c], node);
    lastWriter[c] = node;
    readHead[c] = kNone;
  };
  auto growClasses = [&] {
    while (classOf.size() < rootDef.size()) {
      classOf.push_back(classOf.size());
      lastWriter.push_back(kNone);
      readHead.push_back(kNone);
    }
  };
  growClasses();

  int32_t lastEffect = kNone;
  SmallVector<ResultAlias, 4> aliases;
  for (uint32_t node = 0; node <= numNodes; ++node) {
    Operation *op = ops[node];
    // Def-use, and the roots this op uses (once each).
    for (Value v : op->getOperands()) {
      if (auto res = dyn_cast<OpResult>(v); res && node < numNodes)
        edge(nodeOf.find(res.getOwner())->second, node);
      uses.emplace_back(rootOf(v), node);
    }
    if (node == numNodes)
      break; // the terminator: it runs last whatever the order

    // What the op does to its operands' storages.
    auto py = dyn_cast<PyOp>(op);
    const OpInfo *info = py ? py.getOpInfo() : nullptr;
    bool writesAll = false, effect = false;
    int writtenOperand = -1;
    aliases.clear();
    if (py)
      getResultAliases(py, aliases);
    if (info) {
      PyArgs args(py.getCconv(), py.getTensors().getTypes(),
                  py.getScalars().getValue());
      effect = info->random(args);
      if (info->mutates(args)) {
        // An in-place op writes the operand its result is; another
        // mutating op (training batch norm's running statistics) may write
        // any of its operands.
        for (const ResultAlias &a : aliases)
          if (a.kind == AliasKind::MustAlias)
            writtenOperand = a.operand;
        writesAll = writtenOperand < 0;
      }
    } else if (!isa<ConstantOp>(op)) {
      // An unknown op (or one of another dialect) may read and write any
      // operand's storage and have effects of its own.
      writesAll = effect = true;
    }
    if (effect) {
      edge(lastEffect, node);
      lastEffect = node;
    }
    for (OpOperand &operand : op->getOpOperands()) {
      uint32_t c = find(rootOf(operand.get()));
      if (writesAll ||
          static_cast<int>(operand.getOperandNumber()) == writtenOperand)
        write(c, node);
      else
        read(c, node);
    }

    // Its results' roots.
    resultBase[node + 1] = resultBase[node] + op->getNumResults();
    firstResultRoot[node] = rootDef.size();
    for (OpResult res : op->getResults()) {
      unsigned i = res.getResultNumber();
      if (py && aliases[i].kind == AliasKind::MustAlias)
        resultRoot.push_back(rootOf(py.getTensors()[aliases[i].operand]));
      else
        resultRoot.push_back(newRoot(res, node));
    }
    numResultRoots[node] = rootDef.size() - firstResultRoot[node];
    for (uint32_t r = firstResultRoot[node]; r < rootDef.size(); ++r)
      arenaAlloc[node] =
          traceir::saturatingAdd(arenaAlloc[node], arenaBytes[r]);
    growClasses();
    if (isMayAliasOp(op)) {
      // Its results may be any operand's storage: one class from here on,
      // last written by this op (which wrote every operand class above).
      mayAlias[node] = 1;
      uint32_t joined = find(firstResultRoot[node]);
      auto join = [&](uint32_t r) {
        uint32_t c = find(r);
        if (c != joined)
          classOf[c] = joined;
      };
      for (uint32_t i = 1; i < numResultRoots[node]; ++i)
        join(firstResultRoot[node] + i);
      for (Value v : op->getOperands())
        join(rootOf(v));
      lastWriter[joined] = node;
      readHead[joined] = kNone;
    }
  }

  uint32_t numRoots = rootDef.size();
  std::vector<std::pair<uint32_t, uint32_t>> byRoot, byNode;
  byRoot.reserve(uses.size());
  byNode.reserve(uses.size());
  for (auto [root, node] : uses) {
    byRoot.emplace_back(root, node);
    byNode.emplace_back(node, root);
  }
  rootUsers = makeLists(numRoots, byRoot);
  nodeRoots = makeLists(numNodes + 1, byNode);
  std::vector<std::pair<uint32_t, uint32_t>> reversed;
  reversed.reserve(edges.size());
  for (auto [from, to] : edges)
    reversed.emplace_back(to, from);
  succs = makeLists(numNodes, edges);
  preds = makeLists(numNodes, reversed);
}
