//===- Elementwise.h - One description of elementwise ops -------*- C++ -*-===//
//
// The semantics of every elementwise op, as plain functions compiled for the
// host and (under nvcc) for CUDA devices, and the launch description both
// backends execute. The CPU and CUDA kernels share this header and the
// host-side preparation (broadcast strides, scalars, dtypes), so the CPU
// tests cover everything but the device loop. No LLVM or MLIR here: nvcc
// compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_ELEMENTWISE_H
#define TRACEIR_RUNTIME_ELEMENTWISE_H

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
// The C library names with float overloads (std::exp(float), ...) for
// ewCompute<float>: libstdc++'s <math.h> brings them into the global
// namespace.
#include <math.h>

#ifdef __CUDACC__
#define TRACEIR_HD __host__ __device__
#else
#define TRACEIR_HD
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TRACEIR_ALWAYS_INLINE __attribute__((always_inline))
#else
#define TRACEIR_ALWAYS_INLINE
#endif

#include "TraceIR/Runtime/SpecialFunctions.h"

namespace traceir {

enum class EwOp : int32_t {
  Add,
  Sub,
  Mul,
  Div,
  DivTrunc,
  DivFloor,
  Pow,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Where,
  Neg,
  Abs,
  Relu,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Sigmoid,
  Gelu,
  GeluTanh,
  Copy, ///< out = in[1] (copy_, fill_) or in[0] (clone, strided copies)
  Zero,
  /// threshold_backward: in[0] (the gradient) where in[1] > in[2], else 0
  ThresholdBackward,
  One,      ///< ones_like
  Hardtanh, ///< clamp to [alpha, beta] (NaN stays NaN)
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Expm1,
  Log1p,
  Log2,
  Log10,
  Reciprocal,
  Sign,
  Ceil,
  Floor,
  Round, ///< half to even, as torch.round
  Trunc,
  IsNan,
  IsInf,
  LogicalNot,
  BitwiseNot,
  LeakyRelu, ///< x, or x * alpha where x <= 0
  Elu,       ///< x * beta, or expm1(x * gamma) * alpha where x <= 0
  Maximum,   ///< NaN propagates from either side
  Minimum,
  /// min(max(x, in[1]), in[2]); NaN in any propagates. A missing bound is
  /// an infinite number (ElementwiseKernels.h's clamp).
  Clamp,
  Atan2,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  /// ATen's lshift_kernel/rshift_kernel in the result's dtype: a shift by a
  /// negative amount or by the width or more gives 0 (left) or the sign
  /// (right: 0 or -1); left shifts the bits as unsigned.
  LeftShift,
  RightShift,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  Fmod,        ///< C's fmod: the sign of the dividend
  Remainder,   ///< Python's %: the sign of the divisor
  Hardsigmoid, ///< min(max(x + 3, 0), 6) / 6 (NaN stays NaN)
  Hardswish,   ///< x * hardsigmoid(x)
  Silu,        ///< x / (1 + exp(-x))
  Exp2,
  Erfc,
  Erfinv,
  Lgamma,
  Digamma,
  Polygamma, ///< polygamma(in[0] = n, in[1]); SpecialFunctions.h
  Fmax,      ///< NaN-ignoring: the other operand where one is NaN
  Fmin,
  Copysign,
  Hypot,
  Signbit,
  /// round.decimals as ATen's round_decimals_kernel: nearbyint(x * alpha) /
  /// alpha, or nearbyint(x / alpha) * alpha where beta != 0 (decimals < 0),
  /// alpha = 10^|decimals|; in float (the opmath of f32, f16 and bf16)
  /// where gamma != 0, so each step rounds as PyTorch's does.
  RoundDecimals,
};

constexpr int kEwMaxRank = 8;
constexpr int kEwMaxOperands = 3;

/// Element types by DType's numbering (Tensor.h).
enum EwDType : int32_t { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool };

struct EwOperand {
  const char *data = nullptr; ///< null for a Python number
  int32_t dtype = F64;
  int64_t strides[kEwMaxRank] = {}; ///< broadcast to the output rank
  double number = 0;
  int64_t integer = 0;
};

/// One elementwise launch: out[i] = op(in[0][i], in[1][i], in[2][i]).
struct EwLaunch {
  EwOp op = EwOp::Copy;
  int32_t rank = 0;
  int64_t shape[kEwMaxRank] = {};
  int64_t numel = 0;
  char *out = nullptr;
  int32_t outDtype = F32;
  int64_t outStrides[kEwMaxRank] = {};
  int32_t numOperands = 0;
  EwOperand in[kEwMaxOperands];
  /// add/sub's alpha; hardtanh's min_val; leaky_relu's negative_slope;
  /// elu's alpha * scale
  double alpha = 1;
  double beta = 0;  ///< hardtanh's max_val; elu's scale
  double gamma = 1; ///< elu's input_scale
  /// Compute in double (some operand or the result is floating) or else in
  /// int64 (exact integer and bool arithmetic).
  bool floating = true;
  int32_t operandIndex = 0; ///< Copy: which operand to copy
};

//===--- Element loads and stores (host and device) -----------------------===//

TRACEIR_HD inline float ewHalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

TRACEIR_HD inline uint16_t ewFloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff,
           man = x & 0x7fffff;
  if (exp == 0xff)
    return sign | 0x7c00 | (man ? 0x200 : 0);
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10)
      return sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (e << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half; // round to nearest even; a carry into the exponent is right
  return half;
}

