//===- Reduction.cpp - Reductions and softmax -----------------------------===//
//
// sum, mean, amax, amin, prod, any and var over dims; argmax, argmin,
// max.dim, min.dim, the scans cumsum and cumprod, and softmax / log_softmax
// along one dim. The softmax itself (buildSoftmax) is in Utils.cpp, as
// attention uses it too.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

namespace mlir::trace::trace_to_linalg {

/// argmax, argmin (one dim, or the flattened input for dim=None), max.dim
/// and min.dim (values, then indices): one linalg.generic with a value and
/// an index accumulator. The position is row-major over the reduced dims,
/// as the kernel's. The combine takes an element over the accumulator when
/// it is strictly better, a NaN over a number (NaN is the extreme, as in
/// PyTorch), or equal (or both NaN) at a smaller position, so the first
/// extreme wins whatever order the loops visit the elements in; the start
/// (the dtype's lowest or highest, position 0) loses to or ties with the
/// element at position 0.
static LogicalResult lowerArgReduce(const Call &call, PatternRewriter &rewriter,
                                    std::string &why) {
  StringRef name = call.op.getOpName();
  bool isMax = name == "argmax" || name == "max";
  bool withValues = name == "max" || name == "min";
  Location loc = call.op.getLoc();
  RankedTensorType in = call.tensorType(0);
  Type elt = in.getElementType();
  if (elt.isUnsignedInteger() || !elt.isSignlessIntOrFloat())
    return fail(why, "an input of unsupported element type");
  std::vector<bool> dims;
  std::string bad;
  if (!traceir::decodeReducedDims(callArgs(call.args), 1, in.getRank(),
                                  traceir::DimArg::One, dims, bad))
    return fail(why, bad);
  SmallVector<bool> reduced(dims.begin(), dims.end());
  SmallVector<int64_t> kept, strides(in.getRank(), 0);
  SmallVector<utils::IteratorType> iters;
  int64_t stride = 1;
  for (int64_t d = in.getRank() - 1; d >= 0; --d) {
    int64_t size = in.getDimSize(d);
    if (!reduced[d])
      continue;
    // The kernel reports an empty reduction (no element to pick).
    if (size == 0)
      return fail(why, "'" + name + "' over an empty dim");
    strides[d] = stride;
    stride = fits(traceir::checkedMul(stride, size));
  }
  for (auto [size, r] : llvm::zip(in.getShape(), reduced)) {
    if (!r)
      kept.push_back(size);
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
  }
  Type i64 = rewriter.getI64Type();
  bool isF = isa<FloatType>(elt), isBool = elt.isInteger(1);
  TypedAttr start;
  if (isF)
    start = rewriter.getFloatAttr(elt, isMax ? -INFINITY : INFINITY);
  else if (isBool)
    start = rewriter.getIntegerAttr(elt, isMax ? 0 : 1);
  else {
    unsigned w = elt.getIntOrFloatBitWidth();
    start = rewriter.getIntegerAttr(elt, isMax ? APInt::getSignedMinValue(w)
                                               : APInt::getSignedMaxValue(w));
  }
  auto valuesType = RankedTensorType::get(kept, elt);
  auto indexType = RankedTensorType::get(kept, i64);
  Value values =
      linalg::FillOp::create(
          rewriter, loc,
          arith::ConstantOp::create(rewriter, loc, start).getResult(),
          emptyLike(rewriter, loc, valuesType))
          .getResult(0);
  Value indices =
      linalg::FillOp::create(rewriter, loc, constantOf(rewriter, loc, i64, 0),
                             emptyLike(rewriter, loc, indexType))
          .getResult(0);
  MLIRContext *ctx = rewriter.getContext();
  AffineMap drop = dropDimsMap(reduced, ctx);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{valuesType, indexType},
      ValueRange{call.tensor(0)}, ValueRange{values, indices},
      ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(in.getRank()), drop,
                          drop},
      iters, [&](OpBuilder &b, Location l, ValueRange args) {
        Value x = args[0], acc = args[1], at = args[2];
        // The element's position among the reduced dims, row-major.
        Value pos = constantOf(b, l, i64, 0);
        for (int64_t d = 0; d < in.getRank(); ++d) {
          if (!reduced[d])
            continue;
          Value i = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, d));
          pos = add(b, l, pos, mul(b, l, i, constantOf(b, l, i64, strides[d])));
        }
        Value earlier =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, pos, at);
        Value take;
        if (isF) {
          auto cmp = [&](arith::CmpFPredicate p, Value u, Value v) {
            return arith::CmpFOp::create(b, l, p, u, v);
          };
          Value xNan = cmp(arith::CmpFPredicate::UNO, x, x);
          Value accNan = cmp(arith::CmpFPredicate::UNO, acc, acc);
          Value better =
              cmp(isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                  x, acc);
          Value tie =
              arith::OrIOp::create(b, l, cmp(arith::CmpFPredicate::OEQ, x, acc),
                                   arith::AndIOp::create(b, l, xNan, accNan));
          Value nanOverNumber = arith::AndIOp::create(
              b, l, xNan,
              arith::XOrIOp::create(b, l, accNan,
                                    constantOf(b, l, b.getI1Type(), 1)));
          take = arith::OrIOp::create(
              b, l, arith::OrIOp::create(b, l, nanOverNumber, better),
              arith::AndIOp::create(b, l, tie, earlier));
        } else {
          arith::CmpIPredicate p = isMax ? (isBool ? arith::CmpIPredicate::ugt
                                                   : arith::CmpIPredicate::sgt)
                                         : (isBool ? arith::CmpIPredicate::ult
                                                   : arith::CmpIPredicate::slt);
          Value better = arith::CmpIOp::create(b, l, p, x, acc);
          Value tie =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, acc);
          take = arith::OrIOp::create(
              b, l, better, arith::AndIOp::create(b, l, tie, earlier));
        }
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::SelectOp::create(b, l, take, x, acc),
                       arith::SelectOp::create(b, l, take, pos, at)});
      });
  Value idx = generic.getResult(1);
  if (!withValues) {
    rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, idx, call.resultType));
    return success();
  }
  if (call.resultTypes.size() != 2 ||
      call.resultTypes[0].getElementType() != elt)
    return fail(why, "the results are not (values, indices) of the input's "
                     "dtype and int64");
  rewriter.replaceOp(
      call.op, ValueRange{reshapeTo(rewriter, loc, generic.getResult(0),
                                    call.resultTypes[0]),
                          reshapeTo(rewriter, loc, idx, call.resultTypes[1])});
  return success();
}

