//===- KernelTier.h - Portable and optimized kernels ------------*- C++ -*-===//
//
// Two tiers of kernels, as ExecuTorch's portable and optimized libraries:
// the portable kernels run every op at every dtype and layout (simple,
// computing in double or int64, the reference the tests compare against);
// an optimized kernel covers some op, dtype and layout (typed, vectorized,
// threaded) and hands everything else to the portable one. A kernel that
// took the optimized path says so (KernelContext::ranTier), and the
// profile shows it per op. TRACEIR_KERNEL_TIER=portable (or
// traceir.set_kernel_tier("portable")) turns the optimized tier off, so
// that tests and benchmarks can compare the two.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_KERNELTIER_H
#define TRACEIR_RUNTIME_KERNELTIER_H

#include <cstdint>

namespace traceir {

/// Fused: an in-place activation the previous call's optimized kernel
/// applied as it wrote its result (Instr::epilogue), so that this call
/// computed nothing.
enum class KernelTier : uint8_t { Portable, Optimized, Fused };

inline const char *kernelTierName(KernelTier t) {
  return t == KernelTier::Optimized ? "optimized"
         : t == KernelTier::Fused   ? "fused"
                                    : "portable";
}

/// An activation a call's kernel may apply to its result 0 as it writes it
/// (Epilogues.cpp): clamp(v, lo, hi) in hardtanh's semantics (relu is
/// [0, inf]), which the next call, an in-place relu_ or hardtanh_ on that
/// result, would otherwise apply in a pass of its own.
struct Epilogue {
  bool clamp = false;
  double lo = 0, hi = 0;
};

/// Whether kernels may take their optimized path: true unless
/// TRACEIR_KERNEL_TIER is "portable" or setOptimizedTier(false) said so.
bool optimizedTierEnabled();
void setOptimizedTier(bool enabled);

} // namespace traceir

#endif // TRACEIR_RUNTIME_KERNELTIER_H
