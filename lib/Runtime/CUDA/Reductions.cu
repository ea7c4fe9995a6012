//===- Reductions.cu - Reductions, argmax, argmin, softmax on CUDA --------===//
//
// The device halves of CUDA/Reductions.cpp. Each mirrors the CPU kernel in
// CPU/Reductions.cpp: values go through double (int64 for integer results
// and any, exactly), amax and amin propagate NaN, argmax and argmin pick
// the first NaN else the first extreme, softmax subtracts the row's max.
// Short groups take one thread each (the CPU's sequential loop); longer
// ones one block each, reducing in shared memory. Both orders are fixed, so
// results are deterministic. The optimized tier's softmax over contiguous
// rows (softmaxRowsKernel) computes in the dtype's opmath type instead.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"

#include <cuda_runtime.h>

#include <type_traits>

using namespace traceir;
using namespace traceir::cudadev;

namespace {
/// A group this short is reduced by one thread.
constexpr int64_t kSequentialMax = 32;

constexpr int64_t kInt64Min = -0x7fffffffffffffffLL - 1;
constexpr int64_t kInt64Max = 0x7fffffffffffffffLL;

/// The reductions over int64 (integer results; any's 0/1) and over double,
/// each the CPU's rule: std::max and std::min leave the accumulator on a
/// NaN (the NaN flag propagates it after), sums and products wrap.
struct CombineI {
  RdKind kind;
  __device__ int64_t operator()(int64_t a, int64_t b) const {
    switch (kind) {
    case RdKind::Max:
      return MaxI()(a, b);
    case RdKind::Min:
      return b < a ? b : a;
    case RdKind::Prod:
      return static_cast<int64_t>(static_cast<uint64_t>(a) *
                                  static_cast<uint64_t>(b));
    case RdKind::Any:
      return a | b;
    default:
      return SumI()(a, b);
    }
  }
};
struct CombineD {
  RdKind kind;
  __device__ double operator()(double a, double b) const {
    switch (kind) {
    case RdKind::Max:
      return MaxD()(a, b);
    case RdKind::Min:
      return b < a ? b : a;
    case RdKind::Prod:
      return a * b;
    default:
      return a + b;
    }
  }
};

__device__ int64_t identityI(RdKind k) {
  return k == RdKind::Max    ? kInt64Min
         : k == RdKind::Min  ? kInt64Max
         : k == RdKind::Prod ? 1
                             : 0;
}
__device__ double identityD(RdKind k) {
  return k == RdKind::Max    ? -INFINITY
         : k == RdKind::Min  ? INFINITY
         : k == RdKind::Prod ? 1.0
                             : 0.0;
}

/// Element `r` of group `base` as the int64 path reads it: any tests it in
/// its own dtype (0.5 and NaN are true).
__device__ int64_t loadI(const ReduceLaunch &L, int64_t base, int64_t r,
                         int es) {
  const char *p = L.data + (base + rdRedOffset(L.in, r)) * es;
  if (L.kind == RdKind::Any)
    return L.floatInput ? ewLoadDouble(p, L.inDtype) != 0
                        : ewLoadInt(p, L.inDtype) != 0;
  return ewLoadInt(p, L.inDtype);
}

__device__ bool isExtremum(RdKind k) {
  return k == RdKind::Max || k == RdKind::Min;
}

/// var's divisor of a group of `n`, as the CPU's.
__device__ double varDivisor(const ReduceLaunch &L, double n) {
  double d = n - L.correction;
  return d > 0 ? d : 0.0;
}

/// One group, sequentially (thread per group): the CPU's loop.
__device__ void reduceSequential(const ReduceLaunch &L, int64_t k) {
  int es = ewSize(L.inDtype), os = ewSize(L.outDtype);
  int64_t base = rdKeptOffset(L.in, k);
  if (L.kind == RdKind::Var) { // two passes: the mean, then deviations
    double n = static_cast<double>(L.in.numRed), mean = 0, ss = 0;
    for (int64_t r = 0; r < L.in.numRed; ++r)
      mean +=
          ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es, L.inDtype);
    mean /= n;
    for (int64_t r = 0; r < L.in.numRed; ++r) {
      double d =
          ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es, L.inDtype) -
          mean;
      ss += d * d;
    }
    ewStoreDouble(L.out + k * os, L.outDtype, ss / varDivisor(L, n));
    return;
  }
  if (L.integer) {
    CombineI op{L.kind};
    int64_t acc = identityI(L.kind);
    for (int64_t r = 0; r < L.in.numRed; ++r)
      acc = op(acc, loadI(L, base, r, es));
    ewStoreInt(L.out + k * os, L.outDtype, acc);
    return;
  }
  CombineD op{L.kind};
  double acc = identityD(L.kind);
  bool nan = false;
  for (int64_t r = 0; r < L.in.numRed; ++r) {
    double v =
        ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es, L.inDtype);
    nan |= v != v;
    acc = op(acc, v);
  }
  if (isExtremum(L.kind) && nan)
    acc = NAN;
  if (L.kind == RdKind::Mean)
    acc /= static_cast<double>(L.in.numRed);
  ewStoreDouble(L.out + k * os, L.outDtype, acc);
}