/// var(self, dim, correction, keepdim), as the kernel: in double, two
/// passes (the mean, then the squared deviations from it), divided by
/// max(0, n - correction), so n - correction at or below 0 gives inf or
/// NaN as in PyTorch; rounded to the result's dtype.
static LogicalResult lowerVar(const Call &call, PatternRewriter &rewriter,
                              std::string &why) {
  Location loc = call.op.getLoc();
  RankedTensorType in = call.tensorType(0);
  Type elt = call.resultElt();
  if (!isa<FloatType>(elt))
    return fail(why, "var with a non-float result");
  std::vector<bool> dims;
  std::string bad;
  double correction = 1;
  if (!traceir::decodeReducedDims(callArgs(call.args), 1, in.getRank(),
                                  traceir::DimArg::List, dims, bad) ||
      !traceir::readNumber(callArgs(call.args), 2, "correction", correction,
                           1.0, bad))
    return fail(why, bad);
  SmallVector<bool> reduced(dims.begin(), dims.end());
  SmallVector<int64_t> reducedDims;
  for (auto [size, red] : llvm::zip(in.getShape(), reduced))
    if (red)
      reducedDims.push_back(size);
  double n = static_cast<double>(productOf(reducedDims));
  Type f64 = rewriter.getF64Type();
  MLIRContext *ctx = rewriter.getContext();
  AffineMap id = rewriter.getMultiDimIdentityMap(in.getRank());
  AffineMap drop = dropDimsMap(reduced, ctx);
  Value x = call.tensor(0);
  Value sum =
      buildReduction(rewriter, loc, in.getShape(), reduced, f64, {x}, {id}, 0,
                     [&](OpBuilder &b, Location l, ValueRange a, Value acc) {
                       return add(b, l, acc, castElement(b, l, a[0], f64));
                     });
  auto keptType = cast<RankedTensorType>(sum.getType());
  Value mean = buildElementwise(
      rewriter, loc, keptType, {sum},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(b, l, a[0], constantOf(b, l, f64, n));
      });
  Value ss = buildReduction(
      rewriter, loc, in.getShape(), reduced, f64, {x, mean}, {id, drop}, 0,
      [&](OpBuilder &b, Location l, ValueRange a, Value acc) {
        Value d = sub(b, l, castElement(b, l, a[0], f64), a[1]);
        return add(b, l, acc, mul(b, l, d, d));
      });
  double divisor = std::max(0.0, n - correction);
  Value r = buildElementwise(
      rewriter, loc, keptType.clone(elt), {ss},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return castElement(
            b, l,
            arith::DivFOp::create(b, l, a[0], constantOf(b, l, f64, divisor)),
            elt);
      });
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, r, call.resultType));
  return success();
}

