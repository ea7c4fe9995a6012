//===- ElementwiseKernels.h - Elementwise kernels, any device ---*- C++ -*-===//
//
// The host half of every elementwise kernel: reading the call's arguments,
// broadcasting, choosing the compute type, building an EwLaunch. A backend
// instantiates Elementwise<Exec> with the function that runs a launch on its
// device, so CPU and CUDA share all of this (and the CPU tests cover it).
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_ELEMENTWISEKERNELS_H
#define TRACEIR_RUNTIME_ELEMENTWISEKERNELS_H

#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Runtime/Executable.h"
#include "TraceIR/Runtime/KernelArgs.h"

namespace traceir {

/// pow of a floating tensor by a Python number that ATen computes as another
/// op (1: a copy, 0.5: sqrt, -0.5: rsqrt, -1: reciprocal, 2: x * x): `L`
/// rewritten to that op; other exponents leave it as it is.
void powByNumber(EwLaunch &L);

/// Fills `L` for `op` over arguments [0, n) into `out`. Fails the call (and
/// returns false) when the rank is beyond what a launch holds.
bool prepareElementwise(KernelContext &ctx, EwOp op, unsigned n,
                        const Tensor &out, EwLaunch &L);

/// Runs launches with `Exec`, a backend's `bool(KernelContext &, const
/// EwLaunch &, bool &divByZero)` (the context to record the kernel tier).
template <bool (*Exec)(KernelContext &, const EwLaunch &, bool &)>
struct Elementwise {
  static void run(KernelContext &ctx, EwOp op, unsigned n, Tensor &out,
                  double alpha = 1, double beta = 0, double gamma = 1) {
    EwLaunch L;
    if (!prepareElementwise(ctx, op, n, out, L))
      return;
    L.alpha = alpha;
    L.beta = beta;
    L.gamma = gamma;
    launch(ctx, L);
  }
  static void launch(KernelContext &ctx, const EwLaunch &L) {
    bool divByZero = false;
    if (!Exec(ctx, L, divByZero))
      return ctx.fail("the elementwise kernel failed to run on " +
                      strCat(ctx.result(0).storage->device.str()));
    if (divByZero)
      ctx.fail(deviceErrorMessage(
          deviceError(DeviceErrorCode::IntegerDivisionByZero, 0, 0)));
  }
  static double alpha(KernelContext &ctx) {
    return ctx.isNone(2) ? 1.0 : ctx.scalar(2).number();
  }
  /// An in-place op writes through its first argument.
  static Tensor &self(KernelContext &ctx) {
    ctx.result(0) = ctx.tensor(0);
    return ctx.result(0);
  }
  static EwOp divOp(KernelContext &ctx) {
    if (ctx.isNone(2))
      return EwOp::Div;
    const std::string &mode = ctx.scalar(2).s;
    if (mode == "trunc")
      return EwOp::DivTrunc;
    if (mode == "floor")
      return EwOp::DivFloor;
    ctx.fail("rounding_mode must be None, 'trunc' or 'floor', got '" + mode +
             "'");
    return EwOp::Div;
  }

