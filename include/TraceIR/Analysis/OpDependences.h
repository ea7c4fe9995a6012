//===- OpDependences.h - A graph's ops as a dependence DAG ------*- C++ -*-===//
//
// What any legal order of a trace.graph's ops must keep: SSA def-use, the
// reads and writes of each storage through any of its values (an in-place
// op writes the operand its result is; another mutating op, or an unknown
// op, may write any of its operands; an unknown op's results join its
// operands' storages from there on), and the order of the ops with effects
// (random ops, unknown ops). With the DAG, the costs StorageLiveness gives
// each op and each storage, so that another order of the same ops can be
// priced (--reorder-for-memory) or bounded (-test-print-order-bound).
//
// Nodes are the block's ops but its terminator and its trace.free ops, in
// program order (a topological order: every edge goes forward); the
// terminator is node size(), which uses roots but is never reordered. A
// trace.free is no node: the costs assume each storage the graph may free
// is freed right after its last use (as --free-dead-tensors frees it),
// whatever frees the graph has now. A root is a value that owns memory or
// may (an argument, a constant, a fresh result, an unknown op's result),
// indexed in definition order.
//
// Linear in ops, uses and edges: each storage class keeps its last writer
// and the readers since, and a write takes them over once.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_ANALYSIS_OPDEPENDENCES_H
#define TRACEIR_ANALYSIS_OPDEPENDENCES_H

#include "TraceIR/Analysis/StorageLiveness.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::trace {

class OpDependences {
public:
  static constexpr int32_t kNone = -1;

  /// Compressed adjacency lists: the items of list `i` are
  /// items[begin[i], begin[i + 1]).
  struct Lists {
    std::vector<uint32_t> begin, items;
    llvm::ArrayRef<uint32_t> operator[](uint32_t i) const {
      return llvm::ArrayRef<uint32_t>(items).slice(begin[i],
                                                   begin[i + 1] - begin[i]);
    }
  };

  /// `graph`'s block must end in its terminator (a trace.ret);
  /// `alignment`: what MemoryPlan rounds each planned storage up to.
  OpDependences(GraphOp graph, const StorageLiveness &liveness,
                int64_t alignment);

  /// The number of nodes (the terminator apart).
  uint32_t size() const { return numNodes; }

  uint32_t numNodes = 0;
  /// Per node, and the terminator last: its op.
  std::vector<Operation *> ops;
  /// Bytes each node allocates, and of them the arena's (aligned).
  std::vector<int64_t> alloc, arenaAlloc;
  /// Per node: whether it is an unknown op (its results may alias its
  /// operands), and the roots its results make: numResultRoots of them
  /// from firstResultRoot on (views and in-place results make none).
  std::vector<uint8_t> mayAlias;
  std::vector<uint32_t> firstResultRoot, numResultRoots;
  /// Per root: the node that defines it (kNone for an argument), and, where
  /// the graph may free it, the bytes freeing it releases (its own when the
  /// run allocated it, plus the copies tied to it); -1 where the graph keeps
  /// it.
  std::vector<int32_t> rootDef;
  std::vector<int64_t> freeBytes;
  /// Per root: its aligned bytes where MemoryPlan places it (static,
  /// allocated by the run, not returned), else 0; a placed storage is
  /// always one the graph may free.
  std::vector<int64_t> arenaBytes;
  /// Whether an unknown op uses it: its lifetime reaches past its users.
  std::vector<uint8_t> rootMayAlias;
  /// The nodes that use each root through any of its values (the terminator
  /// as node numNodes), and the roots each node uses.
  Lists rootUsers, nodeRoots;
  /// Dependence edges, both ways.
  Lists succs, preds;
};

} // namespace mlir::trace

#endif // TRACEIR_ANALYSIS_OPDEPENDENCES_H
