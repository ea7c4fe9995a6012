//===- Parallel.h - The CPU kernels' threads --------------------*- C++ -*-===//
//
// One thread count for everything TraceIR runs on the CPU: the optimized
// kernels' parallelFor and the BLAS. It starts from TRACEIR_NUM_THREADS,
// else OMP_NUM_THREADS, else the cores this process may run on (PyTorch's
// rule, with TraceIR's own variable first), and setNumThreads
// (traceir.set_num_threads) changes it. parallelFor runs on OpenMP's pool
// where the build found OpenMP (PyTorch's CPU threading on Linux too); a
// build without it runs every loop on the calling thread.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CPU_PARALLEL_H
#define TRACEIR_RUNTIME_CPU_PARALLEL_H

#include <cstdint>
#include <type_traits>
#include <utility>

namespace traceir::cpu {

int numThreads();
/// Sets the count (n >= 1) for parallelFor and the BLAS.
void setNumThreads(int n);
/// "OpenMP" or "none" (this build runs every loop on one thread).
const char *threadingBackend();
/// Whether parallelFor runs on a pool of threads (an OpenMP build). Where
/// it does, the runtime splits every matrix product over it and the BLAS
/// runs one thread; where it does not, the BLAS keeps its own threads.
bool hasPool();

/// Deterministic mode: results that do not depend on the thread count.
/// TraceIR's own loops split work so that they never do; matrix products
/// and the libraries' threading do (a product split over the threads gives
/// the BLAS parts whose shape picks its kernel and rounding; oneDNN's
/// threaded convolutions round differently at one thread and at two). In
/// this mode every matrix
/// product is split into blocks of rows fixed by its shape alone, each a
/// single-threaded BLAS call, the blocks spread over the threads; oneDNN's
/// convolutions run on one thread. It starts from TRACEIR_DETERMINISTIC
/// (1 or 0, default 0).
bool deterministic();
void setDeterministic(bool on);

/// A non-owning reference to a callable (llvm::function_ref without LLVM):
/// parallelFor's body costs no allocation.
class RangeFn {
public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>,
                                                        RangeFn>>>
  RangeFn(F &&f) // NOLINT: implicit, as function_ref
      : obj(const_cast<void *>(static_cast<const void *>(&f))),
        call([](void *o, int64_t b, int64_t e) {
          (*static_cast<std::remove_reference_t<F> *>(o))(b, e);
        }) {}
  void operator()(int64_t b, int64_t e) const { call(obj, b, e); }

private:
  void *obj;
  void (*call)(void *, int64_t, int64_t);
};

/// Calls fn(begin, end) over chunks that cover [0, n) once, in parallel
/// when n is more than `grain` (the fewest elements worth a thread: tiny
/// tensors stay on the calling thread). Chunks are contiguous and at most
/// one per thread, split by the thread count alone, so a body whose chunks
/// are independent gives the same result at every count. fn must not
/// throw.
void parallelFor(int64_t n, int64_t grain, RangeFn fn);

/// Grain for memory-bound loops: below it a thread costs more than it
/// saves (PyTorch's at::internal::GRAIN_SIZE).
constexpr int64_t kGrainSize = 32768;
/// How much more work a thread must get when the pool's threads sleep as
/// soon as a loop ends (OMP_WAIT_POLICY=passive): every parallel loop then
/// wakes them, 20-40 us on this project's 2-core VMs (a futex wake and the
/// idle vCPU's), more than a 128k-element memory pass takes on one thread
/// (layer_norm over 8x64x256: 24 us alone, 55 us on two); with the
/// default policy they spin a while between loops and answer in a few.
constexpr int64_t kPassiveGrainFactor = 8;
/// The grain the optimized loops use: kGrainSize, times
/// kPassiveGrainFactor under a passive wait policy (read once, as the
/// OpenMP runtime reads it).
int64_t grainSize();

} // namespace traceir::cpu

#endif // TRACEIR_RUNTIME_CPU_PARALLEL_H
