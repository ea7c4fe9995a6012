//===- Attention.cpp - scaled_dot_product_attention -----------------------===//
//
// Attention as PyTorch's math backend computes it: two batched
// contractions around a masked, numerically stable softmax.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>

namespace mlir::trace::trace_to_linalg {

/// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
/// is_causal, scale, enable_gqa) as the runtime computes it (PyTorch's math
/// backend): the batch dims broadcast and collapse into one; scores = scale
/// * Q @ K^T as a generic contraction that reads K transposed where it lies;
/// the mask (bool: false masks out; float: added) or the causal mask (key j
/// after query i) applied in one generic over the uncollapsed scores; a
/// stable softmax whose fully masked rows are zeros, as in the runtime and
/// PyTorch on the CPU; then P @ V as a batch_matmul.
LogicalResult AttentionLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  if (!isa<FloatType>(elt))
    return fail(why, "attention with a non-float result");
  for (unsigned i = 0; i < 3; ++i)
    if (!call.args.isTensor(i) || call.tensorType(i).getElementType() != elt)
      return fail(why, "query, key and value are not tensors of the "
                       "result's element type");
  RankedTensorType qt = call.tensorType(0), kt = call.tensorType(1),
                   vt = call.tensorType(2);
  if (qt.getRank() < 2 || kt.getRank() < 2 || vt.getRank() < 2)
    return fail(why, "query, key or value of rank < 2");
  auto dim = [](RankedTensorType t, int64_t fromEnd) {
    return t.getDimSize(t.getRank() - fromEnd);
  };
  int64_t l = dim(qt, 2), e = dim(qt, 1), s = dim(kt, 2), ev = dim(vt, 1);
  ArrayRef<int64_t> out = call.resultType.getShape();
  if (call.resultType.getRank() < 2 || out[out.size() - 2] != l ||
      out.back() != ev)
    return fail(why, "the result is not [..., L, Ev]");
  ArrayRef<int64_t> batch = out.drop_back(2);
  auto withBatch = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> shape(batch);
    shape.append({rows, cols});
    return shape;
  };
  if (!broadcastsTo(qt, withBatch(l, e)) ||
      !broadcastsTo(kt, withBatch(s, e)) || !broadcastsTo(vt, withBatch(s, ev)))
    return fail(why, "query [..., L, E], key [..., S, E] and value [..., "
                     "S, Ev] do not broadcast to the result's batch dims");

  if (!call.args.isNoneOrAbsent(4)) {
    auto p = getNumber(call.args.scalar(4));
    if (!p)
      return fail(why, "dropout_p is not a number");
    if (*p != 0)
      return fail(why, "dropout_p > 0 draws random numbers");
  }
  std::optional<bool> causal = call.args.isNoneOrAbsent(5)
                                   ? std::optional<bool>(false)
                                   : getBool(call.args.scalar(5));
  std::optional<double> scale =
      call.args.isNoneOrAbsent(6)
          ? std::optional<double>(1.0 / std::sqrt(static_cast<double>(e)))
          : getNumber(call.args.scalar(6));
  std::optional<bool> gqa = call.args.isNoneOrAbsent(7)
                                ? std::optional<bool>(false)
                                : getBool(call.args.scalar(7));
  if (!causal || !scale || !gqa)
    return fail(why, "is_causal, scale or enable_gqa not understood");
  if (*gqa)
    return fail(why, "enable_gqa=True (grouped-query attention)");
  bool hasMask = call.args.isTensor(3);
  if (!hasMask && !call.args.isNoneOrAbsent(3))
    return fail(why, "attn_mask is neither a tensor nor None");
  bool maskIsBool = false;
  if (hasMask) {
    RankedTensorType mt = call.tensorType(3);
    maskIsBool = mt.getElementType().isInteger(1);
    if (!maskIsBool && mt.getElementType() != elt)
      return fail(why, "attn_mask is neither bool nor of the query's type");
    if (!broadcastsTo(mt, withBatch(l, s)))
      return fail(why, "attn_mask does not broadcast to [..., L, S]");
    if (*causal)
      return fail(why, "attn_mask together with is_causal=True");
  }

  MLIRContext *ctx = rewriter.getContext();
  int64_t n = productOf(batch);
  Value q3 = toBatch3D(rewriter, loc, call.tensor(0), batch);
  Value k3 = toBatch3D(rewriter, loc, call.tensor(1), batch);
  Value v3 = toBatch3D(rewriter, loc, call.tensor(2), batch);

  // scores[b, i, j] = sum_e q[b, i, e] * k[b, j, e], over (b, i, j, e).
  auto scoresType = RankedTensorType::get({n, l, s}, elt);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx),
                                 AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value scores = linalg::GenericOp::create(
                     rewriter, loc, scoresType, ValueRange{q3, k3},
                     zeros(rewriter, loc, scoresType), maps, iters,
                     [](OpBuilder &b, Location l, ValueRange a) {
                       linalg::YieldOp::create(
                           b, l, add(b, l, a[2], mul(b, l, a[0], a[1])));
                     })
                     .getResult(0);

  // Scale and mask in the uncollapsed [..., L, S], where the mask
  // broadcasts; the row max of a fully masked row is then -inf.
  auto fullType = RankedTensorType::get(withBatch(l, s), elt);
  int64_t rank = fullType.getRank();
  Value full = reshapeTo(rewriter, loc, scores, fullType);
  SmallVector<Value> inputs = {full};
  SmallVector<AffineMap> inMaps = {rewriter.getMultiDimIdentityMap(rank)};
  if (hasMask) {
    inputs.push_back(call.tensor(3));
    inMaps.push_back(
        broadcastMap(call.tensorType(3), fullType.getShape(), ctx));
  }
  Value masked =
      buildGeneric(rewriter, loc, fullType, inputs, inMaps,
                   [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                     Value x = mul(b, l, a[0], constantOf(b, l, elt, *scale));
                     Value ninf = constantOf(b, l, elt, -INFINITY);
                     if (*causal) {
                       Value i = linalg::IndexOp::create(b, l, rank - 2);
                       Value j = linalg::IndexOp::create(b, l, rank - 1);
                       Value later = arith::CmpIOp::create(
                           b, l, arith::CmpIPredicate::ugt, j, i);
                       return arith::SelectOp::create(b, l, later, ninf, x);
                     }
                     if (!hasMask)
                       return x;
                     if (maskIsBool)
                       return arith::SelectOp::create(b, l, a[1], x, ninf);
                     return add(b, l, x, a[1]);
                   });
  Value p = buildSoftmax(rewriter, loc, masked, rank - 1, /*isLog=*/false,
                         /*zeroMaskedRows=*/true);

  auto out3 = RankedTensorType::get({n, l, ev}, elt);
  Value y = linalg::BatchMatmulOp::create(
                rewriter, loc, TypeRange{out3},
                ValueRange{reshapeTo(rewriter, loc, p, scoresType), v3},
                ValueRange{zeros(rewriter, loc, out3)})
                .getResult(0);
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, y, call.resultType));
  return success();
}

} // namespace mlir::trace::trace_to_linalg