__global__ void reduceSequentialKernel(ReduceLaunch L) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < L.in.numKept; k += stride)
    reduceSequential(L, k);
}

/// One block per group (grid-stride over groups); blockDim.x is a power of
/// two up to kMaxThreads.
__global__ void reduceBlockKernel(ReduceLaunch L) {
  __shared__ double shD[kMaxThreads];
  __shared__ int64_t shI[kMaxThreads];
  __shared__ int shN[kMaxThreads];
  int es = ewSize(L.inDtype), os = ewSize(L.outDtype);
  int64_t t = threadIdx.x, B = blockDim.x;
  for (int64_t k = blockIdx.x; k < L.in.numKept; k += gridDim.x) {
    int64_t base = rdKeptOffset(L.in, k);
    if (L.kind == RdKind::Var) { // the sequential path's two passes
      double n = static_cast<double>(L.in.numRed), part = 0;
      for (int64_t r = t; r < L.in.numRed; r += B)
        part += ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es,
                             L.inDtype);
      double mean = blockReduce<double>(part, shD, SumD()) / n;
      part = 0;
      for (int64_t r = t; r < L.in.numRed; r += B) {
        double d = ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es,
                                L.inDtype) -
                   mean;
        part += d * d;
      }
      double ss = blockReduce<double>(part, shD, SumD());
      if (t == 0)
        ewStoreDouble(L.out + k * os, L.outDtype, ss / varDivisor(L, n));
      continue;
    }
    if (L.integer) {
      CombineI op{L.kind};
      int64_t acc = identityI(L.kind);
      for (int64_t r = t; r < L.in.numRed; r += B)
        acc = op(acc, loadI(L, base, r, es));
      int64_t total = blockReduce<int64_t>(acc, shI, op);
      if (t == 0)
        ewStoreInt(L.out + k * os, L.outDtype, total);
      continue;
    }
    CombineD op{L.kind};
    double acc = identityD(L.kind);
    int nan = 0;
    for (int64_t r = t; r < L.in.numRed; r += B) {
      double v =
          ewLoadDouble(L.data + (base + rdRedOffset(L.in, r)) * es, L.inDtype);
      nan |= v != v;
      acc = op(acc, v);
    }
    acc = blockReduce<double>(acc, shD, op);
    nan = blockReduce<int>(nan, shN, OrN());
    if (t == 0) {
      if (isExtremum(L.kind) && nan)
        acc = NAN; // amax and amin propagate NaN
      if (L.kind == RdKind::Mean)
        acc /= static_cast<double>(L.in.numRed);
      ewStoreDouble(L.out + k * os, L.outDtype, acc);
    }
  }
}

/// An argmax/argmin candidate: a value and its position in the group (-1:
/// none yet, a thread that met no element).
template <typename T> struct ArgCand {
  T v;
  int64_t i;
};

