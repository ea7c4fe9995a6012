//===- Recurrent.cpp - Optimized LSTM and GRU cell updates ----------------===//
//
// Built once per CPU variant (Optimized.h, Dispatch.cpp), as Elementwise.cpp.
//
// The pointwise half of a recurrent step (the gates' sigmoids and tanhs and
// the state update), which RNNLayers.h's layer loop calls once per time
// step between its GEMMs: the portable CpuLayers' formulas in a loop over
// the hidden units that the compiler vectorizes, exp and tanh inlined in
// float and libmvec's in double (Loops.h's Math) in place of
// libm's one call per element, where most of a small LSTM's time went. Each
// batch row's loop is the same whatever the thread count (there is one), so
// results depend only on the shapes.
//
//===----------------------------------------------------------------------===//

#include "Loops.h"
#include "TraceIR/Runtime/CPU/Optimized.h"

using namespace traceir;
using namespace traceir::cpu::optimized;

namespace {
template <typename T> inline T sigmoid(T x) {
  return T(1) / (T(1) + Math::exp(-x));
}

template <typename T>
TRACEIR_VARIANT_TARGET void lstmTyped(const LstmCells &c) {
  const int64_t H = c.hidden;
  for (int64_t b = 0; b < c.batch; ++b) {
    const T *__restrict g = static_cast<const T *>(c.gates) + b * 4 * H;
    T *__restrict cell = static_cast<T *>(c.cell) + b * H;
    T *__restrict h = static_cast<T *>(c.h) + b * c.hStride;
    TRACEIR_OMP_SIMD
    for (int64_t j = 0; j < H; ++j) {
      T i = sigmoid(g[j]), f = sigmoid(g[H + j]);
      T gg = Math::tanh(g[2 * H + j]), o = sigmoid(g[3 * H + j]);
      T next = f * cell[j] + i * gg;
      cell[j] = next;
      h[j] = o * Math::tanh(next);
    }
  }
}

template <typename T>
TRACEIR_VARIANT_TARGET void gruTyped(const GruCells &c) {
  const int64_t H = c.hidden;
  const T *bhh = static_cast<const T *>(c.bhh);
  for (int64_t b = 0; b < c.batch; ++b) {
    const T *__restrict gi = static_cast<const T *>(c.gi) + b * 3 * H;
    const T *__restrict gh = static_cast<const T *>(c.gh) + b * 3 * H;
    const T *__restrict prev = static_cast<const T *>(c.hPrev) + b * c.hPrevLd;
    T *__restrict h = static_cast<T *>(c.h) + b * c.hStride;
    TRACEIR_OMP_SIMD
    for (int64_t j = 0; j < H; ++j) {
      T br = bhh ? bhh[j] : T(0), bz = bhh ? bhh[H + j] : T(0);
      T bn = bhh ? bhh[2 * H + j] : T(0);
      T r = sigmoid(gi[j] + gh[j] + br);
      T z = sigmoid(gi[H + j] + gh[H + j] + bz);
      T n = Math::tanh(gi[2 * H + j] + r * (gh[2 * H + j] + bn));
      h[j] = (T(1) - z) * n + z * prev[j];
    }
  }
}
} // namespace

void cpu::optimized::TRACEIR_CPU_VARIANT::lstmCells(const LstmCells &c) {
  c.f64 ? lstmTyped<double>(c) : lstmTyped<float>(c);
}
void cpu::optimized::TRACEIR_CPU_VARIANT::gruCells(const GruCells &c) {
  c.f64 ? gruTyped<double>(c) : gruTyped<float>(c);
}
