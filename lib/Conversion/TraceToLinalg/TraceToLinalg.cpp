//===- TraceToLinalg.cpp - Lower trace.graph to linalg on tensors ---------===//
//
// Two steps. The graph becomes a func.func (ret -> return, constant ->
// arith.constant, free erased) by direct IR surgery: nothing there can fail.
// Then one rewrite pattern on trace.pyop dispatches by op name through a
// table to a lowering per op family; a family that cannot handle a call
// (dynamic shapes, unsupported arguments) says why, and the pass turns that
// into a remark on the op, which stays as it was.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "TraceIR/Conversion/Passes.h"
#include "TraceIR/Dialect/OpRegistry.h"
#include "TraceIR/Dialect/Scalars.h"
#include "TraceIR/Support/CheckedMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/ScopedPrinter.h"

#include <array>
#include <cmath>
#include <memory>

#define DEBUG_TYPE "convert-trace-to-linalg"

namespace mlir::trace {
#define GEN_PASS_DEF_CONVERTTRACETOLINALG
#include "TraceIR/Conversion/Passes.h.inc"
} // namespace mlir::trace

using namespace mlir;
using namespace mlir::trace;
using namespace mlir::trace::trace_to_linalg;

namespace {

//===----------------------------------------------------------------------===//
// The lowering table
//===----------------------------------------------------------------------===//

/// One call being lowered: the op, its re-interleaved arguments and its
/// static result types (`resultType` is result 0's, which is all that
/// single-result families need).
struct Call {
  // Op handles are cheap values whose accessors are non-const.
  mutable PyOp op;
  PyArgs args;
  RankedTensorType resultType;
  SmallVector<RankedTensorType> resultTypes;

  Value tensor(unsigned i) const {
    return op.getTensors()[args.operandIndex(i)];
  }
  RankedTensorType tensorType(unsigned i) const {
    return cast<RankedTensorType>(args.type(i));
  }
  Type resultElt() const { return resultType.getElementType(); }
};

/// Lowers the PyOps of one family. `lower` replaces the op and returns
/// success, or returns failure with nothing changed and says why in `why`.
class PyOpLowering {
public:
  virtual ~PyOpLowering() = default;
  /// Whether `lower` replaces every result of an op with several (the
  /// recurrent layers' output and final states); the others replace one.
  virtual bool multipleResults() const { return false; }
  virtual LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                              std::string &why) const = 0;
};

