//===- Convolution.cpp - conv2d as linalg convolutions --------------------===//
//
// conv2d, grouped or not, as a linalg convolution named op on a padded
// input. Its arguments are decoded by decodeConv2d (Support/OpArgs.h); the
// window helpers (padHW, to4D) are shared with pooling, in Utils.cpp.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <array>

namespace mlir::trace::trace_to_linalg {

/// conv2d(input, weight, bias, stride, padding, dilation, groups): zero
/// tensor.pad, then linalg.conv_2d_nchw_fchw (or, with groups,
/// conv_2d_ngchw_gfchw on views that split the channels) accumulating into
/// the bias broadcast over the output, so the bias costs no extra pass.
LogicalResult ConvLowering::lower(const Call &call, PatternRewriter &rewriter,
                                  std::string &why) const {
  Location loc = call.op.getLoc();
  Type elt = call.resultElt();
  if (!call.args.isTensor(0) || !call.args.isTensor(1))
    return fail(why, "input and weight are not tensors");
  RankedTensorType xt = call.tensorType(0), wt = call.tensorType(1);
  if ((xt.getRank() != 3 && xt.getRank() != 4) || wt.getRank() != 4)
    return fail(why, "input is not 3-D or 4-D, or weight not 4-D");
  if (!isa<FloatType>(elt) || xt.getElementType() != elt ||
      wt.getElementType() != elt ||
      (call.args.isTensor(2) && call.tensorType(2).getElementType() != elt))
    return fail(why, "conv2d on non-float or mixed element types");
  traceir::Conv2dArgs conv;
  std::string bad;
  if (!traceir::decodeConv2d(callArgs(call.args), conv, bad))
    return fail(why, bad);
  int64_t groups = conv.groups;
  std::array<int64_t, 2> k = {wt.getDimSize(2), wt.getDimSize(3)};
  std::array<int64_t, 2> pad;
  for (int i = 0; i < 2; ++i) {
    std::optional<std::array<int64_t, 2>> p = conv.pads(i, k[i]);
    // Symmetric only: an even total padding splits evenly.
    if (!p || (*p)[0] != (*p)[1])
      return fail(why, "padding='same' that pads unevenly");
    pad[i] = (*p)[0];
  }

  Value x = to4D(rewriter, loc, call.tensor(0));
  RankedTensorType x4 = cast<RankedTensorType>(x.getType());
  RankedTensorType out4 = type4D(call.resultType);
  int64_t n = x4.getDimSize(0), c = x4.getDimSize(1), o = wt.getDimSize(0);
  if (c != traceir::checkedMul(wt.getDimSize(1), groups) || o % groups != 0)
    return fail(why, "channels and groups disagree");
  for (int i = 0; i < 2; ++i)
    if (out4.getDimSize(2 + i) !=
        conv.outputSize(i, x4.getDimSize(2 + i), k[i]))
      return fail(why, "the result shape is not the convolution's");
  x = padHW(rewriter, loc, x, pad, 0);

  Value acc;
  if (call.args.isTensor(2)) {
    MLIRContext *ctx = rewriter.getContext();
    acc =
        buildGeneric(rewriter, loc, out4, {call.tensor(2)},
                     {AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx)},
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    acc = zeros(rewriter, loc, out4);
  }
  Attribute strides = rewriter.getI64VectorAttr(conv.stride);
  Attribute dilations = rewriter.getI64VectorAttr(conv.dilation);
  Value y;
  if (groups == 1) {
    y = linalg::Conv2DNchwFchwOp::create(rewriter, loc, TypeRange{out4},
                                         ValueRange{x, call.tensor(1)},
                                         ValueRange{acc}, strides, dilations)
            .getResult(0);
  } else {
    // Split the channel dims into (group, channel in group).
    auto xp = cast<RankedTensorType>(x.getType());
    auto xg =
        xp.clone({n, groups, c / groups, xp.getDimSize(2), xp.getDimSize(3)});
    auto wg = wt.clone({groups, o / groups, wt.getDimSize(1), k[0], k[1]});
    auto og = out4.clone(
        {n, groups, o / groups, out4.getDimSize(2), out4.getDimSize(3)});
    y = linalg::Conv2DNgchwGfchwOp::create(
            rewriter, loc, TypeRange{og},
            ValueRange{reshapeTo(rewriter, loc, x, xg),
                       reshapeTo(rewriter, loc, call.tensor(1), wg)},
            ValueRange{reshapeTo(rewriter, loc, acc, og)}, strides, dilations)
            .getResult(0);
  }
  rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, y, call.resultType));
  return success();
}

} // namespace mlir::trace::trace_to_linalg
