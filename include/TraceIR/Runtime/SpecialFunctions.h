//===- SpecialFunctions.h - polygamma and erfinv, any device ---*- C++ -*-===//
//
// The special functions of the elementwise ops that neither libm nor CUDA's
// math library has (or has on one side only: CUDA has erfinv, glibc does
// not), as plain functions compiled for the host and, under nvcc, for the
// device, so both give the same values. They compute in double; the
// kernels round to the result's dtype. NaN propagates through each.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_SPECIALFUNCTIONS_H
#define TRACEIR_RUNTIME_SPECIALFUNCTIONS_H

#include <cmath>

#ifndef TRACEIR_HD // as Elementwise.h, which includes this header
#ifdef __CUDACC__
#define TRACEIR_HD __host__ __device__
#else
#define TRACEIR_HD
#endif
#endif

namespace traceir {

constexpr double kSfPi = 3.14159265358979323846;

/// The digamma function psi(x) = d/dx ln Gamma(x): the reflection formula
/// below 0, the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the
/// asymptotic series. As PyTorch: psi(+-0) = -+inf, NaN at the poles (the
/// negative integers and -inf).
TRACEIR_HD inline double sfDigamma(double x) {
  if (x == 0)
    return copysign(INFINITY, -x);
  double result = 0;
  if (x < 0) {
    if (x == trunc(x))
      return NAN;
    // psi(1 - x) - psi(x) = pi / tan(pi x), with tan of the fractional
    // part, which is exact, rather than of pi x.
    double whole;
    double frac = modf(x, &whole);
    result = -kSfPi / tan(kSfPi * frac);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == INFINITY)
    return x;
  // ln x - 1/(2x) - sum B_2k / (2k x^2k), to the 1/x^14 term.
  double y = 1 / (x * x);
  double tail =
      y * (1.0 / 12 -
           y * (1.0 / 120 -
                y * (1.0 / 252 -
                     y * (1.0 / 240 -
                          y * (1.0 / 132 - y * (691.0 / 32760 - y / 12))))));
  return result + log(x) - 0.5 / x - tail;
}

/// The trigamma function psi'(x): reflection below 1/2
/// (psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)), the recurrence up to 10,
/// then the asymptotic series. At the poles sin(pi x) is not exactly 0 and
/// the result is a very large number, as in PyTorch.
TRACEIR_HD inline double sfTrigamma(double x) {
  double sign = 1, result = 0;
  if (x < 0.5) {
    sign = -1;
    double s = sin(kSfPi * x);
    result -= kSfPi * kSfPi / (s * s);
    x = 1 - x;
  }
  while (x < 10) {
    result += 1 / (x * x);
    x += 1;
  }
  if (x == INFINITY)
    return sign * result;
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1), to the 1/x^13 term.
  double y = 1 / (x * x);
  result +=
      (1 + 1 / (2 * x) +
       y * (1.0 / 6 -
            y * (1.0 / 30 -
                 y * (1.0 / 42 -
                      y * (1.0 / 30 - y * (5.0 / 66 - y * 691.0 / 2730)))))) /
      x;
  return sign * result;
}

/// The Hurwitz zeta function zeta(s, q) = sum_k (k + q)^-s: the sum's first
/// terms, then the Euler-Maclaurin remainder (the method of Cephes' zeta,
/// which PyTorch uses too). inf at s == 1 and at the poles q = 0, -1, ...;
/// NaN for s < 1, and for q < 0 with s not an integer.
TRACEIR_HD inline double sfHurwitzZeta(double s, double q) {
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
  if (s == 1)
    return INFINITY;
  if (!(s > 1))
    return NAN;
  if (q <= 0) {
    if (q == floor(q))
      return INFINITY;
    if (s != floor(s))
      return NAN; // a negative number to a fractional power
  }
  double sum = pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = pow(a, -s);
    sum += b;
    if (fabs(b / sum) < eps)
      return sum;
  }
  double w = a, k = 0;
  sum += b * w / (s - 1) - 0.5 * b;
  a = 1;
  for (int j = 0; j < 12; ++j) {
    a *= s + k;
    b /= w;
    double t = a * b / A[j];
    sum += t;
    if (fabs(t / sum) < eps)
      break;
    k += 1;
    a *= s + k;
    b /= w;
    k += 1;
  }
  return sum;
}

/// polygamma(n, x), the n-th derivative of digamma (n >= 0; the kernel
/// refuses a negative n): (-1)^(n+1) n! zeta(n + 1, x) for n >= 2.
TRACEIR_HD inline double sfPolygamma(double n, double x) {
  if (n == 0)
    return sfDigamma(x);
  if (n == 1)
    return sfTrigamma(x);
  double sign = fmod(n, 2.0) != 0 ? 1.0 : -1.0;
  return sign * exp(lgamma(n + 1)) * sfHurwitzZeta(n + 1, x);
}

/// The inverse of erf on [-1, 1] (NaN outside, +-inf at +-1): Giles'
/// single-precision approximation as a start, then Halley steps on
/// erf(x) - y, which converge cubically. Near +-1 the residual is taken
/// as (1 - |y|) - erfc(|x|), where 1 - |y| is exact and erf(x) would have
/// rounded to 1.
TRACEIR_HD inline double sfErfinv(double y) {
  if (!(fabs(y) <= 1))
    return NAN;
  if (fabs(y) == 1)
    return copysign(INFINITY, y);
  double w = -log((1 - y) * (1 + y)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  const double twoOverSqrtPi = 1.12837916709551257390;
  for (int i = 0; i < 8; ++i) {
    double f;
    if (fabs(y) > 0.5) {
      f = (1 - fabs(y)) - erfc(fabs(x));
      f = y > 0 ? f : -f;
    } else {
      f = erf(x) - y;
    }
    double d = twoOverSqrtPi * exp(-x * x);
    if (d == 0)
      break;
    // Halley: f'' / f' = -2x for erf.
    double step = f / (d + x * f);
    x -= step;
    if (fabs(step) <= 1e-17 * fabs(x))
      break;
  }
  return x;
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_SPECIALFUNCTIONS_H