LogicalResult fail(std::string &why, const Twine &message) {
  why = message.str();
  return failure();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// add/sub/mul/div/neg/relu/gelu/tanh/sigmoid/exp/log/sqrt/rsqrt/pow/where.
/// Every argument, tensor or Python number, is converted to the result's
/// element type before the arithmetic: that is PyTorch's type promotion as
/// the registry inferred it (int / int divides as float, for instance).
class ElementwiseLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    StringRef name = call.op.getOpName();
    Type elt = call.resultElt();
    bool isF = isa<FloatType>(elt);
    // The operands (tensors or numbers) of the math are the schema's
    // arguments without a default ("self, other, alpha=1": two).
    unsigned numOperands =
        call.op.getOpInfo() ? countRequiredArgs(call.op.getOpInfo()->signature)
                            : 1;
    double alpha = 1.0;
    if (name == "add" || name == "sub") {
      if (!call.args.isNoneOrAbsent(2)) {
        auto a = getNumber(call.args.scalar(2));
        if (!a)
          return fail(why, "alpha is not a number");
        alpha = *a;
      }
    }
    if (name == "div" && !call.args.isNoneOrAbsent(2))
      return fail(why, "div with a rounding_mode");
    bool tanhGelu = false;
    if (name == "gelu" && !call.args.isNoneOrAbsent(1)) {
      auto s = dyn_cast_or_null<StringAttr>(call.args.scalar(1));
      if (!s || (s.getValue() != "none" && s.getValue() != "tanh"))
        return fail(why, "gelu approximate is not 'none' or 'tanh'");
      tanhGelu = s.getValue() == "tanh";
    }
    // The registry infers a float result for div and the transcendental
    // ops, so of the ops below that build floating-point math only pow can
    // have an integer one.
    if (!isF && name == "pow")
      return fail(why, "'" + name + "' with a non-float result");

    // Tensors become generic inputs; numbers become constants in the body.
    SmallVector<Value> inputs;
    SmallVector<int> slot(numOperands, -1);
    SmallVector<Attribute> numbers(numOperands);
    for (unsigned i = 0; i < numOperands; ++i) {
      if (call.args.isTensor(i)) {
        slot[i] = inputs.size();
        inputs.push_back(call.tensor(i));
      } else if (getNumber(call.args.scalar(i)) ||
                 getBool(call.args.scalar(i))) {
        numbers[i] = call.args.scalar(i);
      } else {
        return fail(why, "argument #" + Twine(i) +
                             " is neither a tensor "
                             "nor a number");
      }
    }

    Location loc = call.op.getLoc();
    Value result = buildElementwise(
        rewriter, loc, call.resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange in) -> Value {
          // The operand `i` in type `t` (where's condition stays i1).
          auto operand = [&](unsigned i, Type t) -> Value {
            if (slot[i] >= 0)
              return castElement(b, l, in[slot[i]], t);
            if (auto flag = getBool(numbers[i]))
              return constantOf(b, l, t, *flag ? 1 : 0);
            return constantOf(b, l, t, *getNumber(numbers[i]));
          };
          auto c = [&](double v) { return constantOf(b, l, elt, v); };
          if (name == "where") {
            Value cond = operand(0, b.getI1Type());
            return arith::SelectOp::create(b, l, cond, operand(1, elt),
                                           operand(2, elt));
          }
          Value x = operand(0, elt);
          if (name == "add" || name == "sub") {
            Value y = operand(1, elt);
            if (alpha != 1.0)
              y = mul(b, l, y, c(alpha));
            return name == "add" ? add(b, l, x, y) : sub(b, l, x, y);
          }
          if (name == "mul")
            return mul(b, l, x, operand(1, elt));
          if (name == "div")
            return arith::DivFOp::create(b, l, x, operand(1, elt));
          if (name == "pow")
            return math::PowFOp::create(b, l, x, operand(1, elt));
          if (name == "neg")
            return isF ? Value(arith::NegFOp::create(b, l, x))
                       : sub(b, l, c(0), x);
          if (name == "relu")
            return max(b, l, x, c(0));
          if (name == "abs")
            return isF ? Value(math::AbsFOp::create(b, l, x))
                       : Value(math::AbsIOp::create(b, l, x));
          if (name == "tanh")
            return math::TanhOp::create(b, l, x);
          if (name == "exp")
            return math::ExpOp::create(b, l, x);
          if (name == "log")
            return math::LogOp::create(b, l, x);
          if (name == "sqrt")
            return math::SqrtOp::create(b, l, x);
          if (name == "rsqrt")
            return math::RsqrtOp::create(b, l, x);
          if (name == "sigmoid") {
            // 1 / (1 + exp(-x))
            Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
            return arith::DivFOp::create(b, l, c(1), add(b, l, c(1), e));
          }
          // gelu: 0.5 x (1 + erf(x / sqrt 2)), or with tanh:
          // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
          Value inner;
          if (tanhGelu) {
            Value x3 = mul(b, l, mul(b, l, x, x), x);
            Value poly = add(b, l, x, mul(b, l, c(0.044715), x3));
            inner = math::TanhOp::create(
                b, l, mul(b, l, c(std::sqrt(2.0 / M_PI)), poly));
          } else {
            inner = math::ErfOp::create(b, l, mul(b, l, x, c(M_SQRT1_2)));
          }
          return mul(b, l, mul(b, l, c(0.5), x), add(b, l, c(1), inner));
        });
    rewriter.replaceOp(call.op, result);
    return success();
  }
};

