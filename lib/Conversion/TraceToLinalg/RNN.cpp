//===- RNN.cpp - lstm and gru as a loop over the time steps ---------------===//
//
// The recurrent layers: per layer and direction, one matmul for the input
// projection of the whole sequence, then an scf.for over the time steps
// whose tensor iter_args carry the states and the output, with one generic
// per cell.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::trace::trace_to_linalg {

/// gates [seq, batch, G] = b1 + b2 + rows [seq * batch, In] @ w_ih^T, the
/// biases (either may be null) broadcast over the rows as the
/// accumulator.
static Value inputProjection(OpBuilder &b, Location loc, Value rows, Value wih,
                             Value b1, Value b2, int64_t seq, int64_t batch) {
  auto wt = cast<RankedTensorType>(wih.getType());
  int64_t gatesSize = wt.getDimSize(0);
  auto accType = wt.clone({fits(traceir::checkedMul(seq, batch)), gatesSize});
  Value acc;
  SmallVector<Value> biases;
  for (Value v : {b1, b2})
    if (v)
      biases.push_back(v);
  if (biases.empty()) {
    acc = zeros(b, loc, accType);
  } else {
    acc = buildElementwise(
        b, loc, accType, biases, [](OpBuilder &nb, Location l, ValueRange a) {
          return a.size() == 1 ? a[0] : add(nb, l, a[0], a[1]);
        });
  }
  Value y =
      linalg::MatmulOp::create(b, loc, TypeRange{accType},
                               ValueRange{rows, transpose(b, loc, wih, {1, 0})},
                               ValueRange{acc})
          .getResult(0);
  return reshapeTo(b, loc, y, wt.clone({seq, batch, gatesSize}));
}

/// Row `index` of a [layers * dirs, batch, hidden] state, as a fresh
/// [batch, hidden] tensor: the time loop updates its states in place, and
/// h0 and c0 are the caller's (one-shot bufferization takes function
/// arguments as writable).
static Value stateAt(OpBuilder &b, Location loc, Value state, int64_t index) {
  auto t = cast<RankedTensorType>(state.getType());
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(index), b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(t.getDimSize(1)),
                                     b.getIndexAttr(t.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto rowType = t.clone({t.getDimSize(1), t.getDimSize(2)});
  Value row = tensor::ExtractSliceOp::create(b, loc, rowType, state, offsets,
                                             sizes, strides);
  return linalg::CopyOp::create(b, loc, row, emptyLike(b, loc, rowType))
      .getResult(0);
}

/// The [batch, hidden] final states of each layer and direction, in
/// order, as one [layers * dirs, batch, hidden] tensor.
static Value stack(OpBuilder &b, Location loc, ArrayRef<Value> parts,
                   RankedTensorType type) {
  Value out = emptyLike(b, loc, type);
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(type.getDimSize(1)),
                                     b.getIndexAttr(type.getDimSize(2))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  for (auto [i, part] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(i), b.getIndexAttr(0),
                                         b.getIndexAttr(0)};
    out = tensor::InsertSliceOp::create(b, loc, part, out, offsets, sizes,
                                        strides);
  }
  return out;
}

/// `v` [..., gates * hidden] viewed as [..., gates, hidden], so that a
/// generic over [batch, hidden] reads gate k with a constant index
/// (gateMap); linalg's verifier rejects offset columns (d1 + k * hidden).
static Value splitGates(OpBuilder &b, Location loc, Value v, int64_t hidden) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape().drop_back());
  shape.append({t.getShape().back() / hidden, hidden});
  return reshapeTo(b, loc, v, t.clone(shape));
}

/// The map reading gate `k` of a splitGates [batch, gates, hidden] row
/// (or a [gates, hidden] bias) in a [batch, hidden] iteration space.
static AffineMap gateMap(MLIRContext *ctx, int64_t k, bool bias = false) {
  AffineExpr gate = getAffineConstantExpr(k, ctx);
  AffineExpr col = getAffineDimExpr(1, ctx);
  if (bias)
    return AffineMap::get(2, 0, {gate, col}, ctx);
  return AffineMap::get(2, 0, {getAffineDimExpr(0, ctx), gate, col}, ctx);
}

static Value sigmoid(OpBuilder &b, Location l, Value x) {
  Value one = constantOf(b, l, x.getType(), 1);
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(b, l, one, add(b, l, one, e));
}

