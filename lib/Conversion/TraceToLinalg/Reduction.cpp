//===- Reduction.cpp - Reductions and softmax -----------------------------===//
//
// sum, mean, amax, amin, prod and any over dims, and softmax / log_softmax
// along one dim; the softmax itself (buildSoftmax) is in Utils.cpp, as
// attention uses it too.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

namespace mlir::trace::trace_to_linalg {

/// sum, mean, amax, amin, prod and any over dims, with keepdim as an
/// expand_shape of the reduced tensor (the reduction itself always drops
/// the dims). amax and amin use arith's NaN-propagating maximumf/minimumf,
/// as PyTorch propagates NaN.
LogicalResult ReductionLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  StringRef name = call.op.getOpName();
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  RankedTensorType in = call.tensorType(0);
  traceir::DimArg form = name == "prod"  ? traceir::DimArg::One
                         : name == "any" ? traceir::DimArg::ListEmptyMarksNone
                                         : traceir::DimArg::List;
  std::vector<bool> dims;
  std::string bad;
  if (!traceir::decodeReducedDims(callArgs(call.args), 1, in.getRank(), form,
                                  dims, bad))
    return fail(why, bad);
  SmallVector<bool> reduced(dims.begin(), dims.end());
  if (name == "mean" && !isa<FloatType>(elt))
    return fail(why, "mean with a non-float result");
  bool isMax = name == "amax", isMin = name == "amin", isProd = name == "prod",
       isAny = name == "any";
  if (isAny && !elt.isInteger(1))
    return fail(why, "any with a non-bool (uint8) result");
  // The identity in a double: int64's largest does not round-trip through
  // one, so integer amin keeps its kernel.
  if (isMin && !isa<FloatType>(elt))
    return fail(why, "amin of an integer type");
  double init = isProd ? 1 : isMin ? INFINITY : 0;
  if (isMax)
    init = isa<FloatType>(elt)
               ? -INFINITY
               : static_cast<double>(std::numeric_limits<int64_t>::min());
  if (isMax && !isa<FloatType>(elt) && elt.getIntOrFloatBitWidth() != 64)
    return fail(why, "amax of a narrow integer type");
  Value r = buildReduction(
      rewriter, loc, in.getShape(), reduced, elt, {call.tensor(0)},
      {rewriter.getMultiDimIdentityMap(in.getRank())}, init,
      [&](OpBuilder &b, Location l, ValueRange args, Value acc) -> Value {
        // castElement to i1 tests x != 0 (unordered for floats: NaN is true).
        Value x = castElement(b, l, args[0], elt);
        if (isMax)
          return max(b, l, acc, x);
        if (isMin)
          return arith::MinimumFOp::create(b, l, acc, x);
        if (isProd)
          return mul(b, l, acc, x);
        if (isAny)
          return arith::OrIOp::create(b, l, acc, x);
        return add(b, l, acc, x);
      });
  if (name == "mean") {
    SmallVector<int64_t> reducedDims;
    for (auto [size, red] : llvm::zip(in.getShape(), reduced))
      if (red)
        reducedDims.push_back(size);
    int64_t count = productOf(reducedDims);
    auto rt = cast<RankedTensorType>(r.getType());
    r = buildElementwise(
        rewriter, loc, rt, {r}, [&](OpBuilder &b, Location l, ValueRange args) {
          return arith::DivFOp::create(b, l, args[0],
                                       constantOf(b, l, elt, double(count)));
        });
  }
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, r, call.resultType));
  return success();
}

/// softmax / log_softmax / _log_softmax along one dim (buildSoftmax),
/// computed in the result's element type.
LogicalResult SoftmaxLowering::lower(const Call &call,
                                     PatternRewriter &rewriter,
                                     std::string &why) const {
  bool isLog = call.op.getOpName() != "softmax";
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  if (!isa<FloatType>(elt))
    return fail(why, "softmax with a non-float result");
  RankedTensorType in = call.tensorType(0);
  int64_t rank = in.getRank();
  auto dim = normDim(getInt(call.args.scalar(1)), rank);
  if (!dim || rank == 0)
    return fail(why, "dim is not an int in range (or a 0-d input)");
  if (in.clone(elt) != call.resultType)
    return fail(why, "the result's shape is not the input's");
  Value x = call.tensor(0);
  if (in.getElementType() != elt)
    x = buildElementwise(rewriter, loc, in.clone(elt), {x},
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return castElement(b, l, a[0], elt);
                         });
  rewriter.replaceOp(call.op, buildSoftmax(rewriter, loc, x, *dim, isLog));
  return success();
}

} // namespace mlir::trace::trace_to_linalg