/// eq/ne/lt/le/gt/ge against a tensor or a number, with broadcasting. The
/// result is i1, so the registry's result type does not say in which type
/// to compare: that is torch.result_type of the two operands, as the
/// registry computes it for arithmetic (trace::resultDtype).
class ComparisonLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    StringRef name = call.op.getOpName();
    SmallVector<Value> inputs;
    SmallVector<int> slot(2, -1);
    for (unsigned i = 0; i < 2; ++i) {
      if (call.args.isTensor(i)) {
        RankedTensorType t = call.tensorType(i);
        Type elt = t.getElementType();
        if (elt.isUnsignedInteger() || !elt.isSignlessIntOrFloat())
          return fail(why, "an operand of unsupported element type");
        slot[i] = inputs.size();
        inputs.push_back(call.tensor(i));
        continue;
      }
      Attribute sc = call.args.scalar(i);
      if (!getBool(sc) && !getInt(sc) && !getNumber(sc))
        return fail(why, "argument #" + Twine(i) +
                             " is neither a tensor nor a number");
    }
    if (inputs.empty())
      return fail(why, "no tensor operand");
    Type type = trace::resultDtype(call.args, 2, rewriter.getContext());
    if (!type)
      return fail(why, "no PyTorch result dtype for the operands");

    Location loc = call.op.getLoc();
    Value result = buildElementwise(
        rewriter, loc, call.resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange in) -> Value {
          auto operand = [&](unsigned i) -> Value {
            if (slot[i] >= 0)
              return castElement(b, l, in[slot[i]], type);
            Attribute sc = call.args.scalar(i);
            if (auto flag = getBool(sc); flag && !getInt(sc))
              return constantOf(b, l, type, *flag ? 1 : 0);
            return constantOf(b, l, type, *getNumber(sc));
          };
          Value x = operand(0), y = operand(1);
          if (isa<FloatType>(type)) {
            // Ordered except ne, which is true for NaN as in PyTorch.
            auto pred = llvm::StringSwitch<arith::CmpFPredicate>(name)
                            .Case("eq", arith::CmpFPredicate::OEQ)
                            .Case("ne", arith::CmpFPredicate::UNE)
                            .Case("lt", arith::CmpFPredicate::OLT)
                            .Case("le", arith::CmpFPredicate::OLE)
                            .Case("gt", arith::CmpFPredicate::OGT)
                            .Default(arith::CmpFPredicate::OGE);
            return arith::CmpFOp::create(b, l, pred, x, y);
          }
          // Signless ints are signed; bools compare as 0 < 1, unsigned.
          bool isBool = type.isInteger(1);
          auto pred = llvm::StringSwitch<arith::CmpIPredicate>(name)
                          .Case("eq", arith::CmpIPredicate::eq)
                          .Case("ne", arith::CmpIPredicate::ne)
                          .Case("lt", isBool ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::slt)
                          .Case("le", isBool ? arith::CmpIPredicate::ule
                                             : arith::CmpIPredicate::sle)
                          .Case("gt", isBool ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::sgt)
                          .Default(isBool ? arith::CmpIPredicate::uge
                                          : arith::CmpIPredicate::sge);
          return arith::CmpIOp::create(b, l, pred, x, y);
        });
    rewriter.replaceOp(call.op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Matmul family
//===----------------------------------------------------------------------===//

/// mm, bmm, matmul, linear and addmm as linalg.matmul / linalg.batch_matmul
/// on zero-filled accumulators. Leading dimensions of a matmul/linear input
/// are collapsed into the row dimension (or the batch dimension) and
/// expanded back, so every case is one 2-D or 3-D named op.
class MatmulLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
      rewriter.replaceOp(call.op, matmulRows(rewriter, loc, lhs, rhs,
                                             call.resultType, Value()));
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

private:
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
                                        [](OpBuilder &, Location,
                                           ValueRange in) { return in[0]; })
                     : zeros(b, loc, out2);
    Value y = linalg::MatmulOp::create(b, loc, TypeRange{out2},
                                       ValueRange{l2, rhs}, ValueRange{acc})
                  .getResult(0);
    return reshapeTo(b, loc, y, resultType);
  }
};

//===----------------------------------------------------------------------===//
// Reductions, softmax, layer_norm
//===----------------------------------------------------------------------===//

/// The dims a reduction's `dim` argument names: all of them for None, absent
/// or an empty list (PyTorch's sum(dim=()) reduces everything).
std::optional<SmallVector<bool>> reducedDims(const PyArgs &args, unsigned i,
                                             int64_t rank) {
  SmallVector<bool> reduced(rank, false);
  std::optional<SmallVector<int64_t>> dims;
  if (!args.isNoneOrAbsent(i)) {
    dims = getIntList(args.scalar(i));
    if (!dims)
      return std::nullopt;
  }
  if (!dims || dims->empty()) {
    reduced.assign(rank, true);
    return reduced;
  }
  for (int64_t d : *dims) {
    auto n = normDim(d, rank);
    if (!n)
      return std::nullopt;
    if (rank > 0)
      reduced[*n] = true;
  }
  return reduced;
}

