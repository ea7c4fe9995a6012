//===- MemoryPlan.cpp - Offsets of a run's storages in one arena ----------===//

#include "TraceIR/Analysis/MemoryPlan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::trace;

namespace {
/// The local search's rounds, at most, and its work: rounds times buffers.
constexpr size_t kSearchRounds = 2000;
constexpr size_t kSearchWork = 500000;

/// The arena of buffers placed in `order` (indices into `buffers`), each at
/// the lowest offset of the smallest gap that fits it between the buffers
/// placed before it that live at the same time, or above them all. Writes
/// the offsets. Placed buffers are filed by time in buckets of kSpan op
/// positions, so a buffer meets only those of the buckets its lifetime
/// spans: near-linear where lifetimes are short, as in traces.
int64_t placeGreedy(std::vector<MemoryPlan::Buffer> &buffers,
                    llvm::ArrayRef<unsigned> order, unsigned positions) {
  constexpr unsigned kSpan = 64;
  std::vector<std::vector<unsigned>> buckets(positions / kSpan + 1);
  // The last placement that met each buffer (each is met once).
  std::vector<unsigned> metBy(buffers.size(), UINT_MAX);
  std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) at once
  int64_t arena = 0;
  for (auto [step, i] : llvm::enumerate(order)) {
    MemoryPlan::Buffer &b = buffers[i];
    busy.clear();
    for (unsigned k = b.first / kSpan; k <= b.last / kSpan; ++k)
      for (unsigned j : buckets[k]) {
        const MemoryPlan::Buffer &o = buffers[j];
        if (metBy[j] == step || o.last < b.first || b.last < o.first)
          continue;
        metBy[j] = step;
        busy.push_back({o.offset, o.offset + o.size});
      }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, bestGap = INT64_MAX, at = 0;
    for (auto [lo, hi] : busy) {
      if (lo - at >= b.size && lo - at < bestGap) {
        best = at;
        bestGap = lo - at;
      }
      at = std::max(at, hi);
    }
    b.offset = best >= 0 ? best : at;
    arena = std::max(arena, b.offset + b.size);
    for (unsigned k = b.first / kSpan; k <= b.last / kSpan; ++k)
      buckets[k].push_back(i);
  }
  return arena;
}
} // namespace

MemoryPlan::MemoryPlan(const StorageLiveness &liveness, int64_t alignment)
    : alignment(alignment) {
  llvm::ArrayRef<Operation *> ops = liveness.getOps();
  if (ops.empty())
    return;
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  const unsigned end = ops.size() - 1;
  for (auto [i, s] : llvm::enumerate(liveness.getStorages())) {
    if (s.owner != StorageLiveness::Owner::Run || s.dynamic || s.returned ||
        s.bytes <= 0)
      continue;
    Buffer b;
    b.storage = i;
    b.size = static_cast<int64_t>(
        llvm::alignTo(static_cast<uint64_t>(s.bytes), alignment));
    b.first = position.lookup(s.root.getDefiningOp());
    b.last = s.freedBy ? position.lookup(s.freedBy) : end;
    buffers.push_back(b);
  }
  // Every arena tried and the bound are at most the sizes' sum: where that
  // overflows (a hostile graph of huge tensors), nothing is planned.
  int64_t total = 0;
  for (const Buffer &b : buffers)
    if (llvm::AddOverflow(total, b.size, total)) {
      buffers.clear();
      break;
    }

  Placement p = place(buffers, ops.size());
  arenaBytes = p.arenaBytes;
  greedyBySizeBytes = p.greedyBySizeBytes;
  lowerBoundBytes = p.lowerBoundBytes;
  order = p.order;
}