/// The better of two candidates, as the CPU's sequential scan picks: the
/// extreme value, a NaN over any number, the earlier position on a tie
/// (the block combines candidates out of position order, so ties are
/// broken by position, not by argument order).
template <typename T> struct ArgBetter {
  bool isMax;
  __device__ ArgCand<T> operator()(ArgCand<T> a, ArgCand<T> b) const {
    if (a.i < 0)
      return b;
    if (b.i < 0)
      return a;
    bool an = a.v != a.v, bn = b.v != b.v; // NaN; never for integers
    if (an || bn) {
      if (an && bn)
        return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v == b.v)
      return a.i < b.i ? a : b;
    return (isMax ? b.v > a.v : b.v < a.v) ? b : a;
  }
};

/// Element `r` of group `base`, read as a T.
template <typename T>
__device__ T argLoad(const ReduceLaunch &L, int64_t base, int64_t r, int es) {
  const char *p = L.data + (base + rdRedOffset(L.in, r)) * es;
  if constexpr (std::is_same_v<T, double>)
    return ewLoadDouble(p, L.inDtype);
  else
    return ewLoadInt(p, L.inDtype);
}

/// Stores group k's winner: its position, and for max.dim/min.dim its
/// value.
template <typename T>
__device__ void argStore(const ReduceLaunch &L, int64_t k, ArgCand<T> best) {
  ewStoreInt(L.out + k * ewSize(L.outDtype), L.outDtype, best.i);
  if (!L.values)
    return;
  char *v = L.values + k * ewSize(L.valuesDtype);
  if constexpr (std::is_same_v<T, double>)
    ewStoreDouble(v, L.valuesDtype, best.v);
  else
    ewStoreInt(v, L.valuesDtype, best.v);
}

/// argmax/argmin, a thread per group (short groups) or a block per group;
/// T is double for floating inputs, int64 for the rest.
template <typename T> __global__ void argSequentialKernel(ReduceLaunch L) {
  int es = ewSize(L.inDtype);
  ArgBetter<T> op{L.kind == RdKind::ArgMax};
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < L.in.numKept; k += stride) {
    int64_t base = rdKeptOffset(L.in, k);
    ArgCand<T> best{T(0), -1};
    for (int64_t r = 0; r < L.in.numRed; ++r)
      best = op(best, ArgCand<T>{argLoad<T>(L, base, r, es), r});
    argStore(L, k, best);
  }
}

template <typename T> __global__ void argBlockKernel(ReduceLaunch L) {
  __shared__ ArgCand<T> sh[kMaxThreads];
  int es = ewSize(L.inDtype);
  ArgBetter<T> op{L.kind == RdKind::ArgMax};
  int64_t t = threadIdx.x, B = blockDim.x;
  for (int64_t k = blockIdx.x; k < L.in.numKept; k += gridDim.x) {
    int64_t base = rdKeptOffset(L.in, k);
    ArgCand<T> best{T(0), -1};
    for (int64_t r = t; r < L.in.numRed; r += B)
      best = op(best, ArgCand<T>{argLoad<T>(L, base, r, es), r});
    best = blockReduce<ArgCand<T>>(best, sh, op);
    if (t == 0)
      argStore(L, k, best);
  }
}

