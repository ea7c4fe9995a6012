//===- ReorderForMemory.cpp - Reorder a graph's ops to lower its peak -----===//
//
// Builds the graph's dependence DAG (OpDependences: SSA def-use, reads and
// writes of each storage through any of its values, the order of
// effects), runs a few near-linear schedulers over it and prices every
// order they return exactly as it will be after --free-dead-tensors, by two
// peaks:
//   - total: the live bytes as StorageLiveness counts them, returned values
//     included (what the process holds);
//   - arena: MemoryPlan's lower bound, the aligned bytes of the storages it
//     places (static, allocated by the run, not returned) alive at once
//     (what the arena must hold).
// An order is better when its total peak is lower, or equal with a lower
// arena peak; only orders that raise neither peak above the traced order's
// count, and the traced order is kept unless one is strictly better, so
// neither peak ever goes up. A training step returns every gradient: those
// fix its total peak at the end whatever the order, and the arena's peak is
// the one left to lower.
//
// The schedulers (XLA's scheduler set, scaled down):
//   - a list scheduler whose ready ops are keyed by the bytes running them
//     frees minus the bytes it allocates, plus a look-ahead over a few
//     successors it makes ready; ties go to the other peak's key, then to
//     the traced order;
//   - the same key with ties to the op made ready last, which finishes the
//     branch at hand before starting another;
//   - both again keyed by the arena's bytes, where a returned value costs
//     nothing to make: a weight gradient that reads a saved activation last
//     frees it, and is preferred once the gradient it needs exists;
//   - a depth-first post-order from the graph's sinks that visits the
//     operand with the heaviest subgraph first (XLA's DFS scheduler), and
//     a plain post-order visiting operands in order.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/OpDependences.h"
#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Transforms/Passes.h"

#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#define DEBUG_TYPE "reorder-for-memory"

namespace mlir::trace {
#define GEN_PASS_DEF_REORDERFORMEMORY
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

namespace {

/// The graph's dependence DAG (OpDependences), with the schedulers and the
/// costs of an order.
class ScheduleProblem : public OpDependences {
public:
  using OpDependences::OpDependences;

  /// The two peaks of an order with each storage freed right after its last
  /// use, as after --free-dead-tensors: `total`, the live bytes as
  /// StorageLiveness counts them (returned values included: what the
  /// process holds), and `arena`, the aligned bytes of the storages
  /// MemoryPlan places (static, allocated by the run, not returned): its
  /// lower bound, what the arena must hold. Compared in that order.
  struct Cost {
    int64_t total = 0, arena = 0;
    bool operator<(const Cost &o) const {
      return total != o.total ? total < o.total : arena < o.arena;
    }
    bool operator==(const Cost &o) const {
      return total == o.total && arena == o.arena;
    }
  };
  /// The costs of running the nodes in `order` (a permutation of them).
  Cost costOf(llvm::ArrayRef<uint32_t> order) const;