MemoryPlan::Placement MemoryPlan::place(std::vector<Buffer> &buffers,
                                        unsigned positions) {
  Placement p;
  p.order = "size";
  if (buffers.empty())
    return p;
  // The bound: aligned bytes alive after each op, the most of them.
  std::vector<int64_t> delta(positions + 1, 0);
  for (const Buffer &b : buffers) {
    delta[b.first] += b.size;
    delta[b.last + 1] -= b.size;
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    p.lowerBoundBytes = std::max(p.lowerBoundBytes, live);
  }

  // The orders tried, each with ties broken by definition: the first is
  // greedy by size; the arena kept is the smallest.
  auto lifetime = [](const Buffer &b) { return int64_t(b.last - b.first) + 1; };
  using Key = std::function<bool(const Buffer &, const Buffer &)>;
  const std::pair<llvm::StringRef, Key> orders[] = {
      {"size",
       [](const Buffer &a, const Buffer &b) { return a.size > b.size; }},
      {"size x lifetime",
       [&](const Buffer &a, const Buffer &b) {
         // In double: the products may pass 2^63; only their order counts.
         return double(a.size) * double(lifetime(a)) >
                double(b.size) * double(lifetime(b));
       }},
      {"lifetime", [&](const Buffer &a,
                       const Buffer &b) { return lifetime(a) > lifetime(b); }},
      {"definition", [](const Buffer &, const Buffer &) { return false; }},
  };
  std::vector<unsigned> order(buffers.size());
  std::vector<int64_t> bestOffsets;
  for (auto [name, key] : orders) {
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
      return key(buffers[a], buffers[b]);
    });
    int64_t arena = placeGreedy(buffers, order, positions);
    if (name == orders[0].first)
      p.greedyBySizeBytes = arena;
    if (bestOffsets.empty() || arena < p.arenaBytes) {
      p.arenaBytes = arena;
      p.order = name;
      bestOffsets.clear();
      for (const Buffer &b : buffers)
        bestOffsets.push_back(b.offset);
      if (arena == p.lowerBoundBytes)
        break; // optimal
    }
  }
  // Above the bound, a local search from the best order: move one buffer
  // ahead of another, place again, keep the order when the arena is no
  // larger (equal ones let the search drift). Each round is one
  // placement; the rounds are bounded so that the search costs at most
  // about as much as a few hundred placements of a graph of a thousand
  // buffers, whatever the graph's size (traces that big meet the bound in
  // the orders above, or come close).
  if (p.arenaBytes > p.lowerBoundBytes) {
    const size_t n = buffers.size();
    const size_t rounds = std::min<size_t>(kSearchRounds, kSearchWork / n);
    // The best order, rebuilt: the kept one's.
    std::iota(order.begin(), order.end(), 0u);
    for (auto [name, key] : orders)
      if (name == p.order)
        std::stable_sort(order.begin(), order.end(),
                         [&](unsigned a, unsigned b) {
                           return key(buffers[a], buffers[b]);
                         });
    std::vector<unsigned> trial;
    uint64_t state = 0x9E3779B97F4A7C15ull; // fixed: the same plan each time
    auto next = [&](size_t bound) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return static_cast<size_t>(state % bound);
    };
    for (size_t round = 0; round < rounds && n > 1; ++round) {
      trial = order;
      size_t from = next(n), to = next(n);
      if (from == to)
        continue;
      unsigned moved = trial[from];
      trial.erase(trial.begin() + from);
      trial.insert(trial.begin() + to, moved);
      int64_t arena = placeGreedy(buffers, trial, positions);
      if (arena > p.arenaBytes)
        continue;
      if (arena < p.arenaBytes)
        p.order = "local search";
      order.swap(trial);
      p.arenaBytes = arena;
      bestOffsets.clear();
      for (const Buffer &b : buffers)
        bestOffsets.push_back(b.offset);
      if (arena == p.lowerBoundBytes)
        break;
    }
  }
  for (auto [b, offset] : llvm::zip(buffers, bestOffsets))
    b.offset = offset;
  return p;
}

std::string MemoryPlan::verify(llvm::ArrayRef<Buffer> buffers,
                               int64_t arenaBytes, int64_t alignment) {
  std::vector<traceir::ArenaBuffer> placed(buffers.begin(), buffers.end());
  std::optional<traceir::ArenaConflict> c =
      traceir::findArenaConflict(placed, arenaBytes, alignment);
  if (!c)
    return "";
  const Buffer &a = buffers[c->a], &b = buffers[c->b];
  if (c->kind == traceir::ArenaConflict::Overlap)
    return "storages #" + std::to_string(a.storage) + " and #" +
           std::to_string(b.storage) + " are alive at once and overlap";
  return "storage #" + std::to_string(a.storage) + " at offset " +
         std::to_string(a.offset) + " (" + std::to_string(a.size) +
         " bytes) is not aligned to " + std::to_string(alignment) +
         " inside the arena of " + std::to_string(arenaBytes) + " bytes";
}
