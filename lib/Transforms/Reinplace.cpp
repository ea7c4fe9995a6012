//===- Reinplace.cpp - Elementwise ops into a dying operand's storage -----===//
//
// Rewrites a pure elementwise op into its in-place form where its first
// argument's storage dies at the op and the graph's peaks need it (see
// Passes.td). Decisions come from one StorageLiveness of the graph as it
// came: the rewrites only merge a fresh result's storage into a storage
// whose last use is the op that makes it, so every later decision's
// storage, last use and layout read from the original graph still hold in
// the rewritten one. The peaks with none, all and the needed rewrites are
// priced from that same analysis (Peaks): linear in the graph's ops and
// uses.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>
#include <optional>
#include <vector>

namespace mlir::trace {
#define GEN_PASS_DEF_REINPLACE
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

namespace {

/// The storage of `op`'s first argument where it may become `op`'s result
/// (Passes.td's conditions, but the in-place form's existence and the
/// peaks), else none.
std::optional<unsigned>
reusableStorage(PyOp op, const StorageLiveness &liveness,
                const llvm::DenseMap<Value, unsigned> &storageOf) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  PyArgs args(op.getCconv(), op.getTensors().getTypes(),
              op.getScalars().getValue());
  if (!args.isTensor(0))
    return std::nullopt;
  Value self = op.getTensors()[args.operandIndex(0)];
  auto type = dyn_cast<RankedTensorType>(self.getType());
  if (!type || type != op->getResult(0).getType() || !type.hasStaticShape())
    return std::nullopt;
  Value root = getStorageRoot(self);
  auto it = storageOf.find(root);
  if (it == storageOf.end())
    return std::nullopt;
  const StorageLiveness::Storage &s = liveness.getStorages()[it->second];
  int64_t bytes = StorageLiveness::getStaticBytes(type);
  if (s.owner != StorageLiveness::Owner::Run || !s.keepReason.empty() ||
      s.hasMayAlias || s.dynamic || s.tiedBytes != 0 || s.lastUser != op ||
      bytes <= 0 || s.bytes != bytes)
    return std::nullopt;
  // Exactly the storage, laid out as a fresh result of this type would be.
  std::optional<traceir::views::Layout> layout = liveness.getLayout(self);
  if (!layout || layout->offset != 0 || !layout->isContiguous())
    return std::nullopt;
  // mul(x, x) reads each element before writing it; another value of the
  // storage may read elements already written.
  for (Value other : op.getTensors())
    if (other != self && getStorageRoot(other) == root)
      return std::nullopt;
  return it->second;
}

/// A rewrite found on the graph as it came: `op` at `position` may run in
/// place; its first argument's storage is `from`, its result's `into`
/// (indices into StorageLiveness's storages).
struct Rewrite {
  PyOp op;
  size_t position;
  unsigned from, into;
  llvm::StringRef inPlace;
};

/// The peaks of live bytes after each op, each storage freed right after
/// its last use (as --free-dead-tensors will), by the two measures
/// --reorder-for-memory prices an order by: `total`, the bytes of the
/// storages the run allocates, returned ones until the end; `arena`, the
/// aligned bytes of those --plan-memory places (static, not returned).
/// Priced for any subset of the rewrites from the one StorageLiveness of
/// the graph as it came: a rewrite joins `from` (which dies at its op) and
/// `into` (made there) into one storage, which is held over both lifetimes
/// but once at the op, and which the arena leaves entirely where its last
/// member is returned.
class Peaks {
public:
  Peaks(const StorageLiveness &liveness, int64_t alignment)
      : liveness(liveness), alignment(alignment) {
    for (auto [i, op] : llvm::enumerate(liveness.getOps()))
      position[op] = i;
  }

  struct Profile {
    std::vector<int64_t> total, arena;
    int64_t peakTotal = 0, peakArena = 0;
    bool operator<=(const Profile &o) const {
      return peakTotal <= o.peakTotal && peakArena <= o.peakArena;
    }
  };

  Profile with(llvm::ArrayRef<Rewrite> rewrites) const {
    llvm::ArrayRef<StorageLiveness::Storage> storages = liveness.getStorages();
    size_t n = liveness.getOps().size();
    // Joined storages; a group is returned where any member is.
    std::vector<unsigned> parent(storages.size());
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](unsigned x) {
      while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
      return x;
    };
    for (const Rewrite &r : rewrites)
      parent[find(r.from)] = find(r.into);
    std::vector<uint8_t> returned(storages.size(), 0);
    for (auto [i, s] : llvm::enumerate(storages))
      returned[find(i)] |= s.returned;

