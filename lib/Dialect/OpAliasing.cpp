//===- OpAliasing.cpp - Storage aliasing and effects of the registry ------===//
//
// The aliasing and effect rules the op registry's rows name (Ops.def's
// EFFECTS column, declared in OpRegistryImpl.h), and what the analyses ask
// of a PyOp through them: the operand a result shares storage with, the
// value that owns a storage, every use of a storage, and whether an op the
// registry does not know may alias its operands.
//
//===----------------------------------------------------------------------===//

#include "OpRegistryImpl.h"

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Dialect/TraceDialect.h"
#include "TraceIR/Support/ViewAlgebra.h"

using namespace mlir;
using namespace mlir::trace;
using namespace mlir::trace::registry;

//===--- Aliasing and effect rules ----------------------------------------===//

namespace mlir::trace::registry {

int aliasNone(const PyArgs &, unsigned) { return -1; }
/// Every result is a view of (or is) the first tensor operand.
int aliasFirst(const PyArgs &a, unsigned) { return a.operandIndex(0); }
/// dropout(input, p, train): in eval mode, or with p == 0, ATen returns its
/// input itself.
int aliasDropout(const PyArgs &a, unsigned) {
  traceir::DropoutArgs dropout;
  std::string why;
  return traceir::decodeDropout(callArgs(a), dropout, why) &&
                 dropout.isIdentity()
             ? a.operandIndex(0)
             : -1;
}
bool never(const PyArgs &) { return false; }
/// scaled_dot_product_attention draws random numbers when dropout_p > 0.
bool attentionRandom(const PyArgs &a) {
  auto p = getNumber(a.scalar(4));
  return p && *p > 0;
}
bool always(const PyArgs &) { return true; }
/// Random unless it decodes as the identity (arguments that do not decode
/// fail inference, and count as random until then).
bool dropoutRandom(const PyArgs &a) {
  traceir::DropoutArgs dropout;
  std::string why;
  return !traceir::decodeDropout(callArgs(a), dropout, why) ||
         !dropout.isIdentity();
}
/// Training batch norm updates running_mean/running_var in place. An absent
/// `training` is False, as decodeBatchNorm reads it; flags that do not
/// decode (which fail inference) count as training.
bool batchNormMutates(const PyArgs &a) {
  traceir::BatchNormArgs bn;
  std::string why;
  bool decoded = traceir::decodeBatchNorm(callArgs(a), bn, why);
  return (!decoded || bn.training) && a.isTensor(3) && a.isTensor(4);
}
/// lstm and gru: training dropout between layers.
bool rnnRandom(const PyArgs &a) {
  unsigned nt = 0;
  while (a.isTensor(nt))
    ++nt;
  auto layers = getInt(a.scalar(nt + 1));
  auto p = getNumber(a.scalar(nt + 2));
  // An absent `train` is False, as inferRnn reads it.
  auto train = getBool(a.scalar(nt + 3));
  return train && *train && (!p || *p > 0) && (!layers || *layers > 1);
}

} // namespace mlir::trace::registry

//===--- What the analyses ask of a PyOp ----------------------------------===//

ResultAlias mlir::trace::getResultAlias(PyOp op, unsigned resultIndex) {
  const OpInfo *info = op.getOpInfo();
  if (!info)
    return ResultAlias{op.getTensors().empty() ? AliasKind::Fresh
                                               : AliasKind::MayAlias};
  if (info->alias == aliasNone)
    return ResultAlias{AliasKind::Fresh};
  PyArgs args(op.getCconv(), op.getTensors().getTypes(),
              op.getScalars().getValue());
  int operand = info->alias(args, resultIndex);
  return operand < 0 ? ResultAlias{AliasKind::Fresh}
                     : ResultAlias{AliasKind::MustAlias, operand};
}

void mlir::trace::getResultAliases(PyOp op, SmallVectorImpl<ResultAlias> &out) {
  for (unsigned i = 0, e = op->getNumResults(); i < e; ++i)
    out.push_back(getResultAlias(op, i));
}

Value mlir::trace::getStorageRoot(Value v) {
  while (auto res = dyn_cast<OpResult>(v)) {
    auto py = dyn_cast<PyOp>(res.getOwner());
    if (!py)
      break;
    ResultAlias alias = getResultAlias(py, res.getResultNumber());
    if (alias.kind != AliasKind::MustAlias)
      break;
    v = py.getTensors()[alias.operand];
  }
  return v;
}

bool mlir::trace::isMayAliasOp(Operation *op) {
  auto py = dyn_cast<PyOp>(op);
  return py && py->getNumResults() != 0 && !py.getTensors().empty() &&
         !py.getOpInfo();
}

void mlir::trace::walkStorageUses(Value root,
                                  function_ref<void(OpOperand &)> fn) {
  SmallVector<Value, 8> worklist{root};
  SmallVector<ResultAlias, 4> aliases;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      fn(use);
      auto py = dyn_cast<PyOp>(use.getOwner());
      if (!py || py->getNumResults() == 0)
        continue;
      const OpInfo *info = py.getOpInfo();
      if (!info || info->alias == aliasNone)
        continue; // fresh results, or an unknown op's maybe-aliases
      // The operand index among the tensors equals the operand number: the
      // tensors are the op's only operands. A registry op's result aliases
      // one operand, so each value is reached once.
      aliases.clear();
      getResultAliases(py, aliases);
      for (auto [res, alias] : llvm::zip(py->getResults(), aliases))
        if (alias.kind == AliasKind::MustAlias &&
            static_cast<unsigned>(alias.operand) == use.getOperandNumber())
          worklist.push_back(res);
    }
  }
}