TRACEIR_HD inline float ewBf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

TRACEIR_HD inline uint16_t ewFloatToBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (f != f)
    return 0x7fc0;
  x += 0x7fff + ((x >> 16) & 1); // round to nearest even
  return x >> 16;
}

template <typename T> TRACEIR_HD inline T ewRead(const char *p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> TRACEIR_HD inline void ewWrite(char *p, T v) {
  memcpy(p, &v, sizeof(T));
}

TRACEIR_HD inline int ewSize(int32_t dtype) {
  switch (dtype) {
  case F64:
  case I64:
    return 8;
  case F32:
  case I32:
    return 4;
  case F16:
  case BF16:
  case I16:
    return 2;
  default:
    return 1;
  }
}

TRACEIR_HD inline bool ewIsFloating(int32_t dtype) {
  return dtype == F32 || dtype == F64 || dtype == F16 || dtype == BF16;
}

TRACEIR_HD inline double ewLoadDouble(const char *p, int32_t dtype) {
  switch (dtype) {
  case F32:
    return ewRead<float>(p);
  case F64:
    return ewRead<double>(p);
  case F16:
    return ewHalfToFloat(ewRead<uint16_t>(p));
  case BF16:
    return ewBf16ToFloat(ewRead<uint16_t>(p));
  case I64:
    return static_cast<double>(ewRead<int64_t>(p));
  case I32:
    return ewRead<int32_t>(p);
  case I16:
    return ewRead<int16_t>(p);
  case I8:
    return ewRead<int8_t>(p);
  case U8:
    return ewRead<uint8_t>(p);
  default:
    return ewRead<uint8_t>(p) != 0;
  }
}

TRACEIR_HD inline int64_t ewLoadInt(const char *p, int32_t dtype) {
  switch (dtype) {
  case I64:
    return ewRead<int64_t>(p);
  case I32:
    return ewRead<int32_t>(p);
  case I16:
    return ewRead<int16_t>(p);
  case I8:
    return ewRead<int8_t>(p);
  case U8:
    return ewRead<uint8_t>(p);
  case Bool:
    return ewRead<uint8_t>(p) != 0;
  default:
    return static_cast<int64_t>(ewLoadDouble(p, dtype));
  }
}

TRACEIR_HD inline void ewStoreInt(char *p, int32_t dtype, int64_t v);

TRACEIR_HD inline void ewStoreDouble(char *p, int32_t dtype, double v) {
  switch (dtype) {
  case F32:
    return ewWrite<float>(p, static_cast<float>(v));
  case F64:
    return ewWrite<double>(p, v);
  case F16:
    return ewWrite<uint16_t>(p, ewFloatToHalf(static_cast<float>(v)));
  case BF16:
    return ewWrite<uint16_t>(p, ewFloatToBf16(static_cast<float>(v)));
  case Bool:
    return ewWrite<uint8_t>(p, v != 0);
  default:
    return ewStoreInt(p, dtype, static_cast<int64_t>(v));
  }
}

TRACEIR_HD inline void ewStoreInt(char *p, int32_t dtype, int64_t v) {
  switch (dtype) {
  case I64:
    return ewWrite<int64_t>(p, v);
  case I32:
    return ewWrite<int32_t>(p, static_cast<int32_t>(v));
  case I16:
    return ewWrite<int16_t>(p, static_cast<int16_t>(v));
  case I8:
    return ewWrite<int8_t>(p, static_cast<int8_t>(v));
  case U8:
    return ewWrite<uint8_t>(p, static_cast<uint8_t>(v));
  case Bool:
    return ewWrite<uint8_t>(p, v != 0);
  default:
    return ewStoreDouble(p, dtype, static_cast<double>(v));
  }
}

//===--- The ops ----------------------------------------------------------===//

/// e^x in float as straight-line arithmetic the loops inline and vectorize
/// (the optimized tier's f32, f16 and bf16 and CUDA's typed loops), where
/// libm's expf is a call per vector: e^x = 2^n e^r with n = round(x log2 e)
/// and r = x - n ln 2 (ln 2 in two parts, so r is exact), e^r by Cephes'
/// expf polynomial, 2^n put in the exponent bits in two halves so that a
/// subnormal result is rounded once. Within 1.3 ulp of the exact result
/// over every 97th float (ElementwisePlanTest); inf, -inf and NaN as
/// expf's.
TRACEIR_HD inline float ewExpFloat(float x) {
  // Clamped so that n stays in the exponent's range: beyond them the result
  // is inf or 0 anyway. The compares pass NaN through.
  float c = x < -104.0f ? -104.0f : x;
  c = c > 89.0f ? 89.0f : c;
  // Adding 1.5 * 2^23 rounds to an integer, left in the low mantissa bits.
  const float kShift = 12582912.0f;
  float t = c * 1.44269504088896341f + kShift;
  float n = t - kShift;
  int32_t tb, sb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&sb, &kShift, sizeof sb);
  int32_t ni = tb - sb;
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + (r + 1.0f);
  // 2^n as 2^h * 2^(n - h): each a normal float for n in [-150, 128].
  int32_t h = ni >> 1;
  int32_t b1 = (h + 127) << 23, b2 = (ni - h + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  return p * s1 * s2;
}

/// tanh in float as one rational function the loops inline and vectorize
/// (the optimized tier's float ops, CUDA's typed loops): Eigen's
/// ptanh_float, an odd degree-13 polynomial over an even degree-6 one on
/// |x| clamped at 7.9 (where tanh rounds to 1), the sign put back last so
/// that -0 and NaN come out as tanh's. Its error, largest where tanh nears
/// 1, is 6 ulp (4e-7) at most over every 97th float (ElementwisePlanTest),
/// inside PyTorch's float32 tolerance (1.3e-6); libmvec's tanhf took 1.7x
/// its time.
TRACEIR_HD inline float ewTanhFloat(float x) {
  float a = fabsf(x);
  // The compare passes NaN through.
  float c = a > 7.90531110763549805f ? 7.90531110763549805f : a;
  float z = c * c;
  float p = -2.76076847742355e-16f;
  p = p * z + 2.00018790482477e-13f;
  p = p * z + -8.60467152213735e-11f;
  p = p * z + 5.12229709037114e-08f;
  p = p * z + 1.48572235717979e-05f;
  p = p * z + 6.37261928875436e-04f;
  p = p * z + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * z + 1.18534705686654e-04f;
  q = q * z + 2.26843463243900e-03f;
  q = q * z + 4.89352518554385e-03f;
  float r = c * p / q;
  // Below 4e-4 tanh(x) rounds to x.
  r = a < 0.0004f ? a : r;
  return copysignf(r, x);
}

/// exp and tanh by compute type: in float the inlined functions above, in
/// double libm's (which the optimized loops vectorize through libmvec).
TRACEIR_HD inline float ewExp(float x) { return ewExpFloat(x); }
TRACEIR_HD inline double ewExp(double x) { return exp(x); }
TRACEIR_HD inline float ewTanh(float x) { return ewTanhFloat(x); }
TRACEIR_HD inline double ewTanh(double x) { return tanh(x); }

/// The exp and tanh ewCompute calls, as a type: a CPU variant's loops pass
/// their own (CPU/Optimized/Loops.h: AVX-512's float exp through its
/// vector function), an instantiation of its own, so that no two
/// translation units define one inline function differently.
struct EwMath {
  template <typename C> TRACEIR_HD static C exp(C x) { return ewExp(x); }
  template <typename C> TRACEIR_HD static C tanh(C x) { return ewTanh(x); }
};

/// gelu(x) = x / 2 (1 + erf(x / sqrt 2)) in float, erf as the rational
/// function of Eigen's and XLA's float erf, erf(z) = z P(z^2) / Q(z^2) on
/// [0, 4] (beyond, erf rounds to 1 in float) and odd. It is arithmetic a
/// vectorized loop inlines, where libmvec's erff is a call: 512k floats
/// take 240 us against 320 with erff (AVX2). Its erf is within 3.5e-7
/// (about 6 float ulps at 1, where erff is within 1): the erf op keeps
/// libm's, and only gelu, whose PyTorch kernels also approximate erf
/// their own way, takes this one; its result is within 1e-6 of gelu's.
/// The clamps below drop a NaN, which the factor x then propagates.
TRACEIR_HD inline float ewGeluFloat(float x) {
  float z = x * 0.70710678118654752440f;
  // |z| and copysign rather than clamping both sides: GCC then vectorizes
  // one compare-and-blend per clamp.
  float az = fabsf(z);
  az = az < 4.0f ? az : 4.0f;
  float z2 = az * az;
  float p = -2.72614225801306e-10f;
  p = p * z2 + 2.77068142495902e-08f;
  p = p * z2 + -2.10102402082508e-06f;
  p = p * z2 + -5.69250639462346e-05f;
  p = p * z2 + -7.34990630326855e-04f;
  p = p * z2 + -2.95459980854025e-03f;
  p = p * z2 + -1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * z2 + -2.13374055278905e-04f;
  q = q * z2 + -1.68282697438203e-03f;
  q = q * z2 + -7.37332916720468e-03f;
  q = q * z2 + -1.42647390514189e-02f;
  float e = az * p / q;
  // Rounding may take it a little past 1, which 1 + erf would turn into a
  // result of the wrong sign.
  e = e < 1.0f ? e : 1.0f;
  return 0.5f * x * (1.0f + copysignf(e, z));
}

/// Copy's value: operand L.operandIndex, by selects rather than
/// v[L.operandIndex], as an index known only at run time puts the operands
/// in a GPU thread's local memory rather than its registers.
template <typename V>
TRACEIR_HD TRACEIR_ALWAYS_INLINE inline V ewCopied(const EwLaunch &L,
                                                   const V *v) {
  return L.operandIndex == 0 ? v[0] : L.operandIndex == 1 ? v[1] : v[2];
}

/// The floating semantics of every op in compute type C: double for the
/// portable kernels (which then round once to the result's dtype), float
/// for the optimized tier's f32, f16 and bf16 (PyTorch's opmath type).
/// `op` is a parameter, not L.op, so that a loop instantiated for one op
/// folds the switch away (the function is always inlined). M supplies exp
/// and tanh (EwMath).
template <typename C, typename M = EwMath>
TRACEIR_HD TRACEIR_ALWAYS_INLINE inline C ewCompute(EwOp op, const EwLaunch &L,
                                                    const C *v) {
  switch (op) {
  case EwOp::Add:
    return v[0] + C(L.alpha) * v[1];
  case EwOp::Sub:
    return v[0] - C(L.alpha) * v[1];
  case EwOp::Mul:
    return v[0] * v[1];
  case EwOp::Div:
    return v[0] / v[1];
  case EwOp::DivTrunc:
    return trunc(v[0] / v[1]);
  case EwOp::DivFloor:
    return floor(v[0] / v[1]);
  case EwOp::Pow:
    return pow(v[0], v[1]);
  case EwOp::Eq:
    return v[0] == v[1];
  case EwOp::Ne:
    return v[0] != v[1];
  case EwOp::Lt:
    return v[0] < v[1];
  case EwOp::Le:
    return v[0] <= v[1];
  case EwOp::Gt:
    return v[0] > v[1];
  case EwOp::Ge:
    return v[0] >= v[1];
  case EwOp::Where:
    return v[0] != 0 ? v[1] : v[2];
  case EwOp::Neg:
    return -v[0];
  case EwOp::Abs:
    return fabs(v[0]);
  case EwOp::Relu:
    // NaN and -0.0 pass through, as PyTorch's; one compare and select,
    // which vectorizes to a single max (the NaN test beside it did not).
    return v[0] < C(0) ? C(0) : v[0];
  case EwOp::Exp:
    return M::exp(v[0]);
  case EwOp::Log:
    return log(v[0]);
  case EwOp::Sqrt:
    return sqrt(v[0]);
  case EwOp::Rsqrt:
    return C(1) / sqrt(v[0]);
  case EwOp::Tanh:
    return M::tanh(v[0]);
  case EwOp::Sigmoid:
    return C(1) / (C(1) + M::exp(-v[0]));
  case EwOp::Gelu:
    // In float (the optimized tier's f32, f16, bf16), erf as a rational
    // function the loop inlines; in double, libm's.
    if constexpr (std::is_same_v<C, float>)
      return ewGeluFloat(v[0]);
    else
      return C(0.5) * v[0] * (C(1) + erf(v[0] * C(0.70710678118654752440)));
  case EwOp::GeluTanh: {
    const C k = C(0.79788456080286535588); // sqrt(2 / pi)
    return C(0.5) * v[0] *
           (C(1) + M::tanh(k * (v[0] + C(0.044715) * v[0] * v[0] * v[0])));
  }
  case EwOp::Copy:
    return ewCopied(L, v);
  case EwOp::Zero:
    return C(0);
  case EwOp::ThresholdBackward:
    return v[1] <= v[2] ? C(0) : v[0]; // a NaN input passes the gradient
  case EwOp::One:
    return C(1);
  case EwOp::Hardtanh: {
    // The bounds read before the comparisons: a loop can then select
    // instead of branching (and vectorize).
    C lo = C(L.alpha), hi = C(L.beta);
    return v[0] < lo ? lo : v[0] > hi ? hi : v[0];
  }
  case EwOp::Sin:
    return sin(v[0]);
  case EwOp::Cos:
    return cos(v[0]);
  case EwOp::Tan:
    return tan(v[0]);
  case EwOp::Asin:
    return asin(v[0]);
  case EwOp::Acos:
    return acos(v[0]);
  case EwOp::Atan:
    return atan(v[0]);
  case EwOp::Sinh:
    return sinh(v[0]);
  case EwOp::Cosh:
    return cosh(v[0]);
  case EwOp::Asinh:
    return asinh(v[0]);
  case EwOp::Acosh:
    return acosh(v[0]);
  case EwOp::Atanh:
    return atanh(v[0]);
  case EwOp::Erf:
    return erf(v[0]);
  case EwOp::Expm1:
    return expm1(v[0]);
  case EwOp::Log1p:
    return log1p(v[0]);
  case EwOp::Log2:
    return log2(v[0]);
  case EwOp::Log10:
    return log10(v[0]);
  case EwOp::Reciprocal:
    return C(1) / v[0];
  case EwOp::Sign:
    // As PyTorch: NaN and -0.0 give +0.0.
    return (v[0] > 0) - (v[0] < 0);
  case EwOp::Ceil:
    return ceil(v[0]);
  case EwOp::Floor:
    return floor(v[0]);
  case EwOp::Round:
    return rint(v[0]); // the default rounding mode: to nearest, ties to even
  case EwOp::Trunc:
    return trunc(v[0]);
  case EwOp::IsNan:
    return v[0] != v[0];
  case EwOp::IsInf:
    return fabs(v[0]) > DBL_MAX;
  case EwOp::LogicalNot:
    return v[0] == 0; // NaN is true, so its not is false
  case EwOp::BitwiseNot:
    // Inference refuses floats; this is ~x for the integer a double holds.
    return -v[0] - 1;
  case EwOp::LeakyRelu:
  {
    C slope = C(L.alpha), neg = v[0] * slope;
    return v[0] > 0 ? v[0] : neg; // NaN stays NaN
  }
  case EwOp::Elu:
    return v[0] > 0 ? v[0] * C(L.beta) : expm1(v[0] * C(L.gamma)) * C(L.alpha);
  case EwOp::Maximum:
    return v[0] != v[0] || v[1] != v[1] ? v[0] + v[1]
           : v[0] > v[1]                ? v[0]
                                        : v[1];
  case EwOp::Minimum:
    return v[0] != v[0] || v[1] != v[1] ? v[0] + v[1]
           : v[0] < v[1]                ? v[0]
                                        : v[1];
  case EwOp::Clamp:
    if (v[0] != v[0] || v[1] != v[1] || v[2] != v[2])
      return v[0] + v[1] + v[2];
    return v[0] < v[1] ? (v[1] > v[2] ? v[2] : v[1])
                       : (v[0] > v[2] ? v[2] : v[0]);
  case EwOp::Atan2:
    return atan2(v[0], v[1]);
  case EwOp::LogicalAnd:
    return v[0] != 0 && v[1] != 0; // NaN is true
  case EwOp::LogicalOr:
    return v[0] != 0 || v[1] != 0;
  case EwOp::LogicalXor:
    return (v[0] != 0) != (v[1] != 0);
  case EwOp::Fmod:
    return fmod(v[0], v[1]);
  case EwOp::Remainder: {
    // As ATen's CPU kernel: fmod, moved into the divisor's sign.
    C m = fmod(v[0], v[1]);
    return m != 0 && ((v[1] < 0) != (m < 0)) ? m + v[1] : m;
  }
  case EwOp::Hardsigmoid:
  case EwOp::Hardswish: {
    // ATen's comparisons, in its order: NaN falls through both.
    C r = v[0] + C(3);
    r = r < 0 ? C(0) : r;
    r = 6 < r ? C(6) : r;
    return op == EwOp::Hardswish ? v[0] * r / C(6) : r / C(6);
  }
  case EwOp::Silu:
    return v[0] / (C(1) + M::exp(-v[0]));
  case EwOp::Exp2:
    return exp2(v[0]);
  case EwOp::Erfc:
    return erfc(v[0]);
  case EwOp::Erfinv:
    return sfErfinv(v[0]);
  case EwOp::Lgamma:
    return lgamma(v[0]);
  case EwOp::Digamma:
    return sfDigamma(v[0]);
  case EwOp::Polygamma:
    return sfPolygamma(v[0], v[1]);
  case EwOp::Fmax:
    return fmax(v[0], v[1]);
  case EwOp::Fmin:
    return fmin(v[0], v[1]);
  case EwOp::Copysign:
    return copysign(v[0], v[1]);
  case EwOp::Hypot:
    return hypot(v[0], v[1]);
  case EwOp::Signbit:
    return copysign(C(1), v[0]) < 0 ? C(1) : C(0); // -0.0 and -NaN too
  case EwOp::RoundDecimals: {
    // In double, a float times or over a float rounded once to float is
    // float arithmetic (the exact product fits; a quotient rounded twice
    // through 53 bits is rounded once).
    bool inFloat = L.gamma != 0;
    double t = L.beta != 0 ? v[0] / L.alpha : v[0] * L.alpha;
    if (inFloat)
      t = static_cast<float>(t);
    t = rint(t);
    double r = L.beta != 0 ? t * L.alpha : t / L.alpha;
    return C(inFloat ? static_cast<double>(static_cast<float>(r)) : r);
  }
  case EwOp::BitwiseAnd: // inference refuses floats
  case EwOp::BitwiseOr:
  case EwOp::BitwiseXor:
  case EwOp::LeftShift:
  case EwOp::RightShift:
    break;
  }
  return C(0);
}

TRACEIR_HD inline double ewApply(const EwLaunch &L, const double *v) {
  return ewCompute<double>(L.op, L, v);
}

/// `a` shifted by `b` as ATen shifts in `dtype` (an integer one): both are
/// first that dtype's values (a scalar operand converts to it, wrapping, as
/// ATen's does), then shifted in its width.
TRACEIR_HD inline int64_t ewShift(bool left, int32_t dtype, int64_t a,
                                  int64_t b) {
  alignas(8) char buf[8];
  ewStoreInt(buf, dtype, a);
  a = ewLoadInt(buf, dtype);
  ewStoreInt(buf, dtype, b);
  b = ewLoadInt(buf, dtype);
  bool isSigned = dtype != U8;
  int64_t width = 8 * ewSize(dtype);
  if (left) // the store truncates the shifted bits to the width
    return b < 0 || b >= width
               ? 0
               : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
  // A u8's value is nonnegative: >> of it brings in zeros, as unsigned.
  int64_t maxShift = width - (isSigned ? 1 : 0);
  if (b < 0 || b >= maxShift)
    return isSigned && a < 0 ? -1 : 0;
  return a >> b;
}

/// Integer semantics; `divByZero` is set on an integer division by zero.
TRACEIR_HD inline int64_t ewApplyInt(const EwLaunch &L, const int64_t *v,
                                     bool &divByZero) {
  switch (L.op) {
  case EwOp::Add:
    return v[0] + static_cast<int64_t>(L.alpha) * v[1];
  case EwOp::Sub:
    return v[0] - static_cast<int64_t>(L.alpha) * v[1];
  case EwOp::Mul:
    return v[0] * v[1];
  case EwOp::DivTrunc:
  case EwOp::DivFloor:
  case EwOp::Div: {
    if (v[1] == 0) {
      divByZero = true;
      return 0;
    }
    int64_t q = v[0] / v[1];
    if (L.op == EwOp::DivFloor && v[0] % v[1] != 0 &&
        ((v[0] < 0) != (v[1] < 0)))
      --q;
    return q;
  }
  case EwOp::Pow: {
    int64_t r = 1;
    for (int64_t e = v[1]; e > 0; --e)
      r *= v[0];
    if (v[1] < 0)
      return v[0] == 1 ? 1 : v[0] == -1 ? ((-v[1]) % 2 ? -1 : 1) : 0;
    return r;
  }
  case EwOp::Eq:
    return v[0] == v[1];
  case EwOp::Ne:
    return v[0] != v[1];
  case EwOp::Lt:
    return v[0] < v[1];
  case EwOp::Le:
    return v[0] <= v[1];
  case EwOp::Gt:
    return v[0] > v[1];
  case EwOp::Ge:
    return v[0] >= v[1];
  case EwOp::Where:
    return v[0] != 0 ? v[1] : v[2];
  case EwOp::Neg:
    return -v[0];
  case EwOp::Abs:
    return v[0] < 0 ? -v[0] : v[0];
  case EwOp::Relu:
    return v[0] > 0 ? v[0] : 0;
  case EwOp::Copy:
    return ewCopied(L, v);
  case EwOp::Zero:
    return 0;
  case EwOp::ThresholdBackward:
    return v[1] <= v[2] ? 0 : v[0];
  case EwOp::One:
    return 1;
  case EwOp::Sign:
    return (v[0] > 0) - (v[0] < 0);
  case EwOp::Ceil:
  case EwOp::Floor:
  case EwOp::Round:
  case EwOp::Trunc:
    return v[0]; // an integer is its own rounding (exact beyond 2^53)
  case EwOp::IsNan:
  case EwOp::IsInf:
    return 0;
  case EwOp::LogicalNot:
    return v[0] == 0;
  case EwOp::BitwiseNot:
    // A bool's ~ is its not: ~1 would store as true.
    return L.outDtype == Bool ? !v[0] : ~v[0];
  case EwOp::Maximum:
  case EwOp::Fmax: // integers have no NaN to ignore
    return v[0] > v[1] ? v[0] : v[1];
  case EwOp::Minimum:
  case EwOp::Fmin:
    return v[0] < v[1] ? v[0] : v[1];
  case EwOp::Signbit:
    return v[0] < 0;
  case EwOp::Clamp:
    return v[0] < v[1] ? (v[1] > v[2] ? v[2] : v[1])
                       : (v[0] > v[2] ? v[2] : v[0]);
  case EwOp::BitwiseAnd:
    return v[0] & v[1];
  case EwOp::BitwiseOr:
    return v[0] | v[1];
  case EwOp::BitwiseXor:
    return v[0] ^ v[1];
  case EwOp::LeftShift:
  case EwOp::RightShift:
    return ewShift(L.op == EwOp::LeftShift, L.outDtype, v[0], v[1]);
  case EwOp::LogicalAnd:
    return v[0] != 0 && v[1] != 0;
  case EwOp::LogicalOr:
    return v[0] != 0 || v[1] != 0;
  case EwOp::LogicalXor:
    return (v[0] != 0) != (v[1] != 0);
  case EwOp::Fmod:
  case EwOp::Remainder: {
    if (v[1] == 0) {
      divByZero = true;
      return 0;
    }
    // INT64_MIN % -1 overflows in C; its remainder is 0.
    int64_t m = v[1] == -1 ? 0 : v[0] % v[1];
    if (L.op == EwOp::Remainder && m != 0 && ((v[1] < 0) != (m < 0)))
      m += v[1];
    return m;
  }
  default: { // float-only functions of an integer: through double
    double d[kEwMaxOperands] = {double(v[0]), double(v[1]), double(v[2])};
    return static_cast<int64_t>(ewApply(L, d));
  }
  }
}

/// Computes element `k` (linear index in the output's shape).
TRACEIR_HD inline void ewElement(const EwLaunch &L, int64_t k,
                                 bool &divByZero) {
  int64_t idx[kEwMaxRank];
  for (int d = L.rank - 1; d >= 0; --d) {
    idx[d] = L.shape[d] ? k % L.shape[d] : 0;
    k = L.shape[d] ? k / L.shape[d] : 0;
  }
  int64_t outOff = 0;
  for (int d = 0; d < L.rank; ++d)
    outOff += idx[d] * L.outStrides[d];
  char *out = L.out + outOff * ewSize(L.outDtype);
  if (L.floating) {
    double v[kEwMaxOperands] = {0, 0, 0};
    for (int j = 0; j < L.numOperands; ++j) {
      const EwOperand &op = L.in[j];
      if (!op.data) {
        v[j] = op.number;
        continue;
      }
      int64_t off = 0;
      for (int d = 0; d < L.rank; ++d)
        off += idx[d] * op.strides[d];
      v[j] = ewLoadDouble(op.data + off * ewSize(op.dtype), op.dtype);
    }
    ewStoreDouble(out, L.outDtype, ewApply(L, v));
  } else {
    int64_t v[kEwMaxOperands] = {0, 0, 0};
    for (int j = 0; j < L.numOperands; ++j) {
      const EwOperand &op = L.in[j];
      if (!op.data) {
        v[j] = op.integer;
        continue;
      }
      int64_t off = 0;
      for (int d = 0; d < L.rank; ++d)
        off += idx[d] * op.strides[d];
      v[j] = ewLoadInt(op.data + off * ewSize(op.dtype), op.dtype);
    }
    ewStoreInt(out, L.outDtype, ewApplyInt(L, v, divByZero));
  }
}

struct DeviceErrorSlot;
enum class KernelTier : uint8_t;
/// Queues a launch on a CUDA device (Elementwise.cu); false when the launch
/// failed. An integer division by zero is recorded in `errors`
/// (DeviceError.h; null: not checked), found when the run ends. `tier`
/// (if given) says which loop ran: the typed (optimized) one or the
/// portable one.
bool launchElementwiseCUDA(const EwLaunch &launch,
                           const DeviceErrorSlot *errors = nullptr,
                           KernelTier *tier = nullptr);

} // namespace traceir

#endif // TRACEIR_RUNTIME_ELEMENTWISE_H