  /// What a scheduler's keys count: the live bytes of the total peak, or
  /// the arena's (where a returned value costs nothing).
  enum class Measure { Total, Arena };
  /// Runs, of the ops ready, the one that lowers the live bytes of
  /// `measure` most (frees minus allocates; ties by the other measure),
  /// with `lookAhead` plus the best such gain among a few successors it
  /// alone holds back. Ties go to the traced order, or with `lifo` to the
  /// op made ready last, which stays on the branch at hand.
  std::vector<uint32_t> listSchedule(Measure measure, bool lifo,
                                     bool lookAhead) const;
  /// A depth-first post-order from the sinks over predecessors, in operand
  /// order or with `heaviestFirst` the one whose subgraph allocates most
  /// first, so that its result is all that stays alive of it while the
  /// others run.
  std::vector<uint32_t> postOrder(bool heaviestFirst) const;

private:
  int64_t gainOf(Measure measure, uint32_t node,
                 llvm::ArrayRef<uint32_t> remaining, uint32_t justRun) const;
  llvm::ArrayRef<int64_t> allocOf(Measure m) const {
    return m == Measure::Total ? alloc : arenaAlloc;
  }
  llvm::ArrayRef<int64_t> freeOf(Measure m) const {
    return m == Measure::Total ? freeBytes : arenaBytes;
  }
};

ScheduleProblem::Cost
ScheduleProblem::costOf(llvm::ArrayRef<uint32_t> order) const {
  std::vector<uint32_t> pos(numNodes + 1);
  for (uint32_t p = 0; p < numNodes; ++p)
    pos[order[p]] = p;
  pos[numNodes] = numNodes;
  // The last use of each root, through unknown ops' results (which may be
  // it) as StorageLiveness extends it; later roots first, as an unknown
  // op's results are defined after the roots it uses.
  uint32_t numRoots = rootDef.size();
  std::vector<int64_t> last(numRoots, -1);
  std::vector<int64_t> freedAfter(numNodes + 1, 0),
      arenaFreedAfter(numNodes + 1, 0);
  for (uint32_t r = numRoots; r-- > 0;) {
    int64_t l = -1;
    for (uint32_t user : rootUsers[r]) {
      l = std::max<int64_t>(l, pos[user]);
      if (user < numNodes && mayAlias[user])
        for (uint32_t i = 0; i < numResultRoots[user]; ++i)
          l = std::max(l, last[firstResultRoot[user] + i]);
    }
    last[r] = l;
    if (freeBytes[r] <= 0)
      continue;
    // Nothing uses it: freed right after its definition.
    if (l < 0 && rootDef[r] != kNone)
      l = pos[rootDef[r]];
    if (l >= 0) {
      freedAfter[l] += freeBytes[r];
      arenaFreedAfter[l] += arenaBytes[r];
    }
  }
  Cost peak;
  int64_t live = 0, arenaLive = 0;
  for (uint32_t p = 0; p < numNodes; ++p) {
    live = traceir::saturatingAdd(live, alloc[order[p]]);
    arenaLive = traceir::saturatingAdd(arenaLive, arenaAlloc[order[p]]);
    peak.total = std::max(peak.total, live);
    peak.arena = std::max(peak.arena, arenaLive);
    live -= freedAfter[p];
    arenaLive -= arenaFreedAfter[p];
  }
  return peak;
}

/// How much running `node` lowers the live bytes of `measure` (what it
/// frees minus what it allocates), with `remaining[r]` the unrun users of
/// each root and `justRun` (if not kNone) assumed run already.
int64_t ScheduleProblem::gainOf(Measure measure, uint32_t node,
                                llvm::ArrayRef<uint32_t> remaining,
                                uint32_t justRun) const {
  llvm::ArrayRef<int64_t> frees = freeOf(measure);
  int64_t gain = -allocOf(measure)[node];
  for (uint32_t r : nodeRoots[node]) {
    if (frees[r] <= 0 || rootMayAlias[r])
      continue;
    uint32_t left = remaining[r];
    if (justRun != static_cast<uint32_t>(kNone) &&
        llvm::is_contained(nodeRoots[justRun], r))
      --left;
    if (left == 1)
      gain = traceir::saturatingAdd(gain, frees[r]);
  }
  // Results nobody uses die at once.
  for (uint32_t i = 0; i < numResultRoots[node]; ++i) {
    uint32_t r = firstResultRoot[node] + i;
    if (frees[r] > 0 && rootUsers[r].empty())
      gain = traceir::saturatingAdd(gain, frees[r]);
  }
  return gain;
}

std::vector<uint32_t> ScheduleProblem::listSchedule(Measure measure, bool lifo,
                                                    bool lookAhead) const {
  // Successors looked at, and the most operands one may have to be looked
  // at: the look-ahead stays a constant per op.
  constexpr unsigned kLookAheadSuccs = 4, kLookAheadUses = 16;
  Measure other = measure == Measure::Total ? Measure::Arena : Measure::Total;
  std::vector<uint32_t> indeg(numNodes), remaining(rootUsers.begin.size() - 1);
  for (uint32_t n = 0; n < numNodes; ++n)
    indeg[n] = preds[n].size();
  for (uint32_t r = 0; r < remaining.size(); ++r)
    remaining[r] = rootUsers[r].size();
  std::vector<uint32_t> version(numNodes, 0);
  std::vector<uint8_t> ready(numNodes, 0), done(numNodes, 0);
  struct Entry {
    int64_t key, tieKey;
    uint32_t tie, node, version;
    bool operator<(const Entry &o) const {
      // std::priority_queue pops the greatest: the highest key, then the
      // highest key of the other measure, then the lowest tie.
      if (key != o.key)
        return key < o.key;
      return tieKey != o.tieKey ? tieKey < o.tieKey : tie > o.tie;
    }
  };
  std::priority_queue<Entry> heap;
  uint32_t stamp = 0;
  auto priority = [&](uint32_t n) {
    int64_t key = gainOf(measure, n, remaining, kNone);
    if (!lookAhead)
      return key;
    // The best thing running `n` makes ready, when it lowers the bytes.
    int64_t best = 0;
    unsigned looked = 0;
    for (uint32_t s : succs[n]) {
      if (looked == kLookAheadSuccs)
        break;
      if (indeg[s] != 1 || nodeRoots[s].size() > kLookAheadUses)
        continue;
      ++looked;
      best = std::max(best, gainOf(measure, s, remaining, n));
    }
    return traceir::saturatingAdd(key, best);
  };
  auto push = [&](uint32_t n) {
    uint32_t tie = lifo ? UINT32_MAX - stamp++ : n;
    heap.push({priority(n), gainOf(other, n, remaining, kNone), tie, n,
               ++version[n]});
  };
  for (uint32_t n = 0; n < numNodes; ++n)
    if (indeg[n] == 0) {
      ready[n] = 1;
      push(n);
    }
  std::vector<uint32_t> order;
  order.reserve(numNodes);
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    if (e.version != version[e.node] || done[e.node])
      continue;
    uint32_t n = e.node;
    done[n] = 1;
    order.push_back(n);
    for (uint32_t r : nodeRoots[n]) {
      if (--remaining[r] != 1 || freeBytes[r] <= 0)
        continue;
      // The one user left now frees this root: re-key it if it is ready
      // (each root gets here once, so the scan stays linear).
      for (uint32_t u : rootUsers[r])
        if (u < numNodes && !done[u]) {
          if (ready[u])
            push(u);
          break;
        }
    }
    for (uint32_t s : succs[n])
      if (--indeg[s] == 0) {
        ready[s] = 1;
        push(s);
      }
  }
  return order;
}

std::vector<uint32_t> ScheduleProblem::postOrder(bool heaviestFirst) const {
  // Each op's subgraph weight: its bytes plus its predecessors' (counted
  // once per path, as XLA does; saturating).
  std::vector<uint32_t> items = preds.items;
  if (heaviestFirst) {
    std::vector<int64_t> weight(numNodes, 0);
    for (uint32_t n = 0; n < numNodes; ++n) {
      int64_t w = std::max<int64_t>(alloc[n], 0);
      for (uint32_t p : preds[n])
        w = traceir::saturatingAdd(w, weight[p]);
      weight[n] = w;
    }
    auto heavier = [&](uint32_t a, uint32_t b) {
      return weight[a] != weight[b] ? weight[a] > weight[b] : a < b;
    };
    for (uint32_t n = 0; n < numNodes; ++n)
      std::sort(items.begin() + preds.begin[n],
                items.begin() + preds.begin[n + 1], heavier);
  }
  std::vector<uint32_t> order;
  order.reserve(numNodes);
  std::vector<uint8_t> visited(numNodes, 0);
  std::vector<std::pair<uint32_t, uint32_t>> stack; // node, next pred
  for (uint32_t sink = 0; sink < numNodes; ++sink) {
    if (!succs[sink].empty() || visited[sink])
      continue;
    visited[sink] = 1;
    stack.emplace_back(sink, preds.begin[sink]);
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      if (next == preds.begin[n + 1]) {
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      uint32_t p = items[next++];
      if (!visited[p]) {
        visited[p] = 1;
        stack.emplace_back(p, preds.begin[p]);
      }
    }
  }
  return order;
}

struct ReorderForMemoryPass
    : public mlir::trace::impl::ReorderForMemoryBase<ReorderForMemoryPass> {
  using ReorderForMemoryBase::ReorderForMemoryBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    Block &block = graph.getBody().front();
    if (failed(checkArenaAlignment(graph, "reorder-for-memory", alignment)) ||
        failed(checkNoFreesOrPlan(graph, "reorder-for-memory",
                                  "another order would break",
                                  "pin the order it would change")))
      return signalPassFailure();
    if (block.empty() || !isa<RetOp>(block.back()))
      return markAllAnalysesPreserved();

    StorageLiveness liveness(graph);
    ScheduleProblem problem(graph, liveness, alignment);
    uint32_t n = problem.size();
    std::vector<uint32_t> best(n);
    for (uint32_t i = 0; i < n; ++i)
      best[i] = i;
    using Cost = ScheduleProblem::Cost;
    using Measure = ScheduleProblem::Measure;
    const Cost before = problem.costOf(best);
    Cost bestCost = before;
    LLVM_DEBUG(llvm::dbgs()
               << "@" << graph.getSymName() << ": traced order " << before.total
               << " bytes, arena " << before.arena << "\n");
    auto consider = [&](const char *name, std::vector<uint32_t> order) {
      // Every scheduler emits every op of a DAG; a shorter order would mean
      // a cycle in the dependences (a bug), and a partial order must never
      // be applied.
      assert(order.size() == n && "a scheduler dropped an op");
      if (order.size() != n)
        return;
      Cost cost = problem.costOf(order);
      LLVM_DEBUG(llvm::dbgs() << "  " << name << ": " << cost.total
                              << " bytes, arena " << cost.arena << "\n");
      // Neither peak may rise above the traced order's; of the orders that
      // keep to both, the least total peak wins, then the least arena.
      if (cost.total > before.total || cost.arena > before.arena)
        return;
      if (cost < bestCost) {
        bestCost = cost;
        best = std::move(order);
      }
    };
    consider("list, look-ahead",
             problem.listSchedule(Measure::Total, false, true));
    consider("list, last ready first",
             problem.listSchedule(Measure::Total, true, false));
    consider("post-order, heaviest first", problem.postOrder(true));
    consider("post-order", problem.postOrder(false));
    consider("arena list, look-ahead",
             problem.listSchedule(Measure::Arena, false, true));
    consider("arena list, last ready first",
             problem.listSchedule(Measure::Arena, true, false));

    peakBytesBefore += before.total;
    peakBytesAfter += bestCost.total;
    arenaBytesBefore += before.arena;
    arenaBytesAfter += bestCost.arena;
    if (budget > 0 && bestCost.total > budget) {
      graph.emitError("--reorder-for-memory: the best order found needs ")
          << bestCost.total << " bytes, " << bestCost.total - budget
          << " over the budget of " << static_cast<int64_t>(budget);
      return signalPassFailure();
    }
    if (bestCost == before)
      return markAllAnalysesPreserved();
    ++numReordered;
    Operation *ret = &block.back();
    for (uint32_t node : best)
      problem.ops[node]->moveBefore(ret);
  }
};

} // namespace
