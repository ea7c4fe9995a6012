//===- KernelTier.cpp - Portable and optimized kernels --------------------===//

#include "TraceIR/Runtime/KernelTier.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace traceir;

static std::atomic<bool> &optimizedTier() {
  static std::atomic<bool> on = [] {
    const char *v = std::getenv("TRACEIR_KERNEL_TIER");
    std::string s = v ? v : "";
    if (!s.empty() && s != "portable" && s != "optimized")
      std::fprintf(stderr,
                   "TraceIR: TRACEIR_KERNEL_TIER=%s is neither 'portable' "
                   "nor 'optimized'; the optimized tier stays on\n",
                   v);
    return s != "portable";
  }();
  return on;
}

bool traceir::optimizedTierEnabled() {
  return optimizedTier().load(std::memory_order_relaxed);
}

void traceir::setOptimizedTier(bool enabled) {
  optimizedTier().store(enabled, std::memory_order_relaxed);
}
