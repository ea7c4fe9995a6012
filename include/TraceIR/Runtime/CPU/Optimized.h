//===- Optimized.h - The CPU's optimized kernel tier ------------*- C++ -*-===//
//
// The optimized CPU kernels (KernelTier.h): each covers some ops, dtypes
// and layouts and returns false for everything else, which the portable
// kernel then runs. They share the portable kernels' argument decoding and
// op semantics (Elementwise.h's ewCompute, instantiated in the dtype's own
// compute type), so the two tiers differ only in loops and precision.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_OPTIMIZED_H
#define TRACEIR_RUNTIME_CPU_OPTIMIZED_H

#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Runtime/KernelTier.h"
#include "TraceIR/Runtime/Tensor.h"

namespace traceir::cpu::optimized {

/// Runs `L` when every tensor operand has the floating result's dtype (f32,
/// f64, f16 or bf16) and the op is one the tier instantiates: typed loops
/// per op and dtype, computing in float for f32, f16 and bf16 (PyTorch's
/// opmath) and double for f64, dims coalesced, the innermost one unit-
/// stride or broadcast where it can be (a loop the compiler vectorizes),
/// threaded by parallelFor. False (nothing written) otherwise.
bool elementwise(const EwLaunch &L);

/// Copies `src` into `dst` (the same dtype and shape, any strides, rank <=
/// kEwMaxRank): the bits, dims coalesced, memcpy where both runs are
/// unit-stride, threaded. False (nothing written) otherwise.
bool copy(const Tensor &src, Tensor &dst);

/// The CPU variant the optimized loops run as: "avx512" (built with
/// AVX-512 F, BW, VL and DQ, AVX2 and FMA, chosen where the CPU has them
/// all), "avx2" (AVX2 and FMA) or "default" (the target's baseline ISA):
/// the best the CPU has, as PyTorch's ATEN_CPU_CAPABILITY;
/// TRACEIR_CPU_CAPABILITY=default|avx2|avx512 forces one the CPU has.
const char *capability();

/// softmax or log_softmax over the middle dim of a contiguous tensor seen
/// as [outer, dim, inner], into a contiguous result of its floating dtype:
/// a row at a time for inner == 1, else vectorized across inner.
struct SoftmaxRows {
  const char *in;
  char *out;
  int32_t dtype; // EwDType: F32, F64, F16 or BF16
  int64_t outer, dim, inner;
  bool log;
};
void softmax(const SoftmaxRows &r);
/// sum, mean, amax or amin over the middle dim of a contiguous tensor seen
/// as [outer, dim > 0, inner], into a contiguous [outer, inner] result of
/// its floating dtype: a row at a time (in lanes, each block of 4096
/// elements summed into a double, ATen's cascade) for inner == 1, else
/// vectorized across inner. amax and amin propagate NaN. Every output's
/// order of operations is fixed by the shape alone, so results do not
/// depend on the thread count; a few long rows split over the threads by
/// block, their blocks' results (`partials`, one double per block of each
/// row, where the caller gives it) then combined in order.
struct ReduceRows {
  enum class Kind : int32_t { Sum, Mean, Max, Min };
  const char *in;
  char *out;
  int32_t dtype;
  int64_t outer, dim, inner;
  Kind kind;
  double *partials = nullptr;
};
/// The blocks of a row of ReduceRows, and the partials it wants (0: none).
constexpr int64_t kReduceBlock = 4096;
int64_t reducePartials(const ReduceRows &r);
void reduceRows(const ReduceRows &r);
/// Normalizes each of `rows` contiguous rows of `inner` elements (in and
/// out of one floating dtype) by its mean and 1 / sqrt(var + eps), then
/// scales and shifts by weight and bias (null: 1 and 0; the dtype's, C
/// contiguous elements): element j of row o by element j for groups == 1
/// (layer_norm), else by channel (o % groups) * (inner / span) + j / span
/// (group_norm). mean and rstd (null: not wanted) get one value a row.
struct NormRows {
  const char *in;
  char *out;
  int32_t dtype;
  int64_t rows, inner, groups = 1, span = 1;
  const char *weight = nullptr, *bias = nullptr;
  double eps;
  double *mean = nullptr, *rstd = nullptr;
};
void normRows(const NormRows &r);
/// out = in * scale[c] + shift[c] over a contiguous [N, C, S] tensor and
/// result of one floating dtype (eval batch norm); then clamped as
/// hardtanh does where `act` is set (a fused relu_ or hardtanh_).
struct ChannelAffine {
  const char *in;
  char *out;
  int32_t dtype;
  int64_t N, C, S;
  const double *scale, *shift;
  const Epilogue *act = nullptr;
};
void channelAffine(const ChannelAffine &a);

/// One step of an LSTM's cells over [batch, hidden], in float or double
/// (f64): RNNLayers.h's lstmStep, each gate's sigmoid and tanh vectorized.
struct LstmCells {
  const void *gates; // [batch, 4 * hidden]: i, f, g, o pre-activations
  void *cell;        // [batch, hidden], updated in place
  void *h;           // row b at h + b * hStride
  int64_t hStride, batch, hidden;
  bool f64;
};
void lstmCells(const LstmCells &c);
/// One step of a GRU's cells: RNNLayers.h's gruStep.
struct GruCells {
  const void *gi, *gh; // [batch, 3 * hidden] each: r, z, n
  const void *bhh;     // [3 * hidden] or null
  const void *hPrev;   // row b at hPrev + b * hPrevLd
  int64_t hPrevLd;
  void *h; // row b at h + b * hStride
  int64_t hStride, batch, hidden;
  bool f64;
};
void gruCells(const GruCells &c);

/// out[M, N] = x[M, K] @ w[N, K]^T (+ bias[N]) in f32 or f64 for a few
/// rows (M <= kSkinnyRows): x's rows ldx apart, w's ldw apart, both with
/// unit-stride elements; out and bias contiguous (bias may be null).
/// Linear.cpp says why.
constexpr int64_t kSkinnyRows = 8;
struct SkinnyLinear {
  const void *x, *w, *bias;
  void *out;
  int64_t M, N, K, ldx, ldw;
  bool f64;
};
void skinnyLinear(const SkinnyLinear &s);

/// Whether the `n` floats at `p` hold a NaN, on the calling thread (the
/// oneDNN pooling's check, CPU/Optimized/DNNL.cpp).
bool anyNaN(const float *p, int64_t n);
/// The `n` floats at `p` clamped to [act.lo, act.hi] in place as hardtanh
/// does (NaN passes), on the calling thread: a fused relu_ or hardtanh_ on
/// a block of a convolution's result while it is in cache (DNNL.cpp).
void clampFloats(float *p, int64_t n, const Epilogue &act);

/// The variants, each built from CPU/Optimized/Elementwise.cpp, Norm.cpp
/// Recurrent.cpp and Linear.cpp (the *AVX2.cpp and *AVX512.cpp files),
/// each defining these.
#define TRACEIR_OPTIMIZED_VARIANT_API                                          \
  bool elementwise(const EwLaunch &L);                                         \
  void softmax(const SoftmaxRows &r);                                          \
  void reduceRows(const ReduceRows &r);                                        \
  void normRows(const NormRows &r);                                            \
  void channelAffine(const ChannelAffine &a);                                  \
  void lstmCells(const LstmCells &c);                                          \
  void gruCells(const GruCells &c);                                            \
  void skinnyLinear(const SkinnyLinear &s);                                    \
  bool anyNaN(const float *p, int64_t n);                                      \
  void clampFloats(float *p, int64_t n, const Epilogue &act);
namespace base {
TRACEIR_OPTIMIZED_VARIANT_API
// The copy moves the same bits in each variant: base's serves.
bool copy(const Tensor &src, Tensor &dst);
} // namespace base
namespace avx2 {
TRACEIR_OPTIMIZED_VARIANT_API
} // namespace avx2
namespace avx512 {
TRACEIR_OPTIMIZED_VARIANT_API
/// e^x of n floats through ExpAVX512.cpp's 16-lane code, the last partial
/// vector masked: the variant's rows of float exp (built with the x86
/// variants).
void expFloats(const float *x, float *y, int64_t n);
/// The same through its 8- and 4-lane vector functions and the scalar one
/// (what vectorized remainders may call), for the tests.
void expFloatsNarrow(const float *x, float *y, int64_t n);
/// The max (`max`) or min of n > 0 floats, NaN where one is: the variant's
/// rows of float amax and amin (PickAVX512.cpp).
float pickFloats(const float *x, int64_t n, bool max);
} // namespace avx512
#undef TRACEIR_OPTIMIZED_VARIANT_API

} // namespace traceir::cpu::optimized

#endif // TRACEIR_RUNTIME_CPU_OPTIMIZED_H
