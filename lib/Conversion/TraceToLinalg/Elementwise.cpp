//===- Elementwise.cpp - Elementwise and comparison lowerings -------------===//
//
// The arithmetic and activation ops and the comparisons, each one
// linalg.generic with PyTorch's broadcasting (buildElementwise) whose body
// converts every operand, tensor or Python number, to the type the math is
// done in.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Utils.h"

#include "TraceIR/Dialect/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

namespace mlir::trace::trace_to_linalg {

/// Builds the math dialect op `OpT` on x.
template <typename OpT>
static Value unaryMath(OpBuilder &b, Location l, Value x) {
  return OpT::create(b, l, x);
}
using UnaryMathFn = Value (*)(OpBuilder &, Location, Value);

/// The float functions that are one math dialect op each (their results
/// are floats: the registry promotes an integer input to f32).
static UnaryMathFn unaryMathOf(StringRef name) {
  return llvm::StringSwitch<UnaryMathFn>(name)
      .Case("sin", unaryMath<math::SinOp>)
      .Case("cos", unaryMath<math::CosOp>)
      .Case("tan", unaryMath<math::TanOp>)
      .Case("asin", unaryMath<math::AsinOp>)
      .Case("acos", unaryMath<math::AcosOp>)
      .Case("atan", unaryMath<math::AtanOp>)
      .Case("sinh", unaryMath<math::SinhOp>)
      .Case("cosh", unaryMath<math::CoshOp>)
      .Case("asinh", unaryMath<math::AsinhOp>)
      .Case("acosh", unaryMath<math::AcoshOp>)
      .Case("atanh", unaryMath<math::AtanhOp>)
      .Case("erf", unaryMath<math::ErfOp>)
      .Case("erfc", unaryMath<math::ErfcOp>)
      .Case("exp2", unaryMath<math::Exp2Op>)
      .Case("expm1", unaryMath<math::ExpM1Op>)
      .Case("log1p", unaryMath<math::Log1pOp>)
      .Case("log2", unaryMath<math::Log2Op>)
      .Case("log10", unaryMath<math::Log10Op>)
      .Default(nullptr);
}

/// The special functions of one argument (SpecialFunctions.cpp), which
/// compute in double as the kernels do (Runtime/SpecialFunctions.h): the
/// caller converts the argument to f64 and rounds the result.
static UnaryMathFn specialOf(StringRef name) {
  return llvm::StringSwitch<UnaryMathFn>(name)
      .Case("lgamma", buildLgamma)
      .Case("digamma", buildDigamma)
      .Case("erfinv", buildErfinv)
      .Default(nullptr);
}

/// trunc as ceil below zero and floor elsewhere (-0.0 and NaN kept): the
/// GPU pipeline's NVVM conversion has no math.trunc.
static Value truncOf(OpBuilder &b, Location l, Value x) {
  Value zero = constantOf(b, l, x.getType(), 0);
  Value below = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
  return arith::SelectOp::create(b, l, below, math::CeilOp::create(b, l, x),
                                 math::FloorOp::create(b, l, x));
}

/// The rounding ops of a float (torch.round rounds half to even: round(2.5)
/// is 2).
static UnaryMathFn roundingOf(StringRef name) {
  return llvm::StringSwitch<UnaryMathFn>(name)
      .Case("ceil", unaryMath<math::CeilOp>)
      .Case("floor", unaryMath<math::FloorOp>)
      .Case("round", unaryMath<math::RoundEvenOp>)
      .Case("trunc", truncOf)
      .Default(nullptr);
}

/// add/sub/mul/div/neg/relu/gelu/tanh/sigmoid/exp/log/sqrt/rsqrt/pow/where,
/// the float functions of unaryMathOf, reciprocal, sign, the rounding ops of
/// roundingOf, isnan/isinf/logical_not (which read the input in its own
/// type), bitwise_not, leaky_relu and elu; maximum, minimum, clamp (with
/// number bounds), atan2, copysign, fmax, fmin, the bitwise and logical
/// and/or/xor, the float fmod and remainder, hardsigmoid, hardswish and
/// silu; lgamma, digamma, polygamma and erfinv (SpecialFunctions.cpp),
/// hypot and signbit.
/// Every argument, tensor or Python number, is converted to the result's
/// element type before the arithmetic: that is PyTorch's type promotion as
/// the registry inferred it (int / int divides as float, for instance).
LogicalResult ElementwiseLowering::lower(const Call &call,
                                         PatternRewriter &rewriter,
                                         std::string &why) const {
  StringRef name = call.op.getOpName();
  Type elt = call.resultElt();
  bool isF = isa<FloatType>(elt);
  // The operands (tensors or numbers) of the math are the schema's
  // arguments without a default ("self, other, alpha=1": two).
  unsigned numOperands = call.op.getOpInfo()
                             ? countRequiredArgs(call.op.getOpInfo()->signature)
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
  if (name == "round" && !call.args.isNoneOrAbsent(1) &&
      getInt(call.args.scalar(1)).value_or(1) != 0)
    return fail(why, "round with decimals");
  // hardtanh's bounds (min_val, max_val).
  double lo = -1.0, hi = 1.0;
  if (name == "hardtanh") {
    for (auto [i, bound] : {std::pair<unsigned, double *>{1, &lo}, {2, &hi}}) {
      if (call.args.isNoneOrAbsent(i))
        continue;
      auto v = getNumber(call.args.scalar(i));
      if (!v)
        return fail(why, "hardtanh's bounds must be numbers");
      *bound = *v;
    }
    if (lo > hi)
      return fail(why, "hardtanh: min_val cannot be greater than max_val");
  }
  // leaky_relu's negative_slope; elu's alpha, scale and input_scale.
  SmallVector<double, 3> params;
  if (name == "leaky_relu" || name == "elu") {
    params.assign(name == "elu" ? 3 : 1, 1.0);
    if (name == "leaky_relu")
      params[0] = 0.01;
    for (unsigned i = 0; i < params.size(); ++i) {
      if (call.args.isNoneOrAbsent(i + 1))
        continue;
      auto v = getNumber(call.args.scalar(i + 1));
      if (!v)
        return fail(why, "'" + name + "': argument #" + Twine(i + 1) +
                             " is not a number");
      params[i] = *v;
    }
  }
  // clamp's bounds: numbers or None (tensor bounds stay a kernel's).
  std::optional<double> clampLo, clampHi;
  if (name == "clamp") {
    for (auto [i, bound] :
         {std::pair<unsigned, std::optional<double> *>{1, &clampLo},
          {2, &clampHi}}) {
      if (call.args.isNoneOrAbsent(i))
        continue;
      if (call.args.isTensor(i))
        return fail(why, "clamp with a tensor bound");
      auto v = getNumber(call.args.scalar(i));
      if (!v)
        return fail(why, "clamp's bounds must be numbers");
      *bound = *v;
    }
    if (!clampLo && !clampHi)
      return fail(why, "clamp without a bound");
  }
  // An integer fmod or remainder by zero is an error in PyTorch; the
  // lowered code would divide by zero silently.
  if (!isF && (name == "fmod" || name == "remainder"))
    return fail(why, "an integer '" + name + "' (division by zero)");
  bool tanhGelu = false;
  if (name == "gelu" && !call.args.isNoneOrAbsent(1)) {
    auto s = dyn_cast_or_null<StringAttr>(call.args.scalar(1));
    if (!s || (s.getValue() != "none" && s.getValue() != "tanh"))
      return fail(why, "gelu approximate is not 'none' or 'tanh'");
    tanhGelu = s.getValue() == "tanh";
  }
  // polygamma(n, self): n a Python int, at least 0 (the kernel refuses a
  // negative one, so it keeps it and says so).
  int64_t polygammaN = 0;
  if (name == "polygamma") {
    std::optional<int64_t> n =
        call.args.isTensor(0) ? std::nullopt : getInt(call.args.scalar(0));
    if (!n)
      return fail(why, "polygamma's n is not an int");
    if (*n < 0)
      return fail(why, "polygamma(n, x) does not support negative n");
    polygammaN = *n;
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
    } else if (getNumber(call.args.scalar(i)) || getBool(call.args.scalar(i))) {
      numbers[i] = call.args.scalar(i);
    } else {
      return fail(why, "argument #" + Twine(i) +
                           " is neither a tensor "
                           "nor a number");
    }
  }

