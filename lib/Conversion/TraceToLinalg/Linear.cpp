//===- Linear.cpp - The matmul family as linalg named ops -----------------===//
//
// mm, bmm, matmul, linear and addmm: every case becomes one 2-D
// linalg.matmul or 3-D linalg.batch_matmul, with reshapes around it.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>

namespace mlir::trace::trace_to_linalg {

/// lhs [..., K] @ rhs [K, N] -> resultType [..., N]: the leading dims of
/// lhs collapse into rows. The accumulator is zero, or `bias` [N]
/// broadcast over the rows.
static Value matmulRows(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        RankedTensorType resultType, Value bias) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  int64_t k = lt.getShape().back();
  int64_t n = resultType.getShape().back();
  int64_t m = productOf(lt.getShape()) / k;
  Type elt = resultType.getElementType();
  Value l2 = reshapeTo(b, loc, lhs, RankedTensorType::get({m, k}, elt));
  auto out2 = RankedTensorType::get({m, n}, elt);
  Value acc = bias ? buildElementwise(b, loc, out2, {bias},
                                      [](OpBuilder &, Location, ValueRange in) {
                                        return in[0];
                                      })
                   : zeros(b, loc, out2);
  Value y = linalg::MatmulOp::create(b, loc, TypeRange{out2},
                                     ValueRange{l2, rhs}, ValueRange{acc})
                .getResult(0);
  return reshapeTo(b, loc, y, resultType);
}

/// mm, bmm, matmul, linear and addmm as linalg.matmul / linalg.batch_matmul
/// on zero-filled accumulators. Leading dimensions of a matmul/linear input
/// are collapsed into the row dimension (or the batch dimension) and
/// expanded back, so every case is one 2-D or 3-D named op.
LogicalResult MatmulLowering::lower(const Call &call, PatternRewriter &rewriter,
                                    std::string &why) const {
  StringRef name = call.op.getOpName();
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  for (unsigned i = 0; i < call.args.numTensors(); ++i)
    if (cast<RankedTensorType>(call.args.getTensorTypes()[i])
            .getElementType() != elt)
      return fail(why, "operands of mixed element types");
  unsigned a = name == "addmm" ? 1 : 0;
  if (!call.args.isTensor(a) || !call.args.isTensor(a + 1))
    return fail(why, "matrix operands are not tensors");
  Value lhs = call.tensor(a), rhs = call.tensor(a + 1);
  int64_t lr = call.tensorType(a).getRank();
  int64_t rr = call.tensorType(a + 1).getRank();
  if (lr < 2 || rr < 2)
    return fail(why, "a 1-D matmul operand (vector product)");

  if (name == "linear") {
    // y = x W^T + b: transpose the [out, in] weight once, then a matmul
    // whose accumulator starts as the broadcast bias.
    if (rr != 2)
      return fail(why, "linear weight is not 2-D");
    rhs = transpose(rewriter, loc, rhs, {1, 0});
    Value bias = call.args.isTensor(2) ? call.tensor(2) : Value();
    Value y = matmulRows(rewriter, loc, lhs, rhs, call.resultType, bias);
    rewriter.replaceOp(call.op, y);
    return success();
  }
  if (name == "addmm") {
    // beta * self + alpha * (mat1 @ mat2), self broadcast to [M, N].
    double beta = 1, alpha = 1;
    if (!call.args.isNoneOrAbsent(3))
      beta = getNumber(call.args.scalar(3)).value_or(NAN);
    if (!call.args.isNoneOrAbsent(4))
      alpha = getNumber(call.args.scalar(4)).value_or(NAN);
    if (std::isnan(alpha) || std::isnan(beta) || !call.args.isTensor(0))
      return fail(why, "addmm's self, beta or alpha not understood");
    if (beta == 1 && alpha == 1) {
      Value acc = buildElementwise(
          rewriter, loc, call.resultType, {call.tensor(0)},
          [](OpBuilder &, Location, ValueRange in) { return in[0]; });
      rewriter.replaceOpWithNewOp<linalg::MatmulOp>(
          call.op, TypeRange{call.resultType}, ValueRange{lhs, rhs},
          ValueRange{acc});
      return success();
    }
    Value mm =
        linalg::MatmulOp::create(
            rewriter, loc, TypeRange{call.resultType}, ValueRange{lhs, rhs},
            ValueRange{zeros(rewriter, loc, call.resultType)})
            .getResult(0);
    Value y = buildElementwise(
        rewriter, loc, call.resultType, {call.tensor(0), mm},
        [&](OpBuilder &b, Location l, ValueRange in) {
          return add(b, l, mul(b, l, constantOf(b, l, elt, beta), in[0]),
                     mul(b, l, constantOf(b, l, elt, alpha), in[1]));
        });
    rewriter.replaceOp(call.op, y);
    return success();
  }
  if (rr == 2) {
    // mm, or matmul of a batch of rows by one matrix.
    rewriter.replaceOp(
        call.op, matmulRows(rewriter, loc, lhs, rhs, call.resultType, Value()));
    return success();
  }
  // Batched: broadcast both batch shapes to the result's, collapse them
  // into one batch dimension, batch_matmul, expand back.
  ArrayRef<int64_t> out = call.resultType.getShape();
  ArrayRef<int64_t> batch = out.drop_back(2);
  Value l3 = toBatch3D(rewriter, loc, lhs, batch);
  Value r3 = toBatch3D(rewriter, loc, rhs, batch);
  auto out3 = RankedTensorType::get(
      {productOf(batch), out[out.size() - 2], out.back()}, elt);
  Value y = linalg::BatchMatmulOp::create(
                rewriter, loc, TypeRange{out3}, ValueRange{l3, r3},
                ValueRange{zeros(rewriter, loc, out3)})
                .getResult(0);
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, y, call.resultType));
  return success();
}

} // namespace mlir::trace::trace_to_linalg
