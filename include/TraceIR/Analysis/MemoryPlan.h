//===- MemoryPlan.h - Offsets of a run's storages in one arena --*- C++ -*-===//
//
// Places every storage a run allocates, whose size is static and which the
// run does not return, at an offset in one arena, so that no two storages
// alive at once overlap (as Triton's Allocation and TFLite's arena
// planner). A storage's lifetime comes from StorageLiveness under the
// graph's own trace.free ops: from the op that defines it to its free (to
// the end of the run where it has none). Views and in-place results share
// their storage's offset (they are its members). Sizes are rounded up to
// the alignment.
//
// Not planned, left to the allocator: returned values (the caller takes
// them over, as it does today), storages of dynamic shape, inputs, params
// and constants (the caller's or the graph's), and the copies a
// view-or-copy op makes (StorageLiveness ties them to their source); and
// nothing at all where the planned sizes' sum passes INT64_MAX.
//
// The placement is greedy by size with best fit (Pisarchyk and Lee, 2020;
// TFLite's and ExecuTorch's): buffers in an order, each at the lowest
// offset of the smallest gap between the buffers already placed that live
// at the same time, or above them all. Several orders are tried (size,
// size times lifetime, lifetime, definition order) and the smallest arena
// kept; above the bound, a bounded local search moves one buffer at a time
// in the kept order. It is measured against the lower bound no placement
// can beat: the most aligned bytes alive at once.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_ANALYSIS_MEMORYPLAN_H
#define TRACEIR_ANALYSIS_MEMORYPLAN_H

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Support/ArenaCheck.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::trace {

class MemoryPlan {
public:
  /// The CPU allocator's alignment (Runtime/Tensor.cpp); cudaMalloc's is
  /// 256.
  static constexpr int64_t kDefaultAlignment = 64;

  /// One planned storage: its bytes rounded up to the alignment, and its
  /// positions in StorageLiveness::getOps(): it is allocated by op `first`
  /// and released after op `last` (its trace.free, or the last op where it
  /// has none). Two buffers may share bytes only when their [first, last]
  /// do not intersect.
  struct Buffer : traceir::ArenaBuffer {
    /// Its index in StorageLiveness::getStorages().
    unsigned storage = 0;
  };

  explicit MemoryPlan(const StorageLiveness &liveness,
                      int64_t alignment = kDefaultAlignment);

  llvm::ArrayRef<Buffer> getBuffers() const { return buffers; }
  /// The arena: the end of the highest buffer.
  int64_t getArenaBytes() const { return arenaBytes; }
  /// The arena greedy by size alone would take (the first order tried).
  int64_t getGreedyBySizeBytes() const { return greedyBySizeBytes; }
  /// The most aligned bytes of planned buffers alive at once: no
  /// placement takes less.
  int64_t getLowerBoundBytes() const { return lowerBoundBytes; }
  /// The order whose placement was kept ("size", "size x lifetime",
  /// "lifetime", "definition" or "local search").
  llvm::StringRef getOrder() const { return order; }
  int64_t getAlignment() const { return alignment; }

  /// What place() found.
  struct Placement {
    int64_t arenaBytes = 0, greedyBySizeBytes = 0, lowerBoundBytes = 0;
    llvm::StringRef order;
  };
  /// Places `buffers` (aligned sizes, lifetimes within `positions` op
  /// positions) in one arena, writing their offsets: what the constructor
  /// does with a graph's storages.
  static Placement place(std::vector<Buffer> &buffers, unsigned positions);

  /// Checks a placement (ArenaCheck.h): an empty string when it holds,
  /// else what is wrong, naming the storages by index.
  static std::string verify(llvm::ArrayRef<Buffer> buffers, int64_t arenaBytes,
                            int64_t alignment);

private:
  std::vector<Buffer> buffers;
  int64_t arenaBytes = 0;
  int64_t greedyBySizeBytes = 0;
  int64_t lowerBoundBytes = 0;
  llvm::StringRef order;
  int64_t alignment;
};

} // namespace mlir::trace

#endif // TRACEIR_ANALYSIS_MEMORYPLAN_H
