//===- Allocator.h - Device memory allocators -------------------*- C++ -*-===//

#ifndef TRACEIR_RUNTIME_ALLOCATOR_H
#define TRACEIR_RUNTIME_ALLOCATOR_H

#include "TraceIR/Runtime/DeviceError.h"
#include "TraceIR/Runtime/Tensor.h"

#include "TraceIR/Support/Error.h"

#include <memory>
#include <optional>

namespace traceir {

class DeviceTimer;

/// Hands out device memory and counts what it holds from the system,
/// including rounding and any cache: the `allocated_peak_bytes` of a memory
/// report. (What the graph's storages need, without rounding, is counted by
/// the executor; see MemoryReport.)
class Allocator {
public:
  virtual ~Allocator();
  /// Returns null when the device is out of memory.
  virtual void *allocate(size_t nbytes) = 0;
  virtual void deallocate(void *ptr, size_t nbytes) = 0;
  /// Returns cached blocks to the system (a no-op without a cache).
  virtual void releaseCache() {}
  virtual Device device() const = 0;
  /// Makes this device the calling thread's current one, so kernels launch
  /// on it (CUDA: cudaSetDevice); runs call it first, since several
  /// executables on different devices may share a thread.
  virtual void activate() {}
  /// A timer of kernels by this device's own clock for the profiler, or
  /// null where the CPU ranges already are the kernels' times (the CPU).
  virtual Expected<std::unique_ptr<DeviceTimer>> createTimer();

  // Data movement on this allocator's device. Host pointers are plain host
  // memory; device pointers come from allocate().
  virtual void copyFromHost(void *dst, const void *src, size_t nbytes) = 0;
  virtual void copyToHost(void *dst, const void *src, size_t nbytes) = 0;
  /// Overwrites freed memory with a recognizable pattern (0xFF bytes, NaN
  /// for floats) for free checking.
  virtual void poison(void *ptr, size_t nbytes) = 0;
  /// Copies `src` into `dst` element by element on this device (same
  /// shape, any strides and dtypes).
  virtual bool copyStrided(const Tensor &src, Tensor &dst) = 0;
  /// Memory on this device for an output handed over to the caller
  /// (Executable::runViews, DLPack): outside this allocator's cache, limit
  /// and counts, and freed by the last copy of the pointer, which may
  /// outlive the allocator. Null when the device is out of memory.
  virtual std::shared_ptr<void> allocateExported(size_t nbytes) = 0;
  /// Hands `ptr`, which allocate(nbytes) returned, over to the caller as
  /// allocateExported's memory would be: it leaves this allocator's counts
  /// and the last copy of the pointer frees it. An output the run allocated
  /// goes out this way without a copy. Null (and `ptr` still this
  /// allocator's) where the allocator cannot give memory away.
  virtual std::shared_ptr<void> adopt(void *ptr, size_t nbytes) {
    (void)ptr;
    (void)nbytes;
    return nullptr;
  }
  /// Waits until the work queued on this device (kernels, copies) is done,
  /// so that memory handed over is ready to read on any stream; an error
  /// says what failed (CUDA reports a kernel's fault here).
  virtual Error synchronize() { return Error::success(); }

  /// The record kernels on this device write the run's first error to
  /// (DeviceError.h), in device memory allocated once with the allocator;
  /// null where kernels fail their calls themselves (the CPU).
  virtual DeviceErrorRecord *errorRecord() { return nullptr; }
  /// Clears the record behind the work queued on the device (no wait): each
  /// run starts with none.
  virtual Error clearErrorRecord() { return Error::success(); }
  /// The record, read once the work queued on the device is done (code 0:
  /// no error); an error says what failed (a kernel's fault, say).
  virtual Error readErrorRecord(DeviceErrorRecord &out) {
    out = DeviceErrorRecord();
    return Error::success();
  }

  int64_t allocatedBytes() const { return allocated; }
  int64_t peakAllocatedBytes() const { return peakAllocated; }
  void resetPeak() { peakAllocated = allocated; }

  /// A cap on allocatedBytes(): an allocation that would take it over
  /// `bytes` fails (allocate returns null) as if the device were out of
  /// memory; nullopt lifts it. trace-run --memory-limit and
  /// RunOptions::memoryLimitBytes set it, and so does a fuzz harness, which
  /// then rejects exactly what production with that limit rejects. It
  /// counts what is held from the system, so rounding, kernel scratch,
  /// parameters and (CUDA) cached blocks count too.
  void setLimit(std::optional<int64_t> bytes) { limit = bytes; }
  std::optional<int64_t> limitBytes() const { return limit; }
  /// Whether the last allocate() that returned null did so because of the
  /// limit (and not because the device is out of memory).
  bool lastFailureWasLimit() const { return limitHit; }

protected:
  /// Whether `nbytes` more (as held from the system, after rounding) stay
  /// within the limit; allocate() calls it on every allocation it makes
  /// from the system, and returns null when it does not.
  bool fitsLimit(size_t nbytes) {
    limitHit = limit && (nbytes > static_cast<uint64_t>(*limit) ||
                         allocated > *limit - static_cast<int64_t>(nbytes));
    return !limitHit;
  }
  /// fitsLimit, after returning the cache where that is what it takes:
  /// the limit counts cached blocks, so a caching allocator releases them
  /// before it fails an allocation.
  bool fitsLimitReleasingCache(size_t nbytes) {
    if (fitsLimit(nbytes))
      return true;
    releaseCache();
    return fitsLimit(nbytes);
  }
  bool limitHit = false;
  void noteAllocated(int64_t delta) {
    allocated += delta;
    if (allocated > peakAllocated)
      peakAllocated = allocated;
  }

private:
  int64_t allocated = 0;
  int64_t peakAllocated = 0;
  std::optional<int64_t> limit;
};

/// 64-byte aligned host memory. Freed blocks of 64 KiB and more stay cached
/// for reuse (counted, as the CUDA allocator counts its cache) until
/// releaseCache(), a memory limit that needs them, or the allocator goes;
/// so do outputs handed over (adopt) when the caller lets them go, up to the
/// most the allocator once held. No cache under AddressSanitizer.
std::unique_ptr<Allocator> createCPUAllocator();

/// Makes CUDA device `index` current, or says plainly why it cannot (no
/// driver, no GPU, bad index): the one check every CUDA entry point makes.
Error selectCUDADevice(int index);

/// A caching allocator on CUDA device `index`: freed blocks stay cached for
/// reuse (cudaMalloc is slow) until releaseCache(). Fails with a plain
/// message when there is no such device (no driver, no GPU, bad index).
Expected<std::unique_ptr<Allocator>> createCUDAAllocator(int index);

} // namespace traceir

#endif // TRACEIR_RUNTIME_ALLOCATOR_H
