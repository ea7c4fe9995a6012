//===- ArenaCheck.cpp - Checks a placement of buffers in one arena --------===//

#include "TraceIR/Support/ArenaCheck.h"

#include <algorithm>
#include <numeric>

using namespace traceir;

std::optional<ArenaConflict>
traceir::findArenaConflict(const std::vector<ArenaBuffer> &buffers,
                           int64_t arenaBytes, int64_t alignment) {
  // By first position, each against the buffers still alive: those alive
  // at once overlap in time, so this is linear in their pairs.
  std::vector<size_t> byFirst(buffers.size());
  std::iota(byFirst.begin(), byFirst.end(), size_t(0));
  std::stable_sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) {
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> alive;
  for (size_t i : byFirst) {
    const ArenaBuffer &b = buffers[i];
    if (b.size < 0 || b.offset < 0 || alignment <= 0 ||
        b.offset % alignment != 0 || b.size > arenaBytes ||
        b.offset > arenaBytes - b.size)
      return ArenaConflict{ArenaConflict::Misplaced, i, i};
    alive.erase(
        std::remove_if(alive.begin(), alive.end(),
                       [&](size_t j) { return buffers[j].last < b.first; }),
        alive.end());
    for (size_t j : alive) {
      const ArenaBuffer &o = buffers[j];
      if (o.offset < b.offset + b.size && b.offset < o.offset + o.size)
        return ArenaConflict{ArenaConflict::Overlap, j, i};
    }
    alive.push_back(i);
  }
  return std::nullopt;
}
