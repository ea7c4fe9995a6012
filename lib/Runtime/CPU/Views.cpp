//===- Views.cpp - View and copy kernels ----------------------------------===//
//
// Views share their input's storage with the layout ViewAlgebra computes
// (the same functions the storage liveness analysis uses, so it knows when
// a view-or-copy op copies). reshape, flatten and contiguous copy only when
// no view exists; the copy is tied to the input's storage.
//
//===----------------------------------------------------------------------===//

#include "TraceIR/Runtime/CPU/Kernels.h"
#include "TraceIR/Support/CheckedMath.h"
#include "TraceIR/Support/ViewAlgebra.h"

using namespace traceir;
using namespace traceir::cpu;

namespace {
void viewKernel(KernelContext &ctx, std::string_view op) {
  const Tensor &in = ctx.tensor(0);
  views::Layout layout{in.shape, in.strides, in.offset};
  views::ViewArgs args = views::decodeViewArgs(
      op, [&](unsigned i) -> std::optional<std::vector<int64_t>> {
        if (i >= ctx.numArgs() || ctx.isTensor(i) || ctx.isNone(i))
          return std::nullopt;
        return ctx.scalar(i).ints;
      });
  const Shape &shape = ctx.resultShape(0);
  // Inference checked these in a verified graph; a saved executable is not
  // one, and applyView indexes by them.
  if (std::optional<std::string> bad =
          views::checkViewArgs(op, layout, args, shape))
    return ctx.fail(std::string(op) + ": " + *bad);
  if (std::optional<views::Layout> out =
          views::applyView(op, layout, args, shape)) {
    // Views are built here at run time from the op's scalars: one that
    // reaches past its storage is the op's error, never an out-of-bounds
    // read by the next kernel.
    std::optional<int64_t> extent =
        checkedViewExtent(out->shape, out->strides, out->offset);
    int64_t storageElements =
        in.storage->nbytes / static_cast<int64_t>(dtypeSize(in.dtype));
    if (!extent || *extent > storageElements)
      return ctx.fail(std::string(op) + ": the view " +
                      shapeToString(out->shape) + " with strides " +
                      shapeToString(out->strides) + " at offset " +
                      strCat(out->offset) + " reaches past its storage of " +
                      strCat(storageElements) + " elements");
    Tensor &res = ctx.result(0);
    res.storage = in.storage;
    res.dtype = in.dtype;
    res.shape = out->shape;
    res.strides = out->strides;
    res.offset = out->offset;
    return;
  }
  if (!views::isViewOrCopyOp(op))
    return ctx.fail(std::string(op) + ": size " + shapeToString(shape) +
                    " is not compatible with the input's size " +
                    shapeToString(in.shape) + " and strides " +
                    shapeToString(in.strides) + "; use reshape");
  Tensor copy = ctx.tiedCopy(in, shape);
  if (!ctx.failed())
    ctx.result(0) = copy;
}
} // namespace

#define TRACEIR_VIEW_KERNEL(NAME)                                              \
  void cpu::NAME(KernelContext &ctx) { viewKernel(ctx, #NAME); }
TRACEIR_VIEW_KERNEL(view)
TRACEIR_VIEW_KERNEL(reshape)
TRACEIR_VIEW_KERNEL(flatten)
TRACEIR_VIEW_KERNEL(unflatten)
TRACEIR_VIEW_KERNEL(contiguous)
TRACEIR_VIEW_KERNEL(transpose)
TRACEIR_VIEW_KERNEL(t)
TRACEIR_VIEW_KERNEL(permute)
TRACEIR_VIEW_KERNEL(unsqueeze)
TRACEIR_VIEW_KERNEL(squeeze)
TRACEIR_VIEW_KERNEL(expand)
TRACEIR_VIEW_KERNEL(select)
TRACEIR_VIEW_KERNEL(slice)
TRACEIR_VIEW_KERNEL(narrow)
TRACEIR_VIEW_KERNEL(alias)
TRACEIR_VIEW_KERNEL(diagonal)
TRACEIR_VIEW_KERNEL(as_strided)
#undef TRACEIR_VIEW_KERNEL
