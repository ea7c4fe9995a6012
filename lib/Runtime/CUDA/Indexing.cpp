//===- Indexing.cpp - Host side of the gathers and scatters on CUDA -------===//
//
// Reads each call with the CPU's reader (IndexArgs.cpp), range-checks the
// index tensors on the device and reads back the first bad position, as
// embedding does (the only wait), then launches Indexing.cu. A scatter's
// result starts as a device copy of self.
//
//===----------------------------------------------------------------------===//

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

/// Range-checks every index tensor of `call` on the device, then reads the
/// flags back (waiting for the checks) and fails the call on the first bad
/// index, naming it as the CPU does.
bool checkIndices(KernelContext &ctx, const char *op, const IndexCall &call) {
  size_t n = call.checks.size();
  if (call.numel == 0 || n == 0)
    return true;
  auto *flags = static_cast<unsigned long long *>(
      ctx.scratch(int64_t(n), sizeof(unsigned long long)));
  if (!flags ||
      !cudaOk(ctx, op,
              cudaMemsetAsync(flags, 0xFF, n * sizeof(unsigned long long))))
    return false;
  std::vector<IxCheckLaunch> launches(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = *call.checks[i].t;
    IxCheckLaunch &L = launches[i];
    L.data = t.bytes();
    L.dtype = static_cast<int32_t>(t.dtype);
    L.rank = static_cast<int32_t>(t.rank());
    std::copy(t.shape.begin(), t.shape.end(), L.shape);
    std::copy(t.strides.begin(), t.strides.end(), L.strides);
    L.numel = t.numel();
    L.size = call.checks[i].size;
    L.negative = call.checks[i].negative;
    L.firstBad = flags + i;
    if (!cudaOk(ctx, op, launchIndexCheckCUDA(L)))
      return false;
  }
  std::vector<unsigned long long> bad(n);
  if (!cudaOk(ctx, op,
              cudaMemcpy(bad.data(), flags, n * sizeof(unsigned long long),
                         cudaMemcpyDeviceToHost)))
    return false;
  for (size_t i = 0; i < n; ++i) {
    if (bad[i] == ~0ull)
      continue;
    const IxCheckLaunch &L = launches[i];
    int64_t off =
        rdOffsetOf(static_cast<int64_t>(bad[i]), L.rank, L.shape, L.strides);
    char value[8] = {};
    if (cudaOk(ctx, op,
               cudaMemcpy(value, L.data + off * ewSize(L.dtype),
                          ewSize(L.dtype), cudaMemcpyDeviceToHost)))
      failIndexRange(ctx, call.checks[i], ewLoadInt(value, L.dtype));
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
    cudaOk(ctx, op, launchGatherCUDA(m, call.numel));
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
    cudaOk(ctx, op, launchScatterCUDA(m, call.mean, out.numel()));
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
  if (trues > L.sourceNumel)
    return failMaskedScatterCount(ctx, trues, L.sourceNumel);
  cudaOk(ctx, "masked_scatter", launchMaskedScatterCUDA(L, starts));
}
