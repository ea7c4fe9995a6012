//===- DataMovement.cpp - Views, cat, identities and embedding ------------===//
//
// The ops that move or select elements without arithmetic: views as
// reshapes, transposes and slices, expand as a broadcasting copy, cat as
// insert_slices, the ops that return their input, and embedding as a
// gather.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

namespace mlir::trace::trace_to_linalg {

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

/// Every view that only regroups dimensions: the registry already inferred
/// the static result shape, so the lowering is a reshape to it.
LogicalResult ReshapeLowering::lower(const Call &call,
                                     PatternRewriter &rewriter,
                                     std::string &why) const {
  if (call.tensorType(0).getElementType() != call.resultElt())
    return fail(why, "a view that changes the element type");
  rewriter.replaceOp(call.op, reshapeTo(rewriter, call.op.getLoc(),
                                        call.tensor(0), call.resultType));
  return success();
}

/// transpose, permute and t as linalg.transpose.
LogicalResult TransposeLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  StringRef name = call.op.getOpName();
  int64_t rank = call.tensorType(0).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (name == "t") {
    if (rank == 2)
      std::swap(perm[0], perm[1]);
  } else if (name == "transpose") {
    auto d0 = normDim(getInt(call.args.scalar(1)), rank);
    auto d1 = normDim(getInt(call.args.scalar(2)), rank);
    if (!d0 || !d1)
      return fail(why, "dims are not ints in range");
    if (rank > 0)
      std::swap(perm[*d0], perm[*d1]);
  } else {
    auto dims = getIntList(call.args.scalar(1));
    if (!dims || static_cast<int64_t>(dims->size()) != rank)
      return fail(why, "dims are not a permutation");
    for (auto [i, d] : llvm::enumerate(*dims)) {
      auto n = normDim(d, rank);
      if (!n)
        return fail(why, "dims are not a permutation");
      perm[i] = *n;
    }
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank))) {
    rewriter.replaceOp(call.op, call.tensor(0));
    return success();
  }
  rewriter.replaceOp(
      call.op, transpose(rewriter, call.op.getLoc(), call.tensor(0), perm));
  return success();
}

/// select, slice and narrow as one tensor.extract_slice (rank-reducing for
/// select). Offsets follow PyTorch: negative ones count from the end and
/// slice bounds clamp; the sizes are the result's.
LogicalResult SliceLowering::lower(const Call &call, PatternRewriter &rewriter,
                                   std::string &why) const {
  StringRef name = call.op.getOpName();
  RankedTensorType in = call.tensorType(0);
  int64_t rank = in.getRank();
  std::optional<int64_t> dim = call.args.isNoneOrAbsent(1) && name == "slice"
                                   ? std::optional<int64_t>(0)
                                   : normDim(getInt(call.args.scalar(1)), rank);
  if (!dim || rank == 0)
    return fail(why, "dim is not an int in range");
  int64_t size = in.getDimSize(*dim);
  int64_t start = 0, step = 1;
  if (!call.args.isNoneOrAbsent(2)) {
    auto s = getInt(call.args.scalar(2));
    if (!s)
      return fail(why, "start/index is not an int");
    start = *s < 0 ? *s + size : *s;
  }
  if (name == "slice" && !call.args.isNoneOrAbsent(4)) {
    auto s = getInt(call.args.scalar(4));
    if (!s || *s <= 0)
      return fail(why, "step is not a positive int");
    step = *s;
  }
  start = std::clamp<int64_t>(start, 0, size);
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(rewriter.getIndexAttr(in.getDimSize(d)));
  offsets[*dim] = rewriter.getIndexAttr(start);
  strides[*dim] = rewriter.getIndexAttr(step);
  sizes[*dim] = rewriter.getIndexAttr(
      name == "select" ? 1 : call.resultType.getDimSize(*dim));
  rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
      call.op, call.resultType, call.tensor(0), offsets, sizes, strides);
  return success();
}

/// expand: a broadcasting copy (size-1 dims stretch, new leading dims).
LogicalResult ExpandLowering::lower(const Call &call, PatternRewriter &rewriter,
                                    std::string &why) const {
  rewriter.replaceOp(call.op,
                     buildElementwise(rewriter, call.op.getLoc(),
                                      call.resultType, {call.tensor(0)},
                                      [](OpBuilder &, Location, ValueRange a) {
                                        return a[0];
                                      }));
  return success();
}

/// cat(tensors..., dim): each operand (converted to the result's element
/// type first, as PyTorch promotes) is inserted at its running offset along
/// `dim` into one tensor.empty. A chain of tensor.insert_slice bufferizes in
/// place into a single allocation, which tensor.concat does not promise.
LogicalResult CatLowering::lower(const Call &call, PatternRewriter &rewriter,
                                 std::string &why) const {
  unsigned n = 0;
  while (call.args.isTensor(n))
    ++n;
  if (n == 0)
    return fail(why, "no tensors to concatenate");
  int64_t rank = call.resultType.getRank();
  std::optional<int64_t> dim = call.args.isNoneOrAbsent(n)
                                   ? std::optional<int64_t>(0)
                                   : normDim(getInt(call.args.scalar(n)), rank);
  if (!dim || rank == 0)
    return fail(why, "dim is not an int in range");
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  Value out = emptyLike(rewriter, loc, call.resultType);
  int64_t offset = 0;
  for (unsigned i = 0; i < n; ++i) {
    RankedTensorType t = call.tensorType(i);
    // PyTorch skips legacy empty 1-D operands of any other rank.
    if (productOf(t.getShape()) == 0 && t.getRank() != rank)
      continue;
    if (t.getRank() != rank)
      return fail(why, "operands of different ranks");
    Value v = call.tensor(i);
    if (t.getElementType() != elt)
      v = buildElementwise(rewriter, loc, t.clone(elt), {v},
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return castElement(b, l, a[0], elt);
                           });
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(rewriter.getIndexAttr(t.getDimSize(d)));
    offsets[*dim] = rewriter.getIndexAttr(offset);
    out = tensor::InsertSliceOp::create(rewriter, loc, v, out, offsets, sizes,
                                        strides);
    offset += t.getDimSize(*dim);
  }
  if (offset != call.resultType.getDimSize(*dim))
    return fail(why, "operand sizes along dim do not add up to the result");
  rewriter.replaceOp(call.op, out);
  return success();
}