/// softmax/log_softmax: one block per row, three passes (max, sum of
/// exponentials, results) as the CPU does them.
__global__ void softmaxKernel(SoftmaxLaunch L) {
  __shared__ double sh[kMaxThreads];
  int es = ewSize(L.inDtype), os = ewSize(L.outDtype);
  int64_t t = threadIdx.x, B = blockDim.x, n = L.in.numRed;
  for (int64_t k = blockIdx.x; k < L.in.numKept; k += gridDim.x) {
    int64_t ib = rdKeptOffset(L.in, k), ob = rdKeptOffset(L.out, k);
    auto load = [&](int64_t r) {
      return ewLoadDouble(L.data + (ib + rdRedOffset(L.in, r)) * es, L.inDtype);
    };
    double mx = -INFINITY;
    for (int64_t r = t; r < n; r += B)
      mx = MaxD()(mx, load(r));
    mx = blockReduce<double>(mx, sh, MaxD());
    double sum = 0;
    for (int64_t r = t; r < n; r += B)
      sum += exp(load(r) - mx);
    sum = blockReduce<double>(sum, sh, SumD());
    double logSum = log(sum);
    for (int64_t r = t; r < n; r += B) {
      double v = load(r);
      double res = L.log ? v - mx - logSum : exp(v - mx) / sum;
      ewStoreDouble(L.outData + (ob + rdRedOffset(L.out, r)) * os, L.outDtype,
                    res);
    }
  }
}

/// The optimized tier's softmax (TypedRows.h): one block per row, each
/// pass's per-thread values reduced over the block in the opmath type.
template <typename R> struct RowMax {
  __device__ typename R::C operator()(typename R::C a, typename R::C b) const {
    return R::maxOf(a, b);
  }
};
template <int32_t DT, int VEC>
__global__ void softmaxRowsKernel(SoftmaxRowsPlan p) {
  using R = SoftmaxRow<DT, VEC>;
  using T = typename R::T;
  using C = typename R::C;
  __shared__ C sh[kMaxThreads];
  const int64_t t = threadIdx.x, B = blockDim.x;
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const T *x = reinterpret_cast<const T *>(p.in) + row * p.n;
    T *y = reinterpret_cast<T *>(p.out) + row * p.n;
    C mx = blockReduce<C>(R::partialMax(x, p.n, t, B), sh, RowMax<R>());
    C sum = blockReduce<C>(R::partialSum(x, p.n, t, B, mx), sh, SumT<C>());
    R::write(x, y, p.n, t, B, mx, sum, p.log);
  }
}
template <int32_t DT, int VEC> struct SoftmaxRowsLaunch {
  static void run(const SoftmaxRowsPlan &p) {
    launchRows(softmaxRowsKernel<DT, VEC>, p, p.rows, p.n / VEC);
  }
};

/// _log_softmax_backward_data: one block per row, two passes (the sum of
/// the gradient, then grad - exp(output) * sum).
__global__ void logSoftmaxBackwardKernel(SoftmaxLaunch L) {
  __shared__ double sh[kMaxThreads];
  int es = ewSize(L.inDtype), gs = ewSize(L.gradDtype), os = ewSize(L.outDtype);
  int64_t t = threadIdx.x, B = blockDim.x, n = L.in.numRed;
  for (int64_t k = blockIdx.x; k < L.in.numKept; k += gridDim.x) {
    int64_t ib = rdKeptOffset(L.in, k), gb = rdKeptOffset(L.grad, k),
            ob = rdKeptOffset(L.out, k);
    auto grad = [&](int64_t r) {
      return ewLoadDouble(L.gradData + (gb + rdRedOffset(L.grad, r)) * gs,
                          L.gradDtype);
    };
    double sum = 0;
    for (int64_t r = t; r < n; r += B)
      sum += grad(r);
    sum = blockReduce<double>(sum, sh, SumD());
    for (int64_t r = t; r < n; r += B) {
      double y =
          ewLoadDouble(L.data + (ib + rdRedOffset(L.in, r)) * es, L.inDtype);
      ewStoreDouble(L.outData + (ob + rdRedOffset(L.out, r)) * os, L.outDtype,
                    grad(r) - exp(y) * sum);
    }
  }
}
/// A thread per row, scanning in order: the CPU's sums, to the bit. (A
/// parallel scan would sum in another order; it is the optimized tier's.)
__global__ void cumsumKernel(CumsumLaunch L) {
  int es = ewSize(L.inDtype), os = ewSize(L.outDtype);
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < L.in.numKept; k += stride) {
    int64_t inBase = rdKeptOffset(L.in, k), outBase = rdKeptOffset(L.out, k);
    int64_t accI = L.product ? 1 : 0;
    double accD = L.product ? 1 : 0;
    for (int64_t r = 0; r < L.in.numRed; ++r) {
      const char *p = L.data + (inBase + rdRedOffset(L.in, r)) * es;
      char *o = L.outData + (outBase + rdRedOffset(L.out, r)) * os;
      if (L.integer) {
        int64_t v = ewLoadInt(p, L.inDtype);
        accI = L.product ? ProdI()(accI, v) : SumI()(accI, v);
        ewStoreInt(o, L.outDtype, accI);
      } else {
        double v = ewLoadDouble(p, L.inDtype);
        accD = L.product ? accD * v : accD + v;
        ewStoreDouble(o, L.outDtype, accD);
      }
    }
  }
}

} // namespace

