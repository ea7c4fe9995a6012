//===- Sorting.cpp - Host side of sort and topk on CUDA -------------------===//
//
// Reads the call with the CPU's sortArgs, takes n positions of device
// scratch per row and launches Sorting.cu.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/SortLaunch.h"
#include "TraceIR/Runtime/KernelArgs.h"

#include <string>

using namespace traceir;

static void sortImpl(KernelContext &ctx, bool topk) {
  SortRows L;
  if (!sortArgs(ctx, topk, L))
    return;
  if (L.in.numKept == 0 || L.k == 0)
    return;
  L.scratch =
      static_cast<int64_t *>(ctx.scratch(L.in.numKept * L.n, sizeof(int64_t)));
  if (!L.scratch)
    return; // scratch() failed the call
  if (const char *err = launchSortCUDA(L))
    ctx.fail(std::string(topk ? "topk" : "sort") +
             " kernel failed on CUDA: " + err);
}

void cuda::sort(KernelContext &ctx) { sortImpl(ctx, false); }
void cuda::topk(KernelContext &ctx) { sortImpl(ctx, true); }
