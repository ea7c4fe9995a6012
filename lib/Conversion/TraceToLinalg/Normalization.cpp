//===- Normalization.cpp - layer_norm and batch_norm ----------------------===//
//
// layer_norm as reductions for the statistics and one generic that
// normalizes; batch_norm in eval mode as one generic reading the running
// statistics per channel.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::trace::trace_to_linalg {

/// layer_norm over the trailing normalized_shape dims: mean, biased
/// variance of (x - mean), then (x - mean) * rsqrt(var + eps) * w + b.
LogicalResult LayerNormLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  RankedTensorType in = call.tensorType(0);
  if (!isa<FloatType>(elt) || in.getElementType() != elt)
    return fail(why, "layer_norm with a non-float or converting result");
  auto normalized = getIntList(call.args.scalar(1));
  int64_t rank = in.getRank();
  if (!normalized || normalized->empty() ||
      static_cast<int64_t>(normalized->size()) > rank)
    return fail(why, "normalized_shape not understood");
  double eps = 1e-5;
  if (!call.args.isNoneOrAbsent(4)) {
    auto e = getNumber(call.args.scalar(4));
    if (!e)
      return fail(why, "eps is not a number");
    eps = *e;
  }
  int64_t k = normalized->size();
  SmallVector<bool> reduced(rank, false);
  for (int64_t d = rank - k; d < rank; ++d)
    reduced[d] = true;
  int64_t count = productOf(in.getShape().take_back(k));
  MLIRContext *ctx = rewriter.getContext();
  AffineMap id = rewriter.getMultiDimIdentityMap(rank);
  AffineMap drop = dropDimsMap(reduced, ctx);
  Value x = call.tensor(0);
  auto addFn = [](OpBuilder &b, Location l, ValueRange a, Value acc) {
    return add(b, l, acc, a[0]);
  };
  auto divByCount = [&](Value v) {
    return buildElementwise(rewriter, loc, cast<RankedTensorType>(v.getType()),
                            {v}, [&](OpBuilder &b, Location l, ValueRange a) {
                              return arith::DivFOp::create(
                                  b, l, a[0],
                                  constantOf(b, l, elt, double(count)));
                            });
  };
  Value mean = divByCount(buildReduction(rewriter, loc, in.getShape(), reduced,
                                         elt, {x}, {id}, 0, addFn));
  Value var = divByCount(buildReduction(
      rewriter, loc, in.getShape(), reduced, elt, {x, mean}, {id, drop}, 0,
      [](OpBuilder &b, Location l, ValueRange a, Value acc) {
        Value d = sub(b, l, a[0], a[1]);
        return add(b, l, acc, mul(b, l, d, d));
      }));
  SmallVector<Value> inputs = {x, mean, var};
  SmallVector<AffineMap> maps = {id, drop, drop};
  int weight = -1, bias = -1;
  for (unsigned i : {2u, 3u}) {
    if (!call.args.isTensor(i))
      continue;
    (i == 2 ? weight : bias) = inputs.size();
    inputs.push_back(call.tensor(i));
    maps.push_back(broadcastMap(call.tensorType(i), in.getShape(), ctx));
  }
  Value y =
      buildGeneric(rewriter, loc, call.resultType, inputs, maps,
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     Value inv = math::RsqrtOp::create(
                         b, l, add(b, l, a[2], constantOf(b, l, elt, eps)));
                     Value v = mul(b, l, sub(b, l, a[0], a[1]), inv);
                     if (weight >= 0)
                       v = mul(b, l, v, a[weight]);
                     if (bias >= 0)
                       v = add(b, l, v, a[bias]);
                     return v;
                   });
  rewriter.replaceOp(call.op, y);
  return success();
}

/// batch_norm in eval mode: (x - running_mean) / sqrt(running_var + eps)
/// * weight + bias, one generic over the input that reads the per-channel
/// vectors (channel dim 1) in place. Training mode uses batch statistics and
/// updates the running ones, which a pure function cannot do.
LogicalResult BatchNormLowering::lower(const Call &call,
                                       PatternRewriter &rewriter,
                                       std::string &why) const {
  Type elt = call.resultElt();
  RankedTensorType in = call.tensorType(0);
  if (!isa<FloatType>(elt) || in.getRank() < 2)
    return fail(why, "batch_norm of a non-float or under-2-D input");
  std::optional<bool> training = call.args.isNoneOrAbsent(5)
                                     ? std::optional<bool>(false)
                                     : getBool(call.args.scalar(5));
  if (!training || *training)
    return fail(why, "training batch_norm (batch statistics)");
  if (!call.args.isTensor(3) || !call.args.isTensor(4))
    return fail(why, "eval batch_norm without running_mean/var");
  double eps = 1e-5;
  if (!call.args.isNoneOrAbsent(7)) {
    auto e = getNumber(call.args.scalar(7));
    if (!e)
      return fail(why, "eps is not a number");
    eps = *e;
  }
  MLIRContext *ctx = rewriter.getContext();
  int64_t rank = in.getRank();
  AffineMap channel = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
  SmallVector<Value> inputs = {call.tensor(0), call.tensor(3), call.tensor(4)};
  SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank), channel,
                                 channel};
  int weight = -1, bias = -1;
  for (unsigned i : {1u, 2u}) {
    if (!call.args.isTensor(i))
      continue;
    if (call.tensorType(i).getRank() != 1)
      return fail(why, "weight or bias is not 1-D");
    (i == 1 ? weight : bias) = inputs.size();
    inputs.push_back(call.tensor(i));
    maps.push_back(channel);
  }
  for (unsigned i : {3u, 4u})
    if (call.tensorType(i).getRank() != 1)
      return fail(why, "running_mean or running_var is not 1-D");
  Value y = buildGeneric(
      rewriter, call.op.getLoc(), call.resultType, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        auto at = [&](int i) { return castElement(b, l, a[i], elt); };
        Value sd = math::SqrtOp::create(
            b, l, add(b, l, at(2), constantOf(b, l, elt, eps)));
        Value v = arith::DivFOp::create(b, l, sub(b, l, at(0), at(1)), sd);
        if (weight >= 0)
          v = mul(b, l, v, at(weight));
        if (bias >= 0)
          v = add(b, l, v, at(bias));
        return v;
      });
  rewriter.replaceOp(call.op, y);
  return success();
}

} // namespace mlir::trace::trace_to_linalg
