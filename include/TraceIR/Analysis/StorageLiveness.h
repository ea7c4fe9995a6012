//===- StorageLiveness.h - Def-use analysis over storages -------*- C++ -*-===//
//
// A storage is the memory one value owns (an input, a parameter, a constant
// or a fresh op result) together with every value that aliases it: views,
// in-place results, and, conservatively, results of unknown ops. For every
// storage the analysis finds its last use in program order and whether the
// graph may free it; it also computes the live bytes after every
// instruction, from static shapes, under the trace.free ops the graph has.
//
// A view-or-copy op (reshape, flatten, contiguous) copies when no view
// exists; the analysis follows every view's layout with ViewAlgebra, as the
// runtime does, and counts such a copy as tied to its source's storage.
//
// Linear in the number of uses: each storage walks its own uses
// (walkStorageUses) and program order comes from the block's op order.
// Results of unknown ops may alias their operands: each such op's extent
// (the last use of its results, transitively through further unknown ops) is
// computed once, backwards, and every operand storage takes it over, so a
// chain of unknown ops stays linear. Only unknown ops are hashed.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_ANALYSIS_STORAGELIVENESS_H
#define TRACEIR_ANALYSIS_STORAGELIVENESS_H

#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <vector>

namespace mlir::trace {

class StorageLiveness {
public:
  /// Who owns a storage, which decides whether the graph may free it.
  enum class Owner : uint8_t {
    Run,      ///< allocated by an op of this graph
    Donated,  ///< a donated input
    Param,    ///< a parameter: owned by the caller
    Input,    ///< a non-donated input: owned by the caller
    Constant, ///< a trace.constant: owned by the graph
  };

  struct Storage {
    /// The value that owns the memory.
    Value root;
    Owner owner;
    /// Bytes from the static shape; 0 with `dynamic` set when unknown.
    int64_t bytes = 0;
    bool dynamic = false;
    /// The last op in program order that uses the storage through any of
    /// its values (trace.free excluded); null when nothing uses it.
    Operation *lastUser = nullptr;
    bool returned = false;
    /// Whether a trace.free of the storage exists already, and which.
    bool alreadyFreed = false;
    Operation *freedBy = nullptr;
    /// Whether an unknown op uses it (its results may alias it).
    bool hasMayAlias = false;
    /// Why the graph may not free it; empty when it may.
    llvm::StringRef keepReason;
    /// Bytes of the copies tied to it (view-or-copy ops on its values that
    /// had to copy): counted from each copy's op until this storage is
    /// freed.
    int64_t tiedBytes = 0;
  };

  explicit StorageLiveness(GraphOp graph);

  /// The graph's ops in program order.
  llvm::ArrayRef<Operation *> getOps() const { return ops; }
  /// Storages in definition order: arguments, then op results.
  llvm::ArrayRef<Storage> getStorages() const { return storages; }
  /// Whether the graph may free `s` now (owned by the run or donated, not
  /// returned, not freed yet).
  static bool isFreeable(const Storage &s) {
    return s.keepReason.empty() && !s.alreadyFreed;
  }

  /// Live bytes after op `i` of getOps() executes (before the trace.free ops
  /// that follow it), counting only storages the run allocates: params,
  /// constants and inputs are not counted, views count nothing. This is what
  /// the runtime measures when it executes the graph's frees.
  llvm::ArrayRef<int64_t> getLiveBytes() const { return liveBytes; }
  int64_t getPeakBytes() const { return peakBytes; }
  /// Bytes op `i` of getOps() allocates, counted as getLiveBytes() counts
  /// them: its fresh results and a view-or-copy op's copy. With this and
  /// each storage's bytes, a scheduler can price another order of the same
  /// ops (--reorder-for-memory).
  llvm::ArrayRef<int64_t> getAllocBytes() const { return allocBytes; }
  /// Whether live bytes are lower bounds: some storage of the run has a
  /// dynamic shape (it counts 0 bytes), or an unknown op's result may be a
  /// new allocation (it counts 0 bytes too).
  bool isLowerBound() const { return lowerBound; }

  /// The layout of `v` in its storage, as the runtime will give it (views
  /// followed with ViewAlgebra from their storage's root, a fresh result
  /// contiguous): null where it is not known statically.
  std::optional<traceir::views::Layout> getLayout(Value v) const;

  /// Bytes of a tensor type, or -1 when its shape is not static or its size
  /// does not fit in 63 bits.
  static int64_t getStaticBytes(Type type);

private:
  void addStorage(Value root, Owner owner);
  /// Records the layout of `result`, a must-alias of `source`; for a
  /// view-or-copy op that must copy, adds the copy's bytes to `allocated`
  /// and ties them to the source's storage.
  void trackView(
      PyOp op, Value result, Value source,
      llvm::function_ref<std::optional<traceir::views::Layout>(Value)> layoutOf,
      llvm::DenseMap<Value, std::optional<traceir::views::Layout>> &layouts,
      llvm::DenseMap<Value, int64_t> &tiedBytes, int64_t &allocated);

  std::vector<Operation *> ops;
  std::vector<Storage> storages;
  /// Layouts of the values that alias another (views, in-place results).
  llvm::DenseMap<Value, std::optional<traceir::views::Layout>> viewLayouts;
  std::vector<int64_t> liveBytes;
  std::vector<int64_t> allocBytes;
  int64_t peakBytes = 0;
  bool lowerBound = false;
};

} // namespace mlir::trace

#endif // TRACEIR_ANALYSIS_STORAGELIVENESS_H
