//===- DeviceError.cu - Committing a check's error on a CUDA device -------===//
//
// The one-thread kernel that turns a check's first bad position into the
// run's error record (DeviceErrorLaunch.h), queued behind the check, so that
// no call waits for the device to learn whether its data was good.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"

#include <cuda_runtime.h>

using namespace traceir;

namespace {
__global__ void commitKernel(DeviceErrorCommit c) {
  DeviceErrorRecord *r = c.slot.record;
  unsigned long long pending = r->pending;
  if (pending == ~0ull)
    return;
  // Ready for the next check, whether or not this one is the run's error.
  r->pending = ~0ull;
  if (r->code != 0)
    return; // an earlier op's error is the run's
  int64_t p = static_cast<int64_t>(pending);
  bool second = p >= c.split;
  if (second)
    p -= c.split;
  const DeviceErrorSource &s = c.src[second ? 1 : 0];
  int64_t off = rdOffsetOf(p, s.rank, s.shape, s.strides);
  r->code = second ? c.code1 : c.code;
  r->op = c.slot.op;
  r->value = ewLoadInt(s.data + off * ewSize(s.dtype), s.dtype);
  r->position = p;
  r->limit = second ? c.limit1 : c.limit;
  r->dim = c.dim;
}
} // namespace

const char *traceir::launchDeviceErrorCommit(const DeviceErrorCommit &commit) {
  if (!commit.slot.record)
    return nullptr;
  commitKernel<<<1, 1>>>(commit);
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}
