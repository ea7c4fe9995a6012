//===- SplitOps.cpp - One graph per compute op (--trace-split-ops) --------===//
//
// The runtime launches generated kernels op by op, keeping its own memory
// plan, frees and views. So the code it launches for op k must read exactly
// op k's operands and write exactly its results: a graph per op, lowered
// like any other, gives that host function. Naming by position (`__op<k>`)
// lets the runtime find op k's function again without any side table.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cctype>

namespace mlir::trace {
#define GEN_PASS_DEF_TRACESPLITOPS
#include "TraceIR/Transforms/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;

std::string mlir::trace::splitOpSymbol(StringRef graph, unsigned index,
                                       StringRef opName) {
  std::string name = (graph + "__op" + Twine(index) + "_").str();
  // Op names are Python identifiers in practice; anything else would make
  // an awkward symbol (and kernel) name.
  for (char c : opName)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

std::optional<std::string> mlir::trace::whyNotSplittable(PyOp op) {
  auto isStatic = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.hasStaticShape();
  };
  if (op->getNumResults() == 0)
    return std::string("it has no result");
  if (!llvm::all_of(op->getOperandTypes(), isStatic) ||
      !llvm::all_of(op->getResultTypes(), isStatic))
    return std::string("it has dynamic shapes");
  const OpInfo *info = lookupOp(op.getOpName());
  if (!info)
    return std::string("the op registry does not know it");
  // Views and in-place ops share an operand's storage; the runtime does
  // them without a kernel (views) or must keep the aliasing (in place).
  SmallVector<ResultAlias, 4> aliases;
  getResultAliases(op, aliases);
  if (!llvm::all_of(aliases, [](const ResultAlias &a) {
        return a.kind == AliasKind::Fresh;
      }))
    return std::string("its result is a view of an operand (no kernel)");
  // Ops that write into an operand (batch_norm's running statistics in
  // training) have effects a copy of the op would not reproduce, and random
  // ops must draw from the run's generator.
  PyArgs args(op.getCconv(), op.getTensors().getTypes(),
              op.getScalars().getValue());
  if (info->mutates(args))
    return std::string("it writes into an operand");
  if (info->random(args))
    return std::string("it draws random numbers (training mode)");
  return std::nullopt;
}

namespace {

struct TraceSplitOpsPass
    : public mlir::trace::impl::TraceSplitOpsBase<TraceSplitOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<GraphOp> graphs(module.getOps<GraphOp>());
    for (GraphOp graph : graphs) {
      OpBuilder b(graph);
      unsigned index = 0;
      for (PyOp op : graph.getBody().front().getOps<PyOp>()) {
        unsigned k = index++;
        if (whyNotSplittable(op))
          continue;
        std::string name = splitOpSymbol(graph.getSymName(), k, op.getOpName());
        if (symbols.lookup(name)) {
          graph.emitError("trace-split-ops: symbol @")
              << name << " already exists";
          return signalPassFailure();
        }
        SmallVector<DictionaryAttr> argAttrs;
        for (unsigned i = 0; i < op->getNumOperands(); ++i)
          argAttrs.push_back(b.getDictionaryAttr(
              b.getNamedAttr("trace.input", b.getStringAttr("t" + Twine(i)))));
        auto split = GraphOp::create(
            b, op.getLoc(), name,
            b.getFunctionType(op->getOperandTypes(), op->getResultTypes()),
            argAttrs);
        Block &body = split.getBody().front();
        OpBuilder inner = OpBuilder::atBlockEnd(&body);
        // Operand by operand: a value used twice gets two arguments.
        Operation *copy = inner.clone(*op);
        copy->setOperands(body.getArguments());
        RetOp::create(inner, op.getLoc(), copy->getResults());
        symbols.insert(split);
      }
    }
    for (GraphOp graph : graphs)
      graph.erase();
  }
};

} // namespace