const char *traceir::launchReduceCUDA(const ReduceLaunch &launch) {
  if (launch.in.numKept == 0)
    return nullptr;
  if (launch.kind == RdKind::ArgMax || launch.kind == RdKind::ArgMin) {
    auto seq = launch.integer ? argSequentialKernel<int64_t>
                              : argSequentialKernel<double>;
    auto block =
        launch.integer ? argBlockKernel<int64_t> : argBlockKernel<double>;
    if (launch.in.numRed <= kSequentialMax) {
      int64_t blocks = gridFor(launch.in.numKept, kMaxThreads);
      seq<<<static_cast<unsigned>(blocks), kMaxThreads>>>(launch);
    } else {
      int64_t blocks =
          launch.in.numKept < kMaxBlocks ? launch.in.numKept : kMaxBlocks;
      block<<<static_cast<unsigned>(blocks), threadsFor(launch.in.numRed)>>>(
          launch);
    }
    return lastError();
  }
  if (launch.in.numRed <= kSequentialMax) {
    int64_t blocks = gridFor(launch.in.numKept, kMaxThreads);
    reduceSequentialKernel<<<static_cast<unsigned>(blocks), kMaxThreads>>>(
        launch);
  } else {
    int64_t blocks =
        launch.in.numKept < kMaxBlocks ? launch.in.numKept : kMaxBlocks;
    reduceBlockKernel<<<static_cast<unsigned>(blocks),
                        threadsFor(launch.in.numRed)>>>(launch);
  }
  return lastError();
}

const char *traceir::launchCumsumCUDA(const CumsumLaunch &launch) {
  if (launch.in.numKept == 0 || launch.in.numRed == 0)
    return nullptr;
  int64_t blocks = gridFor(launch.in.numKept, kMaxThreads);
  cumsumKernel<<<static_cast<unsigned>(blocks), kMaxThreads>>>(launch);
  return lastError();
}

const char *traceir::launchSoftmaxCUDA(const SoftmaxLaunch &launch) {
  if (launch.in.numKept == 0 || launch.in.numRed == 0)
    return nullptr;
  int64_t blocks =
      launch.in.numKept < kMaxBlocks ? launch.in.numKept : kMaxBlocks;
  softmaxKernel<<<static_cast<unsigned>(blocks),
                  threadsFor(launch.in.numRed)>>>(launch);
  return lastError();
}

const char *traceir::launchSoftmaxRowsCUDA(const SoftmaxRowsPlan &plan) {
  if (plan.rows == 0 || plan.n == 0)
    return nullptr;
  typedRowsDispatch<SoftmaxRowsLaunch>(plan);
  return lastError();
}

const char *traceir::launchLogSoftmaxBackwardCUDA(const SoftmaxLaunch &launch) {
  if (launch.in.numKept == 0 || launch.in.numRed == 0)
    return nullptr;
  int64_t blocks =
      launch.in.numKept < kMaxBlocks ? launch.in.numKept : kMaxBlocks;
  logSoftmaxBackwardKernel<<<static_cast<unsigned>(blocks),
                             threadsFor(launch.in.numRed)>>>(launch);
  return lastError();
}
