//===- Timer.cpp - Kernel times from cudaEvents ---------------------------===//
//
// The profiler's device clock on CUDA: an event recorded on the default
// stream (where every kernel of the runtime runs) before and after each op's
// kernels, read back relative to one start event per device, since event
// times compare only within a device. No CUPTI needed.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Device.h"
#include "TraceIR/Runtime/Profiler.h"

#include <cuda_runtime.h>

#include <cmath>

using namespace traceir;

namespace {

class CUDATimer final : public DeviceTimer {
public:
  explicit CUDATimer(int index) : index(index) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess)
      name = prop.name;
    else
      cudaGetLastError();
  }
  ~CUDATimer() override {
    cudaSetDevice(index);
    for (cudaEvent_t e : pool)
      cudaEventDestroy(e);
    if (startEvent)
      cudaEventDestroy(startEvent);
  }

  Error start(int64_t &cpuBeforeNs, int64_t &cpuAfterNs) override {
    // Events are created here, before any op is timed: creating one inside
    // an op's range would cost the op.
    cudaSetDevice(index);
    cudaError_t err = cudaEventCreate(&startEvent);
    if (err != cudaSuccess)
      return cuda::failure(
          "cannot create the start event on cuda:" + strCat(index), err);
    if (Error e = grow(kInitialEvents))
      return e;
    // The first records on a device are slow; warm up so the start event
    // is not delayed by that, then let the device go idle.
    for (int i = 0; i < kWarmups; ++i) {
      cudaEventRecord(pool[i], 0);
      cudaEventSynchronize(pool[i]);
    }
    if ((err = cudaDeviceSynchronize()) != cudaSuccess)
      return cuda::failure("cuda:" + strCat(index) + " failed", err);
    cpuBeforeNs = profileClockNs();
    cudaEventRecord(startEvent, 0);
    err = cudaEventSynchronize(startEvent);
    cpuAfterNs = profileClockNs();
    if (err != cudaSuccess)
      return cuda::failure("recording __cuda_start on cuda:" + strCat(index),
                           err);
    used = 0;
    return Error::success();
  }

  uint32_t record() override {
    // Doubling keeps event creation rare; a failure to create one is
    // reported by collect(), the first place an error can go.
    if (used == pool.size() && !growFailed)
      if (Error err = grow(pool.size())) {
        growError = toString(std::move(err));
        growFailed = true;
      }
    if (used < pool.size())
      cudaEventRecord(pool[used], 0);
    return used++;
  }

  Expected<std::vector<int64_t>> collect() override {
    cudaSetDevice(index);
    std::vector<int64_t> ns(used, 0);
    if (used > pool.size())
      return makeError("profiling cuda:" + strCat(index) + ": " + growError);
    if (used == 0)
      return ns;
    cudaError_t err = cudaEventSynchronize(pool[used - 1]);
    if (err != cudaSuccess)
      return cuda::failure("waiting for the kernels on cuda:" + strCat(index),
                           err);
    for (uint32_t i = 0; i < used; ++i) {
      float ms = 0;
      if ((err = cudaEventElapsedTime(&ms, startEvent, pool[i])) != cudaSuccess)
        return cuda::failure("reading a kernel time on cuda:" + strCat(index),
                             err);
      ns[i] = std::llround(double(ms) * 1e6);
    }
    used = 0;
    return ns;
  }

  std::string description() const override { return name; }

private:
  static constexpr size_t kInitialEvents = 1024;
  static constexpr int kWarmups = 4;

  Error grow(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      cudaEvent_t e;
      cudaError_t err = cudaEventCreate(&e);
      if (err != cudaSuccess)
        return cuda::failure("cannot create a CUDA event", err);
      pool.push_back(e);
    }
    return Error::success();
  }

  int index;
  std::string name = "CUDA device";
  cudaEvent_t startEvent = nullptr;
  std::vector<cudaEvent_t> pool;
  uint32_t used = 0;
  bool growFailed = false;
  std::string growError;
};
} // namespace

std::unique_ptr<DeviceTimer> cuda::createTimer(int index) {
  return std::make_unique<CUDATimer>(index);
}