/// sum, mean and amax over dims, with keepdim as an expand_shape of the
/// reduced tensor (the reduction itself always drops the dims).
class ReductionLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    StringRef name = call.op.getOpName();
    Location loc = call.op.getLoc();
    Type elt = call.resultElt();
    RankedTensorType in = call.tensorType(0);
    auto reduced = reducedDims(call.args, 1, in.getRank());
    if (!reduced)
      return fail(why, "dim is not an int or a list of ints in range");
    if (name == "mean" && !isa<FloatType>(elt))
      return fail(why, "mean with a non-float result");
    bool isMax = name == "amax";
    double init = 0;
    if (isMax)
      init = isa<FloatType>(elt)
                 ? -INFINITY
                 : static_cast<double>(std::numeric_limits<int64_t>::min());
    if (isMax && !isa<FloatType>(elt) && elt.getIntOrFloatBitWidth() != 64)
      return fail(why, "amax of a narrow integer type");
    Value r = buildReduction(
        rewriter, loc, in.getShape(), *reduced, elt, {call.tensor(0)},
        {rewriter.getMultiDimIdentityMap(in.getRank())}, init,
        [&](OpBuilder &b, Location l, ValueRange args, Value acc) {
          Value x = castElement(b, l, args[0], elt);
          return isMax ? max(b, l, acc, x) : add(b, l, acc, x);
        });
    if (name == "mean") {
      SmallVector<int64_t> reducedDims;
      for (auto [size, red] : llvm::zip(in.getShape(), *reduced))
        if (red)
          reducedDims.push_back(size);
      int64_t count = productOf(reducedDims);
      auto rt = cast<RankedTensorType>(r.getType());
      r = buildElementwise(rewriter, loc, rt, {r},
                           [&](OpBuilder &b, Location l, ValueRange args) {
                             return arith::DivFOp::create(
                                 b, l, args[0],
                                 constantOf(b, l, elt, double(count)));
                           });
    }
    rewriter.replaceOp(call.op, reshapeTo(rewriter, loc, r, call.resultType));
    return success();
  }
};

/// softmax / log_softmax / _log_softmax along one dim (buildSoftmax),
/// computed in the result's element type.
class SoftmaxLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
};

/// layer_norm over the trailing normalized_shape dims: mean, biased
/// variance of (x - mean), then (x - mean) * rsqrt(var + eps) * w + b.
class LayerNormLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
      return buildElementwise(
          rewriter, loc, cast<RankedTensorType>(v.getType()), {v},
          [&](OpBuilder &b, Location l, ValueRange a) {
            return arith::DivFOp::create(b, l, a[0],
                                         constantOf(b, l, elt, double(count)));
          });
    };
    Value mean = divByCount(buildReduction(rewriter, loc, in.getShape(),
                                           reduced, elt, {x}, {id}, 0, addFn));
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
};