  Location loc = call.op.getLoc();
  bool unknown = false; // the body below has no math for the op
  auto body = [&](OpBuilder &b, Location l, ValueRange in) -> Value {
    // The operand `i` in type `t` (where's condition stays i1).
    auto operand = [&](unsigned i, Type t) -> Value {
      if (slot[i] >= 0)
        return castElement(b, l, in[slot[i]], t);
      if (auto flag = getBool(numbers[i]))
        return constantOf(b, l, t, *flag ? 1 : 0);
      return constantOf(b, l, t, *getNumber(numbers[i]));
    };
    auto c = [&](double v) { return constantOf(b, l, elt, v); };
    // The predicates read the input in its own type (their result is i1).
    if (name == "isnan" || name == "isinf" || name == "logical_not") {
      Value v = slot[0] >= 0 ? in[slot[0]] : operand(0, elt);
      Type t = v.getType();
      if (!isa<FloatType>(t)) // an integer or bool is never NaN or infinite
        return name == "logical_not"
                   ? Value(arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                                 v, constantOf(b, l, t, 0)))
                   : constantOf(b, l, elt, 0);
      if (name == "isnan")
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, v, v);
      if (name == "isinf")
        return arith::CmpFOp::create(
            b, l, arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, l, v),
            constantOf(b, l, t, std::numeric_limits<double>::infinity()));
      // Ordered: NaN is true, so its not is false.
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v,
                                   constantOf(b, l, t, 0));
    }
    // signbit reads the input in its own type: a float's sign bit (set for
    // -0.0 and -NaN too), an integer below 0, never a bool's.
    if (name == "signbit") {
      Value v = slot[0] >= 0 ? in[slot[0]] : operand(0, b.getF64Type());
      Type t = v.getType();
      if (t.isInteger(1))
        return constantOf(b, l, elt, 0);
      if (auto ft = dyn_cast<FloatType>(t)) {
        Type bits = b.getIntegerType(ft.getWidth());
        v = arith::BitcastOp::create(b, l, bits, v);
        t = bits;
      }
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v,
                                   constantOf(b, l, t, 0));
    }
    // The special functions compute in double, as the kernels do
    // (Runtime/SpecialFunctions.h), and round to the result's type.
    if (UnaryMathFn build = specialOf(name))
      return castElement(b, l, build(b, l, operand(0, b.getF64Type())), elt);
    if (name == "polygamma")
      return castElement(
          b, l, buildPolygamma(b, l, polygammaN, operand(1, b.getF64Type())),
          elt);
    if (name == "hypot") {
      // In double, as the kernel's hypot(double, double): sqrt(x^2 + y^2)
      // is exact to the last bit of a narrower float; an f64 is scaled by
      // its larger operand first so the squares do not overflow. An
      // infinite operand gives inf, even with a NaN one.
      Type f64 = b.getF64Type();
      Value x = math::AbsFOp::create(b, l, operand(0, f64));
      Value y = math::AbsFOp::create(b, l, operand(1, f64));
      Value inf = constantOf(b, l, f64, INFINITY);
      Value r;
      if (elt.isF64()) {
        Value hi = arith::MaximumFOp::create(b, l, x, y);
        Value lo = arith::MinimumFOp::create(b, l, x, y);
        Value q = arith::DivFOp::create(b, l, lo, hi);
        Value scaled = mul(
            b, l, hi,
            math::SqrtOp::create(
                b, l, add(b, l, constantOf(b, l, f64, 1), mul(b, l, q, q))));
        Value zero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, hi,
                                           constantOf(b, l, f64, 0));
        r = arith::SelectOp::create(b, l, zero, hi, scaled);
      } else {
        r = math::SqrtOp::create(b, l,
                                 add(b, l, mul(b, l, x, x), mul(b, l, y, y)));
      }
      Value anyInf = arith::OrIOp::create(
          b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, inf),
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, y, inf));
      return castElement(b, l, arith::SelectOp::create(b, l, anyInf, inf, r),
                         elt);
    }
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
      return isF ? Value(arith::NegFOp::create(b, l, x)) : sub(b, l, c(0), x);
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
    if (UnaryMathFn build = unaryMathOf(name))
      return build(b, l, x);
    if (name == "reciprocal")
      return arith::DivFOp::create(b, l, c(1), x);
    if (name == "sign") {
      // (x > 0) - (x < 0), as PyTorch: NaN and -0.0 give +0.0; a bool is
      // its own sign (and i1's true is -1 as a signed value).
      if (elt.isInteger(1))
        return x;
      Value pos = isF ? Value(arith::CmpFOp::create(
                            b, l, arith::CmpFPredicate::OGT, x, c(0)))
                      : Value(arith::CmpIOp::create(
                            b, l, arith::CmpIPredicate::sgt, x, c(0)));
      Value neg = isF ? Value(arith::CmpFOp::create(
                            b, l, arith::CmpFPredicate::OLT, x, c(0)))
                      : Value(arith::CmpIOp::create(
                            b, l, arith::CmpIPredicate::slt, x, c(0)));
      return arith::SelectOp::create(
          b, l, pos, c(1), arith::SelectOp::create(b, l, neg, c(-1), c(0)));
    }
    // An integer is its own rounding, as in PyTorch.
    if (UnaryMathFn build = roundingOf(name))
      return isF ? build(b, l, x) : x;
    if (name == "bitwise_not") {
      // x xor all ones; on i1 that is logical not, as PyTorch's bool ~.
      unsigned width = elt.getIntOrFloatBitWidth();
      Value ones = arith::ConstantOp::create(
          b, l, b.getIntegerAttr(elt, APInt::getAllOnes(width)));
      return arith::XOrIOp::create(b, l, x, ones);
    }
    if (name == "leaky_relu")
      return arith::SelectOp::create(
          b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(0)),
          x, mul(b, l, x, c(params[0])));
    if (name == "elu") {
      // scale x where x > 0, else alpha scale (exp(input_scale x) - 1).
      Value pos = mul(b, l, x, c(params[1]));
      Value neg =
          mul(b, l, math::ExpM1Op::create(b, l, mul(b, l, x, c(params[2]))),
              c(params[0] * params[1]));
      return arith::SelectOp::create(
          b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(0)),
          pos, neg);
    }
    // A bool's max and min compare as 0 < 1: unsigned (i1's true is -1
    // as a signed value).
    auto maxOf = [&](Value p, Value q) -> Value {
      if (isF)
        return arith::MaximumFOp::create(b, l, p, q);
      return elt.isInteger(1) ? Value(arith::MaxUIOp::create(b, l, p, q))
                              : Value(arith::MaxSIOp::create(b, l, p, q));
    };
    auto minOf = [&](Value p, Value q) -> Value {
      if (isF)
        return arith::MinimumFOp::create(b, l, p, q);
      return elt.isInteger(1) ? Value(arith::MinUIOp::create(b, l, p, q))
                              : Value(arith::MinSIOp::create(b, l, p, q));
    };
    if (name == "maximum")
      return maxOf(x, operand(1, elt));
    if (name == "minimum")
      return minOf(x, operand(1, elt));
    if (name == "clamp") {
      // min(max(x, lo), hi): a NaN anywhere propagates, lo > hi gives hi.
      Value y = clampLo ? maxOf(x, c(*clampLo)) : x;
      return clampHi ? minOf(y, c(*clampHi)) : y;
    }
    if (name == "atan2")
      return math::Atan2Op::create(b, l, x, operand(1, elt));
    if (name == "copysign")
      return math::CopySignOp::create(b, l, x, operand(1, elt));
    // fmax and fmin ignore a NaN operand (maxnum/minnum); integers have
    // none, and are maximum and minimum.
    if (name == "fmax")
      return isF ? Value(arith::MaxNumFOp::create(b, l, x, operand(1, elt)))
                 : maxOf(x, operand(1, elt));
    if (name == "fmin")
      return isF ? Value(arith::MinNumFOp::create(b, l, x, operand(1, elt)))
                 : minOf(x, operand(1, elt));
    // The logical ops read their operands as bools (castElement's != 0, so
    // NaN is true): the result type is i1.
    if (name == "bitwise_and" || name == "logical_and")
      return arith::AndIOp::create(b, l, x, operand(1, elt));
    if (name == "bitwise_or" || name == "logical_or")
      return arith::OrIOp::create(b, l, x, operand(1, elt));
    if (name == "bitwise_xor" || name == "logical_xor")
      return arith::XOrIOp::create(b, l, x, operand(1, elt));
    if (name == "fmod")
      return arith::RemFOp::create(b, l, x, operand(1, elt));
    if (name == "remainder") {
      // As ATen: fmod, moved into the divisor's sign.
      Value y = operand(1, elt);
      Value m = arith::RemFOp::create(b, l, x, y);
      auto lt0 = [&](Value v) {
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, v, c(0));
      };
      Value nonzero =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, m, c(0));
      Value signs = arith::XOrIOp::create(b, l, lt0(y), lt0(m));
      return arith::SelectOp::create(
          b, l, arith::AndIOp::create(b, l, nonzero, signs), add(b, l, m, y),
          m);
    }
    if (name == "hardsigmoid" || name == "hardswish") {
      // min(max(x + 3, 0), 6) / 6 (maximumf and minimumf keep NaN), times x
      // for hardswish, in ATen's order.
      Value r = arith::MinimumFOp::create(
          b, l, arith::MaximumFOp::create(b, l, add(b, l, x, c(3)), c(0)),
          c(6));
      if (name == "hardswish")
        r = mul(b, l, x, r);
      return arith::DivFOp::create(b, l, r, c(6));
    }
    if (name == "silu") {
      // x / (1 + exp(-x))
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
      return arith::DivFOp::create(b, l, x, add(b, l, c(1), e));
    }
    if (name == "sigmoid") {
      // 1 / (1 + exp(-x))
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
      return arith::DivFOp::create(b, l, c(1), add(b, l, c(1), e));
    }
    if (name == "hardtanh") {
      // max then min: NaN stays NaN (maximumf and minimumf propagate
      // it), as in PyTorch. An integer result clamps to the bounds
      // truncated, as PyTorch casts them.
      Value floor = max(b, l, x, c(lo));
      return isF ? Value(arith::MinimumFOp::create(b, l, floor, c(hi)))
                 : Value(arith::MinSIOp::create(b, l, floor, c(hi)));
    }
    if (name == "gelu") {
      // 0.5 x (1 + erf(x / sqrt 2)), or with tanh:
      // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
      Value inner;
      if (tanhGelu) {
        Value x3 = mul(b, l, mul(b, l, x, x), x);
        Value poly = add(b, l, x, mul(b, l, c(0.044715), x3));
        inner = math::TanhOp::create(b, l,
                                     mul(b, l, c(std::sqrt(2.0 / M_PI)), poly));
      } else {
        inner = math::ErfOp::create(b, l, mul(b, l, x, c(M_SQRT1_2)));
      }
      return mul(b, l, mul(b, l, c(0.5), x), add(b, l, c(1), inner));
    }
    unknown = true;
    return x;
  };
  {
    // Ops.def names the ops this family lowers; one whose math is missing
    // here is refused, found by building the body once in a block of its
    // own (dropped after), so the IR stays as it was.
    Block probe;
    SmallVector<Value> args;
    for (Value v : inputs)
      args.push_back(probe.addArgument(getElementTypeOrSelf(v.getType()), loc));
    OpBuilder pb(rewriter.getContext());
    pb.setInsertionPointToEnd(&probe);
    body(pb, loc, args);
    // Its ops go with the block, in order: drop their operands first.
    probe.dropAllReferences();
  }
  if (unknown)
    return fail(why, "no elementwise math for '" + name + "'");
  Value result = buildElementwise(rewriter, loc, call.resultType, inputs, body);
  rewriter.replaceOp(call.op, result);
  return success();
}

/// eq/ne/lt/le/gt/ge against a tensor or a number, with broadcasting. The
/// result is i1, so the registry's result type does not say in which type
/// to compare: that is torch.result_type of the two operands, as the
/// registry computes it for arithmetic (trace::resultDtype).
LogicalResult ComparisonLowering::lower(const Call &call,
                                        PatternRewriter &rewriter,
                                        std::string &why) const {
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

} // namespace mlir::trace::trace_to_linalg