/// i, f, g, o = gx + gh; c = f c_{t-1} + i g; h = o tanh(c): one generic
/// whose results (h, c, h again) are written over `h`, `c` (so that the
/// loop's yields are its iter_args' buffers, as one-shot bufferization
/// requires of an scf.for) and `slot`, the output's slice for this step.
/// h_{t-1} is dead by then: the matmul has read it.
static SmallVector<Value> lstmCell(OpBuilder &b, Location loc, Value gx,
                                   Value gh, Value h, Value c, Value slot,
                                   int64_t hidden) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(c.getType());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (Value v : {gx, gh}) {
    Value split = splitGates(b, loc, v, hidden);
    for (int64_t k = 0; k < 4; ++k) {
      inputs.push_back(split);
      maps.push_back(gateMap(ctx, k));
    }
  }
  AffineMap id = b.getMultiDimIdentityMap(2);
  maps.append({id, id, id});
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  auto cell = linalg::GenericOp::create(
      b, loc, TypeRange{type, type, type}, inputs, ValueRange{h, c, slot}, maps,
      iters, [](OpBuilder &nb, Location l, ValueRange a) {
        auto gate = [&](int k) { return add(nb, l, a[k], a[4 + k]); };
        Value i = sigmoid(nb, l, gate(0)), f = sigmoid(nb, l, gate(1));
        Value g = math::TanhOp::create(nb, l, gate(2));
        Value o = sigmoid(nb, l, gate(3));
        Value cNew = add(nb, l, mul(nb, l, f, a[9]), mul(nb, l, i, g));
        Value hNew = mul(nb, l, o, math::TanhOp::create(nb, l, cNew));
        linalg::YieldOp::create(nb, l, ValueRange{hNew, cNew, hNew});
      });
  return SmallVector<Value>(cell.getResults());
}

/// r = sigmoid(gi_r + gh_r + b_hr), z likewise, n = tanh(gi_n + r (gh_n +
/// b_hn)), h = (1 - z) n + z h_{t-1}; gi holds x W_i^T + b_i, `bhh` is
/// null without biases. Written over `h` (the generic's out, read as
/// h_{t-1} element by element) and `slot`, as lstmCell does.
static SmallVector<Value> gruCell(OpBuilder &b, Location loc, Value gi,
                                  Value gh, Value bhh, Value h, Value slot,
                                  int64_t hidden) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(h.getType());
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (Value v : {gi, gh}) {
    Value split = splitGates(b, loc, v, hidden);
    for (int64_t k = 0; k < 3; ++k) {
      inputs.push_back(split);
      maps.push_back(gateMap(ctx, k));
    }
  }
  if (bhh) {
    Value split = splitGates(b, loc, bhh, hidden);
    for (int64_t k = 0; k < 3; ++k) {
      inputs.push_back(split);
      maps.push_back(gateMap(ctx, k, /*bias=*/true));
    }
  }
  maps.append(2, b.getMultiDimIdentityMap(2));
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  auto cell = linalg::GenericOp::create(
      b, loc, TypeRange{type, type}, inputs, ValueRange{h, slot}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        auto bias = [&](int k, Value v) {
          return bhh ? add(nb, l, v, a[6 + k]) : v;
        };
        Value hPrev = a[a.size() - 2];
        Value r = sigmoid(nb, l, bias(0, add(nb, l, a[0], a[3])));
        Value z = sigmoid(nb, l, bias(1, add(nb, l, a[1], a[4])));
        Value n = math::TanhOp::create(
            nb, l, add(nb, l, a[2], mul(nb, l, r, bias(2, a[5]))));
        Value one = constantOf(nb, l, type.getElementType(), 1);
        Value hNew =
            add(nb, l, mul(nb, l, sub(nb, l, one, z), n), mul(nb, l, z, hPrev));
        linalg::YieldOp::create(nb, l, ValueRange{hNew, hNew});
      });
  return SmallVector<Value>(cell.getResults());
}

