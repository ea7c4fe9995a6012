//===- SpecialFunctions.cpp - lgamma, digamma, polygamma, erfinv ----------===//
//
// The special functions that the math dialect lacks, built as f64 arith,
// math and scf code for the elementwise family's linalg bodies. They follow
// the runtime's kernels (Runtime/SpecialFunctions.h) step for step, so the
// lowered graph and the kernel agree to the last bits that libm allows:
// digamma, trigamma, the Hurwitz zeta function and erfinv are its
// algorithms, and they compute in double as the kernels do (the caller
// rounds to the result's dtype). The kernels take lgamma from libm; here it
// is fdlibm's __ieee754_lgamma_r (Sun Microsystems, 1993, freely
// redistributable; the algorithm of glibc's and musl's lgamma): a rational
// approximation on [2, 3) reached by the recurrence from [2, 8), the
// polynomials around the minimum near 1.46 and the zeros at 1 and 2 on
// (0, 2), Stirling's series from 8 on; the reflection formula below 0.
// Against glibc's lgamma over [-30, 1e4] it is within 5e-15 of
// max(1, |lgamma(x)|) (an ulp or two; the reflection's subtraction near the
// zeros below -2 is where it loses most), and rounded to f32 it equals
// PyTorch's f32 lgamma but for an ulp.
//
// Where the kernel loops on data, so does this: the Hurwitz zeta's direct
// sum runs until q + i passes 9, which for a large negative non-integer q
// (polygamma(n >= 2, -1e9 + 0.5)) is that many steps, on both.
//
// Branches become selects over every path (each path is cheap and stays
// finite or NaN where not selected) and fixed-count loops with a "done"
// flag, so the code has one shape per element on the GPU; the only
// data-dependent loop is the Hurwitz zeta's direct sum, as in the kernel.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

namespace mlir::trace::trace_to_linalg {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// f64 scalar code, one op per call: a transcription aid, so the algorithms
/// below read like the C++ they follow.
class F64 {
public:
  F64(OpBuilder &b, Location l) : b(b), l(l) {}