/// batch_norm in eval mode: (x - running_mean) / sqrt(running_var + eps)
/// * weight + bias, one generic over the input that reads the per-channel
/// vectors (channel dim 1) in place. Training mode uses batch statistics and
/// updates the running ones, which a pure function cannot do.
class BatchNormLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<Value> inputs = {call.tensor(0), call.tensor(3),
                                 call.tensor(4)};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   channel, channel};
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
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// conv2d(input, weight, bias, stride, padding, dilation, groups): zero
/// tensor.pad, then linalg.conv_2d_nchw_fchw (or, with groups,
/// conv_2d_ngchw_gfchw on views that split the channels) accumulating into
/// the bias broadcast over the output, so the bias costs no extra pass.
class ConvLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
    int64_t groups = 1;
    if (!call.args.isNoneOrAbsent(6)) {
      auto g = getInt(call.args.scalar(6));
      if (!g || *g <= 0)
        return fail(why, "groups is not a positive int");
      groups = *g;
    }
    auto stride = pairArg(call.args, 3, {1, 1});
    auto dil = pairArg(call.args, 5, {1, 1});
    if (!stride || !dil)
      return fail(why, "stride or dilation is not an int or a pair");
    std::array<int64_t, 2> k = {wt.getDimSize(2), wt.getDimSize(3)};
    std::optional<std::array<int64_t, 2>> pad;
    auto mode = dyn_cast_or_null<StringAttr>(call.args.scalar(4));
    if (mode && mode.getValue() == "valid") {
      pad = std::array<int64_t, 2>{0, 0};
    } else if (mode && mode.getValue() == "same") {
      // Symmetric only: an even total padding splits evenly.
      if ((*dil)[0] * (k[0] - 1) % 2 || (*dil)[1] * (k[1] - 1) % 2)
        return fail(why, "padding='same' that pads unevenly");
      pad = std::array<int64_t, 2>{(*dil)[0] * (k[0] - 1) / 2,
                                   (*dil)[1] * (k[1] - 1) / 2};
    } else {
      pad = pairArg(call.args, 4, {0, 0});
    }
    if (!pad)
      return fail(why, "padding is not 'valid', 'same', an int or a pair");

    Value x = to4D(rewriter, loc, call.tensor(0));
    RankedTensorType x4 = cast<RankedTensorType>(x.getType());
    RankedTensorType out4 = type4D(call.resultType);
    int64_t n = x4.getDimSize(0), c = x4.getDimSize(1), o = wt.getDimSize(0);
    if (c != traceir::checkedMul(wt.getDimSize(1), groups) || o % groups != 0)
      return fail(why, "channels and groups disagree");
    for (int i = 0; i < 2; ++i)
      if (out4.getDimSize(2 + i) != windowOut(x4.getDimSize(2 + i), (*pad)[i],
                                              (*dil)[i], k[i], (*stride)[i]))
        return fail(why, "the result shape is not the convolution's");
    x = padHW(rewriter, loc, x, *pad, 0);

    Value acc;
    if (call.args.isTensor(2)) {
      MLIRContext *ctx = rewriter.getContext();
      acc = buildGeneric(
          rewriter, loc, out4, {call.tensor(2)},
          {AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx)},
          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    } else {
      acc = zeros(rewriter, loc, out4);
    }
    Attribute strides = rewriter.getI64VectorAttr(*stride);
    Attribute dilations = rewriter.getI64VectorAttr(*dil);
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
};