    Profile p;
    p.total.assign(n + 1, 0);
    p.arena.assign(n + 1, 0);
    for (auto [i, s] : llvm::enumerate(storages)) {
      if (s.owner != StorageLiveness::Owner::Run || s.bytes <= 0)
        continue;
      size_t first = position.lookup(s.root.getDefiningOp());
      size_t last = !s.keepReason.empty() ? n - 1
                    : s.lastUser          ? position.lookup(s.lastUser)
                                          : first;
      p.total[first] += s.bytes;
      p.total[last + 1] -= s.bytes;
      if (!s.dynamic && !returned[find(i)]) {
        p.arena[first] += aligned(s.bytes);
        p.arena[last + 1] -= aligned(s.bytes);
      }
    }
    // The two joined storages are one at the op.
    for (const Rewrite &r : rewrites) {
      const StorageLiveness::Storage &s = storages[r.from];
      p.total[r.position] -= s.bytes;
      p.total[r.position + 1] += s.bytes;
      if (!returned[find(r.from)]) {
        p.arena[r.position] -= aligned(s.bytes);
        p.arena[r.position + 1] += aligned(s.bytes);
      }
    }
    for (size_t i = 1; i <= n; ++i) {
      p.total[i] += p.total[i - 1];
      p.arena[i] += p.arena[i - 1];
    }
    p.peakTotal = *llvm::max_element(p.total);
    p.peakArena = *llvm::max_element(p.arena);
    return p;
  }

private:
  int64_t aligned(int64_t bytes) const {
    return static_cast<int64_t>(llvm::alignTo(
        static_cast<uint64_t>(bytes), static_cast<uint64_t>(alignment)));
  }

  const StorageLiveness &liveness;
  int64_t alignment;
  llvm::DenseMap<Operation *, size_t> position;
};

struct ReinplacePass : public mlir::trace::impl::ReinplaceBase<ReinplacePass> {
  using ReinplaceBase::ReinplaceBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    if (failed(checkArenaAlignment(graph, "reinplace", alignment)) ||
        failed(checkNoFreesOrPlan(
            graph, "reinplace", "new aliasing would break",
            "free storages an in-place op would keep using")))
      return signalPassFailure();

    // The ops that may run in place, decided on the graph as it came.
    StorageLiveness liveness(graph);
    llvm::DenseMap<Value, unsigned> storageOf;
    for (auto [i, s] : llvm::enumerate(liveness.getStorages()))
      storageOf[s.root] = i;
    SmallVector<Rewrite> rewrites;
    // In-place forms by op name: a graph names a few ops many times.
    llvm::DenseMap<StringAttr, const OpInfo *> inPlaceOf;
    for (auto [i, op] : llvm::enumerate(liveness.getOps())) {
      auto py = dyn_cast<PyOp>(op);
      if (!py)
        continue;
      auto [it, isNew] = inPlaceOf.try_emplace(py.getOpNameAttr(), nullptr);
      if (isNew)
        it->second = lookupInPlaceVariant(py.getOpName());
      const OpInfo *inPlace = it->second;
      std::optional<unsigned> from =
          inPlace ? reusableStorage(py, liveness, storageOf) : std::nullopt;
      if (!from)
        continue;
      auto into = storageOf.find(py->getResult(0)); // a pure op's: fresh
      if (into != storageOf.end())
        rewrites.push_back({py, i, *from, into->second, inPlace->name});
    }
    if (rewrites.empty())
      return markAllAnalysesPreserved();

    // Only the rewrites the peaks need: one joins two storages into one,
    // which --plan-memory must then place at one offset over both
    // lifetimes, so where the bytes alive at its op stay under the peaks
    // reached with every rewrite, it lowers nothing and only constrains
    // the placement (a transformer's residual adds, chained into one
    // storage a layer long, took vit_b_16's plan 11% over its bound).
    // Should the rewrites left out raise a peak after all (through a chain
    // of rewrites or a returned value), all are kept.
    Peaks peaks(liveness, alignment);
    Peaks::Profile before = peaks.with({});
    Peaks::Profile reached = peaks.with(rewrites);
    SmallVector<Rewrite> needed;
    for (const Rewrite &r : rewrites)
      if (before.total[r.position] > reached.peakTotal ||
          before.arena[r.position] > reached.peakArena)
        needed.push_back(r);
    if (peaks.with(needed) <= reached)
      rewrites = std::move(needed);
    if (rewrites.empty())
      return markAllAnalysesPreserved();
    for (Rewrite &r : rewrites) {
      r.op.setOpName(r.inPlace);
      ++numReinplaced;
      bytesReused +=
          StorageLiveness::getStaticBytes(r.op->getResult(0).getType());
    }
  }
};

} // namespace
