//===- ElementwisePlan.h - The typed elementwise loops' plan ----*- C++ -*-===//
//
// What the optimized elementwise loops of both devices share (the CPU's in
// CPU/Optimized/Elementwise.cpp, CUDA's in CUDA/Elementwise.cu): which
// launches they cover (the ops, one floating dtype throughout), each
// dtype's storage and compute types (PyTorch's opmath: float for f16 and
// bf16), and the launch coalesced into as few dims as every tensor allows.
// The CUDA loop's choice of vector width is here too, host code the CPU
// tests check. No LLVM or MLIR here: nvcc compiles it.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_ELEMENTWISEPLAN_H
#define TRACEIR_RUNTIME_ELEMENTWISEPLAN_H

#include "TraceIR/Runtime/Elementwise.h"

#include <cstdint>

namespace traceir {

/// The ops the typed loops instantiate, with their operand counts: those
/// models spend their elementwise time in (activations, arithmetic,
/// normalization's pieces, copies). Others run on the portable loop.
// clang-format off
#define TRACEIR_TYPED_EW_OPS(X)                                                \
  X(Add, 2) X(Sub, 2) X(Mul, 2) X(Div, 2) X(Neg, 1) X(Abs, 1) X(Relu, 1)      \
  X(Exp, 1) X(Log, 1) X(Sqrt, 1) X(Rsqrt, 1) X(Tanh, 1) X(Sigmoid, 1)        \
  X(Gelu, 1) X(GeluTanh, 1) X(Copy, 1) X(Copy, 2) X(Hardtanh, 1) X(Silu, 1)  \
  X(Hardswish, 1) X(Hardsigmoid, 1) X(LeakyRelu, 1) X(Maximum, 2)            \
  X(Minimum, 2) X(Clamp, 3) X(Pow, 2) X(Reciprocal, 1) X(Erf, 1) X(Sin, 1)   \
  X(Cos, 1) X(ThresholdBackward, 3)
// clang-format on

/// Whether the typed loops cover the launch: one of their ops with its
/// operand count, a floating result, and every tensor operand of the
/// result's dtype (f32, f64, f16 or bf16). Numbers may be any.
inline bool ewTypedCovers(const EwLaunch &L) {
  if (!L.floating)
    return false;
  bool op = false;
#define TRACEIR_TYPED_EW_CASE(OP, N)                                           \
  op = op || (L.op == EwOp::OP && L.numOperands == N);
  TRACEIR_TYPED_EW_OPS(TRACEIR_TYPED_EW_CASE)
#undef TRACEIR_TYPED_EW_CASE
  if (!op)
    return false;
  if (L.outDtype != F32 && L.outDtype != F64 && L.outDtype != F16 &&
      L.outDtype != BF16)
    return false;
  for (int j = 0; j < L.numOperands; ++j)
    if (L.in[j].data && L.in[j].dtype != L.outDtype)
      return false;
  return true;
}

/// A floating dtype's storage type and compute type, with the conversions.
template <int32_t DT> struct EwElt;
template <> struct EwElt<F32> {
  using T = float;
  using C = float;
  TRACEIR_HD static C load(T x) { return x; }
  TRACEIR_HD static T store(C c) { return c; }
};
template <> struct EwElt<F64> {
  using T = double;
  using C = double;
  TRACEIR_HD static C load(T x) { return x; }
  TRACEIR_HD static T store(C c) { return c; }
};
template <> struct EwElt<F16> {
  using T = uint16_t;
  using C = float;
  TRACEIR_HD static C load(T x) { return ewHalfToFloat(x); }
  TRACEIR_HD static T store(C c) { return ewFloatToHalf(c); }
};
template <> struct EwElt<BF16> {
  using T = uint16_t;
  using C = float;
  TRACEIR_HD static C load(T x) { return ewBf16ToFloat(x); }
  TRACEIR_HD static T store(C c) { return ewFloatToBf16(c); }
};

/// The launch with dims of size 1 dropped and neighbours merged where
/// every tensor walks them as one: strides in elements, innermost last
/// (what TensorIterator's coalesce_dimensions does). A number's strides
/// are 0.
struct EwPlan {
  int32_t rank = 0;
  int64_t shape[kEwMaxRank] = {};
  int64_t os[kEwMaxRank] = {};
  int64_t is[kEwMaxOperands][kEwMaxRank] = {};
};

inline EwPlan ewCoalesce(const EwLaunch &L) {
  EwPlan p;
  for (int d = 0; d < L.rank; ++d) {
    if (L.shape[d] == 1)
      continue;
    bool merge = p.rank > 0 && p.os[p.rank - 1] == L.outStrides[d] * L.shape[d];
    for (int j = 0; j < L.numOperands && merge; ++j)
      merge = !L.in[j].data ||
              p.is[j][p.rank - 1] == L.in[j].strides[d] * L.shape[d];
    if (merge) {
      int q = p.rank - 1;
      p.shape[q] *= L.shape[d];
      p.os[q] = L.outStrides[d];
      for (int j = 0; j < L.numOperands; ++j)
        p.is[j][q] = L.in[j].data ? L.in[j].strides[d] : 0;
      continue;
    }
    int q = p.rank++;
    p.shape[q] = L.shape[d];
    p.os[q] = L.outStrides[d];
    for (int j = 0; j < L.numOperands; ++j)
      p.is[j][q] = L.in[j].data ? L.in[j].strides[d] : 0;
  }
  if (p.rank == 0) { // one element
    p.rank = 1;
    p.shape[0] = 1;
  }
  return p;
}

/// Bytes a CUDA thread moves per operand in one vector load or store (a
/// 128-bit access, what PyTorch's vectorized elementwise kernels use).
constexpr int kEwVectorBytes = 16;

/// The elements per CUDA thread of a covered launch: kEwVectorBytes worth
/// when every access can be one aligned vector (the result's innermost dim
/// unit-stride; each tensor operand's unit-stride there, or broadcast
/// along it; every vector inside one row of the innermost dim, its first
/// element aligned), else 1 (a strided loop, one element a thread). A
/// single run (rank 1) may end in a partial vector, which the kernel
/// computes element by element.
inline int ewVectorWidth(const EwLaunch &L, const EwPlan &p) {
  const int size = ewSize(L.outDtype);
  const int vec = kEwVectorBytes / size;
  const int in = p.rank - 1;
  auto aligned = [&](const char *base) {
    return reinterpret_cast<uintptr_t>(base) % kEwVectorBytes == 0;
  };
  if (p.os[in] != 1 || !aligned(L.out))
    return 1;
  if (p.rank > 1 && p.shape[in] % vec != 0)
    return 1;
  for (int d = 0; d < in; ++d)
    if (p.os[d] % vec != 0)
      return 1;
  for (int j = 0; j < L.numOperands; ++j) {
    if (!L.in[j].data || p.is[j][in] == 0)
      continue; // one value per vector
    if (p.is[j][in] != 1 || !aligned(L.in[j].data))
      return 1;
    for (int d = 0; d < in; ++d)
      if (p.is[j][d] % vec != 0)
        return 1;
  }
  return vec;
}

/// Offsets in elements of the plan's element `flat` (row-major over
/// p.shape) in the output and in each operand. I is the index type of the
/// divisions: 32-bit where the launch fits, which a GPU divides several
/// times faster than 64-bit.
template <typename I, int N>
TRACEIR_HD inline void ewPlanOffsets(const EwPlan &p, I flat, int64_t &oo,
                                     int64_t (&io)[kEwMaxOperands]) {
  oo = 0;
  for (int j = 0; j < N; ++j)
    io[j] = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    I size = static_cast<I>(p.shape[d]);
    I idx = flat % size;
    flat /= size;
    oo += static_cast<int64_t>(idx) * p.os[d];
    for (int j = 0; j < N; ++j)
      io[j] += static_cast<int64_t>(idx) * p.is[j][d];
  }
}

