//===- Utils.cpp - Helpers the TraceToLinalg lowerings share --------------===//
//
// The IR-building helpers that Utils.h declares: what more than one
// lowering family uses.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <cmath>

namespace mlir::trace::trace_to_linalg {

//===----------------------------------------------------------------------===//
// Scalar helpers (inside linalg bodies)
//===----------------------------------------------------------------------===//

Value castElement(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, v))
               : Value(arith::TruncFOp::create(b, loc, to, v));
  if (fromF) {
    if (to.isInteger(1)) {
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0));
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
    }
    return arith::FPToSIOp::create(b, loc, to, v);
  }
  if (toF)
    return from.isInteger(1) ? Value(arith::UIToFPOp::create(b, loc, to, v))
                             : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (to.isInteger(1)) {
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (from.isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, v);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

Value constantOf(OpBuilder &b, Location loc, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::AddFOp::create(b, loc, x, y))
                    : Value(arith::AddIOp::create(b, loc, x, y));
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::SubFOp::create(b, loc, x, y))
                    : Value(arith::SubIOp::create(b, loc, x, y));
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MulFOp::create(b, loc, x, y))
                    : Value(arith::MulIOp::create(b, loc, x, y));
}
Value max(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MaximumFOp::create(b, loc, x, y))
                    : Value(arith::MaxSIOp::create(b, loc, x, y));
}

//===----------------------------------------------------------------------===//
// Tensor helpers
//===----------------------------------------------------------------------===//

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

AffineMap broadcastMap(RankedTensorType type, ArrayRef<int64_t> shape,
                       MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  unsigned lead = shape.size() - type.getRank();
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    unsigned d = lead + i;
    exprs.push_back(size == 1 && shape[d] != 1 ? getAffineConstantExpr(0, ctx)
                                               : getAffineDimExpr(d, ctx));
  }
  return AffineMap::get(shape.size(), 0, exprs, ctx);
}

AffineMap dropDimsMap(ArrayRef<bool> reduced, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (auto [d, r] : llvm::enumerate(reduced))
    if (!r)
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(reduced.size(), 0, exprs, ctx);
}

Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                   ValueRange inputs, ArrayRef<AffineMap> maps, BodyFn body) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iters(resultType.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, emptyLike(b, loc, resultType), allMaps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyFn body) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(cast<RankedTensorType>(in.getType()),
                                resultType.getShape(), b.getContext()));
  return buildGeneric(b, loc, resultType, inputs, maps, body);
}

Value buildReduction(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ArrayRef<bool> reduced,
    Type elt, ValueRange inputs, ArrayRef<AffineMap> maps, double init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> combine) {
  SmallVector<int64_t> kept;
  SmallVector<utils::IteratorType> iters;
  for (auto [size, r] : llvm::zip(shape, reduced)) {
    if (!r)
      kept.push_back(size);
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
  }
  auto outType = RankedTensorType::get(kept, elt);
  Value initValue = constantOf(b, loc, elt, init);
  Value out =
      linalg::FillOp::create(b, loc, initValue, emptyLike(b, loc, outType))
          .getResult(0);
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(dropDimsMap(reduced, b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, loc, outType, inputs, out, allMaps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = combine(nb, nloc, args.drop_back(), args.back());
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

int64_t fits(std::optional<int64_t> size) {
  if (!size)
    llvm::report_fatal_error("convert-trace-to-linalg: a size of a verified "
                             "type overflows int64");
  return *size;
}
int64_t productOf(ArrayRef<int64_t> dims) {
  return fits(traceir::checkedNumel(dims));
}

Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  auto src = cast<RankedTensorType>(v.getType());
  if (src == type)
    return v;
  if (src.getRank() > type.getRank())
    if (auto re = getReassociationIndicesForReshape(src, type))
      return tensor::CollapseShapeOp::create(b, loc, type, v, *re);
  if (src.getRank() < type.getRank())
    if (auto re = getReassociationIndicesForReshape(type, src))
      return tensor::ExpandShapeOp::create(b, loc, type, v, *re);
  // Through 1-D, without recursing: the detour used to recurse forever when
  // getNumElements() wrapped and no reassociation fit. Both types are
  // verified, so their element counts fit and agree.
  std::optional<int64_t> n = traceir::checkedNumel(src.getShape());
  if (!n || n != traceir::checkedNumel(type.getShape()) || src.getRank() == 0 ||
      type.getRank() == 0)
    llvm::report_fatal_error(
        "reshapeTo: no reshape from a tensor of " + Twine(n ? *n : -1) +
        " elements to the type of " +
        Twine(traceir::checkedNumel(type.getShape()).value_or(-1)) +
        " elements");
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat = v;
  if (src.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({*n}, src.getElementType()), v,
        all(src.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all(type.getRank()));
}

Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto outType = RankedTensorType::get(shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, emptyLike(b, loc, outType),
                                     perm)
      .getResult()[0];
}

bool broadcastsTo(RankedTensorType type, ArrayRef<int64_t> shape) {
  if (type.getRank() > static_cast<int64_t>(shape.size()))
    return false;
  unsigned lead = shape.size() - type.getRank();
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (size != 1 && size != shape[lead + i])
      return false;
  return true;
}

Value toBatch3D(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> batch) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> full(batch);
  full.append({t.getDimSize(t.getRank() - 2), t.getDimSize(t.getRank() - 1)});
  auto fullType = t.clone(full);
  if (t != fullType)
    v = buildElementwise(
        b, loc, fullType, {v},
        [](OpBuilder &, Location, ValueRange in) { return in[0]; });
  return reshapeTo(
      b, loc, v,
      t.clone({productOf(batch), full[full.size() - 2], full.back()}));
}

Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value zero = constantOf(b, loc, type.getElementType(), 0);
  return linalg::FillOp::create(b, loc, zero, emptyLike(b, loc, type))
      .getResult(0);
}

