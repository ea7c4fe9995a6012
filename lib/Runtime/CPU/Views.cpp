//===- Views.cpp - View and copy kernels ----------------------------------===//
//
// Views share their input's storage with new shape, strides and offset, as
// in PyTorch. reshape, flatten and contiguous copy only when no view exists;
// the copy is tied to the input's storage (see KernelContext::tiedCopy).
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"

using namespace traceir;
using namespace traceir::cpu;

namespace {
/// Sets result 0 to a view of argument 0 with `shape` and `strides`.
void setView(KernelContext &ctx, Shape shape, Shape strides,
             int64_t extraOffset = 0) {
  const Tensor &in = ctx.tensor(0);
  Tensor &out = ctx.result(0);
  out.storage = in.storage;
  out.dtype = in.dtype;
  out.offset = in.offset + extraOffset;
  out.shape = std::move(shape);
  out.strides = std::move(strides);
}

/// The result's static shape (recorded at build time) as the target shape:
/// the registry already resolved -1 entries and checked sizes.
Shape staticShape(KernelContext &ctx) { return ctx.resultShape(0); }

/// view/reshape/flatten: a view when strides allow one, else (`mayCopy`)
/// a contiguous copy tied to the input's storage.
void viewOrCopy(KernelContext &ctx, bool mayCopy, const char *op) {
  const Tensor &in = ctx.tensor(0);
  Shape shape = staticShape(ctx);
  if (std::optional<Shape> strides = viewStrides(in, shape))
    return setView(ctx, shape, *strides);
  if (!mayCopy)
    return ctx.fail(llvm::Twine(op) + ": size " + shapeToString(shape) +
                    " is not compatible with the input's size " +
                    shapeToString(in.shape) + " and strides " +
                    shapeToString(in.strides) + "; use reshape");
  Tensor copy = ctx.tiedCopy(in, shape);
  if (ctx.failed())
    return;
  ctx.result(0) = copy;
}
} // namespace

void cpu::view(KernelContext &ctx) { viewOrCopy(ctx, false, "view"); }
void cpu::reshape(KernelContext &ctx) { viewOrCopy(ctx, true, "reshape"); }
void cpu::flatten(KernelContext &ctx) { viewOrCopy(ctx, true, "flatten"); }

void cpu::contiguous(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  if (in.isContiguous()) {
    ctx.result(0) = in;
    return;
  }
  Tensor copy = ctx.tiedCopy(in, in.shape);
  if (!ctx.failed())
    ctx.result(0) = copy;
}

void cpu::clone(KernelContext &ctx) {
  copyTensor(ctx.tensor(0), ctx.result(0));
}

void cpu::transpose(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  Shape shape = in.shape, strides = in.strides;
  if (in.rank() > 0) {
    int64_t d0 = wrapDim(ctx.scalar(1).i, in.rank());
    int64_t d1 = wrapDim(ctx.scalar(2).i, in.rank());
    std::swap(shape[d0], shape[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  setView(ctx, shape, strides);
}

void cpu::t(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  Shape shape(in.shape.rbegin(), in.shape.rend());
  Shape strides(in.strides.rbegin(), in.strides.rend());
  setView(ctx, shape, strides);
}

void cpu::permute(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  Shape shape, strides;
  for (int64_t d : ctx.scalar(1).ints) {
    d = wrapDim(d, in.rank());
    shape.push_back(in.shape[d]);
    strides.push_back(in.strides[d]);
  }
  setView(ctx, shape, strides);
}

void cpu::unsqueeze(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  int64_t d = wrapDim(ctx.scalar(1).i, in.rank() + 1);
  Shape shape = in.shape, strides = in.strides;
  int64_t stride = d < in.rank() ? in.shape[d] * in.strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  setView(ctx, shape, strides);
}

void cpu::squeeze(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  Shape target = staticShape(ctx);
  // Drop size-1 dims until the static result shape is reached: the registry
  // decided which ones go.
  llvm::SmallVector<bool> drop(in.rank(), false);
  if (ctx.isNone(1)) {
    for (int64_t d = 0; d < in.rank(); ++d)
      drop[d] = in.shape[d] == 1;
  } else {
    for (int64_t d : ctx.scalar(1).ints) {
      d = wrapDim(d, in.rank());
      if (in.rank() > 0)
        drop[d] = in.shape[d] == 1;
    }
  }
  Shape shape, strides;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (!drop[d]) {
      shape.push_back(in.shape[d]);
      strides.push_back(in.strides[d]);
    }
  setView(ctx, shape, strides);
}

void cpu::expand(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  Shape shape = staticShape(ctx);
  Shape strides(shape.size(), 0);
  int64_t off = shape.size() - in.rank();
  for (int64_t d = 0; d < in.rank(); ++d)
    strides[off + d] = in.shape[d] == shape[off + d] ? in.strides[d] : 0;
  setView(ctx, shape, strides);
}

void cpu::select(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  int64_t d = wrapDim(ctx.scalar(1).i, in.rank());
  int64_t index = ctx.scalar(2).i;
  if (index < 0)
    index += in.shape[d];
  Shape shape = in.shape, strides = in.strides;
  int64_t offset = index * in.strides[d];
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  setView(ctx, shape, strides, offset);
}

void cpu::slice(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  int64_t d = wrapDim(ctx.isNone(1) ? 0 : ctx.scalar(1).i, in.rank());
  int64_t n = in.shape[d];
  int64_t start = ctx.isNone(2) ? 0 : ctx.scalar(2).i;
  int64_t step = ctx.isNone(4) ? 1 : ctx.scalar(4).i;
  if (start < 0)
    start += n;
  start = std::min(std::max<int64_t>(start, 0), n);
  Shape shape = in.shape, strides = in.strides;
  shape[d] = staticShape(ctx)[d];
  strides[d] *= step;
  setView(ctx, shape, strides, start * in.strides[d]);
}

void cpu::narrow(KernelContext &ctx) {
  const Tensor &in = ctx.tensor(0);
  int64_t d = wrapDim(ctx.scalar(1).i, in.rank());
  int64_t start = ctx.scalar(2).i;
  if (start < 0)
    start += in.shape[d];
  Shape shape = in.shape;
  shape[d] = ctx.scalar(3).i;
  setView(ctx, shape, in.strides, start * in.strides[d]);
}
