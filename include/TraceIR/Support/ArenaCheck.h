//===- ArenaCheck.h - Checks a placement of buffers in one arena -*- C++
//-*-===//
//
// A memory plan puts buffers, each alive over a span of op positions, at
// offsets in one arena. The planner (Analysis/MemoryPlan) and the verifier
// of a planned trace.graph both check a placement here: every offset
// aligned and inside the arena, and no two buffers alive at once sharing a
// byte. Plain C++, as the runtime may check a plan it loads.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_SUPPORT_ARENACHECK_H
#define TRACEIR_SUPPORT_ARENACHECK_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace traceir {

/// A buffer placed in an arena: `size` bytes at `offset`, allocated at op
/// position `first` and released after position `last` (inclusive).
struct ArenaBuffer {
  int64_t size = 0;
  unsigned first = 0, last = 0;
  int64_t offset = 0;
};

/// What is wrong with a placement: buffer `a` is misplaced (not aligned,
/// or not inside the arena), or buffers `a` and `b` are alive at once and
/// overlap. Indices into the checked list.
struct ArenaConflict {
  enum Kind { Misplaced, Overlap } kind;
  size_t a, b;
};

/// The first conflict in `buffers` (by their first positions), or none.
/// Linear in the pairs of buffers alive at once.
std::optional<ArenaConflict>
findArenaConflict(const std::vector<ArenaBuffer> &buffers, int64_t arenaBytes,
                  int64_t alignment);

} // namespace traceir

#endif // TRACEIR_SUPPORT_ARENACHECK_H
