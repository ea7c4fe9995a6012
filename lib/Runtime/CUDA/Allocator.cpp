//===- Allocator.cpp - The CUDA caching allocator -------------------------===//
//
// cudaMalloc and cudaFree synchronize and are slow, so freed blocks stay in a
// per-device cache keyed by size and are handed out again; releaseCache()
// returns them. Sizes round up to 512 bytes. `allocatedBytes` counts
// everything held from the driver, cached blocks included.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/Allocator.h"
#include "TraceIR/Runtime/BlockCache.h"
#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Runtime/Profiler.h"

#include <cuda_runtime.h>

#include <unordered_map>

using namespace traceir;

namespace {

class CUDAAllocator final : public Allocator {
public:
  CUDAAllocator(int index, DeviceErrorRecord *record)
      : index(index), record(record) {}
  ~CUDAAllocator() override {
    releaseCache();
    cudaSetDevice(index);
    for (auto &[ptr, size] : blockSize)
      cudaFree(ptr); // blocks still in use when the allocator goes
    cudaFree(record);
  }

  static constexpr size_t kRound = 512;
  static size_t rounded(size_t n) {
    return (std::max<size_t>(n, 1) + kRound - 1) / kRound * kRound;
  }

  void *allocate(size_t nbytes) override {
    limitHit = false;
    if (nbytes > SIZE_MAX - kRound)
      return nullptr; // rounding would wrap
    size_t size = rounded(nbytes);
    // Reuse a cached block of this size, or one at most twice as large.
    if (void *p = cache.take(size))
      return p;
    if (!fitsLimitReleasingCache(size))
      return nullptr;
    cudaSetDevice(index);
    void *p = nullptr;
    if (cudaMalloc(&p, size) != cudaSuccess) {
      cudaGetLastError();
      releaseCache(); // retry once with the cache returned to the driver
      if (cudaMalloc(&p, size) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
      }
    }
    blockSize[p] = size;
    noteAllocated(size);
    return p;
  }

  void deallocate(void *ptr, size_t) override {
    if (!ptr)
      return;
    auto it = blockSize.find(ptr);
    if (it != blockSize.end())
      cache.put(ptr, it->second);
  }

  void releaseCache() override {
    cudaSetDevice(index);
    cache.drain([this](void *ptr, size_t size) {
      cudaFree(ptr);
      blockSize.erase(ptr);
      noteAllocated(-static_cast<int64_t>(size));
    });
  }

  Device device() const override { return Device{Device::Kind::CUDA, index}; }
  void activate() override { cudaSetDevice(index); }
  Expected<std::unique_ptr<DeviceTimer>> createTimer() override {
    return cuda::createTimer(index);
  }

  void copyFromHost(void *dst, const void *src, size_t nbytes) override {
    if (nbytes)
      cudaMemcpy(dst, src, nbytes, cudaMemcpyHostToDevice);
  }
  void copyToHost(void *dst, const void *src, size_t nbytes) override {
    if (nbytes)
      cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToHost);
  }
  void poison(void *ptr, size_t nbytes) override {
    cudaMemset(ptr, 0xFF, nbytes);
  }
  bool copyStrided(const Tensor &src, Tensor &dst) override {
    return cuda::copyStrided(src, dst);
  }
  std::shared_ptr<void> allocateExported(size_t nbytes) override {
    void *p = nullptr;
    cudaSetDevice(index);
    if (cudaMalloc(&p, std::max<size_t>(nbytes, 1)) != cudaSuccess) {
      cudaGetLastError(); // out of memory is an answer, not a sticky error
      return nullptr;
    }
    // cudaFree needs no current device: the pointer names its own.
    return std::shared_ptr<void>(p, [](void *q) { cudaFree(q); });
  }
  Error synchronize() override {
    cudaSetDevice(index);
    if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess)
      return cuda::failure("cuda:" + strCat(index) + " failed", err);
    return Error::success();
  }

  DeviceErrorRecord *errorRecord() override { return record; }
  Error clearErrorRecord() override {
    cudaSetDevice(index);
    // Two memsets, not a copy from the host: they queue without a wait.
    cudaError_t err = cudaMemsetAsync(record, 0, sizeof(*record));
    if (err == cudaSuccess)
      err = cudaMemsetAsync(&record->pending, 0xFF, sizeof(record->pending));
    if (err != cudaSuccess)
      return cuda::failure("cuda:" + strCat(index) + " failed", err);
    return Error::success();
  }
  Error readErrorRecord(DeviceErrorRecord &out) override {
    cudaSetDevice(index);
    // Waits for the kernels queued before it (one stream); a kernel that
    // faulted is reported here.
    cudaError_t err =
        cudaMemcpy(&out, record, sizeof(out), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
      return cuda::failure("cuda:" + strCat(index) + " failed", err);
    return Error::success();
  }

private:
  int index;
  /// The executable's error record (DeviceError.h): one small block for the
  /// allocator's life, not one per call.
  DeviceErrorRecord *record;
  BlockCache cache;
  std::unordered_map<void *, size_t> blockSize;
};
} // namespace

Error traceir::selectCUDADevice(int index) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // cuda::failure clears it: "no device" is an answer, not a failure.
    return cuda::failure("no CUDA device (cudaGetDeviceCount failed)", err);
  }
  if (index < 0 || index >= count)
    return makeError("no CUDA device cuda:" + strCat(index) +
                     " (this machine has " + strCat(count) + ")");
  if ((err = cudaSetDevice(index)) != cudaSuccess) {
    return cuda::failure("cannot use cuda:" + strCat(index), err);
  }
  return Error::success();
}

Expected<std::unique_ptr<Allocator>> traceir::createCUDAAllocator(int index) {
  if (Error err = selectCUDADevice(index))
    return err;
  void *record = nullptr;
  if (cudaError_t err = cudaMalloc(&record, sizeof(DeviceErrorRecord));
      err != cudaSuccess)
    return cuda::failure(
        "cannot allocate cuda:" + strCat(index) + "'s error record", err);
  auto alloc = std::make_unique<CUDAAllocator>(
      index, static_cast<DeviceErrorRecord *>(record));
  if (Error err = alloc->clearErrorRecord())
    return err;
  return std::unique_ptr<Allocator>(std::move(alloc));
}
