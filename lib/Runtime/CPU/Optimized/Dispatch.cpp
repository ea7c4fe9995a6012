//===- Dispatch.cpp - Which CPU variant of the optimized loops runs -------===//
//
// As PyTorch's ATEN_CPU_CAPABILITY: the best variant the CPU supports, or
// the one TRACEIR_CPU_CAPABILITY names ("default" or "avx2"; one the CPU
// or the build lacks is refused with a line on stderr), chosen once.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Optimized.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace traceir;

namespace {
bool cpuHasAVX2() {
#if defined(TRACEIR_HAVE_AVX2_VARIANT) &&                                      \
    (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool chooseAVX2() {
  const char *env = std::getenv("TRACEIR_CPU_CAPABILITY");
  std::string want = env ? env : "";
  if (want == "default")
    return false;
  if (!want.empty() && want != "avx2")
    std::fprintf(stderr,
                 "TraceIR: TRACEIR_CPU_CAPABILITY=%s is neither 'default' nor "
                 "'avx2'; choosing by the CPU\n",
                 env);
  else if (want == "avx2" && !cpuHasAVX2())
    std::fprintf(stderr, "TraceIR: TRACEIR_CPU_CAPABILITY=avx2, but this CPU "
                         "or build has no AVX2 + FMA; using the default "
                         "variant\n");
  return cpuHasAVX2();
}

bool useAVX2() {
  static const bool avx2 = chooseAVX2();
  return avx2;
}
} // namespace

const char *cpu::optimized::capability() {
  return useAVX2() ? "avx2" : "default";
}

bool cpu::optimized::elementwise(const EwLaunch &L) {
#ifdef TRACEIR_HAVE_AVX2_VARIANT
  if (useAVX2())
    return avx2::elementwise(L);
#endif
  return base::elementwise(L);
}

bool cpu::optimized::copy(const Tensor &src, Tensor &dst) {
  return base::copy(src, dst);
}

// The fused row and channel loops (Norm.cpp) and the recurrent cells
// (Recurrent.cpp) dispatch as the elementwise ones: exp and the FMAs are
// where AVX2 pays.
#ifdef TRACEIR_HAVE_AVX2_VARIANT
#define TRACEIR_DISPATCH(FN, ARG)                                              \
  if (useAVX2())                                                               \
    return avx2::FN(ARG);                                                      \
  base::FN(ARG);
#else
#define TRACEIR_DISPATCH(FN, ARG) base::FN(ARG);
#endif
void cpu::optimized::softmax(const SoftmaxRows &r) {
  TRACEIR_DISPATCH(softmax, r)
}
void cpu::optimized::normRows(const NormRows &r) {
  TRACEIR_DISPATCH(normRows, r)
}
void cpu::optimized::channelAffine(const ChannelAffine &a) {
  TRACEIR_DISPATCH(channelAffine, a)
}
void cpu::optimized::lstmCells(const LstmCells &c) {
  TRACEIR_DISPATCH(lstmCells, c)
}
void cpu::optimized::gruCells(const GruCells &c) {
  TRACEIR_DISPATCH(gruCells, c)
}
void cpu::optimized::skinnyLinear(const SkinnyLinear &s) {
  TRACEIR_DISPATCH(skinnyLinear, s)
}
#undef TRACEIR_DISPATCH

bool cpu::optimized::anyNaN(const float *p, int64_t n) {
#ifdef TRACEIR_HAVE_AVX2_VARIANT
  if (useAVX2())
    return avx2::anyNaN(p, n);
#endif
  return base::anyNaN(p, n);
}