std::optional<int64_t> normDim(std::optional<int64_t> dim, int64_t rank) {
  if (!dim)
    return std::nullopt;
  int64_t d = *dim < 0 ? *dim + std::max<int64_t>(rank, 1) : *dim;
  if (d < 0 || d >= std::max<int64_t>(rank, 1))
    return std::nullopt;
  return d;
}

//===----------------------------------------------------------------------===//
// Softmax (the softmax family and attention)
//===----------------------------------------------------------------------===//

Value buildSoftmax(OpBuilder &b, Location loc, Value x, int64_t dim, bool isLog,
                   bool zeroMaskedRows) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elt = type.getElementType();
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  reduced[dim] = true;
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap drop = dropDimsMap(reduced, b.getContext());
  Value m = buildReduction(b, loc, type.getShape(), reduced, elt, {x}, {id},
                           -INFINITY,
                           [](OpBuilder &nb, Location l, ValueRange a,
                              Value acc) { return max(nb, l, acc, a[0]); });
  Value s =
      buildReduction(b, loc, type.getShape(), reduced, elt, {x, m}, {id, drop},
                     0, [](OpBuilder &nb, Location l, ValueRange a, Value acc) {
                       Value e =
                           math::ExpOp::create(nb, l, sub(nb, l, a[0], a[1]));
                       return add(nb, l, acc, e);
                     });
  return buildGeneric(
      b, loc, type, {x, m, s}, {id, drop, drop},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value shifted = sub(nb, l, a[0], a[1]);
        if (isLog)
          return sub(nb, l, shifted, math::LogOp::create(nb, l, a[2]));
        Value p = arith::DivFOp::create(
            nb, l, math::ExpOp::create(nb, l, shifted), a[2]);
        if (!zeroMaskedRows)
          return p;
        Value masked =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[1],
                                  constantOf(nb, l, elt, -INFINITY));
        return arith::SelectOp::create(nb, l, masked, constantOf(nb, l, elt, 0),
                                       p);
      });
}

//===----------------------------------------------------------------------===//
// Sliding windows (convolution and pooling)
//===----------------------------------------------------------------------===//

Value padHW(OpBuilder &b, Location loc, Value x, std::array<int64_t, 2> pad,
            double value) {
  if (pad[0] == 0 && pad[1] == 0)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  // The window check before every padHW bounded in + 2 * pad.
  for (int i = 0; i < 2; ++i)
    shape[2 + i] = fits(traceir::checkedAdd(
        shape[2 + i], fits(traceir::checkedMul(2, pad[i]))));
  SmallVector<OpFoldResult> lowHigh = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(pad[0]),
                                       b.getIndexAttr(pad[1])};
  Value v = constantOf(b, loc, type.getElementType(), value);
  return tensor::PadOp::create(b, loc, type.clone(shape), x, lowHigh, lowHigh,
                               v);
}

Value to4D(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() == 4)
    return v;
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, t.getShape());
  return reshapeTo(b, loc, v, t.clone(shape));
}

RankedTensorType type4D(RankedTensorType t) {
  if (t.getRank() == 4)
    return t;
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, t.getShape());
  return t.clone(shape);
}

} // namespace mlir::trace::trace_to_linalg