/// The time loop of one layer and direction. `init` is (h, [c,] out):
/// the initial states and the layer's output [seq, batch, features], into
/// which h_t goes at column `column`. `reverse` walks t from seq - 1 down.
static scf::ForOp timeLoop(OpBuilder &b, Location loc, bool lstm, Value gates,
                           Value whhT, Value bhh, ValueRange init, int64_t seq,
                           bool reverse, int64_t column) {
  auto gt = cast<RankedTensorType>(gates.getType());
  auto ht = cast<RankedTensorType>(init[0].getType());
  int64_t batch = ht.getDimSize(0), hidden = ht.getDimSize(1);
  int64_t gatesSize = gt.getDimSize(2);
  auto rowType = ht.clone({batch, gatesSize});
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, seq);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nb, Location l, Value s, ValueRange iter) {
        Value t = s;
        if (reverse)
          t = arith::SubIOp::create(
              nb, l, arith::ConstantIndexOp::create(nb, l, seq - 1), s);
        SmallVector<OpFoldResult> strides(3, nb.getIndexAttr(1));
        SmallVector<OpFoldResult> offsets = {t, nb.getIndexAttr(0),
                                             nb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {nb.getIndexAttr(1),
                                           nb.getIndexAttr(batch),
                                           nb.getIndexAttr(gatesSize)};
        Value gx = tensor::ExtractSliceOp::create(nb, l, rowType, gates,
                                                  offsets, sizes, strides);
        Value h = iter[0];
        // h_{t-1} @ w_hh^T on its own, added to the input projection in
        // the cell as the runtime's gemm adds it: accumulating into the
        // gates' slice would make bufferization copy it every step.
        Value gh = linalg::MatmulOp::create(nb, l, TypeRange{rowType},
                                            ValueRange{h, whhT},
                                            ValueRange{zeros(nb, l, rowType)})
                       .getResult(0);
        // The cell also writes h_t straight into the output's slice, so
        // the insert_slice bufferizes in place instead of copying.
        Value out = iter.back();
        SmallVector<OpFoldResult> outOffsets = {t, nb.getIndexAttr(0),
                                                nb.getIndexAttr(column)};
        SmallVector<OpFoldResult> outSizes = {nb.getIndexAttr(1),
                                              nb.getIndexAttr(batch),
                                              nb.getIndexAttr(hidden)};
        Value slot = tensor::ExtractSliceOp::create(nb, l, ht, out, outOffsets,
                                                    outSizes, strides);
        SmallVector<Value> next =
            lstm ? lstmCell(nb, l, gx, gh, h, iter[1], slot, hidden)
                 : gruCell(nb, l, gx, gh, bhh, h, slot, hidden);
        next.back() = tensor::InsertSliceOp::create(
            nb, l, next.back(), out, outOffsets, outSizes, strides);
        scf::YieldOp::create(nb, l, next);
      });
}