  Value c(double v) { return constantOf(b, l, b.getF64Type(), v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, l, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  Value lt(Value x, Value y) { return cmp(arith::CmpFPredicate::OLT, x, y); }
  Value le(Value x, Value y) { return cmp(arith::CmpFPredicate::OLE, x, y); }
  Value gt(Value x, Value y) { return cmp(arith::CmpFPredicate::OGT, x, y); }
  Value ge(Value x, Value y) { return cmp(arith::CmpFPredicate::OGE, x, y); }
  Value eq(Value x, Value y) { return cmp(arith::CmpFPredicate::OEQ, x, y); }
  Value isNan(Value x) { return cmp(arith::CmpFPredicate::UNO, x, x); }
  Value sel(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, l, cond, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, l, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, l, x, y); }
  Value notI(Value x) {
    return arith::XOrIOp::create(
        b, l, x, arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
  }
  Value abs(Value x) { return math::AbsFOp::create(b, l, x); }
  Value floor(Value x) { return math::FloorOp::create(b, l, x); }
  /// trunc as ceil below zero and floor elsewhere (the NVVM conversion has
  /// no math.trunc).
  Value trunc(Value x) {
    return sel(lt(x, c(0)), math::CeilOp::create(b, l, x), floor(x));
  }
  Value log(Value x) { return math::LogOp::create(b, l, x); }
  Value exp(Value x) { return math::ExpOp::create(b, l, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, l, x); }
  Value sin(Value x) { return math::SinOp::create(b, l, x); }
  Value tan(Value x) { return math::TanOp::create(b, l, x); }
  Value erf(Value x) { return math::ErfOp::create(b, l, x); }
  Value erfc(Value x) { return math::ErfcOp::create(b, l, x); }
  Value pow(Value x, Value y) { return math::PowFOp::create(b, l, x, y); }
  Value copysign(Value x, Value y) {
    return math::CopySignOp::create(b, l, x, y);
  }
  /// c[0] + x (c[1] + x (c[2] + ...)).
  Value poly(Value x, ArrayRef<double> coeffs) {
    Value r = c(coeffs.back());
    for (double k : llvm::reverse(coeffs.drop_back()))
      r = add(c(k), mul(x, r));
    return r;
  }
  /// `n` iterations of `step` over the loop-carried `values` (an scf.for,
  /// its body built once).
  SmallVector<Value>
  repeat(int64_t n, ValueRange values,
         function_ref<SmallVector<Value>(F64 &, ValueRange)> step) {
    Value lo = arith::ConstantIndexOp::create(b, l, 0);
    Value hi = arith::ConstantIndexOp::create(b, l, n);
    Value one = arith::ConstantIndexOp::create(b, l, 1);
    auto loop = scf::ForOp::create(
        b, l, lo, hi, one, values,
        [&](OpBuilder &nb, Location nl, Value, ValueRange iter) {
          F64 f(nb, nl);
          scf::YieldOp::create(nb, nl, step(f, iter));
        });
    return SmallVector<Value>(loop.getResults());
  }

  OpBuilder &b;
  Location l;
};

/// psi(x) + result for x >= 0.5, or NaN: the recurrence psi(x) = psi(x + 1)
/// - 1/x until x >= 10 (at most 10 steps), then the asymptotic series.
Value digammaTail(F64 &f, Value x, Value result) {
  auto out = f.repeat(10, {x, result}, [](F64 &g, ValueRange v) {
    Value below = g.lt(v[0], g.c(10));
    return SmallVector<Value>{
        g.sel(below, g.add(v[0], g.c(1)), v[0]),
        g.sel(below, g.sub(v[1], g.div(g.c(1), v[0])), v[1])};
  });
  x = out[0];
  result = out[1];
  // ln x - 1/(2x) - sum B_2k / (2k x^2k), to the 1/x^14 term.
  Value y = f.div(f.c(1), f.mul(x, x));
  Value tail = f.mul(
      y,
      f.sub(
          f.c(1.0 / 12),
          f.mul(
              y,
              f.sub(
                  f.c(1.0 / 120),
                  f.mul(
                      y,
                      f.sub(
                          f.c(1.0 / 252),
                          f.mul(
                              y,
                              f.sub(
                                  f.c(1.0 / 240),
                                  f.mul(
                                      y,
                                      f.sub(
                                          f.c(1.0 / 132),
                                          f.mul(
                                              y,
                                              f.sub(
                                                  f.c(691.0 / 32760),
                                                  f.div(y, f.c(12))))))))))))));
  Value series =
      f.sub(f.sub(f.add(result, f.log(x)), f.div(f.c(0.5), x)), tail);
  return f.sel(f.eq(x, f.c(INFINITY)), x, series);
}

} // namespace

Value buildDigamma(OpBuilder &b, Location l, Value x) {
  F64 f(b, l);
  Value zero = f.c(0);
  Value negative = f.lt(x, zero);
  // psi(1 - x) - psi(x) = pi / tan(pi x), with tan of the fractional part
  // (exact) rather than of pi x.
  Value frac = f.sub(x, f.trunc(x));
  Value reflected = f.neg(f.div(f.c(kPi), f.tan(f.mul(f.c(kPi), frac))));
  Value start = f.sel(negative, f.sub(f.c(1), x), x);
  Value r = digammaTail(f, start, f.sel(negative, reflected, zero));
  // psi(+-0) = -+inf; NaN at the negative integers and -inf.
  Value pole = f.andI(negative, f.eq(x, f.trunc(x)));
  r = f.sel(pole, f.c(NAN), r);
  return f.sel(f.eq(x, zero), f.copysign(f.c(INFINITY), f.neg(x)), r);
}

Value buildTrigamma(OpBuilder &b, Location l, Value x) {
  F64 f(b, l);
  // psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x) below 1/2.
  Value reflect = f.lt(x, f.c(0.5));
  Value s = f.sin(f.mul(f.c(kPi), x));
  Value sign = f.sel(reflect, f.c(-1), f.c(1));
  Value result =
      f.sel(reflect, f.neg(f.div(f.c(kPi * kPi), f.mul(s, s))), f.c(0));
  x = f.sel(reflect, f.sub(f.c(1), x), x);
  auto out = f.repeat(10, {x, result}, [](F64 &g, ValueRange v) {
    Value below = g.lt(v[0], g.c(10));
    return SmallVector<Value>{
        g.sel(below, g.add(v[0], g.c(1)), v[0]),
        g.sel(below, g.add(v[1], g.div(g.c(1), g.mul(v[0], v[0]))), v[1])};
  });
  x = out[0];
  result = out[1];
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1), to the 1/x^13 term.
  Value y = f.div(f.c(1), f.mul(x, x));
  Value inner = f.mul(
      y,
      f.sub(
          f.c(1.0 / 6),
          f.mul(
              y,
              f.sub(
                  f.c(1.0 / 30),
                  f.mul(
                      y,
                      f.sub(
                          f.c(1.0 / 42),
                          f.mul(y,
                                f.sub(f.c(1.0 / 30),
                                      f.mul(y,
                                            f.sub(f.c(5.0 / 66),
                                                  f.mul(y, f.c(691.0 /
                                                               2730))))))))))));
  Value series =
      f.div(f.add(f.add(f.c(1), f.div(f.c(1), f.mul(f.c(2), x))), inner), x);
  Value finite = f.add(result, series);
  return f.mul(sign, f.sel(f.eq(x, f.c(INFINITY)), result, finite));
}

/// zeta(s, q) for a constant s > 1 (polygamma's n + 1): the kernel's
/// direct sum until its terms stop mattering or q + i passes 9, then the
/// Euler-Maclaurin remainder.
static Value buildHurwitzZeta(OpBuilder &b, Location l, double s, Value q) {
  F64 f(b, l);
  // (2k)! / B_2k, the remainder's coefficients.
  const double A[] = {12.0,
                      -720.0,
                      30240.0,
                      -1209600.0,
                      47900160.0,
                      -1.8924375803183791606e9,
                      7.47242496e10,
                      -2.950130727918164224e12,
                      1.1646782814350067249e14,
                      -4.5979787224074726105e15,
                      1.8152105401943546773e17,
                      -7.1661652561756670113e18};
  const double eps = 1.11022302462515654042e-16;
  Value negS = f.c(-s);
  // The poles q = 0, -1, ...; s is an integer, so a negative q has a power.
  Value pole = f.andI(f.le(q, f.c(0)), f.eq(q, f.floor(q)));
  // (i, a, b, sum, done): while !done && (i < 9 || a <= 9).
  Type f64 = b.getF64Type(), i1 = b.getI1Type();
  // A pole starts done: the kernel returns before the sum (and -inf would
  // never pass 9).
  SmallVector<Value> init = {f.c(0), q, f.c(0), f.pow(q, negS), pole};
  SmallVector<Type> types = {f64, f64, f64, f64, i1};
  auto loop = scf::WhileOp::create(
      b, l, types, init,
      [&](OpBuilder &nb, Location nl, ValueRange v) {
        F64 g(nb, nl);
        Value more = g.orI(g.lt(v[0], g.c(9)), g.le(v[1], g.c(9)));
        scf::ConditionOp::create(nb, nl, g.andI(more, g.notI(v[4])), v);
      },
      [&](OpBuilder &nb, Location nl, ValueRange v) {
        F64 g(nb, nl);
        Value a = g.add(v[1], g.c(1));
        Value term = g.pow(a, g.c(-s));
        Value sum = g.add(v[3], term);
        Value done = g.lt(g.abs(g.div(term, sum)), g.c(eps));
        scf::YieldOp::create(
            nb, nl, ValueRange{g.add(v[0], g.c(1)), a, term, sum, done});
      });
  Value a = loop.getResult(1), term = loop.getResult(2),
        sum = loop.getResult(3), doneSum = loop.getResult(4);
  // The remainder: sum += b w / (s - 1) - b / 2, then up to 12 terms.
  Value w = a;
  Value tail = f.add(
      sum, f.sub(f.div(f.mul(term, w), f.c(s - 1)), f.mul(f.c(0.5), term)));
  Value fa = f.c(1), fb = term, k = f.c(0);
  Value done = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
  for (double Aj : A) {
    // Each step is skipped once a term has stopped mattering (the kernel's
    // break).
    Value na = f.mul(fa, f.add(f.c(s), k));
    Value nb = f.div(fb, w);
    Value t = f.div(f.mul(na, nb), f.c(Aj));
    Value nsum = f.add(tail, t);
    Value stop = f.lt(f.abs(f.div(t, nsum)), f.c(eps));
    Value k1 = f.add(k, f.c(1));
    Value na2 = f.mul(na, f.add(f.c(s), k1));
    Value nb2 = f.div(nb, w);
    Value k2 = f.add(k1, f.c(1));
    tail = f.sel(done, tail, nsum);
    fa = f.sel(done, fa, na2);
    fb = f.sel(done, fb, nb2);
    k = f.sel(done, k, k2);
    done = f.orI(done, stop);
  }
  Value r = f.sel(doneSum, sum, tail);
  return f.sel(pole, f.c(INFINITY), r);
}

Value buildPolygamma(OpBuilder &b, Location l, int64_t n, Value x) {
  if (n == 0)
    return buildDigamma(b, l, x);
  if (n == 1)
    return buildTrigamma(b, l, x);
  F64 f(b, l);
  double s = static_cast<double>(n) + 1;
  // (-1)^(n+1) n!, as the kernel computes it (exp of libm's lgamma).
  double scale =
      (std::fmod(double(n), 2.0) != 0 ? 1.0 : -1.0) * std::exp(std::lgamma(s));
  return f.mul(f.c(scale), buildHurwitzZeta(b, l, s, x));
}

Value buildErfinv(OpBuilder &b, Location l, Value y) {
  F64 f(b, l);
  Value ay = f.abs(y);
  // Giles' single-precision approximation as the start.
  Value w = f.neg(f.log(f.mul(f.sub(f.c(1), y), f.add(f.c(1), y))));
  Value central = f.poly(f.sub(w, f.c(2.5)),
                         {1.50140941, 0.246640727, -0.00417768164,
                          -0.00125372503, 0.00021858087, -4.39150654e-06,
                          -3.5233877e-06, 3.43273939e-07, 2.81022636e-08});
  Value tailP = f.poly(f.sub(f.sqrt(w), f.c(3)),
                       {2.83297682, 1.00167406, 0.00943887047, -0.0076224613,
                        0.00573950773, -0.00367342844, 0.00134934322,
                        0.000100950558, -0.000200214257});
  Value x = f.mul(f.sel(f.lt(w, f.c(5)), central, tailP), y);
  // Halley steps on erf(x) - y; near +-1 the residual is (1 - |y|) -
  // erfc(|x|), where 1 - |y| is exact.
  Value nearOne = f.gt(ay, f.c(0.5));
  Value positive = f.gt(y, f.c(0));
  const double twoOverSqrtPi = 1.12837916709551257390;
  auto out =
      f.repeat(8, {x, arith::ConstantOp::create(b, l, b.getBoolAttr(false))},
               [&](F64 &g, ValueRange v) {
                 Value x = v[0], done = v[1];
                 Value near = g.sub(g.sub(g.c(1), ay), g.erfc(g.abs(x)));
                 near = g.sel(positive, near, g.neg(near));
                 Value fx = g.sel(nearOne, near, g.sub(g.erf(x), y));
                 Value d = g.mul(g.c(twoOverSqrtPi), g.exp(g.neg(g.mul(x, x))));
                 Value flat = g.eq(d, g.c(0));
                 Value step = g.div(fx, g.add(d, g.mul(x, fx)));
                 Value skip = g.orI(done, flat);
                 Value nx = g.sel(skip, x, g.sub(x, step));
                 Value converged =
                     g.le(g.abs(step), g.mul(g.c(1e-17), g.abs(nx)));
                 return SmallVector<Value>{nx, g.orI(skip, converged)};
               });
  Value r = f.sel(f.eq(ay, f.c(1)), f.copysign(f.c(INFINITY), y), out[0]);
  // NaN outside [-1, 1] (and for NaN).
  return f.sel(f.le(ay, f.c(1)), r, f.c(NAN));
}

Value buildLgamma(OpBuilder &b, Location l, Value x) {
  F64 f(b, l);
  // fdlibm's constants (e_lgamma_r.c).
  const double tc = 1.46163214496836224576e+00;
  const double tf = -1.21486290535849611461e-01;
  const double tt = -3.63867699703950536541e-18;
  const double ymin = 1.461632144968362245;
  const double a[] = {7.72156649015328655494e-02, 3.22467033424113591611e-01,
                      6.73523010531292681824e-02, 2.05808084325167332806e-02,
                      7.38555086081402883957e-03, 2.89051383673415629091e-03,
                      1.19270763183362067845e-03, 5.10069792153511336608e-04,
                      2.20862790713908385557e-04, 1.08011567247583939954e-04,
                      2.52144565451257326939e-05, 4.48640949618915160150e-05};
  const double t[] = {4.83836122723810047042e-01, -1.47587722994593911752e-01,
                      6.46249402391333854778e-02, -3.27885410759859649565e-02,
                      1.79706750811820387126e-02, -1.03142241298341437450e-02,
                      6.10053870246291332635e-03, -3.68452016781138256760e-03,
                      2.25964780900612472250e-03, -1.40346469989232843813e-03,
                      8.81081882437654011382e-04, -5.38595305356740546715e-04,
                      3.15632070903625950361e-04, -3.12754168375120860518e-04,
                      3.35529192635519073543e-04};
  const double u[] = {-7.72156649015328655494e-02, 6.32827064025093366517e-01,
                      1.45492250137234768737e+00,  9.77717527963372745603e-01,
                      2.28963728064692451092e-01,  1.33810918536787660377e-02};
  const double v[] = {1.0,
                      2.45597793713041134822e+00,
                      2.12848976379893395361e+00,
                      7.69285150456672783825e-01,
                      1.04222645593369134254e-01,
                      3.21709242282423911810e-03};
  const double s[] = {-7.72156649015328655494e-02, 2.14982415960608852501e-01,
                      3.25778796408930981787e-01,  1.46350472652464452805e-01,
                      2.66422703033638609560e-02,  1.84028451407337715652e-03,
                      3.19475326584100867617e-05};
  const double r[] = {1.0,
                      1.39200533467621045958e+00,
                      7.21935547567138069525e-01,
                      1.71933865632803078993e-01,
                      1.86459191715652901344e-02,
                      7.77942496381893596434e-04,
                      7.32668430744625636189e-06};
  const double w[] = {4.18938533204672725052e-01,  8.33333333333329678849e-02,
                      -2.77777777728775536470e-03, 7.93650558643019558500e-04,
                      -5.95187557450339963135e-04, 8.36339918996282139126e-04,
                      -1.63092934096575273989e-03};
  const double tiny = 0x1p-70;

  Value ax = f.abs(x);
  Value one = f.c(1);

  // (0, 2): lgamma(x) = lgamma(x + 1) - log(x) below 0.9, around the zeros
  // at 1 and 2 and the minimum at ymin.
  Value low = f.le(ax, f.c(0.9));
  Value base = f.sel(low, f.neg(f.log(ax)), f.c(0));
  Value y0 = f.sel(low, f.sub(one, ax), f.sub(f.c(2), ax));
  Value y1 = f.sel(low, f.sub(ax, f.c(tc - 1)), f.sub(ax, f.c(tc)));
  Value y2 = f.sel(low, ax, f.sub(ax, one));
  Value r0, r1, r2;
  {
    Value z = f.mul(y0, y0);
    Value p1 = f.poly(z, {a[0], a[2], a[4], a[6], a[8], a[10]});
    Value p2 = f.mul(z, f.poly(z, {a[1], a[3], a[5], a[7], a[9], a[11]}));
    r0 = f.sub(f.add(f.mul(y0, p1), p2), f.mul(f.c(0.5), y0));
  }
  {
    Value z = f.mul(y1, y1);
    Value ww = f.mul(z, y1);
    Value p1 = f.poly(ww, {t[0], t[3], t[6], t[9], t[12]});
    Value p2 = f.poly(ww, {t[1], t[4], t[7], t[10], t[13]});
    Value p3 = f.poly(ww, {t[2], t[5], t[8], t[11], t[14]});
    Value p = f.sub(f.mul(z, p1),
                    f.sub(f.c(tt), f.mul(ww, f.add(p2, f.mul(y1, p3)))));
    r1 = f.add(f.c(tf), p);
  }
  {
    Value p1 = f.mul(y2, f.poly(y2, u));
    Value p2 = f.poly(y2, v);
    r2 = f.add(f.mul(f.c(-0.5), y2), f.div(p1, p2));
  }
  Value case0 =
      f.sel(low, f.ge(ax, f.c(ymin - 1 + 0.27)), f.ge(ax, f.c(ymin + 0.27)));
  Value case1 =
      f.sel(low, f.ge(ax, f.c(ymin - 1 - 0.27)), f.ge(ax, f.c(ymin - 0.27)));
  Value below2 = f.add(base, f.sel(case0, r0, f.sel(case1, r1, r2)));
  below2 = f.sel(f.orI(f.eq(ax, one), f.eq(ax, f.c(2))), f.c(0), below2);

  // [2, 8): the rational approximation on [2, 3) and the recurrence.
  Value whole = f.floor(ax);
  Value frac = f.sub(ax, whole);
  Value below8;
  {
    Value p = f.mul(frac, f.poly(frac, s));
    Value q = f.poly(frac, r);
    below8 = f.add(f.mul(f.c(0.5), frac), f.div(p, q));
    Value z = one;
    // (y + 6) (y + 5) ... (y + 2), the factors below `whole`, in fdlibm's
    // order.
    for (int k = 6; k >= 2; --k)
      z = f.sel(f.lt(f.c(k), whole), f.mul(z, f.add(frac, f.c(k))), z);
    below8 = f.add(below8, f.log(z));
  }

  // [8, 2^58): Stirling's series; beyond, x (log x - 1).
  Value logx = f.log(ax);
  Value stirling;
  {
    Value z = f.div(one, ax);
    Value y = f.mul(z, z);
    Value ww = f.add(f.c(w[0]),
                     f.mul(z, f.poly(y, {w[1], w[2], w[3], w[4], w[5], w[6]})));
    stirling = f.add(f.mul(f.sub(ax, f.c(0.5)), f.sub(logx, one)), ww);
  }
  Value huge = f.mul(ax, f.sub(logx, one));

  Value lg = f.sel(f.lt(ax, f.c(tiny)), f.neg(logx),
                   f.sel(f.lt(ax, f.c(2)), below2,
                         f.sel(f.lt(ax, f.c(8)), below8,
                               f.sel(f.lt(ax, f.c(0x1p58)), stirling, huge))));

  // Below 0: log(pi / |x sin(pi x)|) - lgamma(|x|), with sin(pi x) of the
  // distance to the nearest integer (exact), so 0 at the poles gives inf.
  Value dist = arith::MinimumFOp::create(b, l, frac, f.sub(one, frac));
  Value sinPi = f.sin(f.mul(f.c(kPi), dist));
  Value nadj = f.log(f.div(f.c(kPi), f.mul(sinPi, ax)));
  Value reflect = f.andI(f.lt(x, f.c(0)), f.ge(ax, f.c(tiny)));
  Value result = f.sel(reflect, f.sub(nadj, lg), lg);
  // lgamma(+-inf) = +inf.
  return f.sel(f.eq(ax, f.c(INFINITY)), ax, result);
}

} // namespace mlir::trace::trace_to_linalg