/// sum, mean, amax, amin, prod and any over dims, with keepdim as an
/// expand_shape of the reduced tensor (the reduction itself always drops
/// the dims). amax and amin use arith's NaN-propagating maximumf/minimumf,
/// as PyTorch propagates NaN. argmax, argmin, max.dim, min.dim
/// (lowerArgReduce) and var (lowerVar) have their own.
LogicalResult ReductionLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  StringRef name = call.op.getOpName();
  enum class Kind { Plain, Arg, Var };
  Kind kind = llvm::StringSwitch<Kind>(name)
                  .Case("argmax", Kind::Arg)
                  .Case("argmin", Kind::Arg)
                  .Case("max", Kind::Arg) // max.dim
                  .Case("min", Kind::Arg) // min.dim
                  .Case("var", Kind::Var)
                  .Default(Kind::Plain);
  if (kind == Kind::Arg)
    return lowerArgReduce(call, rewriter, why);
  if (kind == Kind::Var)
    return lowerVar(call, rewriter, why);
  if (call.resultTypes.size() != 1)
    return fail(why, "more than one result");
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

/// cumsum and cumprod (self, dim, dtype), as the kernel: a float result
/// accumulates in double and rounds each prefix to the result's dtype, an
/// integer one in int64, wrapping as PyTorch. Element i of the scan is the
/// reduction of elements 0..i in order, which is exactly the running value
/// the kernel stores (the same additions or products, in the same order):
/// one linalg.generic over the result's dims and a reduction dim j, taking
/// x[j] while j <= i and keeping the accumulator after. That is n^2 / 2 work
/// per row of n, so a longer scan dim stays the kernel's.
LogicalResult ScanLowering::lower(const Call &call, PatternRewriter &rewriter,
                                  std::string &why) const {
  constexpr int64_t kMaxScan = 4096;
  bool product = call.op.getOpName() == "cumprod";
  Location loc = call.op.getLoc();
  RankedTensorType in = call.tensorType(0);
  Type elt = call.resultElt();
  if (elt.isUnsignedInteger() || !elt.isSignlessIntOrFloat() ||
      in.getElementType().isUnsignedInteger())
    return fail(why, "an unsupported element type");
  int64_t rank = in.getRank();
  auto dim = normDim(getInt(call.args.scalar(1)), std::max<int64_t>(rank, 1));
  if (!dim)
    return fail(why, "dim is not an int in range");
  if (in.getShape() != call.resultType.getShape())
    return fail(why, "the result's shape is not the input's");
  bool isF = isa<FloatType>(elt);
  Type acc = isF ? Type(rewriter.getF64Type()) : Type(rewriter.getI64Type());
  auto finish = [&](Value v) {
    return buildElementwise(rewriter, loc, call.resultType, {v},
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              return castElement(b, l, a[0], elt);
                            });
  };
  Value x = call.tensor(0);
  if (rank == 0) {
    // One element: its own prefix, converted as the kernel's store does.
    rewriter.replaceOp(
        call.op,
        finish(buildElementwise(rewriter, loc, in.clone(acc), {x},
                                [&](OpBuilder &b, Location l, ValueRange a) {
                                  return castElement(b, l, a[0], acc);
                                })));
    return success();
  }
  int64_t n = in.getDimSize(*dim);
  if (n > kMaxScan)
    return fail(why, "a scan dim longer than " + Twine(kMaxScan) +
                         " (the lowering's work is quadratic in it)");
  MLIRContext *ctx = rewriter.getContext();
  // Iteration space: the result's dims, then j.
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    inExprs.push_back(getAffineDimExpr(d == *dim ? rank : d, ctx));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  auto accType = in.clone(acc);
  Value init =
      linalg::FillOp::create(rewriter, loc,
                             constantOf(rewriter, loc, acc, product ? 1 : 0),
                             emptyLike(rewriter, loc, accType))
          .getResult(0);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{accType}, ValueRange{x}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, inExprs, ctx),
                          AffineMap::get(rank + 1, 0, outExprs, ctx)},
      iters, [&](OpBuilder &b, Location l, ValueRange args) {
        Value v = castElement(b, l, args[0], acc);
        Value step = product ? mul(b, l, args[1], v) : add(b, l, args[1], v);
        Value i = linalg::IndexOp::create(b, l, *dim);
        Value j = linalg::IndexOp::create(b, l, rank);
        Value taken =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, j, i);
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::SelectOp::create(b, l, taken, step, args[1])});
      });
  rewriter.replaceOp(call.op, elt == acc ? generic.getResult(0)
                                         : finish(generic.getResult(0)));
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
