//===- StorageLiveness.h - Def-use analysis over storages -------*- C++ -*-===//
//
// A storage is a value plus everything that aliases it: views, in-place
// results and (conservatively) results of unknown ops. For every storage the
// analysis finds its last use in program order and whether the graph may
// free it; it also computes the live bytes after every instruction, from
// static shapes, under the trace.free instructions the graph already has.
//
// One walk over the block with union-find over storages: linear in the
// number of ops and operands (times the inverse Ackermann function).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_ANALYSIS_STORAGELIVENESS_H
#define TRACEIR_ANALYSIS_STORAGELIVENESS_H

#include "TraceIR/Dialect/TraceDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::trace {

class StorageLiveness {
public:
  /// Who owns a storage, which decides whether the graph may free it.
  enum class Owner : uint8_t {
    Run,      ///< allocated by an op of this graph: freeable
    Donated,  ///< a donated input: freeable
    Param,    ///< a parameter: owned by the caller
    Input,    ///< a non-donated input: owned by the caller
    Constant, ///< a trace.constant: owned by the graph
  };

  /// An allocation: a value that owns memory (op results that are fresh,
  /// inputs, params, constants). Views and in-place results are not.
  struct Allocation {
    Value value;
    Owner owner;
    /// Bytes from the static shape; 0 with `dynamic` set when unknown.
    int64_t bytes = 0;
    bool dynamic = false;
  };

  /// A class of values that may share memory.
  struct Storage {
    /// Allocations in the class, in definition order.
    llvm::SmallVector<unsigned, 1> allocations;
    /// Position of the last op that uses a member (trace.free excluded), or
    /// of the last member's definition when none is used; -1 means the start
    /// of the graph (an argument nobody uses).
    int lastUse = -1;
    bool returned = false;
    /// Whether some value of the class is freed by a trace.free already.
    bool alreadyFreed = false;
    /// Whether an unknown op's result joined the class (it may alias).
    bool hasMayAlias = false;
    /// Why the graph may not free it; empty when it may.
    llvm::StringRef keepReason;
  };

  explicit StorageLiveness(GraphOp graph);

  /// The graph's instructions (not the terminator's arguments) by position.
  llvm::ArrayRef<Operation *> getOps() const { return ops; }
  llvm::ArrayRef<Allocation> getAllocations() const { return allocations; }
  /// Storages in order of their first definition; merged classes appear
  /// once (under their representative).
  llvm::SmallVector<unsigned> getStorageIds();
  const Storage &getStorage(unsigned id) const { return storages[id]; }
  /// The storage class of `v` (union-find representative).
  unsigned getStorageId(Value v);
  /// Whether the graph may free this storage now (owned by the run or
  /// donated, not returned and not freed yet).
  bool isFreeable(unsigned id) const {
    return storages[id].keepReason.empty() && !storages[id].alreadyFreed;
  }
  /// The allocations a free of `id` must release, i.e. those whose memory
  /// the graph owns. Results of unknown ops are never in it (they may
  /// alias).
  llvm::SmallVector<Value, 1> getValuesToFree(unsigned id) const;

  /// Live bytes after op `pos` executes (before the trace.free ops that
  /// follow it), counting only allocations owned by the run: params,
  /// constants and inputs are not counted, views count nothing. This is
  /// what the runtime measures when it executes the graph's frees.
  llvm::ArrayRef<int64_t> getLiveBytes() const { return liveBytes; }
  int64_t getPeakBytes() const { return peakBytes; }
  /// Whether some allocation has a dynamic shape (then live bytes are lower
  /// bounds: a dynamic allocation counts 0 bytes).
  bool hasDynamicSizes() const { return dynamicSizes; }

  /// Bytes of a tensor type, or -1 when its shape is not static.
  static int64_t getStaticBytes(Type type);

private:
  unsigned find(unsigned id);
  void unite(unsigned a, unsigned b);
  unsigned newStorage();
  unsigned addAllocation(Value v, Owner owner);

  std::vector<Operation *> ops;
  std::vector<Allocation> allocations;
  std::vector<Storage> storages;
  std::vector<unsigned> parent;
  /// Storage class of each value, before union-find resolution.
  llvm::DenseMap<Value, unsigned> storageOf;
  /// The allocation each value's memory belongs to, when it must alias one.
  llvm::DenseMap<Value, unsigned> allocationOf;
  std::vector<int64_t> liveBytes;
  int64_t peakBytes = 0;
  bool dynamicSizes = false;
};

} // namespace mlir::trace

#endif // TRACEIR_ANALYSIS_STORAGELIVENESS_H
