//===- Elementwise.cpp - Broadcasting elementwise CPU kernels -------------===//
//
// One loop serves every elementwise op: operands (tensors with broadcast
// strides, or Python numbers) are read as doubles, or as int64 when the
// result is an integer or bool tensor so integer arithmetic stays exact,
// and the result is written in its own dtype. A contiguous f32 fast path
// covers the common case.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"

#include <cmath>

using namespace traceir;
using namespace traceir::cpu;

namespace {
struct Operand {
  const char *base = nullptr; ///< null for a number
  DType dtype = DType::F64;
  Shape strides; ///< aligned to the output rank; 0 where broadcast
  double number = 0;
  int64_t integer = 0;
};

/// Collects arguments [0, n) as operands broadcast to `out`'s shape.
llvm::SmallVector<Operand, 3> operands(KernelContext &ctx, unsigned n,
                                       const Tensor &out) {
  llvm::SmallVector<Operand, 3> ops;
  for (unsigned i = 0; i < n; ++i) {
    Operand op;
    if (ctx.isTensor(i)) {
      const Tensor &t = ctx.tensor(i);
      op.base = t.bytes();
      op.dtype = t.dtype;
      op.strides.assign(out.rank(), 0);
      int64_t off = out.rank() - t.rank();
      for (int64_t d = 0; d < t.rank(); ++d)
        if (t.shape[d] != 1)
          op.strides[off + d] = t.strides[d];
    } else {
      const Scalar &s = ctx.scalar(i);
      op.number = s.number();
      op.integer = s.kind == Scalar::Kind::Float  ? static_cast<int64_t>(s.f)
                   : s.kind == Scalar::Kind::Bool ? s.b
                                                  : s.i;
    }
    ops.push_back(op);
  }
  return ops;
}

/// Runs `f` over every output element. F: (const double *in) -> double, or
/// (const int64_t *in) -> int64_t when `integerMath`.
template <typename T, typename F>
void loop(Tensor &out, llvm::ArrayRef<Operand> ops, F f) {
  int64_t n = out.numel(), rank = out.rank();
  size_t outSize = dtypeSize(out.dtype);
  Shape index(rank, 0);
  llvm::SmallVector<T, 3> vals(ops.size());
  char *ob = out.bytes();
  for (int64_t k = 0; k < n; ++k) {
    int64_t oOff = 0;
    for (int64_t d = 0; d < rank; ++d)
      oOff += index[d] * out.strides[d];
    for (size_t j = 0; j < ops.size(); ++j) {
      const Operand &op = ops[j];
      if (!op.base) {
        if constexpr (std::is_same_v<T, double>)
          vals[j] = op.number;
        else
          vals[j] = op.integer;
        continue;
      }
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off += index[d] * op.strides[d];
      const char *p = op.base + off * dtypeSize(op.dtype);
      if constexpr (std::is_same_v<T, double>)
        vals[j] = loadDouble(p, op.dtype);
      else
        vals[j] = loadInt(p, op.dtype);
    }
    T r = f(vals.data());
    if constexpr (std::is_same_v<T, double>)
      storeDouble(ob + oOff * outSize, out.dtype, r);
    else
      storeInt(ob + oOff * outSize, out.dtype, r);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out.shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// True when every tensor operand is contiguous f32 with the output's shape.
bool fastF32(KernelContext &ctx, unsigned n, const Tensor &out) {
  if (out.dtype != DType::F32 || !out.isContiguous())
    return false;
  for (unsigned i = 0; i < n; ++i) {
    if (!ctx.isTensor(i))
      continue;
    const Tensor &t = ctx.tensor(i);
    if (t.dtype != DType::F32 || t.shape != out.shape || !t.isContiguous())
      return false;
  }
  return true;
}

/// An elementwise op given as a double function and an int64 function.
template <unsigned N, typename FD, typename FI>
void run(KernelContext &ctx, Tensor &out, FD fd, FI fi) {
  if (fastF32(ctx, N, out)) {
    float *o = out.data<float>();
    const float *in[N ? N : 1];
    double sc[N ? N : 1];
    for (unsigned i = 0; i < N; ++i) {
      in[i] = ctx.isTensor(i) ? ctx.tensor(i).data<float>() : nullptr;
      sc[i] = ctx.isTensor(i) ? 0 : ctx.scalar(i).number();
    }
    for (int64_t k = 0, n = out.numel(); k < n; ++k) {
      double v[N ? N : 1];
      for (unsigned i = 0; i < N; ++i)
        v[i] = in[i] ? in[i][k] : sc[i];
      o[k] = static_cast<float>(fd(v));
    }
    return;
  }
  auto ops = operands(ctx, N, out);
  // Integer math only when every operand and the result are integers or
  // bools (a comparison of floats has a bool result but float operands).
  bool floating = isFloating(out.dtype);
  for (unsigned i = 0; i < N; ++i)
    floating |= ctx.isTensor(i) ? isFloating(ctx.tensor(i).dtype)
                                : ctx.scalar(i).kind == Scalar::Kind::Float;
  if (floating)
    loop<double>(out, ops, fd);
  else
    loop<int64_t>(out, ops, fi);
}

double alphaOf(KernelContext &ctx) {
  return ctx.isNone(2) ? 1.0 : ctx.scalar(2).number();
}

template <int Sign> void addSub(KernelContext &ctx, Tensor &out) {
  double alpha = alphaOf(ctx);
  int64_t ialpha = static_cast<int64_t>(alpha);
  run<2>(
      ctx, out, [&](const double *v) { return v[0] + Sign * alpha * v[1]; },
      [&](const int64_t *v) { return v[0] + Sign * ialpha * v[1]; });
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void divInto(KernelContext &ctx, Tensor &out) {
  std::string mode =
      ctx.isNone(2) ? std::string() : ctx.scalar(2).s; // "trunc" or "floor"
  if (!mode.empty() && mode != "trunc" && mode != "floor")
    return ctx.fail("rounding_mode must be None, 'trunc' or 'floor', got '" +
                    mode + "'");
  bool zeroDivisor = false;
  run<2>(
      ctx, out,
      [&](const double *v) {
        double q = v[0] / v[1];
        return mode == "trunc"   ? std::trunc(q)
               : mode == "floor" ? std::floor(q)
                                 : q;
      },
      [&](const int64_t *v) -> int64_t {
        if (v[1] == 0) {
          zeroDivisor = true;
          return 0;
        }
        return mode == "floor" ? floorDiv(v[0], v[1]) : v[0] / v[1];
      });
  if (zeroDivisor)
    ctx.fail("integer division by zero");
}

template <typename F> void unary(KernelContext &ctx, F f) {
  run<1>(
      ctx, ctx.result(0), [&](const double *v) { return f(v[0]); },
      [&](const int64_t *v) {
        return static_cast<int64_t>(f(static_cast<double>(v[0])));
      });
}

template <typename Cmp> void compare(KernelContext &ctx, Cmp cmp) {
  run<2>(
      ctx, ctx.result(0),
      [&](const double *v) { return double(cmp(v[0], v[1])); },
      [&](const int64_t *v) { return int64_t(cmp(v[0], v[1])); });
}

/// An in-place op's result is its first argument; it writes through it.
Tensor &inPlaceResult(KernelContext &ctx) {
  ctx.result(0) = ctx.tensor(0);
  return ctx.result(0);
}

double gelu(double x, bool tanhApprox) {
  if (tanhApprox) {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
} // namespace

void cpu::add(KernelContext &ctx) { addSub<1>(ctx, ctx.result(0)); }
void cpu::sub(KernelContext &ctx) { addSub<-1>(ctx, ctx.result(0)); }
void cpu::add_(KernelContext &ctx) { addSub<1>(ctx, inPlaceResult(ctx)); }
void cpu::sub_(KernelContext &ctx) { addSub<-1>(ctx, inPlaceResult(ctx)); }
void cpu::mul(KernelContext &ctx) {
  run<2>(
      ctx, ctx.result(0), [](const double *v) { return v[0] * v[1]; },
      [](const int64_t *v) { return v[0] * v[1]; });
}
void cpu::mul_(KernelContext &ctx) {
  run<2>(
      ctx, inPlaceResult(ctx), [](const double *v) { return v[0] * v[1]; },
      [](const int64_t *v) { return v[0] * v[1]; });
}
void cpu::div(KernelContext &ctx) { divInto(ctx, ctx.result(0)); }
void cpu::div_(KernelContext &ctx) { divInto(ctx, inPlaceResult(ctx)); }
void cpu::pow(KernelContext &ctx) {
  run<2>(
      ctx, ctx.result(0), [](const double *v) { return std::pow(v[0], v[1]); },
      [](const int64_t *v) {
        int64_t r = 1, b = v[0];
        for (int64_t e = v[1]; e > 0; --e)
          r *= b;
        return v[1] < 0 ? (b == 1 ? 1 : b == -1 ? (v[1] % 2 ? -1 : 1) : 0) : r;
      });
}
void cpu::where(KernelContext &ctx) {
  run<3>(
      ctx, ctx.result(0),
      [](const double *v) { return v[0] != 0 ? v[1] : v[2]; },
      [](const int64_t *v) { return v[0] != 0 ? v[1] : v[2]; });
}

void cpu::neg(KernelContext &ctx) {
  unary(ctx, [](double x) { return -x; });
}
void cpu::abs(KernelContext &ctx) {
  unary(ctx, [](double x) { return std::fabs(x); });
}
void cpu::relu(KernelContext &ctx) {
  unary(ctx, [](double x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); });
}
void cpu::relu_(KernelContext &ctx) {
  Tensor &out = inPlaceResult(ctx);
  run<1>(
      ctx, out,
      [](const double *v) { return v[0] > 0 || std::isnan(v[0]) ? v[0] : 0.0; },
      [](const int64_t *v) { return v[0] > 0 ? v[0] : 0; });
}
void cpu::exp(KernelContext &ctx) {
  unary(ctx, [](double x) { return std::exp(x); });
}
void cpu::log(KernelContext &ctx) {
  unary(ctx, [](double x) { return std::log(x); });
}
void cpu::sqrt(KernelContext &ctx) {
  unary(ctx, [](double x) { return std::sqrt(x); });
}
void cpu::rsqrt(KernelContext &ctx) {
  unary(ctx, [](double x) { return 1.0 / std::sqrt(x); });
}
void cpu::tanh(KernelContext &ctx) {
  unary(ctx, [](double x) { return std::tanh(x); });
}
void cpu::sigmoid(KernelContext &ctx) {
  unary(ctx, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}
void cpu::gelu(KernelContext &ctx) {
  std::string mode = ctx.isNone(1) ? "none" : ctx.scalar(1).s;
  if (mode != "none" && mode != "tanh")
    return ctx.fail("approximate must be 'none' or 'tanh', got '" + mode + "'");
  bool approx = mode == "tanh";
  unary(ctx, [approx](double x) { return ::gelu(x, approx); });
}

void cpu::eq(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a == b; });
}
void cpu::ne(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a != b; });
}
void cpu::lt(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a < b; });
}
void cpu::le(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a <= b; });
}
void cpu::gt(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a > b; });
}
void cpu::ge(KernelContext &ctx) {
  compare(ctx, [](auto a, auto b) { return a >= b; });
}

void cpu::zero_(KernelContext &ctx) {
  Tensor &out = inPlaceResult(ctx);
  auto ops = operands(ctx, 0, out);
  if (isFloating(out.dtype))
    loop<double>(out, ops, [](const double *) { return 0.0; });
  else
    loop<int64_t>(out, ops, [](const int64_t *) { return int64_t(0); });
}
void cpu::fill_(KernelContext &ctx) {
  Tensor &out = inPlaceResult(ctx);
  // fill_(self, value): the value may be a number or a 0-d tensor.
  run<2>(
      ctx, out, [](const double *v) { return v[1]; },
      [](const int64_t *v) { return v[1]; });
}
void cpu::copy_(KernelContext &ctx) {
  Tensor &out = inPlaceResult(ctx);
  run<2>(
      ctx, out, [](const double *v) { return v[1]; },
      [](const int64_t *v) { return v[1]; });
}