/// max_pool2d as linalg.pooling_nchw_max from -inf (padding with -inf, so
/// a pad never wins), and adaptive_avg_pool2d, where the output size
/// divides the input's, as linalg.pooling_nchw_sum over equal windows
/// divided by the window size (output 1x1 is the mean over H and W).
class PoolLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
      auto kk = pairArg(call.args, 1, {0, 0});
      if (!kk || (*kk)[0] <= 0 || (*kk)[1] <= 0)
        return fail(why, "kernel_size is not a positive int or pair");
      k = *kk;
      auto s = pairArg(call.args, 2, k);
      auto p = pairArg(call.args, 3, {0, 0});
      auto d = pairArg(call.args, 4, {1, 1});
      if (!s || !p || !d)
        return fail(why, "stride, padding or dilation not understood");
      stride = *s;
      pad = *p;
      dil = *d;
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
          windowOut(x4.getDimSize(2 + i), pad[i], dil[i], k[i], stride[i]))
        return fail(why, "the result shape is not a floor-mode window's "
                         "(ceil_mode)");
    x = padHW(rewriter, loc, x, pad, isMax ? -INFINITY : 0);
    Value window =
        tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>(k), elt);
    Value init = linalg::FillOp::create(
                     rewriter, loc,
                     constantOf(rewriter, loc, elt, isMax ? -INFINITY : 0),
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
};

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// embedding(weight [V, D], indices [...]) -> [..., D]: a generic over the
/// result that reads its index and gathers with tensor.extract.
class EmbeddingLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
        rewriter, call.op.getLoc(), call.resultType, {call.tensor(1)},
        {indexMap}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
          Value col = linalg::IndexOp::create(b, l, rank - 1);
          return tensor::ExtractOp::create(b, l, weight, ValueRange{row, col});
        });
    rewriter.replaceOp(call.op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
/// is_causal, scale, enable_gqa) as the runtime computes it (PyTorch's math
/// backend): the batch dims broadcast and collapse into one; scores = scale
/// * Q @ K^T as a generic contraction that reads K transposed where it lies;
/// the mask (bool: false masks out; float: added) or the causal mask (key j
/// after query i) applied in one generic over the uncollapsed scores; a
/// stable softmax whose fully masked rows are zeros, as in the runtime and
/// PyTorch on the CPU; then P @ V as a batch_matmul.
class AttentionLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
        !broadcastsTo(kt, withBatch(s, e)) ||
        !broadcastsTo(vt, withBatch(s, ev)))
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
    SmallVector<AffineMap> maps = {
        AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
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
};

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

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
class RnnLowering : public PyOpLowering {
public:
  bool multipleResults() const override { return true; }

  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
      return fail(why, "expected " +
                           (wantWeights ? Twine(*wantWeights)
                                        : Twine("more than 2^63")) +
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
    if (call.resultTypes.size() != 1 + states ||
        call.resultTypes[0] != outType ||
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
                                 " does not have nn." +
                                 (lstm ? "LSTM" : "GRU") + "'s shape");
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
        Value gates = inputProjection(rewriter, loc, rows, call.tensor(base),
                                      bih, lstm ? bhh : Value(), seq, batch);
        Value whhT = transpose(rewriter, loc, call.tensor(base + 1), {1, 0});
        SmallVector<Value> init = {
            stateAt(rewriter, loc, call.tensor(1), index)};
        if (lstm)
          init.push_back(stateAt(rewriter, loc, call.tensor(2), index));
        init.push_back(layerOut);
        auto loop =
            timeLoop(rewriter, loc, lstm, gates, whhT, lstm ? Value() : bhh,
                     init, seq, d == 1, d * hidden);
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

private:
  /// gates [seq, batch, G] = b1 + b2 + rows [seq * batch, In] @ w_ih^T, the
  /// biases (either may be null) broadcast over the rows as the
  /// accumulator.
  static Value inputProjection(OpBuilder &b, Location loc, Value rows,
                               Value wih, Value b1, Value b2, int64_t seq,
                               int64_t batch) {
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
        linalg::MatmulOp::create(
            b, loc, TypeRange{accType},
            ValueRange{rows, transpose(b, loc, wih, {1, 0})}, ValueRange{acc})
            .getResult(0);
    return reshapeTo(b, loc, y, wt.clone({seq, batch, gatesSize}));
  }

  /// Row `index` of a [layers * dirs, batch, hidden] state, as a fresh
  /// [batch, hidden] tensor: the time loop updates its states in place, and
  /// h0 and c0 are the caller's (one-shot bufferization takes function
  /// arguments as writable).
  static Value stateAt(OpBuilder &b, Location loc, Value state, int64_t index) {
    auto t = cast<RankedTensorType>(state.getType());
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(index),
                                         b.getIndexAttr(0), b.getIndexAttr(0)};
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

  /// The time loop of one layer and direction. `init` is (h, [c,] out):
  /// the initial states and the layer's output [seq, batch, features], into
  /// which h_t goes at column `column`. `reverse` walks t from seq - 1 down.
  static scf::ForOp timeLoop(OpBuilder &b, Location loc, bool lstm, Value gates,
                             Value whhT, Value bhh, ValueRange init,
                             int64_t seq, bool reverse, int64_t column) {
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
          Value slot = tensor::ExtractSliceOp::create(
              nb, l, ht, out, outOffsets, outSizes, strides);
          SmallVector<Value> next =
              lstm ? lstmCell(nb, l, gx, gh, h, iter[1], slot, hidden)
                   : gruCell(nb, l, gx, gh, bhh, h, slot, hidden);
          next.back() = tensor::InsertSliceOp::create(
              nb, l, next.back(), out, outOffsets, outSizes, strides);
          scf::YieldOp::create(nb, l, next);
        });
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
        b, loc, TypeRange{type, type, type}, inputs, ValueRange{h, c, slot},
        maps, iters, [](OpBuilder &nb, Location l, ValueRange a) {
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
          Value hNew = add(nb, l, mul(nb, l, sub(nb, l, one, z), n),
                           mul(nb, l, z, hPrev));
          linalg::YieldOp::create(nb, l, ValueRange{hNew, hNew});
        });
    return SmallVector<Value>(cell.getResults());
  }
};

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

