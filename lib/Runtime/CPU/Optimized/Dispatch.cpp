//===- Dispatch.cpp - Which CPU variant of the optimized loops runs -------===//
//
// As PyTorch's ATEN_CPU_CAPABILITY: the best variant the CPU supports
// (avx512, else avx2, else default), or the one TRACEIR_CPU_CAPABILITY
// names ("default", "avx2" or "avx512"; one the CPU or the build lacks is
// refused with a line on stderr), chosen once.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/CPU/Parallel.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace traceir;

namespace {
enum class Variant { Default, AVX2, AVX512 };

bool cpuHasAVX2() {
#if defined(TRACEIR_HAVE_AVX2_VARIANT) &&                                      \
    (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpuHasAVX512() {
#if defined(TRACEIR_HAVE_AVX512_VARIANT) &&                                    \
    (defined(__x86_64__) || defined(__i386__))
  return cpuHasAVX2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

Variant best() {
  return cpuHasAVX512() ? Variant::AVX512
         : cpuHasAVX2() ? Variant::AVX2
                        : Variant::Default;
}

Variant choose() {
  const char *env = std::getenv("TRACEIR_CPU_CAPABILITY");
  std::string want = env ? env : "";
  if (want.empty())
    return best();
  if (want == "default")
    return Variant::Default;
  if (want == "avx2" && cpuHasAVX2())
    return Variant::AVX2;
  if (want == "avx512" && cpuHasAVX512())
    return Variant::AVX512;
  if (want == "avx2" || want == "avx512")
    std::fprintf(stderr,
                 "TraceIR: TRACEIR_CPU_CAPABILITY=%s, but this CPU or build "
                 "lacks it; choosing by the CPU\n",
                 env);
  else
    std::fprintf(stderr,
                 "TraceIR: TRACEIR_CPU_CAPABILITY=%s is none of 'default', "
                 "'avx2' and 'avx512'; choosing by the CPU\n",
                 env);
  return best();
}

Variant variant() {
  static const Variant v = choose();
  return v;
}
} // namespace

const char *cpu::optimized::capability() {
  switch (variant()) {
  case Variant::AVX512:
    return "avx512";
  case Variant::AVX2:
    return "avx2";
  default:
    return "default";
  }
}

// Each entry point runs its best variant's loops: exp, the FMAs and the
// vector width are where the wider ISAs pay.
#ifdef TRACEIR_HAVE_AVX512_VARIANT
#define TRACEIR_DISPATCH_AVX512(CALL)                                          \
  if (variant() == Variant::AVX512)                                            \
    return avx512::CALL;
#else
#define TRACEIR_DISPATCH_AVX512(CALL)
#endif
#ifdef TRACEIR_HAVE_AVX2_VARIANT
#define TRACEIR_DISPATCH_AVX2(CALL)                                            \
  if (variant() == Variant::AVX2)                                              \
    return avx2::CALL;
#else
#define TRACEIR_DISPATCH_AVX2(CALL)
#endif
#define TRACEIR_DISPATCH(CALL)                                                 \
  TRACEIR_DISPATCH_AVX512(CALL)                                                \
  TRACEIR_DISPATCH_AVX2(CALL)                                                  \
  return base::CALL;

bool cpu::optimized::elementwise(const EwLaunch &L) {
  TRACEIR_DISPATCH(elementwise(L))
}

// A copy moves bits, memcpy at its best already: the base variant alone
// has one.
bool cpu::optimized::copy(const Tensor &src, Tensor &dst) {
  return base::copy(src, dst);
}

void cpu::optimized::softmax(const SoftmaxRows &r) {
  TRACEIR_DISPATCH(softmax(r))
}
void cpu::optimized::reduceRows(const ReduceRows &r){
    TRACEIR_DISPATCH(reduceRows(
        r))} int64_t cpu::optimized::reducePartials(const ReduceRows &r) {
  // Rows of several blocks, too few to give every thread one: split by
  // block (the combined result is the same either way).
  const int64_t blocks = (r.dim + kReduceBlock - 1) / kReduceBlock;
  if (r.inner != 1 || blocks < 2 || r.outer >= 2 * cpu::numThreads())
    return 0;
  return r.outer * blocks;
}
void cpu::optimized::normRows(const NormRows &r) {
  TRACEIR_DISPATCH(normRows(r))
}
void cpu::optimized::channelAffine(const ChannelAffine &a) {
  TRACEIR_DISPATCH(channelAffine(a))
}
void cpu::optimized::lstmCells(const LstmCells &c) {
  TRACEIR_DISPATCH(lstmCells(c))
}
void cpu::optimized::gruCells(const GruCells &c) {
  TRACEIR_DISPATCH(gruCells(c))
}
void cpu::optimized::skinnyLinear(const SkinnyLinear &s) {
  TRACEIR_DISPATCH(skinnyLinear(s))
}
bool cpu::optimized::anyNaN(const float *p, int64_t n) {
  TRACEIR_DISPATCH(anyNaN(p, n))
}
void cpu::optimized::clampFloats(float *p, int64_t n, const Epilogue &act) {
  TRACEIR_DISPATCH(clampFloats(p, n, act))
}
#undef TRACEIR_DISPATCH
#undef TRACEIR_DISPATCH_AVX2
#undef TRACEIR_DISPATCH_AVX512
