//===- Pooling.cpp - Max and adaptive average pooling ---------------------===//
//
// max_pool2d and adaptive_avg_pool2d as linalg pooling named ops, with
// the window arguments shared with convolution (Utils.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <array>
#include <cmath>

namespace mlir::trace::trace_to_linalg {

/// max_pool2d as linalg.pooling_nchw_max from -inf (padding with -inf, so
/// a pad never wins), and adaptive_avg_pool2d, where the output size
/// divides the input's, as linalg.pooling_nchw_sum over equal windows
/// divided by the window size (output 1x1 is the mean over H and W).
LogicalResult PoolLowering::lower(const Call &call, PatternRewriter &rewriter,
                                  std::string &why) const {
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  if (!call.args.isTensor(0))
    return fail(why, "input is not a tensor");
  RankedTensorType xt = call.tensorType(0);
  if ((xt.getRank() != 3 && xt.getRank() != 4) || !isa<FloatType>(elt) ||
      xt.getElementType() != elt)
    return fail(why, "input is not a 3-D or 4-D float tensor");
  Value x = to4D(rewriter, loc, call.tensor(0));
  RankedTensorType x4 = cast<RankedTensorType>(x.getType());
  RankedTensorType out4 = type4D(call.resultType);
  std::array<int64_t, 2> k, stride, dil = {1, 1}, pad = {0, 0};
  bool isMax = call.op.getOpName() == "max_pool2d";
  if (isMax) {
    traceir::MaxPool2dArgs pool;
    std::string bad;
    if (!traceir::decodeMaxPool2d(callArgs(call.args), pool, bad))
      return fail(why, bad);
    k = pool.kernel;
    stride = pool.stride;
    pad = pool.padding;
    dil = pool.dilation;
    // ceil_mode only matters when it changes the output size, which the
    // check below rejects.
  } else {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x4.getDimSize(2 + i), out = out4.getDimSize(2 + i);
      if (out <= 0 || in % out != 0)
        return fail(why, "adaptive_avg_pool2d whose output size does not "
                         "divide the input's (uneven windows)");
      k[i] = stride[i] = in / out;
    }
  }
  for (int i = 0; i < 2; ++i)
    if (out4.getDimSize(2 + i) !=
        traceir::checkedWindowOutput(x4.getDimSize(2 + i), k[i], stride[i],
                                     pad[i], dil[i]))
      return fail(why, "the result shape is not a floor-mode window's "
                       "(ceil_mode)");
  x = padHW(rewriter, loc, x, pad, isMax ? -INFINITY : 0);
  Value window =
      tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>(k), elt);
  Value init =
      linalg::FillOp::create(
          rewriter, loc, constantOf(rewriter, loc, elt, isMax ? -INFINITY : 0),
          emptyLike(rewriter, loc, out4))
          .getResult(0);
  Attribute strides = rewriter.getI64VectorAttr(stride);
  Attribute dilations = rewriter.getI64VectorAttr(dil);
  Value y;
  if (isMax) {
    y = linalg::PoolingNchwMaxOp::create(rewriter, loc, TypeRange{out4},
                                         ValueRange{x, window},
                                         ValueRange{init}, strides, dilations)
            .getResult(0);
  } else {
    y = linalg::PoolingNchwSumOp::create(rewriter, loc, TypeRange{out4},
                                         ValueRange{x, window},
                                         ValueRange{init}, strides, dilations)
            .getResult(0);
    double count = double(fits(traceir::checkedMul(k[0], k[1])));
    y = buildElementwise(rewriter, loc, out4, {y},
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return arith::DivFOp::create(
                               b, l, a[0], constantOf(b, l, elt, count));
                         });
  }
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, y, call.resultType));
  return success();
}

} // namespace mlir::trace::trace_to_linalg