  static void add(KernelContext &c) {
    run(c, EwOp::Add, 2, c.result(0), alpha(c));
  }
  static void add_(KernelContext &c) {
    run(c, EwOp::Add, 2, self(c), alpha(c));
  }
  static void sub(KernelContext &c) {
    run(c, EwOp::Sub, 2, c.result(0), alpha(c));
  }
  static void sub_(KernelContext &c) {
    run(c, EwOp::Sub, 2, self(c), alpha(c));
  }
  static void mul(KernelContext &c) { run(c, EwOp::Mul, 2, c.result(0)); }
  static void mul_(KernelContext &c) { run(c, EwOp::Mul, 2, self(c)); }
  static void div(KernelContext &c) {
    EwOp op = divOp(c);
    if (!c.failed())
      run(c, op, 2, c.result(0));
  }
  static void div_(KernelContext &c) {
    EwOp op = divOp(c);
    if (!c.failed())
      run(c, op, 2, self(c));
  }
  static void pow(KernelContext &c) { run(c, EwOp::Pow, 2, c.result(0)); }
  static void eq(KernelContext &c) { run(c, EwOp::Eq, 2, c.result(0)); }
  static void ne(KernelContext &c) { run(c, EwOp::Ne, 2, c.result(0)); }
  static void lt(KernelContext &c) { run(c, EwOp::Lt, 2, c.result(0)); }
  static void le(KernelContext &c) { run(c, EwOp::Le, 2, c.result(0)); }
  static void gt(KernelContext &c) { run(c, EwOp::Gt, 2, c.result(0)); }
  static void ge(KernelContext &c) { run(c, EwOp::Ge, 2, c.result(0)); }
  static void where(KernelContext &c) { run(c, EwOp::Where, 3, c.result(0)); }
  static void neg(KernelContext &c) { run(c, EwOp::Neg, 1, c.result(0)); }
  static void abs(KernelContext &c) { run(c, EwOp::Abs, 1, c.result(0)); }
  static void relu(KernelContext &c) { run(c, EwOp::Relu, 1, c.result(0)); }
  static void relu_(KernelContext &c) { run(c, EwOp::Relu, 1, self(c)); }
  static void exp(KernelContext &c) { run(c, EwOp::Exp, 1, c.result(0)); }
  static void exp_(KernelContext &c) { run(c, EwOp::Exp, 1, self(c)); }
  static void log(KernelContext &c) { run(c, EwOp::Log, 1, c.result(0)); }
  static void sqrt(KernelContext &c) { run(c, EwOp::Sqrt, 1, c.result(0)); }
  static void sqrt_(KernelContext &c) { run(c, EwOp::Sqrt, 1, self(c)); }
  static void rsqrt(KernelContext &c) { run(c, EwOp::Rsqrt, 1, c.result(0)); }
  static void rsqrt_(KernelContext &c) { run(c, EwOp::Rsqrt, 1, self(c)); }
  static void tanh(KernelContext &c) { run(c, EwOp::Tanh, 1, c.result(0)); }
  static void tanh_(KernelContext &c) { run(c, EwOp::Tanh, 1, self(c)); }
  static void sigmoid(KernelContext &c) {
    run(c, EwOp::Sigmoid, 1, c.result(0));
  }
  static void sigmoid_(KernelContext &c) { run(c, EwOp::Sigmoid, 1, self(c)); }
  static void sin(KernelContext &c) { run(c, EwOp::Sin, 1, c.result(0)); }
  static void cos(KernelContext &c) { run(c, EwOp::Cos, 1, c.result(0)); }
  static void tan(KernelContext &c) { run(c, EwOp::Tan, 1, c.result(0)); }
  static void asin(KernelContext &c) { run(c, EwOp::Asin, 1, c.result(0)); }
  static void acos(KernelContext &c) { run(c, EwOp::Acos, 1, c.result(0)); }
  static void atan(KernelContext &c) { run(c, EwOp::Atan, 1, c.result(0)); }
  static void sinh(KernelContext &c) { run(c, EwOp::Sinh, 1, c.result(0)); }
  static void cosh(KernelContext &c) { run(c, EwOp::Cosh, 1, c.result(0)); }
  static void asinh(KernelContext &c) { run(c, EwOp::Asinh, 1, c.result(0)); }
  static void acosh(KernelContext &c) { run(c, EwOp::Acosh, 1, c.result(0)); }
  static void atanh(KernelContext &c) { run(c, EwOp::Atanh, 1, c.result(0)); }
  static void erf(KernelContext &c) { run(c, EwOp::Erf, 1, c.result(0)); }
  static void erf_(KernelContext &c) { run(c, EwOp::Erf, 1, self(c)); }
  static void expm1(KernelContext &c) { run(c, EwOp::Expm1, 1, c.result(0)); }
  static void log1p(KernelContext &c) { run(c, EwOp::Log1p, 1, c.result(0)); }
  static void log2(KernelContext &c) { run(c, EwOp::Log2, 1, c.result(0)); }
  static void log10(KernelContext &c) { run(c, EwOp::Log10, 1, c.result(0)); }
  static void reciprocal(KernelContext &c) {
    run(c, EwOp::Reciprocal, 1, c.result(0));
  }
  static void sign(KernelContext &c) { run(c, EwOp::Sign, 1, c.result(0)); }
  static void ceil(KernelContext &c) { run(c, EwOp::Ceil, 1, c.result(0)); }
  static void floor(KernelContext &c) { run(c, EwOp::Floor, 1, c.result(0)); }
  // round(self, decimals=0): round.decimals where decimals != 0, with
  // ATen's 10^|decimals| in the opmath dtype (float below f64).
  static void round(KernelContext &c) {
    int64_t decimals = c.isNone(1) ? 0 : c.scalar(1).i;
    if (decimals == 0)
      return run(c, EwOp::Round, 1, c.result(0));
    DType dt = c.tensor(0).dtype;
    if (dt != DType::F32 && dt != DType::F64 && dt != DType::F16 &&
        dt != DType::BF16)
      return c.fail(strCat("decimals=") + strCat(decimals) +
                    " takes floating-point tensors, got " + dtypeName(dt));
    bool inFloat = dt != DType::F64;
    double p = std::pow(
        10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
    if (inFloat)
      p = static_cast<float>(p);
    run(c, EwOp::RoundDecimals, 1, c.result(0), p, decimals < 0 ? 1 : 0,
        inFloat ? 1 : 0);
  }
  static void trunc(KernelContext &c) { run(c, EwOp::Trunc, 1, c.result(0)); }
  static void isnan(KernelContext &c) { run(c, EwOp::IsNan, 1, c.result(0)); }
  static void isinf(KernelContext &c) { run(c, EwOp::IsInf, 1, c.result(0)); }
  static void logical_not(KernelContext &c) {
    run(c, EwOp::LogicalNot, 1, c.result(0));
  }
  static void bitwise_not(KernelContext &c) {
    run(c, EwOp::BitwiseNot, 1, c.result(0));
  }
  static void leaky_relu(KernelContext &c) {
    double slope = numberArg(c, 1, 0.01);
    if (!c.failed())
      run(c, EwOp::LeakyRelu, 1, c.result(0), slope);
  }
  // elu(self, alpha, scale, input_scale): scale * x where x > 0, else
  // alpha * scale * (exp(x * input_scale) - 1), as ATen's kernel.
  static void elu(KernelContext &c) {
    double alpha = numberArg(c, 1, 1), scale = numberArg(c, 2, 1),
           inputScale = numberArg(c, 3, 1);
    if (!c.failed())
      run(c, EwOp::Elu, 1, c.result(0), alpha * scale, scale, inputScale);
  }
  static void gelu(KernelContext &c) {
    std::string mode = c.isNone(1) ? "none" : c.scalar(1).s;
    if (mode != "none" && mode != "tanh")
      return c.fail("approximate must be 'none' or 'tanh', got '" + mode + "'");
    run(c, mode == "tanh" ? EwOp::GeluTanh : EwOp::Gelu, 1, c.result(0));
  }
  static void hardtanh(KernelContext &c) { hardtanhInto(c, c.result(0)); }
  static void hardtanh_(KernelContext &c) { hardtanhInto(c, self(c)); }
  static void hardtanhInto(KernelContext &c, Tensor &out) {
    double lo = numberArg(c, 1, -1), hi = numberArg(c, 2, 1);
    if (c.failed())
      return;
    if (lo > hi)
      return c.fail("min_val cannot be greater than max_val");
    run(c, EwOp::Hardtanh, 1, out, lo, hi);
  }
  static void hardsigmoid(KernelContext &c) {
    run(c, EwOp::Hardsigmoid, 1, c.result(0));
  }
  static void hardswish(KernelContext &c) {
    run(c, EwOp::Hardswish, 1, c.result(0));
  }
  static void hardswish_(KernelContext &c) {
    run(c, EwOp::Hardswish, 1, self(c));
  }
  static void silu(KernelContext &c) { run(c, EwOp::Silu, 1, c.result(0)); }
  static void silu_(KernelContext &c) { run(c, EwOp::Silu, 1, self(c)); }
  static void maximum(KernelContext &c) {
    run(c, EwOp::Maximum, 2, c.result(0));
  }
  static void minimum(KernelContext &c) {
    run(c, EwOp::Minimum, 2, c.result(0));
  }
  static void atan2(KernelContext &c) { run(c, EwOp::Atan2, 2, c.result(0)); }
  static void bitwise_and(KernelContext &c) {
    run(c, EwOp::BitwiseAnd, 2, c.result(0));
  }
  static void bitwise_or(KernelContext &c) {
    run(c, EwOp::BitwiseOr, 2, c.result(0));
  }
  static void bitwise_xor(KernelContext &c) {
    run(c, EwOp::BitwiseXor, 2, c.result(0));
  }
  static void bitwise_left_shift(KernelContext &c) {
    run(c, EwOp::LeftShift, 2, c.result(0));
  }
  static void bitwise_right_shift(KernelContext &c) {
    run(c, EwOp::RightShift, 2, c.result(0));
  }
  static void logical_and(KernelContext &c) {
    run(c, EwOp::LogicalAnd, 2, c.result(0));
  }
  static void logical_or(KernelContext &c) {
    run(c, EwOp::LogicalOr, 2, c.result(0));
  }
  static void logical_xor(KernelContext &c) {
    run(c, EwOp::LogicalXor, 2, c.result(0));
  }
  static void fmod(KernelContext &c) { run(c, EwOp::Fmod, 2, c.result(0)); }
  static void remainder(KernelContext &c) {
    run(c, EwOp::Remainder, 2, c.result(0));
  }
  static void exp2(KernelContext &c) { run(c, EwOp::Exp2, 1, c.result(0)); }
  static void erfc(KernelContext &c) { run(c, EwOp::Erfc, 1, c.result(0)); }
  static void erfinv(KernelContext &c) { run(c, EwOp::Erfinv, 1, c.result(0)); }
  static void lgamma(KernelContext &c) { run(c, EwOp::Lgamma, 1, c.result(0)); }
  static void digamma(KernelContext &c) {
    run(c, EwOp::Digamma, 1, c.result(0));
  }
  // polygamma(n, self): n, a Python int, is the launch's first operand.
  static void polygamma(KernelContext &c) {
    if (c.scalar(0).number() < 0)
      return c.fail("polygamma(n, x) does not support negative n");
    run(c, EwOp::Polygamma, 2, c.result(0));
  }
  static void fmax(KernelContext &c) { run(c, EwOp::Fmax, 2, c.result(0)); }
  static void fmin(KernelContext &c) { run(c, EwOp::Fmin, 2, c.result(0)); }
  static void copysign(KernelContext &c) {
    run(c, EwOp::Copysign, 2, c.result(0));
  }
  static void hypot(KernelContext &c) { run(c, EwOp::Hypot, 2, c.result(0)); }
  static void signbit(KernelContext &c) {
    run(c, EwOp::Signbit, 1, c.result(0));
  }
  // clamp(self, min=None, max=None), min and max numbers or tensors
  // (clamp.default and clamp.Tensor). A missing bound is the infinite one
  // on its side, so one launch serves every form.
  static void clamp(KernelContext &c) {
    if (c.isNone(1) && c.isNone(2))
      return c.fail("at least one of 'min' or 'max' must not be None");
    // A call may stop after min (its max defaults to None).
    unsigned n = std::min(c.numArgs(), 3u);
    EwLaunch L;
    if (!prepareElementwise(c, EwOp::Clamp, n, c.result(0), L))
      return;
    L.numOperands = 3;
    for (unsigned i : {1u, 2u}) {
      if (i < n && !c.isNone(i))
        continue;
      L.in[i] = EwOperand();
      L.in[i].number = i == 1 ? -HUGE_VAL : HUGE_VAL;
      L.in[i].integer = i == 1 ? INT64_MIN : INT64_MAX;
    }
    launch(c, L);
  }
  static void clone(KernelContext &c) { run(c, EwOp::Copy, 1, c.result(0)); }
  // copy(self, src, non_blocking): src broadcast into self's shape and
  // converted to self's dtype, in a fresh tensor (copy_ out of place).
  static void copy(KernelContext &c) { run(c, EwOp::Copy, 2, c.result(0)); }
  // fill(self, value): self's shape and dtype, every element value.
  static void fill(KernelContext &c) { run(c, EwOp::Copy, 2, c.result(0)); }
  // _to_copy: the store converts to the result's dtype, as a cast does.
  static void _to_copy(KernelContext &c) { run(c, EwOp::Copy, 1, c.result(0)); }
  // full(size, fill_value, ...) and full_like(self, fill_value, ...): out =
  // argument 1, converted to the result's dtype; scalar_tensor(s, ...):
  // argument 0.
  static void full(KernelContext &c) { run(c, EwOp::Copy, 2, c.result(0)); }
  static void full_like(KernelContext &c) {
    run(c, EwOp::Copy, 2, c.result(0));
  }
  static void scalar_tensor(KernelContext &c) {
    run(c, EwOp::Copy, 1, c.result(0));
  }
  // copy_(self, src) and fill_(self, value): out = argument 1.
  static void copy_(KernelContext &c) { run(c, EwOp::Copy, 2, self(c)); }
  static void fill_(KernelContext &c) { run(c, EwOp::Copy, 2, self(c)); }
  static void zero_(KernelContext &c) { run(c, EwOp::Zero, 0, self(c)); }
  // ones_like's dtype, layout and memory format only decide the result's
  // type, which arrives preallocated.
  static void ones_like(KernelContext &c) { run(c, EwOp::One, 0, c.result(0)); }
  // threshold_backward(grad_output, self, threshold).
  static void threshold_backward(KernelContext &c) {
    run(c, EwOp::ThresholdBackward, 3, c.result(0));
  }
};

} // namespace traceir

#endif // TRACEIR_RUNTIME_ELEMENTWISEKERNELS_H