/// lstm(input, h0, c0, weights..., has_biases, num_layers, dropout, train,
/// bidirectional, batch_first) -> (output, h_n, c_n) and gru (the same
/// without c0 and c_n), as the runtime's RNNLayers.h computes them. Per
/// layer and direction, the input projection of the whole sequence is one
/// linalg.matmul onto the broadcast bias (the lstm folds b_hh in; the gru
/// keeps b_hh for n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). The time
/// steps are an scf.for whose tensor iter_args carry h (and c) and the
/// layer's output: a matmul of h_{t-1} by w_hh^T, one generic for the cell,
/// and a tensor.insert_slice of h_t into the output, so the IR does not grow
/// with the sequence, and on the GPU the loop stays on the host, launching
/// its kernels. Training with dropout between layers draws random numbers.
LogicalResult RnnLowering::lower(const Call &call, PatternRewriter &rewriter,
                                 std::string &why) const {
  StringRef name = call.op.getOpName();
  bool lstm = name == "lstm";
  unsigned states = lstm ? 2 : 1;
  unsigned nt = 0;
  while (call.args.isTensor(nt))
    ++nt;
  if (nt < 1 + states)
    return fail(why, name + " expects input and " +
                         (lstm ? "h0 and c0" : "h0") + " tensors");
  auto flag = [&](unsigned i, bool dflt) {
    return call.args.isNoneOrAbsent(i) ? std::optional<bool>(dflt)
                                       : getBool(call.args.scalar(i));
  };
  std::optional<bool> hasBiases = flag(nt, true), train = flag(nt + 3, false),
                      bidirectional = flag(nt + 4, false),
                      batchFirst = flag(nt + 5, false);
  std::optional<int64_t> layers = getInt(call.args.scalar(nt + 1));
  std::optional<double> dropout = call.args.isNoneOrAbsent(nt + 2)
                                      ? std::optional<double>(0)
                                      : getNumber(call.args.scalar(nt + 2));
  if (!hasBiases || !train || !bidirectional || !batchFirst || !layers ||
      !dropout)
    return fail(why, "has_biases, num_layers, dropout, train, "
                     "bidirectional or batch_first not understood");
  if (*layers <= 0)
    return fail(why, "num_layers is not positive");
  // Dropout applies to the outputs of every layer but the last.
  if (*train && *dropout > 0 && *layers > 1)
    return fail(why, "training dropout between layers draws random "
                     "numbers");
  int64_t dirs = *bidirectional ? 2 : 1;
  unsigned perLayer = *hasBiases ? 4 : 2;
  int64_t numWeights = int64_t(nt) - 1 - states;
  std::optional<int64_t> wantWeights =
      traceir::checkedMul(*layers, dirs * perLayer);
  if (numWeights != wantWeights)
    return fail(
        why, "expected " +
                 (wantWeights ? Twine(*wantWeights) : Twine("more than 2^63")) +
                 " weight tensors, got " + Twine(numWeights));
  Type elt = call.resultElt();
  if (!isa<FloatType>(elt))
    return fail(why, name + " with a non-float result");
  for (unsigned i = 0; i < nt; ++i)
    if (call.tensorType(i).getElementType() != elt)
      return fail(why, "arguments of mixed element types");

  RankedTensorType xt = call.tensorType(0), ht = call.tensorType(1);
  if (xt.getRank() != 3 || ht.getRank() != 3)
    return fail(why, "input or h0 is not 3-D");
  int64_t seq = xt.getDimSize(*batchFirst ? 1 : 0);
  int64_t batch = xt.getDimSize(*batchFirst ? 0 : 1);
  int64_t inputSize = xt.getDimSize(2), hidden = ht.getDimSize(2);
  // The result types are verified, so these sizes fit.
  int64_t gatesSize = fits(traceir::checkedMul(lstm ? 4 : 3, hidden));
  int64_t features = fits(traceir::checkedMul(dirs, hidden));
  auto stateType = RankedTensorType::get(
      {fits(traceir::checkedMul(*layers, dirs)), batch, hidden}, elt);
  auto outType = RankedTensorType::get(
      *batchFirst ? ArrayRef<int64_t>{batch, seq, features}
                  : ArrayRef<int64_t>{seq, batch, features},
      elt);
  for (unsigned i = 1; i <= states; ++i)
    if (call.tensorType(i) != stateType)
      return fail(why, "h0 or c0 is not [num_layers * directions, batch, "
                       "hidden]");
  if (call.resultTypes.size() != 1 + states || call.resultTypes[0] != outType ||
      llvm::any_of(ArrayRef(call.resultTypes).drop_front(),
                   [&](RankedTensorType t) { return t != stateType; }))
    return fail(why, "the results are not the output and final states");
  for (int64_t l = 0; l < *layers; ++l)
    for (int64_t d = 0; d < dirs; ++d)
      for (unsigned k = 0; k < perLayer; ++k) {
        SmallVector<int64_t> want = {gatesSize};
        if (k < 2)
          want.push_back(k == 1 ? hidden : l == 0 ? inputSize : features);
        unsigned i = 1 + states + (l * dirs + d) * perLayer + k;
        if (call.tensorType(i).getShape() != ArrayRef(want))
          return fail(why, "weight #" + Twine(i - 1 - states) +
                               " does not have nn." + (lstm ? "LSTM" : "GRU") +
                               "'s shape");
      }

  Location loc = call.op.getLoc();
  Value layerIn = call.tensor(0);
  if (*batchFirst)
    layerIn = transpose(rewriter, loc, layerIn, {1, 0, 2});
  auto seqType = RankedTensorType::get({seq, batch, features}, elt);
  SmallVector<Value> finalH, finalC;
  for (int64_t l = 0; l < *layers; ++l) {
    int64_t inSize = l == 0 ? inputSize : features;
    Value rows =
        reshapeTo(rewriter, loc, layerIn,
                  RankedTensorType::get(
                      {fits(traceir::checkedMul(seq, batch)), inSize}, elt));
    Value layerOut = emptyLike(rewriter, loc, seqType);
    for (int64_t d = 0; d < dirs; ++d) {
      int64_t index = l * dirs + d;
      unsigned base = 1 + states + index * perLayer;
      Value bih = *hasBiases ? call.tensor(base + 2) : Value();
      Value bhh = *hasBiases ? call.tensor(base + 3) : Value();
      Value gates = inputProjection(rewriter, loc, rows, call.tensor(base), bih,
                                    lstm ? bhh : Value(), seq, batch);
      Value whhT = transpose(rewriter, loc, call.tensor(base + 1), {1, 0});
      SmallVector<Value> init = {stateAt(rewriter, loc, call.tensor(1), index)};
      if (lstm)
        init.push_back(stateAt(rewriter, loc, call.tensor(2), index));
      init.push_back(layerOut);
      auto loop = timeLoop(rewriter, loc, lstm, gates, whhT,
                           lstm ? Value() : bhh, init, seq, d == 1, d * hidden);
      finalH.push_back(loop.getResult(0));
      if (lstm)
        finalC.push_back(loop.getResult(1));
      layerOut = loop.getResults().back();
    }
    layerIn = layerOut;
  }
  Value output = layerIn;
  if (*batchFirst)
    output = transpose(rewriter, loc, output, {1, 0, 2});
  SmallVector<Value> results = {output,
                                stack(rewriter, loc, finalH, stateType)};
  if (lstm)
    results.push_back(stack(rewriter, loc, finalC, stateType));
  rewriter.replaceOp(call.op, results);
  return success();
}

} // namespace mlir::trace::trace_to_linalg