/// Every view that only regroups dimensions: the registry already inferred
/// the static result shape, so the lowering is a reshape to it.
class ReshapeLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    if (call.tensorType(0).getElementType() != call.resultElt())
      return fail(why, "a view that changes the element type");
    rewriter.replaceOp(call.op, reshapeTo(rewriter, call.op.getLoc(),
                                          call.tensor(0), call.resultType));
    return success();
  }
};

/// transpose, permute and t as linalg.transpose.
class TransposeLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
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
};

/// select, slice and narrow as one tensor.extract_slice (rank-reducing for
/// select). Offsets follow PyTorch: negative ones count from the end and
/// slice bounds clamp; the sizes are the result's.
class SliceLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    StringRef name = call.op.getOpName();
    RankedTensorType in = call.tensorType(0);
    int64_t rank = in.getRank();
    std::optional<int64_t> dim =
        call.args.isNoneOrAbsent(1) && name == "slice"
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
};

/// expand: a broadcasting copy (size-1 dims stretch, new leading dims).
class ExpandLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    rewriter.replaceOp(call.op,
                       buildElementwise(rewriter, call.op.getLoc(),
                                        call.resultType, {call.tensor(0)},
                                        [](OpBuilder &, Location,
                                           ValueRange a) { return a[0]; }));
    return success();
  }
};

/// cat(tensors..., dim): each operand (converted to the result's element
/// type first, as PyTorch promotes) is inserted at its running offset along
/// `dim` into one tensor.empty. A chain of tensor.insert_slice bufferizes in
/// place into a single allocation, which tensor.concat does not promise.
class CatLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    unsigned n = 0;
    while (call.args.isTensor(n))
      ++n;
    if (n == 0)
      return fail(why, "no tensors to concatenate");
    int64_t rank = call.resultType.getRank();
    std::optional<int64_t> dim =
        call.args.isNoneOrAbsent(n)
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
};