/// VEC consecutive elements of storage type T, one aligned access.
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) EwVec {
  T v[VEC];
};

/// What one CUDA thread of the typed loop computes (CUDA/Elementwise.cu),
/// here so that the CPU tests run it too: elements [t * VEC, t * VEC + VEC)
/// of the coalesced launch of `numel` elements. With VEC > 1 (ewVectorWidth
/// said so) each unit-stride operand and the output are read and written
/// as one aligned vector, an operand broadcast along the innermost dim
/// read once; a partial last vector (rank 1 only) runs element by
/// element, as VEC == 1 does through the strides.
template <int32_t DT, int N, int VEC, typename I>
TRACEIR_HD inline void ewTypedVector(const EwLaunch &L, const EwPlan &p,
                                     I numel, I t) {
  using E = EwElt<DT>;
  using T = typename E::T;
  using C = typename E::C;
  const int in = p.rank - 1;
  T *out = reinterpret_cast<T *>(L.out);
  const T *src[kEwMaxOperands] = {};
  C number[kEwMaxOperands] = {};
  for (int j = 0; j < N; ++j) {
    src[j] = reinterpret_cast<const T *>(L.in[j].data);
    if (!src[j])
      number[j] = C(L.in[j].number);
  }
  const I first = t * VEC;
  int64_t oo, io[kEwMaxOperands];
  ewPlanOffsets<I, N>(p, first, oo, io);
  // One element (VEC == 1), or the last, partial vector of a single run:
  // element by element through the innermost strides.
  auto elements = [&](I m) {
    for (I k = 0; k < m; ++k) {
      C a[kEwMaxOperands] = {};
      for (int j = 0; j < N; ++j)
        a[j] = src[j] ? E::load(src[j][io[j] + int64_t(k) * p.is[j][in]])
                      : number[j];
      out[oo + int64_t(k) * p.os[in]] = E::store(ewCompute<C>(L.op, L, a));
    }
  };
  if constexpr (VEC == 1) {
    elements(1);
  } else {
    if (first + VEC > numel) {
      elements(numel - first);
      return;
    }
    EwVec<T, VEC> v[kEwMaxOperands], r;
    for (int j = 0; j < N; ++j) {
      if (!src[j])
        continue;
      if (p.is[j][in] == 1) {
        v[j] = *reinterpret_cast<const EwVec<T, VEC> *>(src[j] + io[j]);
        continue;
      }
      const T x = src[j][io[j]]; // broadcast along the row: one value
      for (int k = 0; k < VEC; ++k)
        v[j].v[k] = x;
    }
    for (int k = 0; k < VEC; ++k) {
      C a[kEwMaxOperands] = {};
      for (int j = 0; j < N; ++j)
        a[j] = src[j] ? E::load(v[j].v[k]) : number[j];
      r.v[k] = E::store(ewCompute<C>(L.op, L, a));
    }
    *reinterpret_cast<EwVec<T, VEC> *>(out + oo) = r;
  }
}

