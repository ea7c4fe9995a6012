//===- NormPoolBackward.cpp - Pool, norm, embedding backward on CUDA ------===//
//
// The host half of NormPoolBackward.cu: the plans are
// CPU/NormPoolBackward.cpp's, built by the same readers
// (NormPoolBackwardArgs.h), so both devices accept the same calls and fail
// with the same messages. Temporaries are the call's device scratch.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CUDA/Kernels.h"
#include "TraceIR/Runtime/CUDA/NormPoolBackwardLaunch.h"
#include "TraceIR/Runtime/NormPoolBackwardArgs.h"
#include "TraceIR/Support/CheckedMath.h"

#include <optional>

using namespace traceir;

namespace {
void launched(KernelContext &ctx, const char *op, const char *err) {
  if (err)
    ctx.fail(strCat(op) + " kernel failed on CUDA: " + err);
}

void normBackward(KernelContext &ctx, const char *op, NormBackwardPlan &p) {
  if (p.dx) {
    p.rowSums = static_cast<double *>(ctx.scratch(2 * p.M, sizeof(double)));
    if (!p.rowSums)
      return; // scratch() failed the call
  }
  launched(ctx, op, launchNormBackwardCUDA(p));
}
} // namespace

void cuda::avg_pool2d_backward(KernelContext &ctx) {
  PoolBackwardPlan p;
  if (avgPool2dBackwardPlan(ctx, p))
    launched(ctx, "avg_pool2d_backward", launchPoolBackwardCUDA(p));
}

void cuda::_adaptive_avg_pool2d_backward(KernelContext &ctx) {
  PoolBackwardPlan p;
  if (adaptiveAvgPool2dBackwardPlan(ctx, p))
    launched(ctx, "_adaptive_avg_pool2d_backward", launchPoolBackwardCUDA(p));
}

void cuda::native_layer_norm_backward(KernelContext &ctx) {
  NormBackwardPlan p;
  if (layerNormBackwardPlan(ctx, p))
    normBackward(ctx, "native_layer_norm_backward", p);
}

void cuda::native_group_norm_backward(KernelContext &ctx) {
  NormBackwardPlan p;
  if (groupNormBackwardPlan(ctx, p))
    normBackward(ctx, "native_group_norm_backward", p);
}

void cuda::embedding_dense_backward(KernelContext &ctx) {
  EmbeddingBackwardPlan p;
  StridedOperand idx;
  if (!embeddingDenseBackwardPlan(ctx, p, idx))
    return;
  // index and order (L each), start (V + 1), next (V); an empty result
  // (whose V may be any size) needs no buckets.
  int64_t buckets = p.numel() > 0 ? p.V : 0;
  std::optional<int64_t> count = checkedAdd(2 * p.L, 2 * buckets);
  auto *scratch = static_cast<int64_t *>(
      ctx.scratch(count.value_or(-1), sizeof(int64_t), sizeof(int64_t)));
  if (!scratch)
    return; // scratch() failed the call
  // A bad index is recorded on the device and fails the run at its end.
  if (const char *err =
          launchEmbeddingBackwardCUDA(p, idx, scratch, ctx.deviceErrors()))
    return launched(ctx, "embedding_dense_backward", err);
}
