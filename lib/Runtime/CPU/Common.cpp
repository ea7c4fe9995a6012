//===- Common.cpp - Helpers shared by the CPU kernels ---------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Runtime/CPU/Optimized.h"
#include "TraceIR/Runtime/Elementwise.h"
#include "TraceIR/Support/ViewAlgebra.h"

#include <cmath>
#include <cstring>

using namespace traceir;

// The element loads and stores are Elementwise.h's, shared with the CUDA
// backend's device code.
bool cpu::isFloating(DType dtype) {
  return ewIsFloating(static_cast<int32_t>(dtype));
}

double cpu::loadDouble(const char *p, DType dtype) {
  return ewLoadDouble(p, static_cast<int32_t>(dtype));
}

int64_t cpu::loadInt(const char *p, DType dtype) {
  return ewLoadInt(p, static_cast<int32_t>(dtype));
}

void cpu::storeDouble(char *p, DType dtype, double v) {
  ewStoreDouble(p, static_cast<int32_t>(dtype), v);
}

void cpu::storeInt(char *p, DType dtype, int64_t v) {
  ewStoreInt(p, static_cast<int32_t>(dtype), v);
}

int64_t cpu::wrapDim(int64_t dim, int64_t rank) {
  return views::wrapDim(dim, rank);
}

void cpu::copyTensor(const Tensor &src, Tensor &dst) {
  int64_t n = dst.numel();
  if (n == 0)
    return;
  size_t es = dtypeSize(src.dtype), ed = dtypeSize(dst.dtype);
  if (src.dtype == dst.dtype && src.isContiguous() && dst.isContiguous()) {
    std::memcpy(dst.bytes(), src.bytes(), n * es);
    return;
  }
  // Strided copies of one dtype (contiguous(), gathers into scratch): the
  // optimized tier's coalesced, threaded copy.
  if (optimized::copy(src, dst))
    return;
  int64_t rank = dst.rank();
  Shape index(rank, 0);
  const char *sb = src.bytes();
  char *db = dst.bytes();
  bool floating = isFloating(src.dtype) || isFloating(dst.dtype);
  for (int64_t k = 0; k < n; ++k) {
    int64_t so = 0, dof = 0;
    for (int64_t d = 0; d < rank; ++d) {
      so += index[d] * src.strides[d];
      dof += index[d] * dst.strides[d];
    }
    if (src.dtype == dst.dtype)
      std::memcpy(db + dof * ed, sb + so * es, es);
    else if (floating)
      storeDouble(db + dof * ed, dst.dtype,
                  loadDouble(sb + so * es, src.dtype));
    else
      storeInt(db + dof * ed, dst.dtype, loadInt(sb + so * es, src.dtype));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dst.shape[d])
        break;
      index[d] = 0;
    }
  }
}

void cpu::copyStridedToContiguous(const Tensor &src, void *dst) {
  Storage host;
  host.data = dst;
  Tensor out;
  out.storage = &host;
  out.dtype = src.dtype;
  out.shape = src.shape;
  out.strides = Tensor::contiguousStrides(src.shape);
  copyTensor(src, out);
}

const void *cpu::gatherAs(KernelContext &ctx, const Tensor &t, DType dtype) {
  if (t.dtype == dtype && t.isContiguous())
    return t.bytes();
  void *buf = ctx.scratch(t.numel(), dtypeSize(dtype));
  if (!buf)
    return nullptr;
  Storage host;
  host.data = buf;
  Tensor dst;
  dst.storage = &host;
  dst.dtype = dtype;
  dst.shape = t.shape;
  dst.strides = Tensor::contiguousStrides(t.shape);
  copyTensor(t, dst);
  return buf;
}