/// Ops that return their input's value: contiguous, clone, alias, and
/// dropout in eval mode (or with p = 0).
LogicalResult IdentityLowering::lower(const Call &call,
                                      PatternRewriter &rewriter,
                                      std::string &why) const {
  if (call.op.getOpName() == "dropout") {
    traceir::DropoutArgs dropout;
    std::string bad;
    if (!traceir::decodeDropout(callArgs(call.args), dropout, bad))
      return fail(why, bad);
    if (!dropout.isIdentity())
      return fail(why, "training dropout draws random numbers");
  }
  if (call.op.getTensors()[0].getType() != call.resultType)
    return fail(why, "result type differs from the input's");
  rewriter.replaceOp(call.op, call.op.getTensors()[0]);
  return success();
}

/// The fill value converted to the result's element type as the kernels'
/// store converts it (an int exactly, a float truncated into an integer,
/// nonzero as true).
LogicalResult FillLowering::lower(const Call &call, PatternRewriter &rewriter,
                                  std::string &why) const {
  StringRef name = call.op.getOpName();
  // ones_like(self, dtype, ...): a fill of 1.
  Attribute value = name == "ones_like"
                        ? Attribute(IntegerAttr::get(
                              IntegerType::get(rewriter.getContext(), 64), 1))
                        : call.args.scalar(name == "scalar_tensor" ? 0 : 1);
  std::optional<double> number = getNumber(value);
  std::optional<int64_t> integer = getInt(value);
  if (auto b = dyn_cast_or_null<BoolAttr>(value))
    number = integer = b.getValue();
  if (!number)
    return fail(why, "the fill value is not a number");
  Type elt = call.resultElt();
  if (elt.isUnsignedInteger())
    return fail(why, "a uint8 fill");
  Location loc = call.op.getLoc();
  TypedAttr attr;
  if (isa<FloatType>(elt))
    attr = rewriter.getFloatAttr(elt, *number);
  else if (elt.isInteger(1))
    attr = rewriter.getIntegerAttr(elt, *number != 0);
  else if (integer)
    attr = rewriter.getIntegerAttr(elt, *integer);
  else if (std::isfinite(*number) && std::fabs(*number) < 0x1p63)
    attr = rewriter.getIntegerAttr(elt, static_cast<int64_t>(*number));
  else
    return fail(why, "a fill value that the integer type cannot hold");
  Value fill = arith::ConstantOp::create(rewriter, loc, attr);
  rewriter.replaceOp(
      call.op, linalg::FillOp::create(rewriter, loc, fill,
                                      emptyLike(rewriter, loc, call.resultType))
                   .getResult(0));
  return success();
}

/// _to_copy: castElement is `.to(dtype)`'s conversion of one element;
/// copy(self, src) converts src, broadcast into self's shape, the same way.
LogicalResult ConvertLowering::lower(const Call &call,
                                     PatternRewriter &rewriter,
                                     std::string &why) const {
  unsigned src = call.op.getOpName() == "copy" ? 1 : 0;
  if (!call.args.isTensor(src))
    return fail(why, "the source is not a tensor");
  if (src == 0 && call.tensorType(0).getShape() != call.resultType.getShape())
    return fail(why, "result shape differs from the input's");
  Type elt = call.resultElt();
  // arith takes signless integers only, and castElement reads them signed.
  for (Type t : {call.tensorType(src).getElementType(), elt})
    if (t.isUnsignedInteger())
      return fail(why, "a conversion from or to uint8");
  rewriter.replaceOp(
      call.op, buildElementwise(rewriter, call.op.getLoc(), call.resultType,
                                {call.tensor(src)},
                                [&](OpBuilder &b, Location l, ValueRange a) {
                                  return castElement(b, l, a[0], elt);
                                }));
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding (a gather)
//===----------------------------------------------------------------------===//

/// embedding(weight [V, D], indices [...]) -> [..., D]: a generic over the
/// result that reads its index and gathers with tensor.extract.
LogicalResult EmbeddingLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  if (!call.args.isTensor(0) || !call.args.isTensor(1) ||
      call.tensorType(0).getRank() != 2)
    return fail(why, "weight is not a 2-D tensor");
  Value weight = call.tensor(0);
  int64_t rank = call.resultType.getRank();
  MLIRContext *ctx = rewriter.getContext();
  // The indices are indexed by every result dim but the last.
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d + 1 < rank; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx));
  AffineMap indexMap = AffineMap::get(rank, 0, exprs, ctx);
  Value y = buildGeneric(
      rewriter, call.op.getLoc(), call.resultType, {call.tensor(1)}, {indexMap},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        Value col = linalg::IndexOp::create(b, l, rank - 1);
        return tensor::ExtractOp::create(b, l, weight, ValueRange{row, col});
      });
  rewriter.replaceOp(call.op, y);
  return success();
}

} // namespace mlir::trace::trace_to_linalg
