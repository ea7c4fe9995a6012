//===- StorageLiveness.cpp - Def-use analysis over storages ---------------===//

#include "TraceIR/Analysis/StorageLiveness.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::trace;
namespace views = traceir::views;

int64_t StorageLiveness::getStaticBytes(Type type) {
  // A plain cast, not the ShapedType interface: this runs for every value.
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  Type elt = shaped.getElementType();
  auto c = dyn_cast<ComplexType>(elt);
  if (!elt.isIntOrFloat() && !(c && c.getElementType().isIntOrFloat()))
    return -1;
  // The verifier's own count (bool takes a byte), so a verified type always
  // has its size here; -1 (unknown) only for a type it would reject.
  return traceir::checkedTensorBytes(shaped.getShape(), elementByteSize(elt))
      .value_or(-1);
}

void StorageLiveness::addStorage(Value root, Owner owner) {
  Storage s;
  s.root = root;
  s.owner = owner;
  int64_t bytes = getStaticBytes(root.getType());
  if (bytes < 0)
    s.dynamic = true;
  else
    s.bytes = bytes;
  storages.push_back(s);
}

/// Whether `v` owns memory the run allocated (a fresh PyOp result), as
/// opposed to a view, an unknown op's maybe-alias or a caller's tensor.
static bool isRunAllocation(Value v) {
  auto res = dyn_cast<OpResult>(v);
  if (!res)
    return false;
  auto py = dyn_cast<PyOp>(res.getOwner());
  return py &&
         getResultAlias(py, res.getResultNumber()).kind == AliasKind::Fresh;
}

namespace {
/// How far the results of an unknown op reach: their last user and whether
/// they (or views of them) are returned, through further unknown ops.
struct Extent {
  Operation *lastUser = nullptr;
  bool returned = false;
};

void extendTo(Operation *&lastUser, Operation *user) {
  if (!lastUser || lastUser->isBeforeInBlock(user))
    lastUser = user;
}
} // namespace

void StorageLiveness::trackView(
    PyOp op, Value result, Value source,
    llvm::function_ref<std::optional<views::Layout>(Value)> layoutOf,
    llvm::DenseMap<Value, std::optional<views::Layout>> &layouts,
    llvm::DenseMap<Value, int64_t> &tiedBytes, int64_t &allocated) {
  StringRef name = op.getOpName();
  std::optional<views::Layout> in = layoutOf(source);
  auto resultType = dyn_cast<RankedTensorType>(result.getType());
  if (!views::isViewOp(name)) {
    layouts[result] = in; // in-place ops and eval dropout: the input itself
    return;
  }
  if (!in || !resultType || !resultType.hasStaticShape()) {
    // Unknown layout: a view-or-copy op may copy without us knowing.
    layouts[result] = std::nullopt;
    lowerBound |= views::isViewOrCopyOp(name);
    return;
  }
  PyArgs args(op.getCconv(), op.getTensors().getTypes(),
              op.getScalars().getValue());
  views::ViewArgs viewArgs = views::decodeViewArgs(
      name, [&](unsigned i) -> std::optional<std::vector<int64_t>> {
        if (args.isTensor(i) || args.isNoneOrAbsent(i))
          return std::nullopt;
        auto ints = getIntList(args.scalar(i));
        if (!ints)
          return std::nullopt;
        return std::vector<int64_t>(ints->begin(), ints->end());
      });
  std::optional<views::Layout> out =
      views::applyView(name, *in, viewArgs, resultType.getShape());
  if (out || !views::isViewOrCopyOp(name)) {
    layouts[result] = out;
    return;
  }
  // The runtime copies into a storage tied to the source's.
  int64_t bytes = std::max<int64_t>(getStaticBytes(resultType), 0);
  allocated += bytes;
  tiedBytes[getStorageRoot(source)] += bytes;
  layouts[result] = views::Layout::contiguous(resultType.getShape());
}

std::optional<views::Layout> StorageLiveness::getLayout(Value v) const {
  auto it = viewLayouts.find(v);
  if (it != viewLayouts.end())
    return it->second;
  auto ranked = dyn_cast<RankedTensorType>(v.getType());
  if (!ranked || !ranked.hasStaticShape())
    return std::nullopt;
  return views::Layout::contiguous(ranked.getShape());
}

