//===- DeviceErrorLaunch.h - Recording errors on a CUDA device --*- C++ -*-===//
//
// How the CUDA kernels record what DeviceError.h describes without a wait.
// A check kernel atomicMin's the first bad position into the record's
// `pending`; the commit launched right after it (one thread) turns that into
// the run's error, reading the bad value where the check found it, unless
// the record already holds an earlier one. Kernels that would read by the
// checked indices launch after the commit and return at once when the
// record is set, so nothing reads out of bounds. Kernels that find an
// error while computing (integer division) claim the record themselves.
// The executor reads the record at the end of the run.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_RUNTIME_CUDA_DEVICEERRORLAUNCH_H
#define TRACEIR_RUNTIME_CUDA_DEVICEERRORLAUNCH_H

#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/DeviceError.h"

#include <cstdint>

namespace traceir {

/// A tensor of integers a check read (any strides, row-major positions).
struct DeviceErrorSource {
  const char *data = nullptr; ///< at its storage offset
  int32_t dtype = I64;
  int32_t rank = 1;
  int64_t shape[kRdMaxRank] = {}, strides[kRdMaxRank] = {};
};

/// A contiguous or 1-D strided source of `n` integers of `dtype`.
inline DeviceErrorSource deviceErrorSource(const void *data, int32_t dtype,
                                           int64_t n, int64_t stride = 1) {
  DeviceErrorSource s;
  s.data = static_cast<const char *>(data);
  s.dtype = dtype;
  s.shape[0] = n;
  s.strides[0] = stride;
  return s;
}

/// The commit of one check: a pending position p < split is an error
/// `code` at p of src[0]; one at or past split (two tensors checked as one
/// row of positions, as _embedding_bag's offsets then indices) is `code1`
/// at p - split of src[1].
struct DeviceErrorCommit {
  DeviceErrorSlot slot;
  int32_t code = 0, code1 = 0;
  int64_t limit = 0, limit1 = 0, dim = 0;
  int64_t split = INT64_MAX;
  DeviceErrorSource src[2];
};

/// Queues the commit (no wait; nothing without a record): null, or the
/// launch's error text.
const char *launchDeviceErrorCommit(const DeviceErrorCommit &commit);

#ifdef __CUDACC__
/// Whether the run has an error already: kernels that read by checked
/// indices return at once then (their results are not used).
__device__ inline bool deviceErrorSet(const DeviceErrorRecord *r) {
  return r && *static_cast<const volatile int32_t *>(&r->code) != 0;
}

/// Records an error unless the run has one already (any thread, any
/// number of times).
__device__ inline void
recordDeviceError(DeviceErrorSlot s, DeviceErrorCode code, int64_t value = 0,
                  int64_t position = 0, int64_t limit = 0, int64_t dim = 0) {
  DeviceErrorRecord *r = s.record;
  if (!r || deviceErrorSet(r) ||
      atomicCAS(&r->code, 0, static_cast<int32_t>(code)) != 0)
    return;
  r->op = s.op;
  r->value = value;
  r->position = position;
  r->limit = limit;
  r->dim = dim;
}

/// perElementKernel (ReduceLaunch.h) for kernels that read by checked
/// indices: nothing once the run has an error.
template <typename Plan, void (*Element)(const Plan &, int64_t)>
__global__ void perElementUnlessErrorKernel(Plan plan, int64_t n,
                                            const DeviceErrorRecord *errors) {
  if (deviceErrorSet(errors))
    return;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < n; k += stride)
    Element(plan, k);
}

/// Launches perElementUnlessErrorKernel over `n` elements (nothing when n
/// is 0); null, or the launch's error text.
template <typename Plan, void (*Element)(const Plan &, int64_t)>
const char *launchPerElementUnlessError(const Plan &plan, int64_t n,
                                        const DeviceErrorRecord *errors) {
  if (n == 0)
    return nullptr;
  perElementUnlessErrorKernel<Plan, Element>
      <<<static_cast<unsigned>(cudadev::gridFor(n, cudadev::kMaxThreads)),
         cudadev::kMaxThreads>>>(plan, n, errors);
  return cudadev::lastError();
}
#endif // __CUDACC__

} // namespace traceir

#endif // TRACEIR_RUNTIME_CUDA_DEVICEERRORLAUNCH_H
