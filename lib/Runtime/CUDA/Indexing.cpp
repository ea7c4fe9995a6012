//===- Indexing.cpp - Host side of the gathers and scatters on CUDA -------===//
//
// Reads each call with the CPU's reader (IndexArgs.cpp), range-checks the
// index tensors on the device, recording the first bad index in the run's
// error record (DeviceErrorLaunch.h; no wait), then launches Indexing.cu,
// whose kernels do nothing once the record is set. A scatter's result
// starts as a device copy of self.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/DeviceErrorLaunch.h"
#include "TraceIR/Runtime/CUDA/IndexLaunch.h"
#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/ReduceLaunch.h"
#include "TraceIR/Runtime/IndexArgs.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

using namespace traceir;

namespace {
bool cudaOk(KernelContext &ctx, const char *op, const char *err) {
  if (!err)
    return true;
  ctx.fail(std::string(op) + " kernel failed on CUDA: " + err);
  return false;
}

bool cudaOk(KernelContext &ctx, const char *op, cudaError_t err) {
  if (err == cudaSuccess)
    return true;
  cudaGetLastError();
  return cudaOk(ctx, op, cudaGetErrorString(err));
}

/// Range-checks every index tensor of `call` on the device, each check
/// followed by its commit, so that the run's error is the first bad index
/// of the first check that has one (row-major), named as the CPU names it.
bool checkIndices(KernelContext &ctx, const char *op, const IndexCall &call) {
  if (call.numel == 0)
    return true;
  DeviceErrorSlot errors = ctx.deviceErrors();
  for (const IxCheck &check : call.checks) {
    const Tensor &t = *check.t;
    IxCheckLaunch L;
    DeviceErrorCommit commit;
    commit.slot = errors;
    commit.code = static_cast<int32_t>(DeviceErrorCode::IndexRange);
    commit.limit = check.size;
    commit.dim = check.dim;
    DeviceErrorSource &src = commit.src[0];
    L.data = src.data = t.bytes();
    L.dtype = src.dtype = static_cast<int32_t>(t.dtype);
    L.rank = src.rank = static_cast<int32_t>(t.rank());
    std::copy(t.shape.begin(), t.shape.end(), L.shape);
    std::copy(t.strides.begin(), t.strides.end(), L.strides);
    std::copy(t.shape.begin(), t.shape.end(), src.shape);
    std::copy(t.strides.begin(), t.strides.end(), src.strides);
    L.numel = t.numel();
    L.size = check.size;
    L.negative = check.negative;
    L.firstBad = &errors.record->pending;
    if (!cudaOk(ctx, op, launchIndexCheckCUDA(L)) ||
        !cudaOk(ctx, op, launchDeviceErrorCommit(commit)))
      return false;
  }
  return true;
}

/// Runs a call read by one of IndexArgs.h's readers (false when it failed).
void run(KernelContext &ctx, const char *op, bool read, IndexCall &call) {
  if (!read || !checkIndices(ctx, op, call))
    return;
  const IxMap &m = call.map;
  if (!call.scatter) {
    cudaOk(ctx, op, launchGatherCUDA(m, call.numel, ctx.deviceErrors().record));
    return;
  }
  Tensor &out = ctx.result(0);
  if (!cuda::copyStrided(ctx.tensor(0), out)) {
    ctx.fail("copying on CUDA failed");
    return;
  }
  if (m.counts &&
      !cudaOk(ctx, op,
              cudaMemsetAsync(m.counts, 0, out.numel() * sizeof(int64_t))))
    return;
  if (call.numel > 0)
    cudaOk(ctx, op,
           launchScatterCUDA(m, call.mean, out.numel(),
                             ctx.deviceErrors().record));
}

/// slice_scatter and select_scatter: self, then src over `view`.
void copyInto(KernelContext &ctx, bool read, Tensor &view) {
  if (read && (!cuda::copyStrided(ctx.tensor(0), ctx.result(0)) ||
               !cuda::copyStrided(ctx.tensor(1), view)))
    ctx.fail("copying on CUDA failed");
}
} // namespace

void cuda::index_select(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "index_select", indexSelectCall(ctx, call), call);
}

void cuda::gather(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "gather", gatherCall(ctx, call), call);
}

void cuda::index(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "index", indexCall(ctx, call), call);
}

void cuda::scatter(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "scatter", scatterCall(ctx, ScatterOp::Scatter, call), call);
}

void cuda::scatter_add(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "scatter_add", scatterCall(ctx, ScatterOp::ScatterAdd, call), call);
}

void cuda::scatter_reduce(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "scatter_reduce", scatterCall(ctx, ScatterOp::ScatterReduce, call),
      call);
}

void cuda::index_put(KernelContext &ctx) {
  IndexCall call;
  run(ctx, "index_put", indexPutCall(ctx, call), call);
}

void cuda::slice_scatter(KernelContext &ctx) {
  Tensor view;
  copyInto(ctx, sliceScatterView(ctx, view), view);
}

void cuda::select_scatter(KernelContext &ctx) {
  Tensor view;
  copyInto(ctx, selectScatterView(ctx, view), view);
}

/// masked_scatter: the chunks' starts and the mask's count on the device,
/// the count read back (the only wait) and checked, then the result.
void cuda::masked_scatter(KernelContext &ctx) {
  MaskedScatterLaunch L;
  if (!maskedScatterCall(ctx, L) || L.numel == 0)
    return;
  int64_t chunks = msChunks(L.numel);
  auto *starts =
      static_cast<int64_t *>(ctx.scratch(chunks + 1, sizeof(int64_t)));
  if (!starts ||
      !cudaOk(ctx, "masked_scatter", launchMaskedScatterCountCUDA(L, starts)))
    return;
  int64_t trues = 0;
  if (!cudaOk(ctx, "masked_scatter",
              cudaMemcpy(&trues, starts + chunks, sizeof(int64_t),
                         cudaMemcpyDeviceToHost)))
    return;
  // The count waited for the device: an error recorded before it (the
  // mask may be an unwritten result) fails the run now.
  if (ctx.deviceFailed())
    return;
  if (trues > L.sourceNumel)
    return failMaskedScatterCount(ctx, trues, L.sourceNumel);
  cudaOk(ctx, "masked_scatter", launchMaskedScatterCUDA(L, starts));
}