/// Ops that return their input's value: contiguous, clone, alias, and
/// dropout in eval mode (or with p = 0).
class IdentityLowering : public PyOpLowering {
public:
  LogicalResult lower(const Call &call, PatternRewriter &rewriter,
                      std::string &why) const override {
    if (call.op.getOpName() == "dropout") {
      auto p = getNumber(call.args.scalar(1));
      auto train = getBool(call.args.scalar(2));
      if (!p || !train)
        return fail(why, "dropout's p or train not understood");
      if (*train && *p > 0)
        return fail(why, "training dropout draws random numbers");
    }
    if (call.op.getTensors()[0].getType() != call.resultType)
      return fail(why, "result type differs from the input's");
    rewriter.replaceOp(call.op, call.op.getTensors()[0]);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// The op-name -> lowering table (Ops.def's LOWERING column), built once
/// per pass instance.
class LoweringTable {
public:
  LoweringTable() {
#define TRACEIR_LOWER_LOWERED(FAMILY) family<FAMILY##Lowering>()
#define TRACEIR_LOWER_KERNEL_ONLY(REASON) nullptr
#define TRACEIR_OP(NAME, EFFECTS, SIGNATURE, INFER, CPU, CUDA, FAST, LOWERING) \
  set(#NAME, TRACEIR_LOWER_##LOWERING);
#include "TraceIR/Ops.def"
#undef TRACEIR_LOWER_LOWERED
#undef TRACEIR_LOWER_KERNEL_ONLY
  }
  const PyOpLowering *lookup(StringRef name) const {
    return byName.lookup(name);
  }

private:
  /// The one instance of lowering family `L`.
  template <typename L> const PyOpLowering *family() {
    static const char key = 0; // one address per family
    auto [it, inserted] = families.try_emplace(&key);
    if (inserted)
      it->second = std::make_unique<L>();
    return it->second.get();
  }
  void set(StringRef name, const PyOpLowering *lowering) {
    if (lowering)
      byName[name] = lowering;
  }
  llvm::DenseMap<const void *, std::unique_ptr<PyOpLowering>> families;
  llvm::StringMap<const PyOpLowering *> byName;
};

bool isStatic(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() &&
         ranked.getElementType().isIntOrFloat();
}

/// The one pattern: checks what every lowering needs (static shapes, one
/// result), then dispatches by name. Reasons for failures are kept for the
/// remarks the pass emits afterwards.
struct PyOpToLinalg : public OpRewritePattern<PyOp> {
  PyOpToLinalg(MLIRContext *ctx, const LoweringTable &table,
               DenseMap<Operation *, std::string> &reasons)
      : OpRewritePattern<PyOp>(ctx), table(table), reasons(reasons) {}

  LogicalResult matchAndRewrite(PyOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    if (succeeded(tryLower(op, rewriter, why)))
      return success();
    reasons[op] = why;
    return rewriter.notifyMatchFailure(op, why);
  }

private:
  LogicalResult tryLower(PyOp op, PatternRewriter &rewriter,
                         std::string &why) const {
    const PyOpLowering *lowering = table.lookup(op.getOpName());
    if (!lowering)
      return fail(why, "no lowering for '" + op.getOpName() + "'");
    if (op.getNumResults() == 0)
      return fail(why, "no result");
    if (op.getNumResults() != 1 && !lowering->multipleResults())
      return fail(why, "more than one result");
    for (Type t : op->getOperandTypes())
      if (!isStatic(t))
        return fail(why, "an operand has a dynamic shape (" +
                             llvm::to_string(t) + ")");
    SmallVector<RankedTensorType> resultTypes;
    for (Type t : op->getResultTypes()) {
      if (!isStatic(t))
        return fail(why, "the result has a dynamic shape");
      resultTypes.push_back(cast<RankedTensorType>(t));
    }
    Call call{op,
              PyArgs(op.getCconv(), op.getTensors().getTypes(),
                     op.getScalars().getValue()),
              resultTypes.front(), resultTypes};
    return lowering->lower(call, rewriter, why);
  }

  const LoweringTable &table;
  DenseMap<Operation *, std::string> &reasons;
};

/// Replaces `graph` by a func.func with the same name, type and argument
/// attributes, and lowers the non-pyop trace ops in its body.
func::FuncOp graphToFunc(GraphOp graph) {
  IRRewriter rewriter(graph.getContext());
  rewriter.setInsertionPoint(graph);
  auto func = func::FuncOp::create(rewriter, graph.getLoc(), graph.getSymName(),
                                   graph.getFunctionType());
  if (ArrayAttr argAttrs = graph.getArgAttrsAttr())
    func.setArgAttrsAttr(argAttrs);
  if (ArrayAttr resAttrs = graph.getResAttrsAttr())
    func.setResAttrsAttr(resAttrs);
  if (auto visibility = graph.getSymVisibilityAttr())
    func.setSymVisibilityAttr(visibility);
  rewriter.inlineRegionBefore(graph.getBody(), func.getBody(), func.end());
  rewriter.eraseOp(graph);
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    rewriter.setInsertionPoint(&op);
    if (auto ret = dyn_cast<RetOp>(op))
      rewriter.replaceOpWithNewOp<func::ReturnOp>(ret, ret.getOperands());
    else if (auto c = dyn_cast<ConstantOp>(op))
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          c, cast<TypedAttr>(c.getValue()));
    else if (isa<FreeOp>(op))
      // Bufferization owns memory now; frees on tensors mean nothing.
      rewriter.eraseOp(&op);
  }
  return func;
}

struct ConvertTraceToLinalgPass
    : public mlir::trace::impl::ConvertTraceToLinalgBase<
          ConvertTraceToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<GraphOp> graphs(module.getOps<GraphOp>());
    SmallVector<func::FuncOp> funcs;
    for (GraphOp graph : graphs)
      funcs.push_back(graphToFunc(graph));

    LoweringTable table;
    DenseMap<Operation *, std::string> reasons;
    RewritePatternSet patterns(&getContext());
    patterns.add<PyOpToLinalg>(&getContext(), table, reasons);
    FrozenRewritePatternSet frozen(std::move(patterns));
    unsigned left = 0, total = 0;
    for (func::FuncOp func : funcs) {
      total += llvm::range_size(func.getOps<PyOp>());
      // One walk in order: no folding or DCE, so the lowered func computes
      // exactly what the graph did, op for op.
      walkAndApplyPatterns(func, frozen);
      for (PyOp op : func.getOps<PyOp>()) {
        ++left;
        auto it = reasons.find(op);
        op->emitRemark("not lowered to linalg: ")
            << (it == reasons.end() ? std::string("no lowering") : it->second);
      }
    }
    numLowered += total - left;
    numLeft += left;
  }
};

} // namespace
