//===- TraceToLinalg.cpp - Lower trace.graph to linalg on tensors ---------===//
//
// Two steps. The graph becomes a func.func (ret -> return, constant ->
// arith.constant, free erased) by direct IR surgery: nothing there can fail.
// Then one rewrite pattern on trace.pyop dispatches by op name through a
// table to a lowering per op family; a family that cannot handle a call
// (dynamic shapes, unsupported arguments) says why, and the pass turns that
// into a remark on the op, which stays as it was.
//
// The families are declared in Lowerings.h, each with its own file
// (Elementwise.cpp, Linear.cpp, Reduction.cpp, ...) and the helpers they
// share in Utils.h; this file holds the table and the pass.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Dialect/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/ScopedPrinter.h"

#include <memory>

#define DEBUG_TYPE "convert-trace-to-linalg"

namespace mlir::trace {
#define GEN_PASS_DEF_CONVERTTRACETOLINALG
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;
using namespace mlir::trace::trace_to_linalg;

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// The op-name -> lowering table (Ops.def's LOWERING column), built once
/// per pass instance.
class LoweringTable {
public:
  LoweringTable() {
#define TRACEIR_LOWER_LOWERED(FAMILY) family<FAMILY##Lowering>()
#define TRACEIR_LOWER_KERNEL_ONLY(REASON) nullptr
#define TRACEIR_LOWER_ALIAS nullptr
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  set(#NAME, TRACEIR_LOWER_##LOWERING);
#include "TraceIR/Ops.def"
#undef TRACEIR_LOWER_LOWERED
#undef TRACEIR_LOWER_KERNEL_ONLY
#undef TRACEIR_LOWER_ALIAS
    // An alias lowers as its canonical op.
#define TRACEIR_ALIAS(NAME, CANONICAL) set(#NAME, lookup(#CANONICAL));
#include "TraceIR/Ops.def"
  }
  const PyOpLowering *lookup(StringRef name) const {
    return byName.lookup(name);
  }

private:
  /// The one instance of lowering family `L`.
  template <typename L> const PyOpLowering *family() {
    static const char key = 0; // one address per family
    auto [it, inserted] = families.try_emplace(&key);
    if (inserted)
      it->second = std::make_unique<L>();
    return it->second.get();
  }
  void set(StringRef name, const PyOpLowering *lowering) {
    if (lowering)
      byName[name] = lowering;
  }
  llvm::DenseMap<const void *, std::unique_ptr<PyOpLowering>> families;
  llvm::StringMap<const PyOpLowering *> byName;
};

bool isStatic(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() &&
         ranked.getElementType().isIntOrFloat();
}

/// The one pattern: checks what every lowering needs (static shapes, one
/// result), then dispatches by name. Reasons for failures are kept for the
/// remarks the pass emits afterwards.
struct PyOpToLinalg : public OpRewritePattern<PyOp> {
  PyOpToLinalg(MLIRContext *ctx, const LoweringTable &table,
               DenseMap<Operation *, std::string> &reasons)
      : OpRewritePattern<PyOp>(ctx), table(table), reasons(reasons) {}

  LogicalResult matchAndRewrite(PyOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    if (succeeded(tryLower(op, rewriter, why)))
      return success();
    reasons[op] = why;
    return rewriter.notifyMatchFailure(op, why);
  }

private:
  LogicalResult tryLower(PyOp op, PatternRewriter &rewriter,
                         std::string &why) const {
    const PyOpLowering *lowering = table.lookup(op.getOpName());
    if (!lowering)
      return fail(why, "no lowering for '" + op.getOpName() + "'");
    if (op.getNumResults() == 0)
      return fail(why, "no result");
    if (op.getNumResults() != 1 && !lowering->multipleResults())
      return fail(why, "more than one result");
    for (Type t : op->getOperandTypes())
      if (!isStatic(t))
        return fail(why, "an operand has a dynamic shape (" +
                             llvm::to_string(t) + ")");
    SmallVector<RankedTensorType> resultTypes;
    for (Type t : op->getResultTypes()) {
      if (!isStatic(t))
        return fail(why, "the result has a dynamic shape");
      resultTypes.push_back(cast<RankedTensorType>(t));
    }
    Call call{op,
              PyArgs(op.getCconv(), op.getTensors().getTypes(),
                     op.getScalars().getValue()),
              resultTypes.front(), resultTypes};
    return lowering->lower(call, rewriter, why);
  }

  const LoweringTable &table;
  DenseMap<Operation *, std::string> &reasons;
};

/// Replaces `graph` by a func.func with the same name, type and argument
/// attributes, and lowers the non-pyop trace ops in its body.
func::FuncOp graphToFunc(GraphOp graph) {
  IRRewriter rewriter(graph.getContext());
  rewriter.setInsertionPoint(graph);
  auto func = func::FuncOp::create(rewriter, graph.getLoc(), graph.getSymName(),
                                   graph.getFunctionType());
  if (ArrayAttr argAttrs = graph.getArgAttrsAttr())
    func.setArgAttrsAttr(argAttrs);
  if (ArrayAttr resAttrs = graph.getResAttrsAttr())
    func.setResAttrsAttr(resAttrs);
  if (auto visibility = graph.getSymVisibilityAttr())
    func.setSymVisibilityAttr(visibility);
  rewriter.inlineRegionBefore(graph.getBody(), func.getBody(), func.end());
  rewriter.eraseOp(graph);
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    rewriter.setInsertionPoint(&op);
    if (auto ret = dyn_cast<RetOp>(op))
      rewriter.replaceOpWithNewOp<func::ReturnOp>(ret, ret.getOperands());
    else if (auto c = dyn_cast<ConstantOp>(op))
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          c, cast<TypedAttr>(c.getValue()));
    else if (isa<FreeOp>(op))
      // Bufferization owns memory now; frees on tensors mean nothing.
      rewriter.eraseOp(&op);
  }
  return func;
}

struct ConvertTraceToLinalgPass
    : public mlir::trace::impl::ConvertTraceToLinalgBase<
          ConvertTraceToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<GraphOp> graphs(module.getOps<GraphOp>());
    SmallVector<func::FuncOp> funcs;
    for (GraphOp graph : graphs)
      funcs.push_back(graphToFunc(graph));

    LoweringTable table;
    DenseMap<Operation *, std::string> reasons;
    RewritePatternSet patterns(&getContext());
    patterns.add<PyOpToLinalg>(&getContext(), table, reasons);
    FrozenRewritePatternSet frozen(std::move(patterns));
    unsigned left = 0, total = 0;
    for (func::FuncOp func : funcs) {
      total += llvm::range_size(func.getOps<PyOp>());
      // One walk in order: no folding or DCE, so the lowered func computes
      // exactly what the graph did, op for op.
      walkAndApplyPatterns(func, frozen);
      for (PyOp op : func.getOps<PyOp>()) {
        ++left;
        auto it = reasons.find(op);
        op->emitRemark("not lowered to linalg: ")
            << (it == reasons.end() ? std::string("no lowering") : it->second);
      }
    }
    numLowered += total - left;
    numLeft += left;
  }
};

} // namespace