StorageLiveness::StorageLiveness(GraphOp graph) {
  Block &block = graph.getBody().front();
  size_t numOps = block.getOperations().size();
  ops.reserve(numOps);
  liveBytes.reserve(numOps);
  allocBytes.reserve(numOps);
  storages.reserve(block.getNumArguments() + numOps);

  for (BlockArgument arg : block.getArguments()) {
    unsigned i = arg.getArgNumber();
    addStorage(arg, graph.isParam(i)     ? Owner::Param
                    : graph.isDonated(i) ? Owner::Donated
                                         : Owner::Input);
  }

  // Definitions, and the live bytes under the graph's own frees.
  auto add = [](int64_t a, int64_t b) {
    int64_t r;
    return llvm::AddOverflow(a, b, r) ? INT64_MAX : r;
  };
  int64_t live = 0;
  SmallVector<ResultAlias, 4> aliases;
  SmallVector<Operation *> mayAliasOps;
  // Layouts of values that alias another value (views), to know when a
  // view-or-copy op must copy, exactly as the runtime decides (both use
  // ViewAlgebra). A copy is tied to its source's storage: it is counted
  // from its op until that storage is freed. Only views are hashed.
  llvm::DenseMap<Value, int64_t> tiedBytes;
  auto layoutOf = [&](Value v) { return getLayout(v); };
  for (Operation &op : block) {
    ops.push_back(&op);
    int64_t allocated = 0;
    if (auto free = dyn_cast<FreeOp>(op)) {
      Value root = getStorageRoot(free.getTensor());
      if (isRunAllocation(root))
        live -= std::max<int64_t>(getStaticBytes(root.getType()), 0);
      live -= tiedBytes.lookup(root);
    } else if (isa<ConstantOp>(op)) {
      addStorage(op.getResult(0), Owner::Constant);
    } else if (auto py = dyn_cast<PyOp>(op)) {
      if (isMayAliasOp(py)) {
        mayAliasOps.push_back(py);
        lowerBound = true;
      }
      aliases.clear();
      getResultAliases(py, aliases);
      for (auto [res, alias] : llvm::zip(py->getResults(), aliases)) {
        if (alias.kind == AliasKind::MustAlias) {
          trackView(py, res, py.getTensors()[alias.operand], layoutOf,
                    viewLayouts, tiedBytes, allocated);
          continue;
        }
        if (alias.kind != AliasKind::Fresh)
          continue;
        addStorage(res, Owner::Run);
        allocated = add(allocated, storages.back().bytes);
        lowerBound |= storages.back().dynamic;
      }
    }
    live = add(live, allocated);
    allocBytes.push_back(allocated);
    liveBytes.push_back(live);
    peakBytes = std::max(peakBytes, live);
  }

  // Extents of unknown ops, last to first: a later op's extent is final when
  // an earlier op's results reach it.
  llvm::DenseMap<Operation *, Extent> extents;
  for (Operation *op : llvm::reverse(mayAliasOps)) {
    Extent ext;
    for (Value res : op->getResults())
      walkStorageUses(res, [&](OpOperand &use) {
        Operation *user = use.getOwner();
        if (isa<FreeOp>(user))
          return; // rejected by the verifier
        if (isa<RetOp>(user))
          ext.returned = true;
        if (isMayAliasOp(user)) {
          const Extent &next = extents[user];
          ext.returned |= next.returned;
          if (next.lastUser)
            extendTo(ext.lastUser, next.lastUser);
        }
        extendTo(ext.lastUser, user);
      });
    extents[op] = ext;
  }

  // Last uses: each storage walks the uses of its values.
  for (Storage &s : storages) {
    if (!tiedBytes.empty())
      s.tiedBytes = tiedBytes.lookup(s.root);
    walkStorageUses(s.root, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (isa<FreeOp>(user)) {
        // A free is not a use: it must not extend the lifetime it ends.
        s.alreadyFreed = true;
        s.freedBy = user;
        return;
      }
      if (isa<RetOp>(user))
        s.returned = true;
      if (isMayAliasOp(user)) {
        // Its results may be this storage: they keep it alive.
        s.hasMayAlias = true;
        const Extent &ext = extents.find(user)->second;
        s.returned |= ext.returned;
        if (ext.lastUser)
          extendTo(s.lastUser, ext.lastUser);
      }
      extendTo(s.lastUser, user);
    });
    switch (s.owner) {
    case Owner::Param:
      s.keepReason = "parameter";
      break;
    case Owner::Input:
      s.keepReason = "input (not donated)";
      break;
    case Owner::Constant:
      s.keepReason = "constant";
      break;
    case Owner::Run:
    case Owner::Donated:
      if (s.returned)
        s.keepReason = "returned";
      break;
    }
  }
}