/// Calls Run<DT, N, VEC>::run(L, p) for the launch's dtype (one
/// ewTypedCovers accepts), operand count and vector width (`vec`, from
/// ewVectorWidth: 1 or the dtype's full width): the switch the CUDA loop's
/// launch and the tests' host run of it share.
template <template <int32_t, int, int> class Run, int32_t DT, int N>
inline void ewTypedByWidth(const EwLaunch &L, const EwPlan &p, int vec) {
  constexpr int kVec = kEwVectorBytes / sizeof(typename EwElt<DT>::T);
  if (vec == kVec)
    Run<DT, N, kVec>::run(L, p);
  else
    Run<DT, N, 1>::run(L, p);
}
template <template <int32_t, int, int> class Run, int32_t DT>
inline void ewTypedByOperands(const EwLaunch &L, const EwPlan &p, int vec) {
  switch (L.numOperands) {
  case 1:
    return ewTypedByWidth<Run, DT, 1>(L, p, vec);
  case 2:
    return ewTypedByWidth<Run, DT, 2>(L, p, vec);
  default:
    return ewTypedByWidth<Run, DT, 3>(L, p, vec);
  }
}
template <template <int32_t, int, int> class Run>
inline void ewTypedDispatch(const EwLaunch &L, const EwPlan &p, int vec) {
  switch (L.outDtype) {
  case F32:
    return ewTypedByOperands<Run, F32>(L, p, vec);
  case F64:
    return ewTypedByOperands<Run, F64>(L, p, vec);
  case F16:
    return ewTypedByOperands<Run, F16>(L, p, vec);
  default:
    return ewTypedByOperands<Run, BF16>(L, p, vec);
  }
}

} // namespace traceir

#endif // TRACEIR_RUNTIME_ELEMENTWISEPLAN_H
