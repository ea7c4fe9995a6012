//===- Parallel.cpp - The CPU kernels' threads ----------------------------===//

#include "TraceIR/Runtime/CPU/Parallel.h"
#include "TraceIR/Runtime/CPU/Gemm.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <string>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef __linux__
#include <sched.h>
#endif

using namespace traceir;

namespace {
/// A positive count from environment variable `name`, or 0.
int envCount(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return 0;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end == 0 && n > 0 && n <= 4096 ? static_cast<int>(n) : 0;
}

/// The cores this process may run on (its affinity mask: a container or
/// taskset limits it), else the machine's.
int availableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

int initialThreads() {
  if (int n = envCount("TRACEIR_NUM_THREADS"))
    return n;
  if (int n = envCount("OMP_NUM_THREADS"))
    return n;
  return availableCores();
}

std::atomic<int> &threads() {
  // The BLAS gets its count from applyGemmThreads, at load and on changes.
  static std::atomic<int> n{initialThreads()};
  return n;
}

std::atomic<bool> &deterministicFlag() {
  static std::atomic<bool> on = [] {
    const char *v = std::getenv("TRACEIR_DETERMINISTIC");
    return v && std::string(v) == "1";
  }();
  return on;
}

} // namespace

/// The BLAS's own threads: one where the runtime has a pool, which splits
/// every product itself (Gemm/BLAS.cpp says why), and in deterministic
/// mode; else the count.
static void applyGemmThreads() {
  cpu::setGemmThreads(
      cpu::hasPool() || cpu::deterministic() ? 1 : cpu::numThreads());
}

int cpu::numThreads() { return threads().load(std::memory_order_relaxed); }

void cpu::setNumThreads(int n) {
  n = std::max(n, 1);
  threads().store(n, std::memory_order_relaxed);
  applyGemmThreads();
}

bool cpu::deterministic() {
  return deterministicFlag().load(std::memory_order_relaxed);
}

void cpu::setDeterministic(bool on) {
  deterministicFlag().store(on, std::memory_order_relaxed);
  applyGemmThreads();
}

int64_t cpu::grainSize() {
  static const int64_t grain = [] {
    // OMP_WAIT_POLICY's values are case-insensitive.
    const char *v = std::getenv("OMP_WAIT_POLICY");
    std::string policy = v ? v : "";
    for (char &c : policy)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return policy == "passive" ? kGrainSize * kPassiveGrainFactor : kGrainSize;
  }();
  return grain;
}

bool cpu::hasPool() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

const char *cpu::threadingBackend() { return hasPool() ? "OpenMP" : "none"; }

void cpu::parallelFor(int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0)
    return;
  int64_t chunks =
      std::min<int64_t>(numThreads(), (n + std::max<int64_t>(grain, 1) - 1) /
                                          std::max<int64_t>(grain, 1));
#ifdef _OPENMP
  // Not from inside another parallel region: nested loops run serially.
  if (chunks > 1 && !omp_in_parallel()) {
    int64_t size = (n + chunks - 1) / chunks;
#pragma omp parallel for num_threads(static_cast <int>(chunks))                \
    schedule(static, 1)
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t b = c * size, e = std::min(n, b + size);
      if (b < e)
        fn(b, e);
    }
    return;
  }
#endif
  (void)chunks;
  fn(0, n);
}

// The count applies to the BLAS from the start, not only after the first
// parallel loop: set it when the runtime loads.
[[maybe_unused]] static const int kThreadsAtLoad = (applyGemmThreads(), 0);
